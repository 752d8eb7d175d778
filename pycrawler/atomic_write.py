"""Files replaced whole or not at all: every JSON or metadata file pycrawler writes goes here.

A state file (``crawl.json``, ``cluster.json``, ``scrapy.json``, ``heritrix-import.json``,
a gateway's address file) and an output file (``store dump --out``, ``heritrix export``) is
written to ``NAME.part`` beside it, fsynced, renamed over ``NAME`` and its folder fsynced. A
kill or a power loss at any moment therefore leaves either the old file or the new one, never
a half-written one that the next run cannot read; what it can leave is a stale ``NAME.part``,
which nothing reads and the next write truncates.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from .errors import BadInput

PARTIAL_SUFFIX = ".part"


def sync_directory(path: str | os.PathLike) -> None:
    """fsync a folder, so that a file created or renamed in it survives a power loss."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def replacing(path: str | os.PathLike, *, binary: bool = False, private: bool = False) -> Iterator[IO]:
    """A stream whose content replaces ``path`` when the ``with`` block ends without an error;
    on an error ``path`` keeps its old content (or stays absent). Text is UTF-8 with ``\\n``
    line ends; ``private`` makes the file readable by this user only. A file that cannot be
    created is a :class:`BadInput` naming it."""
    target = Path(path)
    partial = target.with_name(target.name + PARTIAL_SUFFIX)
    try:
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o666)
    except OSError as exc:
        raise BadInput(f"cannot write {target}: {exc.strerror}") from None
    try:
        with (open(fd, "wb") if binary else open(fd, "w", encoding="utf-8", newline="\n")) as stream:
            if private:  # a stale partial keeps the mode it was created with
                os.fchmod(fd, 0o600)
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(partial, target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    sync_directory(target.parent)


def write_atomically(path: str | os.PathLike, content: str | bytes, *, private: bool = False) -> None:
    """Replace ``path`` with ``content`` (text as UTF-8) through :func:`replacing`."""
    with replacing(path, binary=isinstance(content, bytes), private=private) as stream:
        stream.write(content)
