"""URL caches: a bounded set of recently or often seen 64-bit keys, answered in memory.

Broder, Najork and Wiener ("Efficient URL caching for World Wide Web crawling", WWW 2003)
found that a cache of ~50,000 URLs in front of the URL-seen table answers ~80% of a crawl's
lookups, and recommend CLOCK or RANDOM replacement on a hash table: nearly as good as LRU,
with less bookkeeping. The three online policies here are those:

- :class:`ClockCache`: a mark bit per slot and a hand (second chance);
- :class:`LruCache`: least recently used, a doubly linked list through the slots;
- :class:`RandomCache`: a pseudo-random victim (seeded, so runs replay).

One operation matters, :meth:`UrlCache.access`: for a batch of keys, which are cached
(hits); every miss is then learnt, evicting by the policy when the cache is full. The loops
(:mod:`.cache_kernel`) run one call per batch: compiled by numba from the first batch of
:data:`COMPILED_BATCH` keys on, plain Python before that, so a crawl handing the cache a few
hundred keys per flush does not load numba (~100 MB, seconds) for them. Hit and miss counts
are exact.
:class:`pycrawler.seen.cached.CachedVisited` puts a cache in front of a Visited table; the
offline policies (STATIC, MIN, INFINITE) exist only in the simulator
(:mod:`pycrawler.cachesim`), since they need the whole trace.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from ..errors import BadInput
from ..lazy_jit import compiled, wrapping
from . import cache_kernel as kernel
from .protocol import as_keys

COMPILED_BATCH = 1 << 16
"""Batches of at least this many keys load numba and compile the kernels (for good: later
batches of any size run compiled too). Plain Python takes ~10-30 us a key, so a batch this
large costs about what loading numba does once (~2 s, plus ~110 MB): below it, plain Python
wins. A crawl's largest batches, the links of an index page of ~10,000 URLs, stay below."""


def _kernels_for(batch: int):
    """The kernel module, compiled first when ``batch`` is large enough to be worth it."""
    return compiled(kernel) if batch >= COMPILED_BATCH else kernel

def table_cells(capacity: int) -> int:
    """Hash-table cells for ``capacity`` keys: the power of two at least twice as large."""
    return 1 << max(1, (2 * capacity - 1).bit_length())


class UrlCache(ABC):
    """A bounded cache of 64-bit keys; subclasses choose the victim on a miss."""

    policy: str

    def __init__(self, capacity: int):
        if capacity < 1:
            raise BadInput(f"a URL cache holds at least 1 entry, not {capacity}")
        self.capacity = capacity
        self.table = np.full(table_cells(capacity), kernel.FREE, dtype=np.uint64)
        self.slot_key = np.zeros(capacity, dtype=np.uint64)
        self.state = np.zeros(kernel.STATE_SIZE, dtype=np.int64)
        self.hits = self.misses = 0

    def access(self, keys) -> np.ndarray:
        """Look ``keys`` up in order: True where cached (a hit); each miss is learnt at once,
        so a key repeated within the batch hits from its second occurrence on."""
        keys = as_keys(keys)
        hit = np.empty(len(keys), dtype=np.bool_)
        if len(keys):
            with wrapping():
                self._access(_kernels_for(len(keys)), keys, hit)
        found = int(np.count_nonzero(hit))
        self.hits += found
        self.misses += len(keys) - found
        return hit

    @abstractmethod
    def _access(self, kernels, keys: np.ndarray, hit: np.ndarray) -> None:
        """The policy's loop (from module ``kernels``) over one batch."""

    def contains(self, keys) -> np.ndarray:
        """Check only: True where cached. Changes nothing, recency and counts included."""
        keys = as_keys(keys)
        hit = np.empty(len(keys), dtype=np.bool_)
        with wrapping():
            _kernels_for(len(keys)).contains_kernel(self.table, self.slot_key, keys, hit)
        return hit

    def __len__(self) -> int:
        return int(self.state[kernel.USED])

    @property
    def nbytes(self) -> int:
        """Memory held by the cache's arrays."""
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    @property
    def bytes_per_entry(self) -> float:
        return self.nbytes / self.capacity

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {len(self):,}/{self.capacity:,} hits={self.hits:,} misses={self.misses:,}>"


class ClockCache(UrlCache):
    """CLOCK: a hit sets the slot's mark; a miss advances the hand, clearing marks, to the
    first unmarked slot and replaces it (the new key starts marked)."""

    policy = "clock"

    def __init__(self, capacity: int):
        super().__init__(capacity)
        self.mark = np.zeros(capacity, dtype=np.uint8)

    def _access(self, kernels, keys, hit):
        kernels.clock_kernel(self.table, self.slot_key, self.mark, self.state, keys, hit)


class LruCache(UrlCache):
    """LRU: a miss replaces the least recently accessed key."""

    policy = "lru"

    def __init__(self, capacity: int):
        super().__init__(capacity)
        self.prev = np.full(capacity, kernel.EMPTY, dtype=np.int32)
        self.next = np.full(capacity, kernel.EMPTY, dtype=np.int32)
        self.state[kernel.HEAD] = self.state[kernel.TAIL] = kernel.EMPTY

    def _access(self, kernels, keys, hit):
        kernels.lru_kernel(self.table, self.slot_key, self.prev, self.next, self.state, keys, hit)


class RandomCache(UrlCache):
    """RANDOM: a miss replaces a slot drawn uniformly (xorshift64* seeded by ``seed``)."""

    policy = "random"

    def __init__(self, capacity: int, *, seed: int = 1):
        super().__init__(capacity)
        self.state[kernel.RNG] = np.uint64(seed or 1).view(np.int64)  # xorshift needs a non-zero state

    def _access(self, kernels, keys, hit):
        kernels.random_kernel(self.table, self.slot_key, self.state, keys, hit)


ONLINE_POLICIES: dict[str, type[UrlCache]] = {cls.policy: cls for cls in (ClockCache, LruCache, RandomCache)}
DEFAULT_POLICY = "clock"


def parse_size(text: str) -> int:
    """A cache size: ``50000``, ``50_000``, ``64k``, ``2M`` or ``2^16``."""
    text = text.strip().lower().replace("_", "")
    try:
        if "^" in text:
            base, exponent = text.split("^")
            return int(base) ** int(exponent)
        scale = {"k": 10**3, "m": 10**6, "g": 10**9}.get(text[-1:], 1)
        return int(text[:-1] if scale > 1 else text) * scale
    except ValueError:
        raise BadInput(f"a cache size is a count such as 50000, 64k, 2M or 2^16, not {text!r}") from None


def cache_from_spec(spec: str, option: str = "--url-cache") -> UrlCache:
    """The cache ``--url-cache`` names: ``POLICY:SIZE`` or ``SIZE`` (CLOCK), e.g. ``lru:2^16``;
    ``option`` names the setting in the error for an unknown policy."""
    policy, _, size = spec.rpartition(":")
    policy = policy.strip().lower() or DEFAULT_POLICY
    if policy not in ONLINE_POLICIES:
        raise BadInput(f"{option} policy must be one of {', '.join(ONLINE_POLICIES)} (as POLICY:SIZE), "
                       f"not {policy!r}")
    return ONLINE_POLICIES[policy](parse_size(size))
