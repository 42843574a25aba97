"""``FileSeal``: how an export file's lines are sealed — AES-256-GCM under a key made for that one file, from a
passphrase (scrypt) or a key file (HKDF-SHA256), each line numbered into its nonce so none can move or go."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

__all__ = ["MIN_KEY_FILE_BYTES", "FileSeal", "SealingKey"]

#: scrypt's cost for a passphrase: 2**15 rounds of 8 x 128 bytes (32 MB, about 0.1 s here), as RFC 7914 suggests.
_SCRYPT_N, _SCRYPT_R, _SCRYPT_P = 2**15, 8, 1
#: A key file holds at least this many bytes (of any kind): 32 random bytes, or a longer text.
MIN_KEY_FILE_BYTES = 32
_ALGORITHM = "AES-256-GCM"
#: The associated data of the header's key check (line 0: no record line has that number).
_CHECK = b"mcpkit export key check"


class SealingKey:
    """What seals or opens an export: a passphrase or the bytes of a key file (never written anywhere)."""

    __slots__ = ("_material", "kind")

    def __init__(self, material: bytes, kind: str) -> None:
        self._material, self.kind = material, kind

    def __repr__(self) -> str:
        return f"SealingKey({self.kind})"

    @classmethod
    def passphrase(cls, text: str) -> SealingKey:
        """A key from a passphrase (stretched with scrypt and a salt of the file's own)."""
        if len(text) < 8:
            raise ValueError("The export passphrase is shorter than 8 characters: choose a longer one.")
        return cls(text.encode("utf-8"), "scrypt")

    @classmethod
    def key_file(cls, path: str | Path) -> SealingKey:
        """A key from a file's bytes, every one of them (``head -c 32 /dev/urandom > export.key`` makes one): random
        bytes may end in what looks like whitespace, so nothing is stripped."""
        material = Path(path).read_bytes()
        if len(material) < MIN_KEY_FILE_BYTES:
            raise ValueError(
                f"The key file {str(path)!r} holds {len(material)} bytes; it needs at least {MIN_KEY_FILE_BYTES} "
                "(make one with: head -c 32 /dev/urandom > FILE)."
            )
        return cls(material, "key-file")

    def derive(self, salt: bytes, params: dict[str, Any]) -> bytes:
        """The file's 32-byte key for ``salt`` and the header's parameters."""
        if self.kind == "scrypt":
            n, r, p = (params.get(name) for name in ("n", "r", "p"))
            if not all(type(part) is int for part in (n, r, p)) or (n, r, p) != (_SCRYPT_N, _SCRYPT_R, _SCRYPT_P):
                # only what this version writes: a header cannot make an import spend gigabytes or hours on scrypt
                raise ValueError(
                    f"the header's scrypt parameters n={n!r:.20}, r={r!r:.20}, p={p!r:.20} are not this version's "
                    f"({_SCRYPT_N}, {_SCRYPT_R}, {_SCRYPT_P})"
                )
            return Scrypt(salt=salt, length=32, n=_SCRYPT_N, r=_SCRYPT_R, p=_SCRYPT_P).derive(self._material)
        return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=b"mcpkit export v1").derive(self._material)


class FileSeal:
    """Seals and opens the lines of one export file: line ``n``'s nonce is ``n``, and every line's associated data
    is the SHA-256 of the header line, so a line moved, dropped, or taken from another file does not open."""

    __slots__ = ("_aead", "_header_digest", "description")

    def __init__(self, key: bytes, description: dict[str, Any]) -> None:
        self._aead = AESGCM(key)
        self._header_digest = b""
        #: What the header says about the sealing (never the key).
        self.description = description

    @classmethod
    def new(cls, key: SealingKey) -> FileSeal:
        """The seal of a new export (a fresh salt: every file has a key of its own)."""
        salt = os.urandom(16)
        params: dict[str, Any] = {"algorithm": _ALGORITHM, "kdf": key.kind, "salt": _b64(salt)}
        if key.kind == "scrypt":
            params |= {"n": _SCRYPT_N, "r": _SCRYPT_R, "p": _SCRYPT_P}
        return cls(key.derive(salt, params), params)

    @classmethod
    def opened(cls, key: SealingKey, description: dict[str, Any]) -> FileSeal:
        """The seal a header describes, with ``key``; ValueError when the header asks for another kind of key."""
        if description.get("algorithm") != _ALGORITHM:
            raise ValueError(f"it is sealed with {description.get('algorithm')!r}, which this mcpkit cannot open")
        if description.get("kdf") != key.kind:
            wanted = "a passphrase" if description.get("kdf") == "scrypt" else "a key file"
            raise ValueError(f"it was sealed with {wanted}: give that instead")
        try:
            salt = base64.b64decode(str(description.get("salt", "")), validate=True)
        except ValueError:
            raise ValueError("its sealing salt is not base64") from None
        return cls(key.derive(salt, description), description)

    def check(self) -> str:
        """A short proof of the key, kept in the header, so a wrong key is told apart from a changed line."""
        return self.seal(0, b"mcpkit export key check", _CHECK).decode("ascii")

    def verify(self, check: object) -> None:
        """ValueError when ``check`` (from the header) was not made with this key."""
        try:
            self.open(0, str(check), _CHECK)
        except ValueError:
            raise ValueError("the passphrase or key file is not the one it was sealed with") from None

    def bind(self, header_line: bytes) -> None:
        """Tie every line to the header as written (a header changed afterwards makes every line fail)."""
        self._header_digest = hashlib.sha256(header_line).digest()

    def seal(self, number: int, plaintext: bytes, associated: bytes | None = None) -> bytes:
        """Line ``number``'s sealed text (base64 of the ciphertext and tag)."""
        nonce, bound = number.to_bytes(12, "big"), self._header_digest if associated is None else associated
        return base64.b64encode(self._aead.encrypt(nonce, plaintext, bound))

    def open(self, number: int, sealed: str, associated: bytes | None = None) -> bytes:
        """Line ``number``'s plaintext; ValueError when it was changed, moved, or sealed with another key."""
        try:
            data = base64.b64decode(sealed, validate=True)
            bound = self._header_digest if associated is None else associated
            return self._aead.decrypt(number.to_bytes(12, "big"), data, bound)
        except (InvalidTag, ValueError):
            raise ValueError(
                "it does not open: the line was changed or moved, the file's header was changed, or the key is not "
                "the one it was sealed with"
            ) from None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
