"""Miss counts of eight cache policies at many sizes over one trace (Broder, Najork and Wiener's
study): exact counts, every policy but ``static`` starting empty.

=========== ===========================================================================
policy      how its counts are found
=========== ===========================================================================
lru         Mattson's stack distances, one pass for every size
            (:func:`.offline_kernel.lru_stack_distances`)
clock       the crawl's own :class:`~pycrawler.seen.cache.ClockCache`, one pass per size
random      the crawl's own :class:`~pycrawler.seen.cache.RandomCache` (seed 1), one pass per size
static      the paper's STATIC: the k most requested keys of the trace itself (a first pass)
            pinned from the start, so every request of theirs is a hit and the initial
            loading is not counted; all sizes from one ranking
static-cold the same k keys, but each one's first request a miss (a URL-seen cache may not
            answer "seen" for a URL the table has never had): STATIC from an empty cache
min         Belady's MIN for demand paging (the requested key always enters; the cached key
            needed furthest ahead leaves), from next-use times of a backward pass, one pass
            per size (:func:`.offline_kernel.min_misses`): a lower bound of LRU, CLOCK, RANDOM
min-bypass  the MIN that may decline to cache the requested key: a lower bound of every
            policy starting empty, static-cold included
infinite    no eviction: misses are the distinct keys, at every size
=========== ===========================================================================

At a size holding every distinct key no policy evicts, so the online and MIN passes are
skipped there: every policy starting empty misses exactly the distinct keys, STATIC none.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..errors import BadInput
from ..seen.cache import ClockCache, RandomCache, UrlCache, parse_size
from . import offline_kernel as kernel

POLICIES = ("lru", "clock", "random", "static", "static-cold", "min", "min-bypass", "infinite")
MIN = {"min": False, "min-bypass": True}
"""The MIN policies and whether each may bypass (:func:`.offline_kernel.min_misses`)."""
CSV_HEADER = "policy,size,requests,hits,misses,miss_rate"
CHUNK = 1 << 20
"""Requests per compiled call; progress advances between calls."""

Advance = Callable[[int], None]


@dataclasses.dataclass(frozen=True)
class Row:
    """One policy at one size over the whole trace."""

    policy: str
    size: int
    requests: int
    misses: int

    @property
    def hits(self) -> int:
        return self.requests - self.misses

    @property
    def miss_rate(self) -> float:
        return self.misses / self.requests if self.requests else 0.0

    def csv(self) -> str:
        return f"{self.policy},{self.size},{self.requests},{self.hits},{self.misses},{self.miss_rate:.6f}"


def smallest_size_reaching(rows: Sequence[Row], policy: str, hit_ratio: float) -> int | None:
    """The smallest simulated size at which ``policy`` hits at least ``hit_ratio`` of requests."""
    return min((r.size for r in rows if r.policy == policy and r.hits >= hit_ratio * r.requests), default=None)


def parse_policies(text: str) -> list[str]:
    """``lru,clock,...`` (or ``all``), in the order given, each once."""
    names = list(POLICIES) if text.strip().lower() == "all" else [p.strip().lower() for p in text.split(",")]
    unknown = [p for p in names if p not in POLICIES]
    if unknown or not names:
        raise BadInput(f"--policies are among {','.join(POLICIES)} (or all), not {','.join(unknown) or text!r}")
    return list(dict.fromkeys(names))


def parse_sizes(text: str) -> list[int]:
    """Sizes as a comma list of counts (``50000``, ``64k``, ``2^16``) and ranges of powers,
    ``2^0..2^25`` (every power of the base from the first exponent to the last); ascending."""
    sizes: set[int] = set()
    for item in filter(None, (part.strip() for part in text.split(","))):
        low, dots, high = item.partition("..")
        if not dots:
            sizes.add(parse_size(item))
            continue
        try:
            (base, first), (base_high, last) = (map(int, end.split("^")) for end in (low, high))
        except ValueError:
            raise BadInput(f"a size range is written 2^0..2^25, not {item!r}") from None
        if base != base_high or base < 2 or first > last:
            raise BadInput(f"a size range runs over powers of one base, low to high, not {item!r}")
        sizes.update(base**e for e in range(first, last + 1))
    if not sizes or min(sizes) < 1:
        raise BadInput(f"--sizes must name cache sizes of at least 1, not {text!r}")
    return sorted(sizes)


@dataclasses.dataclass
class Trace:
    """A trace as dense ids (0 .. distinct-1, in key order) with each id's request count."""

    ids: np.ndarray
    counts: np.ndarray
    keys: np.ndarray

    @classmethod
    def of(cls, keys: np.ndarray) -> Trace:
        unique, ids, counts = np.unique(keys, return_inverse=True, return_counts=True)
        dtype = np.int32 if len(unique) < 2**31 else np.int64
        return cls(ids.astype(dtype, copy=False), counts, keys)

    @property
    def requests(self) -> int:
        return len(self.ids)

    @property
    def distinct(self) -> int:
        return len(self.counts)


def _chunked(n: int, run: Callable[[int, int], None], advance: Advance) -> None:
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        run(start, stop)
        advance(stop - start)


def lru_misses(trace: Trace, sizes: Sequence[int], advance: Advance) -> list[int]:
    n = trace.requests
    histogram = np.zeros(trace.distinct + 2, dtype=np.int64)
    last = np.full(trace.distinct, -1, dtype=np.int64)
    tree = np.zeros(n + 1, dtype=np.int32 if n < 2**31 else np.int64)
    _chunked(n, lambda a, b: kernel.lru_stack_distances(trace.ids, last, tree, histogram, a, b), advance)
    hits_within = np.cumsum(histogram)
    return [n - int(hits_within[min(k, trace.distinct)]) for k in sizes]


def static_misses(trace: Trace, sizes: Sequence[int], cold: bool) -> list[int]:
    """STATIC's misses: every request of a key outside the k most requested, plus, if ``cold``,
    the first request of each of those k."""
    counts = np.sort(trace.counts)[::-1] - (1 if cold else 0)  # hits of each key if pinned, most first
    hits_within = np.concatenate(([0], np.cumsum(counts)))
    return [trace.requests - int(hits_within[min(k, trace.distinct)]) for k in sizes]


def online_misses(make: Callable[[int], UrlCache], trace: Trace, size: int, advance: Advance) -> int:
    cache = make(size)
    _chunked(trace.requests, lambda a, b: cache.access(trace.keys[a:b]), advance)
    return cache.misses


def min_misses(trace: Trace, uses: np.ndarray, size: int, bypass: bool, advance: Advance) -> int:
    cached_use = np.full(trace.distinct, -1, dtype=np.int64)
    heap = np.empty(2 * size + 1025, dtype=np.int64)
    meta = np.zeros(2, dtype=np.int64)
    misses = 0

    def run(start, stop):
        nonlocal misses
        misses += kernel.min_misses(trace.ids, uses, size, bypass, cached_use, heap, meta, start, stop)

    _chunked(trace.requests, run, advance)
    return misses


ONLINE = {"clock": ClockCache, "random": RandomCache}


def passes(policies: Iterable[str], sizes: Sequence[int], distinct: int) -> int:
    """How many passes over the trace :func:`sweep` makes (for a progress bar's total)."""
    evicting = sum(1 for k in sizes if k < distinct)
    per_size = ("clock", "random", *MIN)
    return sum(1 if p == "lru" else evicting if p in per_size else 0 for p in policies)


def sweep_by_policy(trace: Trace, policies: Sequence[str], sizes: Sequence[int],
                    advance: Advance = lambda n: None) -> Iterator[tuple[str, list[Row]]]:
    """Each policy's :class:`Row` s (sizes ascending), in the order given, yielded as soon as
    that policy is done, so a caller can time the policies. The MIN policies' backward pass
    runs once, before the first of them. ``advance(n)`` is called as each n requests of a
    pass are done."""
    n, distinct = trace.requests, trace.distinct
    sizes = sorted(sizes)
    uses = None
    for policy in policies:
        if policy == "lru":
            misses = lru_misses(trace, sizes, advance)
        elif policy in ("static", "static-cold"):
            misses = static_misses(trace, sizes, cold=policy == "static-cold")
        elif policy == "infinite":
            misses = [distinct] * len(sizes)
        else:
            if policy in MIN and uses is None:
                uses = kernel.next_uses(trace.ids, distinct)

            def one(size: int) -> int:
                if size >= distinct:
                    return distinct
                if policy in MIN:
                    return min_misses(trace, uses, size, MIN[policy], advance)
                return online_misses(ONLINE[policy], trace, size, advance)

            misses = [one(k) for k in sizes]
        yield policy, [Row(policy, k, n, m) for k, m in zip(sizes, misses)]


def sweep(trace: Trace, policies: Sequence[str], sizes: Sequence[int], advance: Advance = lambda n: None) -> list[Row]:
    """One :class:`Row` per policy and size, policies in the order given, sizes ascending."""
    return [row for _, rows in sweep_by_policy(trace, policies, sizes, advance) for row in rows]
