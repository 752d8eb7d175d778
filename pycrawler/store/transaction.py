"""JE transactions as context managers: commit when the block succeeds, abort when it raises."""

from __future__ import annotations


class Transaction:
    """One JE transaction of ``env``; ``java`` is its handle (None once ended)."""

    def __init__(self, env):
        self.env = env
        self._access = env.access
        with self._access.errors(str(env.path)):
            self.java = self._access.begin()

    def commit(self) -> None:
        if self.java is not None:
            txn, self.java = self.java, None
            with self._access.errors(str(self.env.path)):
                self._access.commit(txn)

    def abort(self) -> None:
        if self.java is not None:
            txn, self.java = self.java, None
            with self._access.errors(str(self.env.path)):
                self._access.abort(txn)

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
