"""The DbDump text format: read and write what JE's ``DbDump`` writes and ``DbLoad`` reads.

JE's ``com.sleepycat.je.util.DbDump`` / ``DbLoad`` use the text format of C Berkeley DB's
``db_dump`` / ``db_load``, so a dump is the portable way to move a database between JE
versions, between JE and C Berkeley DB, and into or out of pycrawler::

    VERSION=3
    format=bytevalue          (or "print")
    database=urls             (optional: DbLoad uses it when no -s is given)
    type=btree
    dupsort=0
    HEADER=END
     6b6579                   <- one line per key, then one per value, each with a leading space
     76616c7565
    DATA=END

``bytevalue`` writes every byte as two lower-case hex digits. ``print`` writes the bytes 33..126
as themselves (a backslash doubled) and every other byte as ``\\`` plus two hex digits; JE's
DbDump escapes the space too, C's db_dump writes it literally, and this reader takes both.

Reading follows JE 3.3.98's DbLoad, more strictly where DbLoad would silently load garbage: a
header line without ``=``, a ``VERSION`` other than 3, an unknown ``format`` or a ``type`` other
than ``btree``, a data line without its leading space, a bad hex digit or escape, a key without
its value and a missing ``DATA=END`` all raise :class:`~pycrawler.errors.BadInput` naming the line.
Header keys JE does not know (C's ``db_pagesize``, ``h_ffactor`` ...) are kept in
:attr:`DumpHeader.extra` rather than refused, so C dumps load too.

>>> import io
>>> out = io.StringIO()
>>> with DbDumpWriter(out, database="urls") as dump:
...     dump.write(b"key", b"value")
>>> [record for record in DbDumpReader(io.StringIO(out.getvalue()))]
[(b'key', b'value')]
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO

from ..errors import BadInput

FORMATS = ("bytevalue", "print")
VERSION = "3"
HEADER_END = "HEADER=END"
DATA_END = "DATA=END"

_HEX = re.compile(rb"(?:[0-9a-fA-F]{2})*")
# One escape of the print format: a doubled backslash or a backslash and two hex digits.
_ESCAPE = re.compile(rb"\\(\\|[0-9a-fA-F]{2})")
# The bytes JE's CmdUtil.formatEntry writes as themselves in the print format (33..126),
# except the backslash, which it doubles; every other byte becomes \xx.
_PRINT_TABLE = [chr(b) if 33 <= b <= 126 else f"\\{b:02x}" for b in range(256)]
_PRINT_TABLE[0x5C] = "\\\\"


@dataclass
class DumpHeader:
    """The header of one dumped database."""

    format: str = "bytevalue"
    database: str | None = None
    dupsort: bool = False
    type: str = "btree"
    version: str = VERSION
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def printable(self) -> bool:
        return self.format == "print"


# -- one entry (a key or a value) --------------------------------------------------------------
def encode_entry(data: bytes, printable: bool = False) -> str:
    """The text of one key or value, without the leading space: as JE's DbDump writes it."""
    if printable:
        return "".join([_PRINT_TABLE[b] for b in data])
    return data.hex()


def decode_entry(text: str | bytes, printable: bool = False) -> bytes:
    """The bytes of one key or value line (without its leading space); ValueError when malformed."""
    raw = text.encode("latin-1") if isinstance(text, str) else bytes(text)
    if not printable:
        raw = raw.strip()
        if not _HEX.fullmatch(raw):
            raise ValueError("not an even number of hex digits")
        return bytes.fromhex(raw.decode("ascii"))
    if b"\\" not in raw:
        return raw
    # Every backslash must start a complete escape: remove the escapes and look for one left over.
    if b"\\" in _ESCAPE.sub(b"", raw):
        raise ValueError("a backslash not followed by another backslash or two hex digits")
    return _ESCAPE.sub(lambda m: b"\\" if m.group(1) == b"\\" else bytes.fromhex(m.group(1).decode()), raw)


# -- reading ---------------------------------------------------------------------------------
class DbDumpReader:
    """Records of one dumped database, read as a stream: iterate for ``(key, value)`` bytes.

    ``stream`` is a binary or text file object; the header is read on construction (so a
    malformed header fails before anything is loaded) and is in :attr:`header`. The reader
    stops at ``DATA=END``; anything after it is left unread in ``stream``. ``name`` is used in
    error messages (defaults to the stream's ``name``).
    """

    def __init__(self, stream: IO, *, name: str | None = None):
        self._stream = stream
        self.name = name or str(getattr(stream, "name", "dump"))
        self.line_number = 0
        self.header = self._read_header()

    def _error(self, what: str) -> BadInput:
        return BadInput(f"{self.name} line {self.line_number}: {what}")

    def _next_line(self) -> bytes | None:
        """The next line without its line ending, as bytes; None at the end of the stream."""
        line = self._stream.readline()
        if not line:
            return None
        self.line_number += 1
        if isinstance(line, str):
            try:
                line = line.encode("latin-1")
            except UnicodeEncodeError:
                raise self._error("a character outside the 8-bit range (a dump is ASCII text)") from None
        return line.rstrip(b"\r\n") if line.endswith(b"\n") else line

    def _read_header(self) -> DumpHeader:
        header = DumpHeader()
        while True:
            line = self._next_line()
            if line is None:
                if self.line_number == 0:
                    raise BadInput(f"{self.name} is empty: not a DbDump file")
                raise self._error(f"the header ends without {HEADER_END} (is the file truncated?)")
            text = line.decode("latin-1")
            if text == HEADER_END:
                return header
            self._header_line(header, text)

    def _header_line(self, header: DumpHeader, text: str) -> None:
        name, equals, value = text.partition("=")
        name, value = name.strip().lower(), value.strip()
        if not equals:
            raise self._error(f"{text[:60]!r} is not a header line (name=value): is this a DbDump file?")
        if name == "version":
            if value != VERSION:
                raise self._error(f"dump format VERSION={value} is not supported (only {VERSION})")
        elif name == "format":
            if value.lower() not in FORMATS:
                raise self._error(f"format={value} is not one of {', '.join(FORMATS)}")
            header.format = value.lower()
        elif name == "type":
            if value.lower() != "btree":
                raise self._error(f"type={value} is not supported (JE databases are btree)")
        elif name == "dupsort":
            if value.lower() not in ("1", "true", "0", "false"):
                raise self._error(f"dupsort={value} is not 0, 1, true or false")
            header.dupsort = value.lower() in ("1", "true")
        elif name == "database":
            header.database = value
        else:
            header.extra[name] = value

    def _entry(self, line: bytes) -> bytes:
        if not line.startswith(b" "):
            raise self._error(f"a data line must start with a space, found {line[:40]!r}")
        try:
            return decode_entry(line[1:], self.header.printable)
        except ValueError as exc:
            raise self._error(f"bad {self.header.format} data: {exc}") from None

    def __iter__(self) -> Iterator[tuple[bytes, bytes]]:
        while True:
            line = self._next_line()
            if line is None:
                raise self._error(f"the data ends without {DATA_END} (is the file truncated?)")
            if line == DATA_END.encode():
                return
            key = self._entry(line)
            line = self._next_line()
            if line is None or line == DATA_END.encode():
                raise self._error("a key without its value")
            yield key, self._entry(line)


# -- writing ---------------------------------------------------------------------------------
class DbDumpWriter:
    """Write one database's records in the DbDump format, as a stream.

    ``stream`` is a binary or text file object. The header is written with the first record
    (or on :meth:`close`, for an empty database); :meth:`close` writes ``DATA=END`` and leaves
    ``stream`` open. ``database`` names the database in the header (DbLoad uses it when given
    no ``-s``); a name that would not survive the line-based header is left out.
    """

    def __init__(self, stream: IO, *, database: str | None = None, format: str = "bytevalue",
                 dupsort: bool = False):
        if format not in FORMATS:
            raise BadInput(f"dump format must be one of {', '.join(FORMATS)}, not {format!r}")
        self._stream = stream
        self._text = isinstance(stream, io.TextIOBase)
        self.header = DumpHeader(format=format, database=database if header_safe(database) else None,
                                 dupsort=dupsort)
        self._started = False
        self._closed = False
        self.records = 0

    def _emit(self, lines: list[str]) -> None:
        text = "\n".join(lines) + "\n"
        self._stream.write(text if self._text else text.encode("utf-8"))

    def _start(self) -> None:
        if not self._started:
            self._started = True
            head = self.header
            lines = [f"VERSION={head.version}", f"format={head.format}"]
            if head.database is not None:
                lines.append(f"database={head.database}")
            lines += [f"type={head.type}", f"dupsort={int(head.dupsort)}"]
            lines += [f"{name}={value}" for name, value in head.extra.items()]  # none for JE's DbLoad
            lines.append(HEADER_END)
            self._emit(lines)

    def write(self, key: bytes, value: bytes) -> None:
        self.write_many(((key, value),))

    def write_many(self, records: Iterable[tuple[bytes, bytes]]) -> int:
        """Write ``(key, value)`` pairs; returns how many."""
        self._start()
        printable = self.header.printable
        lines = []
        for key, value in records:
            lines.append(" " + encode_entry(key, printable))
            lines.append(" " + encode_entry(value, printable))
        if lines:
            self._emit(lines)
        self.records += len(lines) // 2
        return len(lines) // 2

    def close(self) -> None:
        if not self._closed:
            self._start()
            self._emit([DATA_END])
            self._closed = True

    def __enter__(self) -> DbDumpWriter:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        # A failed dump stays without DATA=END, so a loader sees it as truncated.
        if exc_type is None:
            self.close()


def header_safe(name: str | None) -> bool:
    """Whether ``name`` reads back unchanged from a ``database=`` line (DbLoad trims the value)."""
    return bool(name) and name == name.strip() and name.isprintable()
