"""Synchronous Visited tables, and how one is bound to a JE environment it cannot write in.

:class:`SynchronousVisited` is a table that resolves every add at once (Bloom, the exact JE
set). Bound to an environment whose transactions it cannot join, such a table goes behind a
:class:`MarkLog`, whose marks follow commits.

A Bloom file (or an exact set in another environment) would mark a key the moment it is
checked; if the frontier's transaction enqueueing that URL then never commits (kill -9), the
table calls seen a URL that is nowhere, and it is never crawled. :class:`MarkLog` reverses
the order:

1. check: which keys the table does not hold (the first occurrence in the batch only);
2. in the caller's transaction, one record of the log database (``visited_marks``) holding
   those keys, committed with whatever the caller writes for them (the enqueue);
3. after the commit, mark them in the table; the record is deleted in the next transaction, or
   overwritten there by the next batch's record.

Opening replays every record left into the table before anything is checked: marking a key
twice changes nothing, so a crash anywhere leaves the table at most behind the frontier's
commits, and the replay brings it level. The table never runs ahead of them.

A batch costs one extra put (the log record, the batch's new keys packed, over the last
batch's record) in a transaction the caller makes anyway, and one check of the keys before
they are marked.
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Sequence
from typing import Any

from .. import failpoints
from ..errors import BadInput
from ..store.packing import np, pack
from .protocol import Visited, as_keys

LOG_DATABASE = "visited_marks"
_SEQUENCE = struct.Struct(">Q")


def first_occurrences(keys: np.ndarray) -> np.ndarray:
    """True at the first occurrence of each key in ``keys``."""
    first = np.zeros(len(keys), dtype=bool)
    first[np.unique(keys, return_index=True)[1]] = True
    return first


class SynchronousVisited(Visited):
    """A table that resolves every add at once: queued adds are delivered before they return."""

    def add_batch(self, keys, aux: Sequence[Any] | None = None, txn=None) -> None:
        keys = as_keys(keys)
        if aux is not None and len(aux) != len(keys):
            raise BadInput(f"aux has {len(aux)} entries for {len(keys)} keys")
        unique = self.add_many(keys) if txn is None else self.add_many(keys, txn=txn)
        if self._receiver is not None:
            self._receiver(keys, [None] * len(keys) if aux is None else aux, unique)

    def flush(self, txn=None) -> None:
        """Nothing is ever queued."""

    def bound_to(self, env) -> Visited:
        """Itself when it joins ``env``'s transactions, else behind a :class:`MarkLog` in ``env``."""
        if self.joins_transactions_of(env):
            return self
        return MarkLog(self, env)


class MarkLog(SynchronousVisited):
    """``table`` (synchronous) bound to JE environment ``env`` through a log of marks in it."""

    def __init__(self, table: Visited, env, name: str = LOG_DATABASE):
        self.table, self.env = table, env
        self.log = env.open_database(name, create=True)
        self._next = 0
        self._marked: list[bytes] = []   # records whose keys are in the table: deleted at the next commit
        self._replay()

    def _replay(self) -> None:
        records = list(self.log.items())
        for _, keys in records:
            self.table.add_many(np.frombuffer(keys, dtype=">u8").astype(np.uint64))
            failpoints.hit("marklog.replaying")
        if records:
            self.log.delete_many(pack([key for key, _ in records]))
            failpoints.hit("marklog.replayed")

    def add_many(self, keys, txn=None) -> np.ndarray:
        """Check now, mark once ``txn`` (or a transaction of its own) has committed: True
        where the key was new."""
        if txn is None:
            with self.env.begin() as own:
                return self.add_many(keys, own)
        keys = as_keys(keys)
        new = ~self.table.contains_many(keys) & first_occurrences(keys)
        # A record whose keys are marked is overwritten by this batch's, rather than deleted
        # beside a new one: one write a batch, not two (either way it is gone once this commits).
        reused = self._marked.pop() if self._marked and new.any() else None
        if self._marked:
            self.log.delete_many(pack(self._marked), txn=txn)
        self._marked = []
        if new.any():
            fresh = keys[new]
            record = reused
            if record is None:
                record = _SEQUENCE.pack(self._next)
                self._next += 1
            self.log.put(record, fresh.astype(">u8").tobytes(), txn=txn)
            failpoints.hit("marklog.logged")
            txn.after_commit(functools.partial(self._mark, record, fresh))
        return new

    def _mark(self, record: bytes, keys: np.ndarray) -> None:
        failpoints.hit("marklog.committed")
        self.table.add_many(keys)
        failpoints.hit("marklog.marked")
        self._marked.append(record)

    def contains_many(self, keys) -> np.ndarray:
        return self.table.contains_many(keys)

    def joins_transactions_of(self, env) -> bool:
        return env is self.env

    def figures(self) -> dict:
        return self.table.figures()

    def __len__(self) -> int:
        return len(self.table)

    def close(self) -> None:
        """Close the table (the log closes with its environment; a record left is replayed,
        harmlessly, at the next open)."""
        self.table.close()

    def __repr__(self) -> str:
        return f"<MarkLog of {self.table!r} in {str(self.env.path)!r}>"
