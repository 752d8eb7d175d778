"""JE transactions as context managers: commit when the block succeeds, abort when it raises."""

from __future__ import annotations

from .java_errors import je_errors


class Transaction:
    def __init__(self, env):
        self.env = env
        with je_errors(str(env.path)):
            self.java = env.java.beginTransaction(None, None)

    def commit(self) -> None:
        if self.java is not None:
            txn, self.java = self.java, None
            with je_errors(str(self.env.path)):
                txn.commit()

    def abort(self) -> None:
        if self.java is not None:
            txn, self.java = self.java, None
            with je_errors(str(self.env.path)):
                txn.abort()

    def __enter__(self) -> "Transaction":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()
