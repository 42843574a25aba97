"""Writing and reading an export file's lines: the header first, each record sealed or not, and an end record
whose count (and, in plaintext, digest) shows a file cut short or changed; errors name the line."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable, Iterator
from typing import IO, Any

import pydantic_core

from mcpkit import __version__

from ._format import FORMAT, FORMAT_VERSION, ExportFileError
from ._sealing import FileSeal, SealingKey

__all__ = ["LineReader", "LineWriter"]


class LineWriter:
    """Writes an export: ``header()``, then ``record()`` per value, then ``end()`` (what makes the file complete)."""

    __slots__ = ("_digest", "_out", "_seal", "count")

    def __init__(self, out: IO[bytes], key: SealingKey | None) -> None:
        self._out = out
        self._seal = None if key is None else FileSeal.new(key)
        self._digest = hashlib.sha256()
        #: Records written so far.
        self.count = 0

    def header(self, what: dict[str, Any], now: float | None = None) -> None:
        sealing = None
        if self._seal is not None:
            sealing = self._seal.description | {"check": self._seal.check()}
        line = json.dumps(
            {
                "type": "header",
                "format": FORMAT,
                "version": FORMAT_VERSION,
                "mcpkit": __version__,
                "exported_at": time.time() if now is None else now,
                "what": what,
                "sealing": sealing,
            },
            separators=(",", ":"),
        ).encode()
        if self._seal is not None:
            self._seal.bind(line)
        self._out.write(line + b"\n")

    def record(self, line: bytes) -> None:
        self.count += 1
        self._digest.update(line + b"\n")
        self._write(line, self.count + 1)

    def end(self) -> None:
        end = {"type": "end", "records": self.count, "digest": self._digest.hexdigest()}
        self._write(json.dumps(end).encode(), self.count + 2)
        self._out.flush()

    def _write(self, line: bytes, number: int) -> None:
        if self._seal is not None:
            line = b'{"sealed":"' + self._seal.seal(number, line) + b'"}'
        self._out.write(line + b"\n")


class LineReader:
    """Reads an export's lines as JSON objects, checking its header, each line's seal and the end record.

    ``header`` is the file's header once read; ``records()`` yields (line number, record) for every value record and
    raises ``ExportFileError`` naming the line when the file is cut short, changed, or not an export.
    """

    def __init__(self, lines: Iterable[bytes], key: SealingKey | None, *, plaintext: bool) -> None:
        self._lines = iter(lines)
        self._key, self._plaintext = key, plaintext
        self._seal: FileSeal | None = None
        self._digest = hashlib.sha256()
        self.header = self._read_header()
        #: Records read so far.
        self.count = 0

    def _read_header(self) -> dict[str, Any]:
        first = next(self._lines, None)
        if first is None:
            raise ExportFileError(1, "the file is empty, not an mcpkit export")
        header = _parsed(1, first)
        if header.get("format") != FORMAT or header.get("type") != "header":
            raise ExportFileError(1, f"this is not an mcpkit memory export (no header with format {FORMAT!r})")
        version = header.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise ExportFileError(1, "the header's version is not a whole number")
        if version > FORMAT_VERSION:
            raise ExportFileError(
                1,
                f"the file is format version {version} (written by mcpkit {header.get('mcpkit')}); this mcpkit "
                f"{__version__} reads up to version {FORMAT_VERSION}: import it with a newer mcpkit",
            )
        sealing = header.get("sealing")
        if sealing is None:
            if not self._plaintext:
                raise ExportFileError(
                    1, "the file is plaintext, not sealed: pass --plaintext (plaintext=True) to import it knowingly"
                )
            return header
        if self._key is None:
            raise ExportFileError(1, "the file is sealed: give its passphrase or key file")
        if not isinstance(sealing, dict):
            raise ExportFileError(1, 'the header\'s "sealing" is not an object')
        try:
            self._seal = FileSeal.opened(self._key, sealing)
            self._seal.verify(sealing.get("check"))
        except ValueError as exc:
            raise ExportFileError(1, f"the file cannot be opened: {exc}") from None
        self._seal.bind(first.rstrip(b"\r\n"))
        return header

    def records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Each value record with its line number."""
        number = 1
        for raw in self._lines:
            number += 1
            line = raw.rstrip(b"\r\n")
            if not raw.endswith(b"\n"):
                raise ExportFileError(number, "the file ends in the middle of this line: it is cut short")
            if self._seal is not None:
                sealed = _sealed_text(line)
                if sealed is None:
                    record = _parsed(number, line)
                    sealed = record.get("sealed")
                    if not isinstance(sealed, str) or len(record) != 1:
                        raise ExportFileError(number, "the file is sealed but this line is not")
                try:
                    line = self._seal.open(number, sealed)
                except ValueError as exc:
                    raise ExportFileError(number, str(exc)) from None
            record = _parsed(number, line)
            kind = record.get("type")
            if kind == "end":
                self._check_end(number, record)
                return
            if self._seal is None:  # a sealed file's lines are checked by their seals, not by the digest
                self._digest.update(line + b"\n")
            if kind != "value":
                raise ExportFileError(number, f"a record of unknown type {kind!r}")
            self.count += 1
            yield number, record
        raise ExportFileError(
            number + 1, f"the file ends after {self.count} records without its end record: it is cut short"
        )

    def _check_end(self, number: int, record: dict[str, Any]) -> None:
        if record.get("records") != self.count:
            raise ExportFileError(
                number, f"the end record counts {record.get('records')} records but {self.count} came before it"
            )
        if self._seal is None and record.get("digest") != self._digest.hexdigest():
            raise ExportFileError(number, "the records before the end record are not those exported (corrupted)")
        if next(self._lines, None) is not None:
            raise ExportFileError(number + 1, "lines follow the end record")


#: A sealed line as ``LineWriter`` writes it: ``{"sealed":"BASE64"}``.
_SEALED_HEAD, _SEALED_TAIL = b'{"sealed":"', b'"}'


def _sealed_text(line: bytes) -> str | None:
    """The sealed text of a line written as ``LineWriter`` writes one, read without a JSON parse (base64 has no
    quote, backslash or control character, so the slice is the string itself); None for any other line, parsed."""
    if line.startswith(_SEALED_HEAD) and line.endswith(_SEALED_TAIL):
        inner = line[len(_SEALED_HEAD) : -len(_SEALED_TAIL)]
        if not inner.translate(None, _BASE64_BYTES):
            return inner.decode("ascii")
    return None


_BASE64_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="


def _parsed(number: int, line: bytes) -> dict[str, Any]:
    try:
        # pydantic_core's parser reads what it accepts as ``json.loads`` does (NaN and Infinity too; the last of a
        # repeated name wins), several times faster: an import parses every record. What it refuses (a lone
        # surrogate's escape, a byte order mark) is left to ``json.loads``.
        record = pydantic_core.from_json(line)
    except ValueError:
        record = _loaded(number, line)
    if not isinstance(record, dict):
        raise ExportFileError(number, "the line is not a JSON object")
    return record


def _loaded(number: int, line: bytes) -> Any:
    try:
        return json.loads(line)
    except (ValueError, UnicodeDecodeError):
        raise ExportFileError(number, "the line is not JSON (corrupted or cut short)") from None
