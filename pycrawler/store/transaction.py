"""JE transactions as context managers: commit when the block succeeds, abort when it raises.

A writer whose own state must follow what a transaction made durable (a file it may change
only once the records saying so are committed) registers :meth:`Transaction.after_commit`.
"""

from __future__ import annotations


class Transaction:
    """One JE transaction of ``env``; ``java`` is its handle (None once ended)."""

    def __init__(self, env):
        self.env = env
        self._access = env.access
        with self._access.errors(str(env.path)):
            self.java = self._access.begin()
        self._after_commit: list = []

    def after_commit(self, callback) -> None:
        """Call ``callback()`` once this transaction has committed (never, if it aborts)."""
        self._after_commit.append(callback)

    def commit(self) -> None:
        if self.java is not None:
            txn, self.java = self.java, None
            with self._access.errors(str(self.env.path)):
                self._access.commit(txn)
            callbacks, self._after_commit = self._after_commit, []
            for callback in callbacks:
                callback()

    def abort(self) -> None:
        if self.java is not None:
            txn, self.java = self.java, None
            self._after_commit = []
            with self._access.errors(str(self.env.path)):
                self._access.abort(txn)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
