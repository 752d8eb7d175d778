"""Compiled loops of the offline cache policies, over a trace of dense ids (0 .. distinct-1).

The loops take ``[start, stop)`` ranges and keep their state in arrays, so a caller can run
a long trace in chunks (and show progress between them) with the same result as one call.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def next_uses(ids, distinct):
    """Belady's backward pass: ``out[t]`` is the time of the next request for ``ids[t]``, or
    ``n + t`` when there is none (past every real time, and still unique per request)."""
    n = ids.shape[0]
    out = np.empty(n, dtype=np.int64)
    upcoming = np.full(distinct, -1, dtype=np.int64)
    for t in range(n - 1, -1, -1):
        x = ids[t]
        out[t] = upcoming[x] if upcoming[x] >= 0 else n + t
        upcoming[x] = t
    return out


@numba.njit(cache=True)
def lru_stack_distances(ids, last, tree, histogram, start, stop):
    """Mattson's stack distances: ``histogram[d]`` counts re-requests at LRU stack depth d
    (1 + the distinct ids requested since the previous request of the same id), so LRU of size
    k hits exactly ``histogram[1:k+1].sum()`` times. ``tree`` is a Fenwick tree over times
    (n + 1 cells) holding a 1 at each id's latest request; ``last[id]`` is that time or -1."""
    n = tree.shape[0] - 1
    for t in range(start, stop):
        x = ids[t]
        previous = last[x]
        if previous >= 0:
            # Latest-request marks in (previous, t): distinct other ids requested since.
            between = 0
            i = t
            while i > 0:
                between += tree[i]
                i -= i & -i
            i = previous + 1
            while i > 0:
                between -= tree[i]
                i -= i & -i
            histogram[between + 1] += 1
            i = previous + 1
            while i <= n:
                tree[i] -= 1
                i += i & -i
        i = t + 1
        while i <= n:
            tree[i] += 1
            i += i & -i
        last[x] = t


@numba.njit(cache=True, inline="always")
def _owner(ids, n, use):
    """The id a next-use time belongs to (see :func:`next_uses`)."""
    return ids[use] if use < n else ids[use - n]


@numba.njit(cache=True, inline="always")
def _push(heap, size, value):
    i = size
    heap[i] = value
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] >= value:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = value
    return size + 1


@numba.njit(cache=True, inline="always")
def _sift_down(heap, size, i):
    value = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] > heap[child]:
            child += 1
        if heap[child] <= value:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = value


@numba.njit(cache=True)
def min_misses(ids, uses, capacity, bypass, cached_use, heap, meta, start, stop):
    """Belady's MIN with ``capacity`` slots over requests ``[start, stop)``; the misses.

    Without ``bypass`` it is demand paging, Belady's own algorithm: the requested id always
    enters, and with the cache full the cached id whose next request is furthest away (one
    never requested again first) leaves. That is the optimum over every policy that caches
    each requested id (LRU, CLOCK, RANDOM).

    With ``bypass`` the requested id competes too: of the cached ids and the requested one,
    the one needed furthest away stays out, so a missed id may not be cached at all (as if it
    were inserted and evicted at once). That is the optimum over every policy that may decline
    to cache (STATIC counted from an empty cache included); it misses no more than demand
    paging with as many slots, nor fewer than demand paging with one slot more (the extra
    slot can hold the bypassed id for its one request). Tests check both against exhaustive
    searches.

    ``cached_use[id]``: the id's next-use time while cached, else -1. ``heap``: a max-heap of
    next-use times, stale entries (no longer any cached id's) dropped lazily and compacted
    when the heap outgrows twice the capacity. ``meta``: heap size, ids cached.
    """
    n = ids.shape[0]
    size, cached = meta[0], meta[1]
    misses = 0
    limit = heap.shape[0] - 1
    for t in range(start, stop):
        x = ids[t]
        use = uses[t]
        if cached_use[x] >= 0:
            cached_use[x] = use
            size = _push(heap, size, use)
        else:
            misses += 1
            if cached < capacity:
                cached += 1
                cached_use[x] = use
                size = _push(heap, size, use)
            else:
                while cached_use[_owner(ids, n, heap[0])] != heap[0]:  # drop stale tops
                    size -= 1
                    heap[0] = heap[size]
                    _sift_down(heap, size, 0)
                furthest = heap[0]
                if furthest > use or not bypass:
                    cached_use[_owner(ids, n, furthest)] = -1
                    cached_use[x] = use
                    heap[0] = use
                    _sift_down(heap, size, 0)
        if size >= limit:  # keep the live entries only, then heapify
            kept = 0
            for i in range(size):
                if cached_use[_owner(ids, n, heap[i])] == heap[i]:
                    heap[kept] = heap[i]
                    kept += 1
            size = kept
            for i in range(size // 2 - 1, -1, -1):
                _sift_down(heap, size, i)
    meta[0], meta[1] = size, cached
    return misses
