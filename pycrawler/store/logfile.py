"""Facts read straight from a JE environment's ``.jdb`` files, without opening it in JE.

Each log file starts with a file-header entry: a 14-byte entry header (checksum u32, entry
type u8 = 0x19, entry version u8, previous offset u32, item size u32, all little-endian),
then the header item whose last 4 bytes are the log version (6 for JE 3.3, 15 for 7.5.11).
Reading it first lets pycrawler say which JE a store needs before JE touches it.
"""

from __future__ import annotations

import struct
from pathlib import Path

from ..errors import BadInput

FILE_HEADER_TYPE = 0x19
ENTRY_HEADER = struct.Struct("<IBBII")

# The newest log version each JE major release reads (JE's LogEntryType.LOG_VERSION).
MAX_LOG_VERSION = {3: 6, 4: 8, 5: 9, 6: 11, 7: 15, 18: 17}

# Which JE release first wrote each log version; for the message that names the fix.
WRITER_OF = {6: "JE 3.3 (Heritrix 1.14)", 15: "JE 7.5 (Heritrix 3.4+)"}


def jdb_files(path: Path) -> list[Path]:
    """The environment's log files in log order (their names are hex file numbers)."""
    return sorted(Path(path).glob("*.jdb"), key=lambda p: p.name)


def log_version(path: Path) -> int:
    """The log version in the header of the environment's first ``.jdb`` file."""
    files = jdb_files(path)
    if not files:
        raise BadInput(f"{path} is not a JE environment (no .jdb files)")
    with open(files[0], "rb") as f:
        head = f.read(ENTRY_HEADER.size + 64)
    if len(head) < ENTRY_HEADER.size:
        raise BadInput(f"{files[0]} is truncated: too short for a JE file header")
    _checksum, entry_type, _version, _prev, item_size = ENTRY_HEADER.unpack_from(head)
    end = ENTRY_HEADER.size + item_size
    if entry_type != FILE_HEADER_TYPE or not 4 <= item_size <= 64 or len(head) < end:
        raise BadInput(f"{files[0]} is not a JE log file (no file header)")
    return struct.unpack_from("<i", head, end - 4)[0]


def max_readable(je_major: int) -> int | None:
    """The newest log version a JE of this major version reads, when known."""
    return MAX_LOG_VERSION.get(je_major)
