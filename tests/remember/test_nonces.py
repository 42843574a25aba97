"""The keyring's nonces come from a buffer of the OS's randomness (``Nonces``), and its names from a copied HMAC:
neither gives up the GIL per value. Every nonce is fresh, a forked process draws its own, and a key's address is
the one every earlier version computed (stores written before must still be read)."""

from __future__ import annotations

import os
import threading

import pytest

from mcpkit_storage.sealing._keyring import HEADER_BYTES, NONCE_BYTES, Keyring
from mcpkit_storage.sealing._nonces import Nonces
from mcpkit_storage.stores import Address

KEYRING = Keyring(["pinned-secret-0123456789abcdef-xyz"])


def nonce_of(sealed: bytes) -> bytes:
    return sealed[HEADER_BYTES : HEADER_BYTES + NONCE_BYTES]


def test_addresses_are_those_every_earlier_version_computed() -> None:
    # computed with ``hmac.digest`` per name, as mcpkit did before the names' HMAC was copied
    assert KEYRING.locate("user:nour", "user", "signature") == (
        Address(
            "3f3510a3874539555832e7ce8ebefd50", "87d1a53d434a893054e06ee824582404", "2db9aef92e43b6b2b2977f498baadb2e"
        ),
    )
    assert KEYRING.locate_bucket("user:nour", "tool.mem") == (
        ("3f3510a3874539555832e7ce8ebefd50", "d98234705fd2a431173adb4a61c670f4"),
    )


def test_nonces_are_fresh_across_buffers_and_threads() -> None:
    drawn: list[bytes] = []

    def seal_many() -> None:
        drawn.extend(nonce_of(KEYRING.seal("o", "b", "k", b"v")) for _ in range(1500))

    threads = [threading.Thread(target=seal_many) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(drawn) == 6000  # some 18 buffers of 341 nonces
    assert len(set(drawn)) == len(drawn)
    assert all(len(nonce) == NONCE_BYTES for nonce in drawn)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_process_draws_nonces_of_its_own() -> None:
    nonces = Nonces(NONCE_BYTES)
    nonces()  # the buffer is filled: a child forked now inherits what is left of it
    read, write = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        try:
            os.write(write, b"".join(nonces() for _ in range(10)))
        finally:
            os._exit(0)
    os.close(write)
    theirs = b""
    while len(theirs) < 10 * NONCE_BYTES and (chunk := os.read(read, 1024)):
        theirs += chunk
    os.close(read)
    os.waitpid(child, 0)
    ours = b"".join(nonces() for _ in range(10))
    assert len(theirs) == len(ours) == 10 * NONCE_BYTES
    assert theirs != ours  # the parent's next nonces are not the child's
    assert not {theirs[n : n + NONCE_BYTES] for n in range(0, len(theirs), NONCE_BYTES)} & {
        ours[n : n + NONCE_BYTES] for n in range(0, len(ours), NONCE_BYTES)
    }
