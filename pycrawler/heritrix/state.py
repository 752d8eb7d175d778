"""A Heritrix crawl state, opened read-only: its databases, pending URLs and seen keys.

``HeritrixState.open(STATE)`` takes a job's ``state/`` folder (a JE environment), or with
``checkpoint=`` one of its checkpoints (:mod:`.checkpoints`). Before JE touches anything it
checks what the store needs:

- the log version in the first ``.jdb`` file's header: 6 is JE 3.3 (Heritrix 1.14), which
  pycrawler's default JE reads; 15 is JE 7.5 (Heritrix 3.4+), which needs the user's
  Heritrix ``lib/`` (``je-7.5.11.jar``) on ``PYCRAWLER_CLASSPATH``;
- that no crawler holds the environment's write lock (:mod:`.writer_lock`): a live crawl is
  refused (:class:`~pycrawler.errors.StoreLocked`), never read beside and never unlocked;
- that the environment holds Heritrix's databases (``pending`` or ``alreadySeenUrl``).

The store is opened read-only and non-transactionally (Heritrix's environments are not
transactional): not a byte of the user's folders changes.

``HeritrixState.open("py4j://HOST:PORT")`` reads a served copy instead (``pycrawler serve``
on a copy of the state folder, in a process whose JE reads its log version): the same reads,
a batch or a page of records per round trip. The checks above are the server's then: its JE
opened the store, and it owns the write lock. A checkpoint is assembled from the state
folder's files, which a served environment does not hand out, so ``checkpoint=`` with an
address is refused.

Seen keys are ``alreadySeenUrl``'s: ``LongBinding`` of ``create_key(canonicalize(url))``,
i.e. the 64-bit key with its sign bit flipped, big-endian. :meth:`HeritrixState.seen_keys`
yields them as unsigned 64-bit numbers in ascending order; :meth:`contains_keys` answers a
batch in one JNI crossing. Batches of keys are numpy uint64 arrays, or lists of ints where
numpy cannot be imported (GraalPy): :func:`big_endian` writes either as 8 bytes a key.
"""

from __future__ import annotations

import functools
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path

from .. import store
from ..errors import BadInput, PycrawlerError, StoreLocked
from ..store import Environment, gateway_address, logfile
from ..store.packing import np, pack, pack_fixed
from . import checkpoints
from .writer_lock import WriterProbe

PENDING = "pending"
SEEN = "alreadySeenUrl"
CATALOG = "classCatalog"
HERITRIX_DATABASES = (PENDING, SEEN)
SCAN_PAGE = 65536
CACHE_BYTES = 64 << 20
"""JE's cache for a Heritrix state. The commands scan it in key order, which a large cache does not
speed up, and ``heritrix import`` opens a second environment (the crawl state it writes) in the
same JVM: with JE's default (60% of the heap each) two caches that fill outgrow the heap. An
import of 10M pending URLs died of that (JE's ``JAVA_ERROR``) before this cap."""

H3_LOG_VERSION = 7  # JE 4 and later: the JE Heritrix 3 ships; Heritrix 1.14 wrote version 6


def heritrix_of(log_version: int) -> int:
    """Which Heritrix writes logs of this version: 1 (JE 3.3 and older) or 3."""
    return 3 if log_version >= H3_LOG_VERSION else 1


if np is None:
    def _packed_long_binding(keys: list[int]) -> tuple:
        """createKey values as ``LongBinding`` keys (sign bit flipped, big-endian), packed."""
        return pack([(key ^ (1 << 63)).to_bytes(8, "big") for key in keys])

    def _unsigned(keys: list[bytes]) -> list[int]:
        stored = [int.from_bytes(key, "big") ^ (1 << 63) for key in keys if len(key) == 8]
        if len(stored) != len(keys):
            raise _not_seen_keys()
        return stored

    def big_endian(keys: list[int]) -> bytes:
        """A batch of keys, 8 bytes each, big-endian."""
        return struct.pack(f">{len(keys)}Q", *keys)
else:
    SIGN_BIT = np.uint64(1 << 63)

    def long_binding(keys: np.ndarray) -> np.ndarray:
        """createKey values (uint64) as ``LongBinding`` keys: sign bit flipped, big-endian."""
        return (np.asarray(keys, dtype=np.uint64) ^ SIGN_BIT).astype(">u8")

    def _packed_long_binding(keys) -> tuple:
        return pack_fixed(long_binding(keys))

    def _unsigned(keys: list[bytes]) -> np.ndarray:
        stored = np.frombuffer(b"".join(keys), dtype=">u8")
        if len(stored) != len(keys):
            raise _not_seen_keys()
        return stored.astype(np.uint64) ^ SIGN_BIT

    def big_endian(keys: np.ndarray) -> bytes:
        """A batch of keys, 8 bytes each, big-endian."""
        return keys.astype(">u8").tobytes()


def _not_seen_keys() -> BadInput:
    return BadInput(f"{SEEN} holds a key that is not 8 bytes: not a Heritrix seen set")


class HeritrixState:
    """A Heritrix crawl state open for reading; close it (or use ``with``) when done."""

    def __init__(self, path: Path | str, env, probe: WriterProbe | None, checkpoint=None, scratch=None):
        self.path = path
        self.env = env
        self.checkpoint = checkpoint
        self._probe = probe
        self._scratch = scratch
        self._databases: dict[str, object] = {}

    @classmethod
    def open(cls, path, *, checkpoint: str | None = None) -> HeritrixState:
        """The state in the folder ``path`` (or its ``checkpoint``), or served at the address
        ``path`` (see the module docstring)."""
        if gateway_address.is_address(str(path)):
            return cls._served(str(path), checkpoint)
        path = Path(path)
        if not path.is_dir():
            raise BadInput(f"{path} is not a Heritrix crawl state: "
                           + ("it does not exist" if not path.exists() else "not a directory"))
        probe = WriterProbe(path)
        scratch = chosen = None
        try:
            if checkpoint is None:
                _refuse_live_writer(path, probe)
                home = path
            else:
                chosen = checkpoints.resolve(path, checkpoint)
                home = scratch = checkpoints.assemble(chosen, path)
            if not logfile.jdb_files(home):
                raise BadInput(f"{path} is not a Heritrix crawl state: it holds no JE log files (.jdb); "
                               "give a job's state/ folder")
            env = Environment(home, read_only=True, transactional=False, cache_size=CACHE_BYTES)
        except BaseException:
            probe.close()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            raise
        return cls(path, env, probe, chosen, scratch)._checked()

    @classmethod
    def _served(cls, address: str, checkpoint: str | None) -> HeritrixState:
        if checkpoint is not None:
            raise BadInput(f"--checkpoint assembles a checkpoint from the state folder's files, which {address} does "
                           "not hand out: give the folder itself")
        return cls(address, store.open(address, read_only=True), None)._checked()

    def _checked(self) -> HeritrixState:
        names = self.env.database_names()
        if not any(name in names for name in HERITRIX_DATABASES):
            self.close()
            raise BadInput(f"{self.path} is a JE environment but not a Heritrix crawl state: it has no "
                           f"{' or '.join(HERITRIX_DATABASES)} database (its databases: {', '.join(names) or 'none'})")
        return self

    # -- facts ---------------------------------------------------------------------------------
    @property
    def log_version(self) -> int:
        return self.env.log_version

    @property
    def served(self) -> bool:
        return not self.env.access.local

    @property
    def source(self) -> str:
        """Where the state is read from: its folder's absolute path, or the address."""
        return self.path if self.served else str(self.path.resolve())

    @functools.cached_property
    def heritrix(self) -> int:
        """Whose layout the values follow: 1 when the class catalog knows Heritrix 1's
        ``CrawlURI`` (serial-bound values); 3 for a JE 4+ store, or one whose pending values
        are not serial-bound (Kryo); 1 by its log version when nothing is pending."""
        from .pending import H1_CRAWL_URI

        if CATALOG in self.database_names():
            from ..store.catalog import ClassCatalog

            if ClassCatalog(self.database(CATALOG)).class_id(H1_CRAWL_URI) is not None:
                return 1
        if heritrix_of(self.log_version) == 3:
            return 3
        return 3 if any(value for _, value in self.pending_records(page_records=64)) else 1

    def database_names(self) -> list[str]:
        return self.env.database_names()

    def database(self, name: str):
        if name not in self._databases:
            self._databases[name] = _open_existing(self.env, name)
        return self._databases[name]

    def counts(self) -> dict[str, int]:
        """Records per database (JE counts by walking each one)."""
        return {name: self.database(name).count() for name in self.database_names()}

    # -- pending ---------------------------------------------------------------------------------
    def pending_records(self, *, keys_only: bool = False, page_records: int = 4096) -> Iterator[tuple[bytes, bytes]]:
        """Every pending record in key order (queue by queue), cap records included."""
        if PENDING not in self.database_names():
            return iter(())
        return self.database(PENDING).items(keys_only=keys_only, page_records=page_records)

    # -- seen ------------------------------------------------------------------------------------
    def seen_count(self) -> int:
        return self.database(SEEN).count() if SEEN in self.database_names() else 0

    def seen_keys(self, page: int = SCAN_PAGE) -> Iterator[np.ndarray]:
        """The seen keys as uint64 arrays (lists without numpy), ascending (unsigned) across all.

        JE orders ``LongBinding`` keys as signed numbers, so the keys with the top bit clear
        (stored from ``80 00..``) are read first, then the rest (stored below ``80``)."""
        if SEEN not in self.database_names():
            return
        db = self.database(SEEN)
        middle = b"\x80" + b"\x00" * 7
        for start, stop in ((middle, None), (None, middle)):
            batch: list[bytes] = []
            for key in db.keys(start, stop, page_records=page):
                batch.append(key)
                if len(batch) == page:
                    yield _unsigned(batch)
                    batch = []
            if batch:
                yield _unsigned(batch)

    def contains_keys(self, keys: np.ndarray) -> np.ndarray:
        """For each createKey value: is it in ``alreadySeenUrl``? One JNI crossing per call."""
        if SEEN not in self.database_names() or not len(keys):
            return [False] * len(keys) if np is None else np.zeros(len(keys), dtype=bool)
        return self.database(SEEN).contains_many(_packed_long_binding(keys))

    # -- life cycle ------------------------------------------------------------------------------
    def close(self) -> None:
        try:
            self._databases.clear()
            self.env.close()
        finally:
            if self._probe is not None:
                self._probe.close()
            if self._scratch is not None:
                shutil.rmtree(self._scratch, ignore_errors=True)
                self._scratch = None

    def __enter__(self) -> HeritrixState:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _refuse_live_writer(path: Path, probe: WriterProbe) -> None:
    pid = probe.writer_pid()
    if pid is not None:
        raise StoreLocked(
            f"{path} is in use: process {pid} holds its JE write lock (a running Heritrix?). Its pending and "
            "alreadySeenUrl databases are deferred-write, so a reader would see an old, partial crawl: stop the "
            "crawl, or checkpoint it and read the checkpoint (--checkpoint latest). Its lock is left alone")


def _open_existing(env: Environment, name: str):
    """Open ``name`` whichever duplicates setting it was created with."""
    try:
        return env.open_database(name)
    except PycrawlerError as exc:
        if "sortedDuplicates" not in str(exc) and "duplicates" not in str(exc).lower():
            raise
        return env.open_database(name, sorted_duplicates=True)
