"""Pythonic Berkeley DB Java Edition: environments, databases, transactions, cursors.

>>> with Environment("state", create=True) as env:
...     db = env.open_database("urls", create=True)
...     db.put_many([b"a", b"b"], [b"1", b"2"])   # one JNI call for the batch
...     list(db.items(prefix=b"a"))
[(b'a', b'1')]

Bindings (tuple, serial), the sorted mapping view and the DbDump format live in the sibling
modules of this package.
"""

from .database import Database
from .environment import Environment
from .transaction import Transaction

__all__ = ["Environment", "Database", "Transaction"]
