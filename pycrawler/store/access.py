"""The seam between the store layer's Python logic and the JE that does the work.

:class:`~pycrawler.store.Database` and :class:`~pycrawler.store.Transaction` hold handles and
call an *access*: :class:`LocalAccess` here, which drives JE in this process through JPype,
or :class:`~pycrawler.store.gateway_client.RemoteAccess`, which drives a served environment
through py4j. Both take and return batches packed as ``(data, offsets)`` (see
:mod:`~pycrawler.store.packing`) so that a batch crosses JNI, or the socket, once.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from .. import jvm
from .java_errors import je_errors
from .packing import as_list, flags, unpack_java

if TYPE_CHECKING:
    import numpy as np

DUPLICATES = {None: -1, False: 0, True: 1}
"""``sorted_duplicates`` as ``Served.Configs`` passes it (-1: as created)."""


@dataclasses.dataclass(frozen=True)
class Census:
    """A database's keys read as work-queue keys (a class key, ``0x00``, two order bytes, a
    48-bit ordinal; see :mod:`pycrawler.frontier.workqueues`), by ``WorkQueues.census`` in
    Java: each queue's prefix (class key + ``0x00``) and URL count in key order (caps not
    counted), and the smallest and largest ordinal (-1: no URL)."""

    prefixes: list[bytes]
    counts: list[int]
    min_ordinal: int
    max_ordinal: int


def database_config(create: bool, read_only: bool, transactional: bool, duplicates: int, key_prefixing: bool):
    """The ``DatabaseConfig`` pycrawler opens a database with. Built from Python (JE's
    setters return void in JE 3.3 and the config in JE 7, so only a reflective call works
    with both); ``org.pycrawler.bridge.Served`` calls it back for served databases."""
    cfg = jvm.jclass("com.sleepycat.je.DatabaseConfig")()
    cfg.setAllowCreate(bool(create and not read_only))
    cfg.setReadOnly(bool(read_only))
    cfg.setTransactional(bool(transactional))
    cfg.setKeyPrefixing(bool(key_prefixing))
    if duplicates < 0:
        # Take the setting the database was created with (JE refuses a mismatch).
        jvm.jclass("com.sleepycat.je.DbInternal").setUseExistingConfig(cfg, True)
    else:
        cfg.setSortedDuplicates(duplicates > 0)
    return cfg


class LocalAccess:
    """JE in this process: database and transaction handles are JE's own Java objects."""

    def __init__(self, java_env):
        self._env = java_env
        self._bulk = jvm.jclass("org.pycrawler.bridge.Bulk")
        self._entry = jvm.jclass("com.sleepycat.je.DatabaseEntry")
        self._SUCCESS = jvm.jclass("com.sleepycat.je.OperationStatus").SUCCESS
        # JE 4.0's own count() misses records its cursors see (Bulk.countByWalk).
        self._count_by_walk = jvm.loaded_je().line == (4, 0)
        self._bytes = jvm.byte_array
        self._ints = jvm.int_array
        self._booleans = jvm.boolean_array
        self._to_bytes = jvm.to_bytes

    local = True
    errors = staticmethod(je_errors)

    def _packed(self, batch) -> tuple:
        return self._bytes(batch[0]), self._ints(batch[1])

    def _maybe(self, data: bytes | None):
        return None if data is None else self._bytes(data)

    def je_version(self) -> str:
        return str(jvm.jclass("org.pycrawler.bridge.Versions").je())

    def stored_key_prefixing(self, names: list[str]) -> dict[str, bool]:
        """Read from JE's database tree: a database handle reports the flag its opener asked
        for, not the stored one (internal API)."""
        tree = environment_impl(self._env).getDbTree()
        stored = {}
        for entry in tree.getDbNamesAndIds().entrySet():
            if str(entry.getValue()) in names:
                impl = tree.getDb(entry.getKey())
                stored[str(entry.getValue())] = bool(impl.getKeyPrefixing())
                tree.releaseDb(impl)
        return stored

    # -- databases -------------------------------------------------------------------------
    def open_database(self, name: str, *, create: bool, read_only: bool, transactional: bool,
                      sorted_duplicates: bool | None, key_prefixing: bool):
        cfg = database_config(create, read_only, transactional, DUPLICATES[sorted_duplicates], key_prefixing)
        return self._env.openDatabase(None, name, cfg)

    def sorted_duplicates(self, db) -> bool:
        return bool(db.getConfig().getSortedDuplicates())

    def close_database(self, db) -> None:
        db.close()

    def count(self, db) -> int:
        return int(self._bulk.countByWalk(db) if self._count_by_walk else db.count())

    # -- transactions ----------------------------------------------------------------------
    def begin(self):
        return self._env.beginTransaction(None, None)

    def commit(self, txn) -> None:
        txn.commit()

    def abort(self, txn) -> None:
        txn.abort()

    # -- one record ------------------------------------------------------------------------
    def get(self, db, txn, key: bytes) -> bytes | None:
        k, v = self._entry(self._bytes(key)), self._entry()
        return self._to_bytes(v.getData()) if db.get(txn, k, v, None) == self._SUCCESS else None

    def put(self, db, txn, key: bytes, value: bytes) -> None:
        db.put(txn, self._entry(self._bytes(key)), self._entry(self._bytes(value)))

    def put_if_absent(self, db, txn, key: bytes, value: bytes) -> bool:
        return db.putNoOverwrite(txn, self._entry(self._bytes(key)), self._entry(self._bytes(value))) == self._SUCCESS

    def delete(self, db, txn, key: bytes) -> bool:
        return db.delete(txn, self._entry(self._bytes(key))) == self._SUCCESS

    # -- batches ---------------------------------------------------------------------------
    def put_many(self, db, txn, keys, values) -> int:
        return int(self._bulk.put(db, txn, *self._packed(keys), *self._packed(values)))

    def put_if_absent_many(self, db, txn, keys, values) -> np.ndarray:
        if values is None:
            out = self._bulk.addKeys(db, txn, *self._packed(keys))
        else:
            out = self._bulk.putNoOverwrite(db, txn, *self._packed(keys), *self._packed(values))
        return flags(out)

    def contains_many(self, db, txn, keys) -> np.ndarray:
        return flags(self._bulk.contains(db, txn, *self._packed(keys)))

    def delete_many(self, db, txn, keys) -> np.ndarray:
        return flags(self._bulk.delete(db, txn, *self._packed(keys)))

    def get_many(self, db, txn, keys) -> tuple[list[bytes], np.ndarray]:
        found = self._booleans(len(keys[1]) - 1)
        packed = self._bulk.get(db, txn, *self._packed(keys), found)
        return unpack_java(packed), flags(found)

    def delete_range(self, db, txn, start: bytes | None, stop: bytes | None) -> int:
        return int(self._bulk.deleteRange(db, txn, self._maybe(start), self._maybe(stop)))

    def census(self, db) -> Census:
        found = jvm.jclass("org.pycrawler.bridge.WorkQueues").census(db)
        return Census(unpack_java(found.prefixes), as_list(found.counts),
                      int(found.minOrdinal), int(found.maxOrdinal))

    def scan(self, db, txn, position, resume_value, inclusive, bound, reverse, records, max_bytes, keys_only):
        page = self._bulk.scan(db, txn, self._maybe(position), self._maybe(resume_value), inclusive,
                               self._maybe(bound), reverse, records, max_bytes, keys_only)
        return unpack_java(page[0]), unpack_java(page[1])


def environment_impl(java_env):
    """JE's internal ``EnvironmentImpl`` behind an ``Environment``: its accessor is named
    differently in JE 3.3 (``envGetEnvironmentImpl``), 4 and 5 (``getEnvironmentImpl``) and 7+
    (``getNonNullEnvImpl``)."""
    internal = jvm.jclass("com.sleepycat.je.DbInternal")
    for accessor in ("getNonNullEnvImpl", "envGetEnvironmentImpl", "getEnvironmentImpl"):
        if hasattr(internal, accessor):
            return getattr(internal, accessor)(java_env)
    raise AttributeError("this JE's DbInternal has no EnvironmentImpl accessor")
