"""A URL cache in front of a Visited table: hits answer "seen" in memory, misses go through.

Why it keeps the Visited protocol's meaning (the first occurrence of a key is unique, every
later one a duplicate): the cache only ever holds keys that were already sent to the table.
A key's first occurrence is therefore always a miss and reaches the table, and the cache
learns it at that moment, so a later occurrence that hits is a duplicate whatever the
table has resolved yet. That covers asynchronous tables too: a key queued in DRUM but not
merged yet is in the cache, and its repeats are answered at once as duplicates, while
DRUM still reports the queued first occurrence as unique when it merges. A key evicted from
the cache simply goes to the table again, which knows it.

Hits reach the receiver at once (``unique`` all False); misses reach it when the table
delivers them. A synchronous table stays synchronous behind the cache
(:func:`cached` picks the class), so the frontier still updates an exact JE set in the same
transaction as its enqueues.

``hits`` is the number of table operations saved; the cache's own counts are on ``cache``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import BadInput
from .cache import UrlCache
from .protocol import Receiver, Visited, as_keys
from .synchronous import SynchronousVisited


def _pick(aux: Sequence[Any] | None, where: np.ndarray) -> list[Any] | None:
    if aux is None:
        return None
    return [aux[i] for i in np.flatnonzero(where).tolist()]


class CachedVisited(Visited):
    """``table`` (any Visited table) behind ``cache``; closing closes the table."""

    def __init__(self, table: Visited, cache: UrlCache):
        self.table, self.cache = table, cache

    @property
    def hits(self) -> int:
        """Lookups the cache answered: table operations saved."""
        return self.cache.hits

    @property
    def misses(self) -> int:
        """Lookups that went through to the table."""
        return self.cache.misses

    def set_receiver(self, receiver: Receiver | None) -> None:
        super().set_receiver(receiver)
        self.table.set_receiver(receiver)

    def add_batch(self, keys, aux: Sequence[Any] | None = None, txn=None) -> None:
        keys = as_keys(keys)
        if aux is not None and len(aux) != len(keys):
            raise BadInput(f"aux has {len(aux)} entries for {len(keys)} keys")
        hit = self.cache.access(keys)
        if not hit.all():
            self.table.add_batch(keys[~hit], _pick(aux, ~hit), txn=txn)
        if hit.any() and self._receiver is not None:
            hits = int(np.count_nonzero(hit))
            self._receiver(keys[hit], _pick(aux, hit) or [None] * hits, np.zeros(hits, dtype=bool))

    def flush(self, txn=None) -> None:
        self.table.flush(txn=txn)

    def flush_some(self, txn=None) -> bool:
        return self.table.flush_some(txn=txn)

    def request_flush(self) -> None:
        self.table.request_flush()

    def add_many(self, keys, **options) -> np.ndarray:
        """Check+update now; ``options`` (an exact set's ``txn``) go to the table."""
        keys = as_keys(keys)
        hit = self.cache.access(keys)
        new = np.zeros(len(keys), dtype=bool)
        if not hit.all():
            new[~hit] = self.table.add_many(keys[~hit], **options)
        return new

    def contains_many(self, keys) -> np.ndarray:
        keys = as_keys(keys)
        found = self.cache.contains(keys)
        if not found.all():
            found[~found] = self.table.contains_many(keys[~found])
        return found

    def joins_transactions_of(self, env) -> bool:
        return self.table.joins_transactions_of(env)

    def bound_to(self, env) -> CachedVisited:
        """The same cache in front of the table bound to ``env``: the cache only answers for
        keys already sent to the table, so binding the table binds them both."""
        table = self.table.bound_to(env)
        return self if table is self.table else cached(table, self.cache)

    def __len__(self) -> int:
        return len(self.table)

    def figures(self) -> dict:
        return self.table.figures()

    def close(self) -> None:
        self.table.close()

    def __repr__(self) -> str:
        return f"<CachedVisited {self.cache!r} in front of {self.table!r}>"


class CachedSynchronousVisited(SynchronousVisited, CachedVisited):
    """A synchronous table behind a cache: every add is resolved (and delivered) at once."""

    bound_to = CachedVisited.bound_to  # the table is bound behind the cache, not the pair wrapped


def cached(table: Visited, cache: UrlCache) -> CachedVisited:
    """``table`` behind ``cache``, synchronous if the table is."""
    kind = CachedSynchronousVisited if isinstance(table, SynchronousVisited) else CachedVisited
    return kind(table, cache)
