"""Facts read straight from a JE environment's ``.jdb`` files, without opening it in JE.

Each log file starts with a file-header entry: a 14-byte entry header (checksum u32, entry
type u8 = 0x19, entry version u8, previous offset u32, item size u32, all little-endian),
then the header item whose last 4 bytes are the log version (6 for JE 3.3, 15 for 7.5.11).
Reading it first lets pycrawler choose the JE that opens a store before the JVM starts
(:mod:`pycrawler.store.je_choice`). A JE writes its own log version into the files it starts, so
the newest file says which JE the store needs now.
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..errors import BadInput

FILE_HEADER_TYPE = 0x19
ENTRY_HEADER = struct.Struct("<IBBII")


def jdb_files(path: Path) -> list[Path]:
    """The environment's log files in log order (their names are hex file numbers)."""
    return sorted(Path(path).glob("*.jdb"), key=lambda p: p.name)


def newest_begun_file(path: Path) -> Path | None:
    """The environment's newest ``.jdb`` file that has begun; None when there is none.

    An empty newest file is passed over, as JE passes it over: a JE that dies right after
    creating its next file leaves it empty, and JE's recovery takes the log to end in the file
    before (JE's own DbDump opens such a store as it is)."""
    return next((file for file in reversed(jdb_files(path)) if file.stat().st_size > 0), None)


def log_version(path: Path) -> int:
    """The log version of the environment's newest begun ``.jdb`` file (a JE that opened the
    store for writing may have started it in its own, newer version)."""
    if not jdb_files(path):
        raise BadInput(f"{path} is not a JE environment (no .jdb files)")
    newest = newest_begun_file(path)
    if newest is None:
        raise BadInput(f"{path} is not a JE environment (its .jdb files are empty)")
    return file_log_version(newest)


def file_log_version(file: Path) -> int:
    """The log version in the header of one ``.jdb`` file."""
    with open(file, "rb") as f:
        head = f.read(ENTRY_HEADER.size + 64)
    if len(head) < ENTRY_HEADER.size:
        raise BadInput(f"{file} is truncated: too short for a JE file header")
    _checksum, entry_type, _version, _prev, item_size = ENTRY_HEADER.unpack_from(head)
    end = ENTRY_HEADER.size + item_size
    if entry_type != FILE_HEADER_TYPE or not 4 <= item_size <= 64 or len(head) < end:
        raise BadInput(f"{file} is not a JE log file (no file header)")
    return struct.unpack_from("<i", head, end - 4)[0]
