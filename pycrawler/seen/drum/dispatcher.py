"""Where DRUM's results go: the five outcomes of the article's dispatcher, in batches.

Subclass :class:`Dispatcher` and override the outcomes you care about; DRUM looks at which
methods a dispatcher overrides and builds nothing for the others (no aux read from disk,
no values copied out of the repository). Each method receives one merge's operations of
that outcome, in arrival order: ``keys`` a numpy array (uint64 for 8-byte keys, else rows
of ``key_bytes`` uint8), ``values`` and ``aux`` :class:`~pycrawler.seen.drum.blobs.Blobs`
(empty strings where none were given).
"""

from __future__ import annotations

OUTCOMES = ("unique_key_check", "duplicate_key_check", "unique_key_update", "duplicate_key_update", "update")


class Dispatcher:
    """Ignores every outcome; the base of dispatchers that handle some."""

    def unique_key_check(self, keys, aux) -> None:
        """``check`` of a key not in the repository."""

    def duplicate_key_check(self, keys, values, aux) -> None:
        """``check`` of a stored key; ``values`` are the stored values."""

    def unique_key_update(self, keys, values, aux) -> None:
        """``check_update`` of a new key (now stored with ``values``)."""

    def duplicate_key_update(self, keys, values, aux) -> None:
        """``check_update`` of a stored key (its value is now ``values``)."""

    def update(self, keys, values, aux) -> None:
        """Plain ``update`` (the key is stored with ``values``, whether it was there or not)."""

    def wanted(self) -> frozenset[str]:
        """The outcomes this dispatcher overrides."""
        return frozenset(name for name in OUTCOMES
                         if getattr(type(self), name) is not getattr(Dispatcher, name))


class Collector(Dispatcher):
    """Keeps every outcome as ``(outcome, key, value, aux)`` tuples: for tests and small jobs."""

    def __init__(self):
        self.results: list[tuple] = []

    def _keep(self, outcome, keys, values, aux) -> None:
        values = values if values is not None else [None] * len(keys)
        for key, value, a in zip(keys.tolist(), values, aux):
            self.results.append((outcome, bytes(key) if isinstance(key, list) else key, value, a))

    def unique_key_check(self, keys, aux):
        self._keep("unique_key_check", keys, None, aux)

    def duplicate_key_check(self, keys, values, aux):
        self._keep("duplicate_key_check", keys, values, aux)

    def unique_key_update(self, keys, values, aux):
        self._keep("unique_key_update", keys, values, aux)

    def duplicate_key_update(self, keys, values, aux):
        self._keep("duplicate_key_update", keys, values, aux)

    def update(self, keys, values, aux):
        self._keep("update", keys, values, aux)
