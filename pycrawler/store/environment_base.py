"""What every kind of environment shares: opening databases and beginning transactions.

An :class:`~pycrawler.store.Environment` (JE in this process) and a
:class:`~pycrawler.store.gateway_client.RemoteEnvironment` (JE in a ``pycrawler serve``
process) differ in how they reach JE, their ``access``; the databases and transactions they
hand out are the same classes.
"""

from __future__ import annotations

from ..errors import BadInput


class EnvironmentBase:
    """The shared half of an environment. Subclasses set ``path``, ``read_only``,
    ``transactional``, ``access`` and an empty ``_databases`` list, and define ``close``."""

    path: object
    read_only: bool
    transactional: bool
    _databases: list

    def open_database(self, name: str, *, create: bool = False, read_only: bool | None = None,
                      sorted_duplicates: bool | None = None, key_prefixing: bool = False):
        """Open the database ``name``; ``create`` makes it when absent. ``sorted_duplicates``
        None opens an existing database with the duplicates setting it was created with (and
        creates one without duplicates). ``key_prefixing`` stores each B-tree node's common
        key prefix once: worth it for long keys that share prefixes (URLs, queue keys)."""
        from .database import Database

        db = Database(self, name, create=create, read_only=self.read_only if read_only is None else read_only,
                      sorted_duplicates=sorted_duplicates, key_prefixing=key_prefixing)
        self._databases.append(db)
        return db

    def begin(self):
        """A transaction; use it as a context manager (commit on success, abort on error)."""
        from .transaction import Transaction

        if not self.transactional:
            raise BadInput(f"{self.path} was opened (or served) without transactions")
        return Transaction(self)

    def je_version(self) -> str:
        """The version of the JE that holds the environment: this process's, or its server's."""
        with self.access.errors(str(self.path)):
            return self.access.je_version()

    def stored_key_prefixing(self) -> dict[str, bool]:
        """Database name -> whether JE prefixes its keys, as stored."""
        with self.access.errors(str(self.path)):
            return self.access.stored_key_prefixing(self.database_names())

    def _handle(self):
        """JE's environment object (in process) or the server's entry point; None once closed."""
        raise NotImplementedError

    def _open_handle(self):
        handle = self._handle()
        if handle is None:
            raise BadInput(f"environment {self.path} is closed")
        return handle

    @property
    def closed(self) -> bool:
        return self._handle() is None

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
