"""Pythonic Berkeley DB Java Edition: environments, databases, transactions, cursors.

>>> with Environment("state", create=True) as env:
...     db = env.open_database("urls", create=True)
...     db.put_many([b"a", b"b"], [b"1", b"2"])   # one JNI call for the batch
...     list(db.items(prefix=b"a"))
[(b'a', b'1')]

:func:`open` takes a folder or the address of a served environment (``pycrawler serve``,
``py4j://HOST:PORT``) and gives the same API either way. Bindings (tuple, serial), the sorted
mapping view and the DbDump format live in the sibling modules of this package.
"""

from .database import Database
from .environment import Environment
from .transaction import Transaction

__all__ = ["Environment", "Database", "Transaction", "open"]


def open(target, *, token: str | None = None, **options):
    """An :class:`Environment` for a folder, or a
    :class:`~pycrawler.store.gateway_client.RemoteEnvironment` for a ``py4j://`` address
    (``token``: py4j's auth token, by default the one its server wrote for this user;
    ``options``: only ``read_only`` applies to a served environment, the server chose the rest)."""
    from . import gateway_address

    if gateway_address.is_address(str(target)):
        from .gateway_client import RemoteEnvironment

        return RemoteEnvironment(str(target), token=token, read_only=options.get("read_only", False))
    return Environment(target, **options)
