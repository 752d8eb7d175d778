"""A JE environment: one directory of ``.jdb`` log files holding named databases.

JE lets one process write an environment at a time (it holds ``je.lck``); any number may
read it with ``read_only=True``, which never changes a byte of the store.

JE itself creates ``je.lck`` even for a read-only open. So when a store has no ``je.lck`` (a
copied or archived store, one no JE has written in place), a read-only environment is opened
through a private folder of symbolic links to the store's files, and the store's folder is left
exactly as it was. When ``je.lck`` exists JE opens it without changing it, and takes its shared
reader lock there, which keeps a live writer's cleaner from deleting files under the reader.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

from .. import failpoints, jvm
from ..errors import BadInput
from ..progress import status_line
from . import je_choice, logfile
from .access import LocalAccess, environment_impl
from .environment_base import EnvironmentBase
from .java_errors import je_errors
from .java_worker import JavaWorker

DURABILITY = ("sync", "write_no_sync", "no_sync")
LOCK_FILE = "je.lck"
JE7_QUIET = {
    "je.stats.collect": "false",                          # je.stat.csv, je.config.csv
    "com.sleepycat.je.util.FileHandler.level": "OFF",     # je.info.N
}
"""JE 7 keeps statistics and a log file in the environment's folder, appended by background
threads; every open turns both off (over the caller's settings), so that a read-only open
writes nothing there, however long it runs. A writable open's JE still creates its log file,
empty, and is told to make it elsewhere (:meth:`Environment._je_log_elsewhere`). JE 3.3 has
neither, and refuses unknown settings."""
JE7_WRITABLE = {"je.freeDisk": str(256 << 20)}
"""JE 7 refuses writes while the disk has less than ``je.freeDisk`` free (5 GB by default, sized
for its own large deployments); pycrawler's stores ask for 256 MB. A caller's value wins (a
crawl derives it from ``--min-free``); 0 turns the check off."""


class Environment(EnvironmentBase):
    """A JE environment, opened on construction and closed by :meth:`close` (idempotent).

    ``transactional``: databases get ACID transactions and survive kill -9 up to the last
    commit (as durable as ``durability`` says: ``sync`` flushes to disk at each commit,
    ``write_no_sync`` hands the log to the OS (survives a process crash, not a power cut),
    ``no_sync`` leaves it in JE's buffers). ``cache_size`` is bytes of JE cache.
    """

    def __init__(self, path: str | os.PathLike, *, create: bool = False, read_only: bool = False,
                 transactional: bool = True, cache_size: int | None = None,
                 durability: str | None = None, config: dict[str, str] | None = None):
        self.path = Path(path)
        self.read_only = read_only
        self.transactional = transactional
        self._env = None
        self._view: Path | None = None
        self._je_log: Path | None = None
        self._databases: list = []
        self._check_path(create)
        je_choice.start_for(self.path)
        if self.log_version is not None:
            je_choice.check_loaded(self.path, self.log_version, writing=not read_only)
        EnvironmentConfig = jvm.jclass("com.sleepycat.je.EnvironmentConfig")
        cfg = EnvironmentConfig()
        cfg.setAllowCreate(create and not read_only)
        cfg.setReadOnly(read_only)
        cfg.setTransactional(transactional)
        if cache_size:
            cfg.setCacheSize(int(cache_size))
        if durability:
            cfg.setDurability(_durability(durability))
        settings = dict(config or {})
        if jvm.je_major() >= 7:
            defaults = {} if read_only else JE7_WRITABLE
            forced = JE7_QUIET if read_only else JE7_QUIET | self._je_log_elsewhere()
            settings = defaults | settings | forced
        for name, value in settings.items():
            cfg.setConfigParam(name, str(value))
        home = self._read_only_view() if read_only else self.path
        # Measured before JE opens it, so that a live writer's appends are not taken for damage.
        log_extent = _log_extent(self.path)
        try:
            with je_errors(str(self.path), renames={str(home): str(self.path)}):
                self._env = _recovering(self.path, lambda: jvm.jclass("com.sleepycat.je.Environment")(
                    jvm.jclass("java.io.File")(str(home)), cfg))
        except BaseException:
            self._remove_temporary_folders()
            raise
        self.access = LocalAccess(self._env)
        if not read_only:
            failpoints.hit("je.recovered")
        if read_only and log_extent is not None:
            self._check_log_end(*log_extent)

    def _check_log_end(self, last_file: int, last_size: int) -> None:
        """Refuse a log that JE's read-only recovery cut short.

        JE takes the first entry of the last log file that is torn or fails its checksum for
        the end of the log. Opened for writing, JE would truncate the file there; read-only, it
        silently shows the store as of that point (often empty). A read-only open is asked
        to show the store as it is, so a log ending before its last file does is an error.
        """
        end = _end_of_log(self._env)
        if end < (last_file, last_size):
            self.close()
            raise BadInput(
                f"{self.path} is damaged: its log ends at byte {end[1]} of {end[0]:08x}.jdb, but "
                f"{last_file:08x}.jdb has {last_size} bytes (a truncated or corrupt file, or a write "
                "torn by a crash; what follows that point is unreadable)")

    def _read_only_view(self) -> Path:
        """The folder JE opens for a read-only environment: the store itself when it has a
        ``je.lck`` (JE opens that file and changes nothing), otherwise a private folder of
        symbolic links to the store's files, so that JE's new ``je.lck`` lands there."""
        if (self.path / LOCK_FILE).exists():
            return self.path
        self._view = Path(tempfile.mkdtemp(prefix="pycrawler-read-only-"))
        for entry in self.path.iterdir():
            if entry.is_file():
                (self._view / entry.name).symlink_to(entry.resolve())
        return self._view

    def _je_log_elsewhere(self) -> dict[str, str]:
        """The setting that puts JE's own log (``je.info.N``) of a writable open in a private
        folder, removed at close. JE 7+ starts that log in the environment's folder before it
        takes the environment's lock, whatever its level is set to: an open refused because
        another process holds the store left a new ``je.info.0.1`` beside the holder's
        ``je.info.0``, and a refused open is to leave the store as it was. (The log stays empty:
        :data:`JE7_QUIET`; pycrawler reports JE's failures itself, in one line. JE 7 releases that
        cannot be told where keep it in the store.)"""
        if not hasattr(jvm.jclass("com.sleepycat.je.EnvironmentConfig"), "FILE_LOGGING_DIRECTORY"):
            return {}
        _remove_je_logs_of_dead_processes()
        self._je_log = Path(tempfile.mkdtemp(prefix=f"{JE_LOG_PREFIX}{os.getpid()}-"))
        return {"je.file.logging.directory": str(self._je_log)}

    def _remove_temporary_folders(self) -> None:
        """Remove the read-only view and JE's log folder of this open, if it made them."""
        for folder in filter(None, (self._view, self._je_log)):
            shutil.rmtree(folder, ignore_errors=True)
        self._view = self._je_log = None

    def _check_path(self, create: bool) -> None:
        if not self.path.exists():
            if not create or self.read_only:
                raise BadInput(f"{self.path} does not exist")
            self.path.mkdir(parents=True)
        if not self.path.is_dir():
            raise BadInput(f"{self.path} is not a directory")
        self.log_version = je_choice.stored_log_version(self.path)
        if self.log_version is None and not (create and not self.read_only):
            raise BadInput(f"{self.path} is not a JE environment (no .jdb files)")

    # -- databases -----------------------------------------------------------------------
    def database_names(self) -> list[str]:
        with je_errors(str(self.path)):
            return [str(n) for n in self.java.getDatabaseNames()]

    def remove_database(self, name: str) -> None:
        with je_errors(f"{self.path} database {name!r}"):
            self.java.removeDatabase(None, name)

    # -- life cycle ----------------------------------------------------------------------
    def _handle(self):
        return self._env

    @property
    def java(self):
        return self._open_handle()

    def cache_stats(self) -> dict[str, int]:
        """JE's cache counters since the open: ``cache_misses`` (``nCacheMiss``: tree nodes and
        records read from the log because the cache did not hold them), ``cache_bytes`` (the
        cache's size in use) and ``cache_max_bytes`` (the size it may grow to). Fast
        statistics: counters only, no walk of the trees."""
        with je_errors(str(self.path)):
            stats = self._fast_stats()
            return {"cache_misses": int(stats.getNCacheMiss()), "cache_bytes": int(stats.getCacheTotalBytes()),
                    "cache_max_bytes": int(self.java.getConfig().getCacheSize())}

    def background_stats(self) -> dict[str, int]:
        """Counts of the work JE's own threads did since the open, which a caller's commit may
        wait on: ``cleaner_runs`` (log files cleaned: live records rewritten) and ``checkpoints``.
        Fast statistics, as :meth:`cache_stats`."""
        with je_errors(str(self.path)):
            stats = self._fast_stats()
            return {"cleaner_runs": int(stats.getNCleanerRuns()), "checkpoints": int(stats.getNCheckpoints())}

    def _fast_stats(self):
        """JE's EnvironmentStats with ``setFast``: counters only, no walk of the trees."""
        config = jvm.jclass("com.sleepycat.je.StatsConfig")()
        config.setFast(True)
        return self.java.getStats(config)

    def sync(self) -> None:
        """Write everything to disk (a no-op when read-only)."""
        if not self.read_only:
            with je_errors(str(self.path)):
                self.java.sync()

    def close(self) -> None:
        if self._env is None:
            return
        for db in self._databases:
            db.close()
        self._databases.clear()
        env, self._env = self._env, None
        if not self.read_only:
            failpoints.hit("je.closing")
        try:
            with je_errors(str(self.path)):
                env.close()
        finally:
            self._remove_temporary_folders()
        if not self.read_only:
            failpoints.hit("je.closed")

    def __repr__(self) -> str:
        state = "closed" if self.closed else ("read-only" if self.read_only else "open")
        return f"<Environment {str(self.path)!r} {state}>"


JE_LOG_PREFIX = "pycrawler-je-log-"
"""The temporary folders of JE's logs (:meth:`Environment._je_log_elsewhere`), named by the
process: ``pycrawler-je-log-PID-XXXX``."""


def _remove_je_logs_of_dead_processes() -> None:
    """Remove the JE log folders that processes killed before their close left behind (a crawl
    is made to be killed), so that they do not pile up in the temporary folder."""
    for folder in Path(tempfile.gettempdir()).glob(f"{JE_LOG_PREFIX}*-*"):
        pid = folder.name[len(JE_LOG_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:  # it does, and is another user's
        pass
    return True


def _log_extent(path: Path) -> tuple[int, int] | None:
    """(number, size) of the environment's newest begun log file; None when it has none yet."""
    newest = logfile.newest_begun_file(path)
    return (int(newest.stem, 16), newest.stat().st_size) if newest else None


RECOVERY_SHOWN_AFTER = 1.0
"""Seconds an open may take before its recovery is shown (on a terminal)."""


def _recovering(path: Path, open_environment):
    """``open_environment()``, JE's constructor, which recovers the log first: after a kill -9,
    everything since the last checkpoint (seconds to minutes for a large store). That is one
    Java call; made on the main thread, it would hold back SIGINT and SIGTERM until it returned.
    So the main thread hands it to a worker thread and waits in short slices, handling signals
    (a handler that raises stops the wait; the recovery, which a kill at any point leaves to be
    done again, is abandoned with the process) and, past :data:`RECOVERY_SHOWN_AFTER`, drawing
    how long it has taken."""
    if threading.current_thread() is not threading.main_thread():
        return open_environment()
    worker = JavaWorker()
    opening = worker.submit(open_environment)
    started = time.monotonic()
    try:
        with contextlib.suppress(concurrent.futures.TimeoutError):
            return opening.result(timeout=RECOVERY_SHOWN_AFTER)
        size = sum(f.stat().st_size for f in logfile.jdb_files(path)) / 1e6
        with status_line(position=0) as line:
            while True:
                line.set_description_str(f"opening {path}: JE recovers its log ({size:,.0f} MB), "
                                         f"{time.monotonic() - started:.0f} s")
                with contextlib.suppress(concurrent.futures.TimeoutError):
                    return opening.result(timeout=0.25)
    finally:
        if opening.done():
            worker.close()


def _end_of_log(java_env) -> tuple[int, int]:
    """(file number, offset) where JE's recovery found the end of the log."""
    lsn = int(environment_impl(java_env).getFileManager().getNextLsn())
    return lsn >> 32, lsn & 0xFFFFFFFF


def _durability(name: str):
    D = jvm.jclass("com.sleepycat.je.Durability")
    policy = {"sync": D.SyncPolicy.SYNC, "write_no_sync": D.SyncPolicy.WRITE_NO_SYNC,
              "no_sync": D.SyncPolicy.NO_SYNC}
    if name not in policy:
        raise BadInput(f"durability must be one of {', '.join(DURABILITY)}, not {name!r}")
    return D(policy[name], D.SyncPolicy.NO_SYNC, D.ReplicaAckPolicy.NONE)
