"""A JE cursor over one database, for walks that move both ways or edit in place.

Every move is one JNI call, so bulk reads belong to :meth:`Database.items`; a cursor is for
positioned work (seek, step, replace or delete the current record). Use it as a context
manager so JE's cursor (and its locks) are released. In a transactional environment a cursor
that edits must be opened in a transaction (``db.cursor(txn)``), as JE requires.
"""

from __future__ import annotations

from .. import jvm
from .java_errors import je_errors


class Cursor:
    def __init__(self, db, txn=None):
        self.db = db
        self._entry = jvm.jclass("com.sleepycat.je.DatabaseEntry")
        self._SUCCESS = jvm.jclass("com.sleepycat.je.OperationStatus").SUCCESS
        self._bytes = jvm.byte_array
        self._to_bytes = jvm.to_bytes
        self._key, self._value = self._entry(), self._entry()
        with je_errors(db._where):
            self._cursor = db.java.openCursor(None if txn is None else txn.java, None)

    def _move(self, method, *args):
        with je_errors(self.db._where):
            status = method(*args, self._key, self._value, None)
        if status != self._SUCCESS:
            return None
        return self._to_bytes(self._key.getData()), self._to_bytes(self._value.getData())

    def first(self):
        """Move to the first record; (key, value) or None when the database is empty."""
        return self._move(self._cursor.getFirst)

    def last(self):
        return self._move(self._cursor.getLast)

    def next(self):
        return self._move(self._cursor.getNext)

    def prev(self):
        return self._move(self._cursor.getPrev)

    def seek(self, key: bytes):
        """Move to the first record with a key >= ``key``."""
        self._key.setData(self._bytes(key))
        return self._move(self._cursor.getSearchKeyRange)

    def replace(self, value: bytes) -> None:
        with je_errors(self.db._where):
            self._cursor.putCurrent(self._entry(self._bytes(value)))

    def delete(self) -> bool:
        with je_errors(self.db._where):
            return self._cursor.delete() == self._SUCCESS

    def close(self) -> None:
        if self._cursor is not None:
            cursor, self._cursor = self._cursor, None
            cursor.close()

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
