"""The Visited (URL-seen) protocol: every URL-seen table looks like this to the frontier.

Asynchronous at heart, in the shape of Heritrix's ``UriUniqFilter`` (``setDestination``,
``add``, ``requestFlush``) and Scrapy's ``BaseDupeFilter``:

- :meth:`Visited.add_batch` (or :meth:`Visited.add` for one key) *queues* a check+update
  of 64-bit keys, each with an optional ``aux`` payload (typically the URL or its record);
- the table later hands the results to its *receiver* as ``receiver(keys, aux, unique)``:
  ``keys`` a uint64 array, ``aux`` a sequence aligned with it (the payloads given, ``None``
  where none was), ``unique`` a bool array, True where the key had not been seen before.
  Results come in batches because a disk-backed table (DRUM) resolves keys in bulk;
  :func:`per_key` adapts a ``(key, aux, unique)`` callable;
- :meth:`Visited.flush` forces every queued check to be resolved and delivered;
  :meth:`Visited.flush_some` resolves part of them (at least one key's), and
  :meth:`Visited.request_flush` asks for them to be resolved soon, beside the adds to come
  (Heritrix's ``requestFlush``): what a frontier running low on URLs calls, where a whole
  flush of a large table would hold it up for as long as it takes.

Within what one table resolves, the first occurrence of a key is unique and every later one,
in the same batch or after, is a duplicate.

Synchronous tables (Bloom, the exact JE set) are the degenerate case: they resolve each add
at once and call the receiver before ``add`` returns, so ``flush`` has nothing to deliver.
The synchronous conveniences (:meth:`contains_many`, :meth:`add_many` and their one-key
and URL forms) return answers directly and never involve the receiver.

Keys are 64-bit unsigned ints; URL forms key URLs with
:func:`pycrawler.keys.fingerprints64` (the first 8 bytes of MD5).

**Bound to a JE environment** (:meth:`Visited.bound_to`): a frontier keeps its URLs in JE and
a table must never call a URL seen unless the transaction that enqueued it (or recorded why
not) has committed, or a crash in between loses the URL. A bound table takes that
transaction (``txn`` of :meth:`Visited.add_batch` and :meth:`Visited.flush`, and of a
synchronous table's ``add_many``; DRUM's ``add_many`` runs a merge of its own and takes none,
so a frontier bound to DRUM goes through ``add_batch``): what it writes for the keys commits
with it, the results it delivers during the call are delivered for the receiver to write in
it, and the checks it queues survive a crash once the call returns. The exact set in the frontier's environment and DRUM with its
repository there write in the transaction itself; a table that cannot (a Bloom file, an
exact set elsewhere) is bound through :class:`~pycrawler.seen.synchronous.MarkLog`, which marks
keys only after the commit, from a log committed in it.
"""

from __future__ import annotations

from array import array
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from ..keys import fingerprints64
from ..store.packing import as_list, np

Receiver = Callable[[Sequence[int], Sequence[Any], Sequence[bool]], None]
"""(keys, aux, unique): numpy arrays of the keys and of the flags, or lists of them without numpy."""


if np is None:
    def as_keys(keys) -> list[int]:
        """Keys as a list of ints in [0, 2**64): a list, a tuple or one int (no numpy: GraalPy)."""
        from ..errors import BadInput

        keys = [keys] if isinstance(keys, int) else list(keys)
        try:
            array("Q", keys)  # refuses what is not an int in [0, 2**64) in one call, not one per key
        except (OverflowError, TypeError):
            raise BadInput("Visited keys are ints in [0, 2**64)") from None
        if bool in set(map(type, keys)):
            raise BadInput("Visited keys are ints in [0, 2**64)")
        return keys
else:
    def as_keys(keys) -> np.ndarray:
        """Keys as a 1-D uint64 array: ints in [0, 2**64) as a list, an array or one int."""
        from ..errors import BadInput

        array = keys if isinstance(keys, np.ndarray) else np.asarray(keys)
        if array.dtype.kind in "fO" and not isinstance(keys, np.ndarray):
            # numpy holds a list of Python ints past 2**63 as floats or objects: convert exactly.
            try:
                if not all(isinstance(k, int) for k in (keys if isinstance(keys, (list, tuple)) else [keys])):
                    raise TypeError
                array = np.array(keys, dtype=np.uint64)
            except (OverflowError, TypeError, ValueError):
                raise BadInput("Visited keys are ints in [0, 2**64)") from None
        if array.dtype.kind not in "iu" and array.size:
            raise BadInput(f"Visited keys are 64-bit unsigned ints, not {array.dtype}")
        if array.dtype.kind == "i" and array.size and array.min() < 0:
            raise BadInput("Visited keys are ints in [0, 2**64), not negative")
        return array.astype(np.uint64, copy=False).reshape(-1)


def per_key(callback: Callable[[int, Any, bool], None]) -> Receiver:
    """A batch receiver that calls ``callback(key, aux, unique)`` once per key."""

    def receiver(keys: np.ndarray, aux: Sequence[Any], unique: np.ndarray) -> None:
        for key, payload, new in zip(as_list(keys), aux, as_list(unique)):
            callback(key, payload, new)

    return receiver


class Visited(ABC):
    """A URL-seen table. Subclasses implement :meth:`add_batch`, :meth:`flush`,
    :meth:`add_many`, :meth:`contains_many` and :meth:`close`."""

    _receiver: Receiver | None = None

    def set_receiver(self, receiver: Receiver | None) -> None:
        """Where results of queued adds go (see the module docstring); None drops them."""
        self._receiver = receiver

    # -- the asynchronous protocol -----------------------------------------------------------
    @abstractmethod
    def add_batch(self, keys, aux: Sequence[Any] | None = None, txn=None) -> None:
        """Queue a check+update of each key; ``aux[i]`` travels with ``keys[i]`` to the receiver
        (``txn``: of a bound table, see the module docstring)."""

    def add(self, key: int, aux: Any = None) -> None:
        """Queue a check+update of one key."""
        self.add_batch(as_keys(key), [aux])

    @abstractmethod
    def flush(self, txn=None) -> None:
        """Resolve every queued check and deliver the results to the receiver (``txn``: of a
        bound table)."""

    def flush_some(self, txn=None) -> bool:
        """Resolve some of the queued checks, at least one key's if any is queued, and deliver
        them (``txn`` as :meth:`flush`'s); whether checks remain queued. A table that resolves
        in bulk does a part of a flush's work (DRUM: one bucket); the others all of it."""
        self.flush(txn=txn)
        return False

    def request_flush(self) -> None:
        """Ask for the queued checks to be resolved soon, by the calls to come, rather than when
        the table would choose to (DRUM: when a bucket fills). Nothing to do for a table that
        resolves each add at once."""
        return None

    # -- synchronous conveniences --------------------------------------------------------------
    @abstractmethod
    def add_many(self, keys) -> np.ndarray:
        """Check+update now: a bool array, True where the key was new (first occurrence)."""

    @abstractmethod
    def contains_many(self, keys) -> np.ndarray:
        """Check only: a bool array, True where the key has been added."""

    def contains(self, key: int) -> bool:
        return bool(self.contains_many(as_keys(key))[0])

    def __contains__(self, key: int) -> bool:
        return self.contains(key)

    # -- URL forms -------------------------------------------------------------------------
    def add_urls(self, urls: Sequence[str], aux: Sequence[Any] | None = None) -> None:
        """Queue the URLs' fingerprints; the receiver's ``aux`` is the URLs unless given."""
        urls = list(urls)
        self.add_batch(fingerprints64(urls), urls if aux is None else aux)

    def add_many_urls(self, urls: Sequence[str]) -> np.ndarray:
        return self.add_many(fingerprints64(urls))

    def contains_urls(self, urls: Sequence[str]) -> np.ndarray:
        return self.contains_many(fingerprints64(urls))

    def joins_transactions_of(self, env) -> bool:
        """Whether the table writes in transactions of JE environment ``env`` (an exact set or
        a DRUM repository in it does), so a caller can commit its updates with its own writes."""
        return False

    def bound_to(self, env) -> Visited:
        """This table as one bound to ``env`` (see the module docstring): itself when it joins
        ``env``'s transactions. An asynchronous table decides what it calls new only as it
        writes its marks, so it must join them."""
        if self.joins_transactions_of(env):
            return self
        from ..errors import BadInput

        raise BadInput(f"{self!r} does not write in the transactions of {env.path}: a crash would leave URLs "
                       "it calls seen outside the frontier (give it that environment)")

    def figures(self) -> dict:
        """The table's own figures for the operator's console (:mod:`pycrawler.console`), read
        from what it keeps anyway, without a scan: ``{}`` for a table that has none to show."""
        return {}

    # -- life cycle --------------------------------------------------------------------------
    @abstractmethod
    def close(self) -> None:
        """Flush and release the table (idempotent)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

