"""Folders that appear whole or not at all: what ``heritrix import``, ``crawler4j import`` and
``store migrate`` write.

Such a command builds a new folder (a crawl state, a JE environment) over minutes, in many
commits. Built in place, a kill midway would leave a folder that looks like the real thing:
``pycrawler crawl --state`` would resume half an import, ``store ls`` would list half a copy.
So :func:`building` builds in ``TARGET.part`` beside the target, fsyncs every file and folder
in it, and renames it over ``TARGET`` (which is absent or an empty folder) as the last step.
A kill at any moment leaves either no ``TARGET`` (or the empty one it was) or the whole one.

A killed build leaves ``TARGET.part``: the same command run again clears it and starts over,
so it ends as an uninterrupted run would. While a build runs it holds a lock (``flock``) on
``TARGET.part``, which a child process writing into it inherits, so a second command building
the same target is refused rather than clearing a folder that is still being written.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from . import failpoints
from .atomic_write import PARTIAL_SUFFIX, sync_directory
from .errors import BadInput


class FolderBuild(NamedTuple):
    """A build under way: the folder to write into, and the descriptor that holds its lock
    (pass it to a child process that writes there: ``subprocess.Popen(pass_fds=...)``)."""

    path: Path
    lock_fd: int


def require_new_folder(target: str | os.PathLike, what: str) -> Path:
    """``target`` as a Path, when it is absent or an empty folder; else a one-line refusal
    saying to ``what`` (the command: "import", "migrate") into a new or empty folder."""
    target = Path(target)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise BadInput(f"{target} is not an empty folder: {what} into a new or empty folder")
    return target


def sync_tree(folder: Path) -> None:
    """fsync every file and folder under ``folder``, and ``folder`` itself."""
    for directory, _, files in os.walk(folder, topdown=False):
        for name in files:
            fd = os.open(os.path.join(directory, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        sync_directory(directory)


@contextlib.contextmanager
def building(target: str | os.PathLike, what: str) -> Iterator[FolderBuild]:
    """Build the new folder ``target`` (module docstring): the ``with`` block writes into the
    yielded build's ``path`` (``TARGET.part``), which becomes ``target`` when the block ends
    without an error. On an error it is removed, and ``target`` stays as it was."""
    target = require_new_folder(target, what).resolve()
    partial = target.with_name(target.name + PARTIAL_SUFFIX)
    partial.mkdir(parents=True, exist_ok=True)
    lock_fd = os.open(partial, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise BadInput(f"{partial} is being written by another {what} of {target}: let it end (or end it), "
                           "then run again") from None
        try:
            _clear(partial)  # what a killed build left
            yield FolderBuild(partial, lock_fd)
            sync_tree(partial)
            failpoints.hit("folder.build.written")
            try:
                os.rename(partial, target)  # replaces an empty folder
            except OSError as exc:
                raise BadInput(f"cannot put {partial} in place of {target}: {exc.strerror}") from None
            failpoints.hit("folder.build.renamed")
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise
        sync_directory(target.parent)
    finally:
        os.close(lock_fd)


def _clear(folder: Path) -> None:
    """Remove everything in ``folder``, keeping the folder (its lock is held)."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
