"""Which JE opens a store, decided from its log files before the JVM starts, and the two checks
that follow once a JE is loaded: it reads the store, and a write would not upgrade a foreign log.

A process runs on one JE (:mod:`pycrawler.jvm.je_releases`), so the first store a process opens
chooses it: :func:`start_for` reads the log version of the store's newest ``.jdb`` file and
starts the JVM on a JE that reads it (a new store: the JE of new stores). Every later open in
the same process is checked against the JE already loaded.

Never upgrading a foreign store: a JE writing into an environment whose newest file is of an
older log version writes entries of its own version, which the JE that owns the store may no
longer read (JE 18 writing into a Heritrix 3 state makes it unreadable to Heritrix's JE 7.5.11).
Such a read-write open is refused unless the user asked for it (``--upgrade-log``, which sets
``PYCRAWLER_UPGRADE_LOG=1`` for the process and its children). ``pycrawler store migrate`` moves
a store between JE releases on purpose, into a copy.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import jvm
from ..errors import SetupError
from ..jvm.je_releases import JeRelease, for_new_store, reader_of, writer_of
from . import logfile

UPGRADE_LOG = "PYCRAWLER_UPGRADE_LOG"


def stored_log_version(path: Path) -> int | None:
    """The log version of an existing store's newest file; None for a folder with no log yet."""
    return logfile.log_version(path) if path.is_dir() and logfile.jdb_files(path) else None


def chosen_for(path: Path) -> JeRelease:
    """The JE that would open the store at ``path`` in a new process."""
    version = stored_log_version(Path(path))
    if version is None:
        return for_new_store(jvm.TARGET, jvm.user_je())
    return reader_of(version, str(path), jvm.TARGET, jvm.user_je())


def start_for(path: str | os.PathLike) -> None:
    """Start the JVM on the JE that opens the store at ``path``, unless it runs already."""
    if not jvm.started():
        jvm.start(chosen_for(Path(path)))


def check_loaded(path: Path, log_version: int, *, writing: bool) -> None:
    """One line when the JE this process runs on cannot read the store, or would upgrade its log
    by writing to it."""
    loaded = jvm.loaded_je()
    if not loaded.reads(log_version):
        raise SetupError(
            f"{path} has JE log version {log_version}, written by {writer_of(log_version)}; this process already "
            f"runs {loaded} (for the store it opened first), which reads log versions up to {loaded.writes}: "
            "open it in a process of its own, where pycrawler chooses a JE that reads it")
    if writing and loaded.writes is not None and log_version < loaded.writes and not upgrade_allowed():
        raise SetupError(
            f"{path} has JE log version {log_version} ({writer_of(log_version)}); writing to it with {loaded} "
            f"would add log version {loaded.writes} entries, and then {writer_of(log_version)} could no longer "
            "read it: open it read-only, copy it with 'pycrawler store migrate', or pass --upgrade-log to "
            "upgrade it in place")


def upgrade_allowed() -> bool:
    return os.environ.get(UPGRADE_LOG) == "1"


def allow_upgrade() -> None:
    """Let this process (and the processes it starts) upgrade the log of the stores it writes."""
    os.environ[UPGRADE_LOG] = "1"
