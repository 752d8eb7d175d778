"""A named JE database: bytes in, bytes out, ordered by unsigned byte comparison.

Single-record methods cross JNI once each and are for convenience; the ``*_many`` methods
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

import numpy as np

from .java_errors import je_errors
from .packing import pack, unpack

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


class Database:
    """One JE database of an :class:`~pycrawler.store.Environment`."""

    def __init__(self, env, name: str, *, create: bool, read_only: bool, sorted_duplicates: bool | None,
                 key_prefixing: bool = False):
        import jpype

        self.env = env
        self.name = name
        self.read_only = read_only
        self._where = f"{env.path} database {name!r}"
        cfg = jpype.JClass("com.sleepycat.je.DatabaseConfig")()
        cfg.setAllowCreate(create and not read_only)
        cfg.setReadOnly(read_only)
        cfg.setTransactional(env.transactional)
        cfg.setKeyPrefixing(key_prefixing)
        if sorted_duplicates is None:
            # Take the setting the database was created with (JE refuses a mismatch).
            jpype.JClass("com.sleepycat.je.DbInternal").setUseExistingConfig(cfg, True)
        else:
            cfg.setSortedDuplicates(sorted_duplicates)
        if not create and name not in env.database_names():
            from ..errors import BadInput

            raise BadInput(f"{env.path} has no database {name!r} (it has: {', '.join(env.database_names()) or 'none'})")
        with je_errors(self._where):
            self._db = env.java.openDatabase(None, name, cfg)
            self.sorted_duplicates = bool(self._db.getConfig().getSortedDuplicates())
        self._bulk = jpype.JClass("org.pycrawler.bridge.Bulk")
        self._entry = jpype.JClass("com.sleepycat.je.DatabaseEntry")
        self._SUCCESS = jpype.JClass("com.sleepycat.je.OperationStatus").SUCCESS
        self._bytes = jpype.JArray(jpype.JByte)
        self._ints = jpype.JArray(jpype.JInt)

    @property
    def java(self):
        if self._db is None:
            from ..errors import BadInput

            raise BadInput(f"{self._where} is closed")
        return self._db

    def close(self) -> None:
        if getattr(self, "_db", None) is not None:
            db, self._db = self._db, None
            with je_errors(self._where):
                db.close()

    def __enter__(self) -> "Database":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- one record at a time ------------------------------------------------------------
    def get(self, key: bytes, default=None, txn=None):
        k, v = self._entry(self._bytes(key)), self._entry()
        with je_errors(self._where):
            status = self.java.get(_java_txn(txn), k, v, None)
        return bytes(v.getData()) if status == self._SUCCESS else default

    def __getitem__(self, key: bytes) -> bytes:
        value = self.get(key)
        if value is None:
            raise KeyError(key)
        return value

    def __contains__(self, key: bytes) -> bool:
        return bool(self.contains_many([key])[0])

    def put(self, key: bytes, value: bytes, txn=None) -> None:
        with je_errors(self._where):
            self.java.put(_java_txn(txn), self._entry(self._bytes(key)), self._entry(self._bytes(value)))

    def put_if_absent(self, key: bytes, value: bytes, txn=None) -> bool:
        """Write only when ``key`` is absent; True when written."""
        with je_errors(self._where):
            status = self.java.putNoOverwrite(_java_txn(txn), self._entry(self._bytes(key)),
                                              self._entry(self._bytes(value)))
        return status == self._SUCCESS

    def delete(self, key: bytes, txn=None) -> bool:
        with je_errors(self._where):
            return self.java.delete(_java_txn(txn), self._entry(self._bytes(key))) == self._SUCCESS

    def count(self) -> int:
        with je_errors(self._where):
            return int(self.java.count())

    __len__ = count

    # -- batches: one JNI crossing each ----------------------------------------------------
    def _packed(self, items) -> tuple:
        data, offsets = items if isinstance(items, tuple) else pack(items)
        return self._bytes(data), self._ints(offsets)

    def put_many(self, keys: Sequence[bytes] | tuple, values: Sequence[bytes] | tuple, txn=None) -> int:
        """Write every pair (overwriting). ``keys``/``values`` are lists of bytes or packed
        ``(data, offsets)`` pairs (see :mod:`~pycrawler.store.packing`)."""
        with je_errors(self._where):
            return int(self._bulk.put(self.java, _java_txn(txn), *self._packed(keys), *self._packed(values)))

    def put_if_absent_many(self, keys, values=None, txn=None) -> np.ndarray:
        """Insert the pairs whose keys are absent (empty values when ``values`` is None);
        a bool array says which were inserted. A key twice in one batch: the first wins."""
        with je_errors(self._where):
            if values is None:
                out = self._bulk.addKeys(self.java, _java_txn(txn), *self._packed(keys))
            else:
                out = self._bulk.putNoOverwrite(self.java, _java_txn(txn), *self._packed(keys), *self._packed(values))
        return np.array(out, dtype=bool)

    def contains_many(self, keys, txn=None) -> np.ndarray:
        with je_errors(self._where):
            return np.array(self._bulk.contains(self.java, _java_txn(txn), *self._packed(keys)), dtype=bool)

    def delete_many(self, keys, txn=None) -> np.ndarray:
        with je_errors(self._where):
            return np.array(self._bulk.delete(self.java, _java_txn(txn), *self._packed(keys)), dtype=bool)

    def get_many(self, keys, txn=None) -> list[bytes | None]:
        """Values in key order of the request; None where a key is absent."""
        import jpype

        jkeys, joffs = self._packed(keys)
        found = jpype.JArray(jpype.JBoolean)(len(joffs) - 1)
        with je_errors(self._where):
            packed = self._bulk.get(self.java, _java_txn(txn), jkeys, joffs, found)
        values = unpack(packed.data, packed.offsets)
        return [v if hit else None for v, hit in zip(values, np.asarray(found))]

    def delete_range(self, start: bytes | None = None, stop: bytes | None = None, txn=None) -> int:
        """Remove every record with ``start <= key < stop``; returns how many."""
        with je_errors(self._where):
            return int(self._bulk.deleteRange(self.java, _java_txn(txn), start and self._bytes(start),
                                              stop and self._bytes(stop)))

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
        jbound = None if bound is None else self._bytes(bound)
        while True:
            with je_errors(self._where):
                page = self._bulk.scan(self.java, _java_txn(txn), None if position is None else self._bytes(position),
                                       None if resume_value is None else self._bytes(resume_value),
                                       inclusive, jbound, reverse, page_records, SCAN_PAGE_BYTES, keys_only)
            keys = unpack(page[0].data, page[0].offsets)
            values = unpack(page[1].data, page[1].offsets)
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
        """A positioned cursor (one JNI call per move), for walks that change direction."""
        from .cursor import Cursor

        return Cursor(self, txn)

    def __repr__(self) -> str:
        return f"<Database {self.name!r} of {str(self.env.path)!r}>"
