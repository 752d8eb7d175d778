"""A named JE database: bytes in, bytes out, ordered by unsigned byte comparison.

Single-record methods cross JNI (or, served, the socket) once each and are for convenience; the ``*_many`` methods
and the scans hand the JVM whole batches (see ``org.pycrawler.bridge.Bulk``), which is what
any hot path must use.

Batches answer in the caller's order but are applied in key order (a stable sort in Java:
several times faster on random keys, and among equal keys the caller's order still decides).
Atomicity: with ``txn``, a batch is part of that transaction. Without one, a batch commits
every 50,000 records (``Bulk.COMMIT_EVERY``), in key order: each commit is atomic, and a
batch that fails part way raises with its earlier commits in place; this bounds the locks a
batch holds, whatever its size. Pass ``txn=env.begin()`` when a batch must be all or nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from .packing import pack

if TYPE_CHECKING:
    import numpy as np

SCAN_PAGE_RECORDS = 4096
SCAN_PAGE_BYTES = 4 << 20


def prefix_successor(prefix: bytes) -> bytes | None:
    """The smallest key greater than every key that starts with ``prefix`` (None: no bound)."""
    stripped = prefix.rstrip(b"\xff")
    if not stripped:
        return None
    return stripped[:-1] + bytes([stripped[-1] + 1])


def _java_txn(txn):
    return None if txn is None else txn.java


def _packed(items) -> tuple:
    return items if isinstance(items, tuple) else pack(items)


class Database:
    """One JE database of an :class:`~pycrawler.store.Environment` (or of a served one: the
    environment's ``access`` says how its JE is reached, see :mod:`~pycrawler.store.access`)."""

    def __init__(self, env, name: str, *, create: bool, read_only: bool, sorted_duplicates: bool | None,
                 key_prefixing: bool = False):
        self.env = env
        self.name = name
        self.read_only = read_only
        self._where = f"{env.path} database {name!r}"
        self._access = env.access
        self._db = None
        if not create and name not in env.database_names():
            from ..errors import BadInput

            raise BadInput(f"{env.path} has no database {name!r} (it has: {', '.join(env.database_names()) or 'none'})")
        with self._access.errors(self._where):
            self._db = self._access.open_database(name, create=create, read_only=read_only,
                                                  transactional=env.transactional,
                                                  sorted_duplicates=sorted_duplicates, key_prefixing=key_prefixing)
            self.sorted_duplicates = self._access.sorted_duplicates(self._db)

    @property
    def in_process(self) -> bool:
        """Whether JE runs in this process (False for a served environment): Java helpers
        that take :attr:`java` need it."""
        return self._access.local

    @property
    def java(self):
        """The database's handle: JE's Java object in process, a number for a served environment."""
        if self._db is None:
            from ..errors import BadInput

            raise BadInput(f"{self._where} is closed")
        return self._db

    def close(self) -> None:
        if getattr(self, "_db", None) is not None:
            db, self._db = self._db, None
            with self._access.errors(self._where):
                self._access.close_database(db)

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- one record at a time ------------------------------------------------------------
    def get(self, key: bytes, default=None, txn=None):
        with self._access.errors(self._where):
            value = self._access.get(self.java, _java_txn(txn), key)
        return default if value is None else value

    def __getitem__(self, key: bytes) -> bytes:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: bytes) -> bool:
        return bool(self.contains_many([key])[0])

    def put(self, key: bytes, value: bytes, txn=None) -> None:
        with self._access.errors(self._where):
            self._access.put(self.java, _java_txn(txn), key, value)

    def put_if_absent(self, key: bytes, value: bytes, txn=None) -> bool:
        """Write only when ``key`` is absent; True when written."""
        with self._access.errors(self._where):
            return self._access.put_if_absent(self.java, _java_txn(txn), key, value)

    def delete(self, key: bytes, txn=None) -> bool:
        with self._access.errors(self._where):
            return self._access.delete(self.java, _java_txn(txn), key)

    def count(self) -> int:
        with self._access.errors(self._where):
            return self._access.count(self.java)

    __len__ = count

    # -- batches: one JNI (or socket) crossing each ----------------------------------------
    def put_many(self, keys: Sequence[bytes] | tuple, values: Sequence[bytes] | tuple, txn=None) -> int:
        """Write every pair (overwriting). ``keys``/``values`` are lists of bytes or packed
        ``(data, offsets)`` pairs (see :mod:`~pycrawler.store.packing`)."""
        with self._access.errors(self._where):
            return self._access.put_many(self.java, _java_txn(txn), _packed(keys), _packed(values))

    def put_if_absent_many(self, keys, values=None, txn=None) -> np.ndarray:
        """Insert the pairs whose keys are absent (empty values when ``values`` is None);
        a bool array says which were inserted. A key twice in one batch: the first wins."""
        with self._access.errors(self._where):
            return self._access.put_if_absent_many(self.java, _java_txn(txn), _packed(keys),
                                                   None if values is None else _packed(values))

    def contains_many(self, keys, txn=None) -> np.ndarray:
        with self._access.errors(self._where):
            return self._access.contains_many(self.java, _java_txn(txn), _packed(keys))

    def delete_many(self, keys, txn=None) -> np.ndarray:
        with self._access.errors(self._where):
            return self._access.delete_many(self.java, _java_txn(txn), _packed(keys))

    def get_many(self, keys, txn=None) -> list[bytes | None]:
        """Values in key order of the request; None where a key is absent."""
        with self._access.errors(self._where):
            values, found = self._access.get_many(self.java, _java_txn(txn), _packed(keys))
        return [v if hit else None for v, hit in zip(values, found)]

    def queue_census(self):
        """Its keys counted as a work-queue frontier's ``pending`` keys are (see
        :class:`~pycrawler.store.access.Census`): one walk in Java over committed records,
        each read without holding its lock, one call in process or through a gateway."""
        with self._access.errors(self._where):
            return self._access.census(self.java)

    def delete_range(self, start: bytes | None = None, stop: bytes | None = None, txn=None) -> int:
        """Remove every record with ``start <= key < stop``; returns how many."""
        with self._access.errors(self._where):
            return self._access.delete_range(self.java, _java_txn(txn), start, stop)

    # -- ordered scans ---------------------------------------------------------------------
    def items(self, start: bytes | None = None, stop: bytes | None = None, *, prefix: bytes | None = None,
              reverse: bool = False, keys_only: bool = False, txn=None,
              page_records: int = SCAN_PAGE_RECORDS) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) pairs with ``start <= key < stop`` (and starting with ``prefix``), in
        key order or, with ``reverse``, descending. Read in pages of ``page_records``, one JNI
        call each; with ``keys_only`` values come back empty and are not read."""
        if prefix is not None:
            start = max(start or b"", prefix)
            upper = prefix_successor(prefix)
            stop = upper if stop is None else (stop if upper is None else min(stop, upper))
        if start is not None and stop is not None and start >= stop:
            return
        # With sorted duplicates a page's last key does not say where it ended: resume by
        # (key, value), which needs the values even when the caller wants keys only.
        duplicates = self.sorted_duplicates
        keys_only = keys_only and not duplicates
        position, inclusive = (stop, False) if reverse else (start, True)
        resume_value = None
        bound = start if reverse else stop
        while True:
            with self._access.errors(self._where):
                keys, values = self._access.scan(self.java, _java_txn(txn), position, resume_value, inclusive,
                                                 bound, reverse, page_records, SCAN_PAGE_BYTES, keys_only)
            yield from zip(keys, values)
            if not keys or (len(keys) < page_records
                            and sum(map(len, keys)) + sum(map(len, values)) < SCAN_PAGE_BYTES):
                return
            position, inclusive = keys[-1], False
            if duplicates:
                resume_value = values[-1]

    def keys(self, *args, **kwargs) -> Iterator[bytes]:
        return (k for k, _ in self.items(*args, keys_only=True, **kwargs))

    def values(self, *args, **kwargs) -> Iterator[bytes]:
        return (v for _, v in self.items(*args, **kwargs))

    def __iter__(self) -> Iterator[bytes]:
        return self.keys()

    def cursor(self, txn=None):
        """A positioned cursor (one JNI call per move), for walks that change direction; in
        process only (served, each move would be a round trip: scan with :meth:`items`)."""
        from .cursor import Cursor

        if not self.in_process:
            from ..errors import BadInput

            raise BadInput(f"{self._where}: cursors need the environment in this process; use items() or a batch")

        return Cursor(self, txn)

    def __repr__(self) -> str:
        return f"<Database {self.name!r} of {str(self.env.path)!r}>"
