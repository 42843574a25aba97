"""``Keyring``: the secrets that seal values (AES-256-GCM) and hash owners, addresses and search terms, so a store
holds no value, name or word in the clear."""

from __future__ import annotations

import hashlib
import hmac as stdlib_hmac
import os
import struct
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

from ..stores import Address
from ._nonces import Nonces
from ._payload import utf8

__all__ = ["Keyring", "Opened", "UndecryptableError"]

VERSION = 2
LEGACY_VERSION = 1
KEY_ID_BYTES = 4
NONCE_BYTES = 12
TAG_BYTES = 16
HEADER_BYTES = 1 + KEY_ID_BYTES
MIN_SEALED_BYTES = HEADER_BYTES + NONCE_BYTES + TAG_BYTES
DEFAULT_CACHE_SIZE = 4096
OWNER_HEX_CHARS = 32

_SALT = b"mcpkit-remember/v1"
_INFO_KEY_ID = b"mcpkit-remember/v1 key-id"
_INFO_OWNER_HASH = b"mcpkit-remember/v1 owner-hash"
_INFO_PLACEMENT = b"mcpkit-remember/v1 placement\x00"

#: Hex digits of the placement prefix of a placed keyring's owners: 4,096 groups.
PLACEMENT_HEX_CHARS = 3
_INFO_DATA_KEY = b"mcpkit-remember/v1 data-key\x00"
_INFO_PURPOSE = b"mcpkit-remember/v1 purpose\x00"
_INFO_ADDRESS = b"mcpkit-remember/v2 address"
_INFO_TERMS = b"mcpkit-remember/v2 search terms"
#: Bits of a blind term: 63, so it is a positive SQLite INTEGER.
BLIND_TERM_BITS = 63
#: Hex characters of a hashed bucket or key (128 bits: no two ever meet).
NAME_HEX_CHARS = 32

Reason = Literal["unknown_key", "authentication", "malformed"]


class UndecryptableError(Exception):
    """A sealed value cannot be opened; the caller treats it as missing and logs ``reason``."""

    def __init__(self, reason: Reason, detail: str) -> None:
        super().__init__(f"cannot decrypt: {detail}")
        self.reason: Reason = reason


class Opened(NamedTuple):
    """An opened value: which secret sealed it (0: the primary) and in which format version."""

    plaintext: bytes
    secret: int
    version: int

    @property
    def stale(self) -> bool:
        """Sealed under an older secret or format: a rotation rewrites it."""
        return self.secret != 0 or self.version != VERSION


def _hmac(key: bytes, message: bytes) -> bytes:
    mac = hmac.HMAC(key, hashes.SHA256())
    mac.update(message)
    return mac.finalize()


def _expand(prk: bytes, info: bytes, length: int) -> bytes:
    return HKDFExpand(hashes.SHA256(), length, info).derive(prk)


_LENGTHS = struct.Struct(">III").pack


@lru_cache(maxsize=DEFAULT_CACHE_SIZE)
def _address(owner: str, bucket: str, key: str) -> bytes:
    """The (owner, bucket, key) address as unambiguous bytes: each part length-prefixed."""
    o = owner.encode("utf-8", "surrogatepass")
    b = bucket.encode("utf-8", "surrogatepass")
    k = key.encode("utf-8", "surrogatepass")
    return _LENGTHS(len(o), len(b), len(k)) + o + b + k


@dataclass(frozen=True, slots=True, repr=False)
class _Secret:
    """What the keyring keeps of one secret: its HKDF pseudorandom key and what derives from it."""

    prk: bytes
    key_id: bytes
    owner_key: bytes
    address_key: bytes
    term_key: bytes
    #: HMAC-SHA256 keyed with ``address_key``, fed nothing: copied for each name. A copy fed a short name keeps the
    #: GIL, where ``hmac.digest`` gives it up (and, beside a busy thread, waits up to 5 ms to get it back).
    address_mac: stdlib_hmac.HMAC

    @classmethod
    def derive(cls, secret: bytes) -> _Secret:
        prk = _hmac(_SALT, secret)  # HKDF-Extract (RFC 5869) with a fixed application salt.
        address_key = _expand(prk, _INFO_ADDRESS, 32)
        return cls(
            prk=prk,
            key_id=_expand(prk, _INFO_KEY_ID, KEY_ID_BYTES),
            owner_key=_expand(prk, _INFO_OWNER_HASH, 32),
            address_key=address_key,
            term_key=_expand(prk, _INFO_TERMS, 32),
            address_mac=stdlib_hmac.new(address_key, digestmod="sha256"),
        )

    def name(self, *parts: str) -> str:
        """A keyed hash of the parts (length-prefixed), as hex: how buckets and keys appear in a store."""
        mac = self.address_mac.copy()
        mac.update(b"".join(len(encoded).to_bytes(4, "big") + encoded for encoded in map(utf8, parts)))
        return mac.digest()[: NAME_HEX_CHARS // 2].hex()


class Keyring:
    """Seals values per owner with AES-256-GCM and hashes identities into owners, across secret rotations."""

    def __init__(
        self, secrets: Sequence[str | bytes], *, cache_size: int = DEFAULT_CACHE_SIZE, placed: bool = False
    ) -> None:
        if isinstance(secrets, str | bytes):
            raise TypeError("Keyring takes a sequence of secrets, e.g. Keyring([secret]), not one secret")
        if not secrets:
            raise ValueError("Keyring needs at least one secret")
        if cache_size < 1:
            raise ValueError(f"cache_size must be at least 1, got {cache_size}")
        raw: list[bytes] = []
        for position, secret in enumerate(secrets, start=1):
            encoded = utf8(secret) if isinstance(secret, str) else bytes(secret)
            if not encoded:
                raise ValueError(f"secret #{position} is empty; every secret must be non-empty")
            if encoded in raw:
                first = raw.index(encoded) + 1
                raise ValueError(f"secret #{position} repeats secret #{first}; list each secret once")
            raw.append(encoded)
        self._secrets = tuple(_Secret.derive(secret) for secret in raw)
        self._by_header = {
            bytes([version]) + s.key_id: index
            for version in (VERSION, LEGACY_VERSION)
            for index, s in enumerate(self._secrets)
        }
        if len(self._by_header) != 2 * len(self._secrets):
            raise ValueError("two secrets share a key id; replace one of them")
        self._header = bytes([VERSION]) + self._secrets[0].key_id
        self._nonces = Nonces(NONCE_BYTES)
        self._placed = placed
        self._owners = lru_cache(maxsize=cache_size)(self._hash_identity)
        self._aeads = lru_cache(maxsize=cache_size)(self._derive_aead)
        #: ``locate(identity, bucket, key)``: where the key lives under each secret, primary first (cached;
        #: an attribute rather than a method, since it sits on every call's path).
        self.locate: Callable[[str, str, str], tuple[Address, ...]] = lru_cache(maxsize=cache_size)(self._locate)
        #: ``locate_bucket(identity, bucket)``: (owner, hashed bucket) under each secret, primary first.
        self.locate_bucket: Callable[[str, str], tuple[tuple[str, str], ...]] = lru_cache(maxsize=cache_size)(
            self._locate_bucket
        )
        # Callers cache the blind terms they need again (BlindIndex, by word); the keyed hashers are cached here.
        self._bucket_hasher: Callable[[int, str, str], Any] = lru_cache(maxsize=cache_size)(self._hasher)

    @classmethod
    def from_env_value(cls, text: str) -> Keyring:
        """A keyring from ``REMEMBER_SECRET``'s form ``"new,old,older"`` (items stripped, none empty)."""
        if not text.strip():
            raise ValueError("REMEMBER_SECRET is empty; set one secret, or several separated by commas")
        items = [item.strip() for item in text.split(",")]
        for position, item in enumerate(items, start=1):
            if not item:
                raise ValueError(
                    f"REMEMBER_SECRET item #{position} of {len(items)} is empty; "
                    "remove the stray comma (form: new,old,older)"
                )
        return cls(items)

    @classmethod
    def ephemeral(cls) -> Keyring:
        """A keyring with a random 32-byte secret that lives and dies with this process."""
        return cls([os.urandom(32)])

    @property
    def primary_key_id(self) -> str:
        """The hex key id stamped on every value sealed now."""
        return self._secrets[0].key_id.hex()

    @property
    def key_ids(self) -> tuple[str, ...]:
        """The hex key id of each secret, primary first."""
        return tuple(s.key_id.hex() for s in self._secrets)

    def __repr__(self) -> str:
        return f"Keyring(secrets={len(self._secrets)}, key_ids={list(self.key_ids)})"

    @property
    def placed(self) -> bool:
        """Whether owners carry a placement prefix, for stores that shard by it (a Redis Cluster)."""
        return self._placed

    def owner_for(self, identity: str) -> str:
        """The owner (32 hex chars) that stores see for ``identity``, keyed by the primary secret."""
        return self._owners(identity)[0]

    def owners_for(self, identity: str) -> tuple[str, ...]:
        """The owner of ``identity`` under each secret, primary first (reads fall back along it)."""
        return self._owners(identity)

    def __len__(self) -> int:
        """How many secrets: more than one while a rotation is under way."""
        return len(self._secrets)

    def derive_key(self, purpose: str) -> bytes:
        """A 32-byte key for another use (signing cursors, say), derived from the primary secret."""
        return _expand(self._secrets[0].prk, _INFO_PURPOSE + utf8(purpose), 32)

    def seal(self, owner: str, bucket: str, key: str, plaintext: bytes) -> bytes:
        """Encrypt ``plaintext`` for this address under the primary secret, with a fresh nonce."""
        header = self._header
        nonce = self._nonces()
        sealed = self._aeads(0, owner).encrypt(nonce, plaintext, header + _address(owner, bucket, key))
        return header + nonce + sealed

    def open(self, owner: str, bucket: str, key: str, sealed: bytes) -> Opened:
        """Decrypt a value read from this address; raises UndecryptableError rather than guess."""
        if len(sealed) < MIN_SEALED_BYTES:
            raise UndecryptableError("malformed", "malformed ciphertext (too short)")
        header = bytes(sealed[:HEADER_BYTES])
        index = self._by_header.get(header)
        if index is None:
            if sealed[0] not in (VERSION, LEGACY_VERSION):
                raise UndecryptableError("malformed", f"malformed ciphertext (unknown version {sealed[0]})")
            raise UndecryptableError("unknown_key", "unknown key id (secret changed?)")
        nonce = sealed[HEADER_BYTES : HEADER_BYTES + NONCE_BYTES]
        body = sealed[HEADER_BYTES + NONCE_BYTES :]
        try:
            plaintext = self._aeads(index, owner).decrypt(nonce, body, header + _address(owner, bucket, key))
        except InvalidTag:
            raise UndecryptableError("authentication", "authentication failed (value moved or corrupted?)") from None
        return Opened(plaintext, index, sealed[0])

    def blind(self, secret: int, owner: str, bucket: str, words: Iterable[str]) -> list[int]:
        """The blind terms of ``words`` in the bucket (owner, hashed bucket) of secret number ``secret``."""
        hasher = self._bucket_hasher(secret, owner, bucket)  # keyed, and already fed the bucket's address
        found = []
        for word in words:
            mac = hasher.copy()
            mac.update(utf8(word))
            found.append(int.from_bytes(mac.digest(), "big") >> (64 - BLIND_TERM_BITS))
        return found

    def _hasher(self, secret: int, owner: str, bucket: str) -> Any:
        """A keyed BLAKE2b fed the bucket's (owner, bucket): copied for each of its blind terms."""
        hasher = hashlib.blake2b(key=self._secrets[secret].term_key, digest_size=8)
        for part in (utf8(owner), utf8(bucket)):
            hasher.update(len(part).to_bytes(4, "big") + part)
        return hasher

    def _locate(self, identity: str, bucket: str, key: str) -> tuple[Address, ...]:
        # the bucket's names from ``locate_bucket``'s cache: a place's keys share them (an import, an export's)
        return tuple(
            Address(owner, hashed, secret.name("k", owner, bucket, key))
            for (owner, hashed), secret in zip(self.locate_bucket(identity, bucket), self._secrets, strict=True)
        )

    def _locate_bucket(self, identity: str, bucket: str) -> tuple[tuple[str, str], ...]:
        return tuple(
            (owner, secret.name("b", owner, bucket))
            for owner, secret in zip(self._owners(identity), self._secrets, strict=True)
        )

    def _hash_identity(self, identity: str) -> tuple[str, ...]:
        message = utf8(identity)
        owners = tuple(_hmac(s.owner_key, message).hex()[:OWNER_HEX_CHARS] for s in self._secrets)
        if not self._placed:
            return owners
        group = hashlib.sha256(_INFO_PLACEMENT + message).hexdigest()[:PLACEMENT_HEX_CHARS]
        return tuple(f"{group}.{owner}" for owner in owners)

    def _derive_aead(self, index: int, owner: str) -> AESGCM:
        return AESGCM(_expand(self._secrets[index].prk, _INFO_DATA_KEY + utf8(owner), 32))
