"""URL caches and a cache in front of a Visited table: the policies behave as their textbook
definitions (checked against plain-Python models on random traces), and a cached table keeps
the Visited protocol's meaning for synchronous and asynchronous tables alike."""

from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.errors import BadInput
from pycrawler.seen import BloomFilter, ExactVisited
from pycrawler.seen.cache import ClockCache, LruCache, RandomCache, cache_from_spec, parse_size
from pycrawler.seen.cached import CachedSynchronousVisited, CachedVisited, cached
from pycrawler.seen.drum import DrumVisited

traces = st.lists(st.integers(0, 40), max_size=300).map(lambda t: np.array(t, dtype=np.uint64))
capacities = st.integers(1, 20)


def lru_model(trace, capacity):
    cache, hits = collections.OrderedDict(), []
    for key in trace.tolist():
        hits.append(key in cache)
        if key in cache:
            cache.move_to_end(key)
            continue
        if len(cache) == capacity:
            cache.popitem(last=False)
        cache[key] = True
    return hits


def clock_model(trace, capacity):
    """CLOCK as in the paper: slots in a circle, a mark per slot, a hand; new keys start marked."""
    slots, marks, hand, hits = [], [], 0, []
    for key in trace.tolist():
        if key in slots:
            marks[slots.index(key)] = True
            hits.append(True)
            continue
        hits.append(False)
        if len(slots) < capacity:
            slots.append(key)
            marks.append(True)
            continue
        while marks[hand]:
            marks[hand] = False
            hand = (hand + 1) % capacity
        slots[hand], marks[hand] = key, True
        hand = (hand + 1) % capacity
    return hits


@settings(max_examples=150, deadline=None)
@given(traces, capacities)
def test_lru_and_clock_match_their_definitions(trace, capacity):
    assert LruCache(capacity).access(trace).tolist() == lru_model(trace, capacity)
    assert ClockCache(capacity).access(trace).tolist() == clock_model(trace, capacity)


@settings(max_examples=150, deadline=None)
@given(traces, capacities, st.integers(1, 2**63))
def test_random_holds_at_most_capacity_keys_and_only_requested_ones(trace, capacity, seed):
    cache = RandomCache(capacity, seed=seed)
    hit = cache.access(trace)
    assert len(cache) == min(capacity, len(set(trace.tolist())))
    held = cache.slot_key[:len(cache)]
    assert len(set(held.tolist())) == len(cache) and cache.contains(held).all()
    first = {k: i for i, k in reversed(list(enumerate(trace.tolist())))}
    assert not any(hit[i] for i in first.values())           # a first request never hits
    if capacity >= len(first):
        assert hit.sum() == len(trace) - len(first)          # nothing is ever evicted
    assert (cache.hits, cache.misses) == (int(hit.sum()), len(trace) - int(hit.sum()))


def test_random_replays_with_its_seed_and_differs_with_another():
    trace = np.random.default_rng(3).integers(0, 500, 20_000).astype(np.uint64)
    runs = [RandomCache(64, seed=s).access(trace) for s in (5, 5, 6)]
    assert (runs[0] == runs[1]).all() and not (runs[0] == runs[2]).all()


@pytest.mark.parametrize("cls", [ClockCache, LruCache, RandomCache])
def test_batches_split_anywhere_give_the_same_hits(cls):
    trace = np.random.default_rng(1).zipf(1.3, 50_000).astype(np.uint64)
    whole = cls(300).access(trace)
    pieces = cls(300)
    split = np.concatenate([pieces.access(part) for part in np.array_split(trace, 37)])
    assert (whole == split).all()


@pytest.mark.parametrize("cls", [ClockCache, LruCache, RandomCache])
def test_survives_heavy_eviction_with_colliding_home_cells(cls):
    """Keys that are multiples of a power of two stress the linear probing and its deletions;
    the cache must still find exactly the keys it holds."""
    trace = (np.random.default_rng(2).integers(0, 3000, 100_000) << 20).astype(np.uint64)
    cache = cls(1000)
    cache.access(trace)
    held = set(cache.slot_key.tolist())
    probe = np.arange(3000, dtype=np.uint64) << np.uint64(20)
    assert cache.contains(probe).tolist() == [k in held for k in probe.tolist()]


def test_contains_changes_nothing():
    cache = LruCache(2)
    cache.access([1, 2])
    assert cache.contains([1, 3]).tolist() == [True, False]
    cache.access([3])                                        # 1 is still least recent: evicted
    assert cache.contains([1, 2, 3]).tolist() == [False, True, True]
    assert (cache.hits, cache.misses) == (0, 3)


def test_memory_per_entry_is_a_few_dozen_bytes():
    for cls, most in ((ClockCache, 32), (RandomCache, 32), (LruCache, 40)):
        assert cls(50_000).bytes_per_entry < most


def test_specs_name_policy_and_size():
    assert (type(cache_from_spec("50000")), cache_from_spec("50000").capacity) == (ClockCache, 50_000)
    assert type(cache_from_spec("lru:2^10")) is LruCache and cache_from_spec("lru:2^10").capacity == 1024
    assert cache_from_spec("RANDOM:64k").capacity == 64_000
    assert parse_size("2M") == 2_000_000
    for bad in ("min:100", "clock:", "clock:0", "lfu:10", "clock:ten"):
        with pytest.raises(BadInput):
            cache_from_spec(bad)


# -- in front of a Visited table ---------------------------------------------------------------

def keys(*values):
    return np.array(values, dtype=np.uint64)


@pytest.mark.parametrize("cls", [ClockCache, LruCache, RandomCache])
@settings(max_examples=40, deadline=None)
@given(batches=st.lists(st.lists(st.integers(0, 30), max_size=40), max_size=8), capacity=st.integers(1, 8))
def test_a_cached_table_answers_like_the_table_alone(cls, batches, capacity):
    plain, table = BloomFilter(10_000, 1e-9), cached(BloomFilter(10_000, 1e-9), cls(capacity))
    assert isinstance(table, CachedSynchronousVisited)
    for batch in batches:
        assert table.add_many(batch).tolist() == plain.add_many(batch).tolist()
    assert table.hits + table.misses == sum(map(len, batches))
    probe = list(range(40))
    assert table.contains_many(probe).tolist() == plain.contains_many(probe).tolist()


def test_a_hit_never_reaches_the_table(env):
    table = cached(ExactVisited(env), ClockCache(10))
    assert table.add_many([1, 2, 1, 1]).tolist() == [True, True, False, False]
    table.cache.access([99])       # known to the cache only (one more miss): a hit must not ask the table
    assert table.add_many([99, 2]).tolist() == [False, False]
    assert len(table) == 2 and (table.hits, table.misses) == (4, 3)


def test_an_exact_set_behind_the_cache_still_joins_the_callers_transaction(env, tmp_path):
    table = cached(ExactVisited(env), ClockCache(10))
    assert table.joins_transactions_of(env)
    assert not cached(BloomFilter(100), ClockCache(10)).joins_transactions_of(env)
    with env.begin() as txn:
        assert table.add_many([5, 6], txn=txn).tolist() == [True, True]
    assert table.table.contains_many([5, 6]).all()


def test_drum_behind_the_cache_hears_of_a_queued_key_s_repeats_at_once(tmp_path):
    """DRUM resolves keys when it merges: repeats of a queued key are duplicates at once (the
    cache learnt it when it was queued), and the first occurrence is still unique at the merge.
    That a cached DRUM keeps the Visited protocol, evictions included, is held by
    tests/test_visited_contract.py."""
    heard = []
    with cached(DrumVisited(tmp_path / "drum", num_buckets=2), ClockCache(4)) as table:
        assert isinstance(table, CachedVisited) and not isinstance(table, CachedSynchronousVisited)
        table.set_receiver(lambda k, aux, unique: heard.extend(zip(k.tolist(), aux, unique.tolist())))
        table.add_batch(keys(1, 2, 1), ["a", "b", "a again"])
        assert heard == [(1, "a again", False)]               # answered by the cache, before any merge
        table.flush()
    assert sorted(heard) == [(1, "a", True), (1, "a again", False), (2, "b", True)]


PYTHON_MODE = """
import json, sys
import numpy as np
from pycrawler.seen.cache import ClockCache, LruCache, RandomCache
out = []
for seed in range(12):
    rng = np.random.default_rng(seed)
    trace = (rng.zipf(1.2, 1500) % 400 << (seed % 3) * 20).astype(np.uint64)
    for cls in (ClockCache, LruCache, RandomCache):
        cache = cls(int(rng.integers(1, 120)))
        out.append([cache.capacity, np.flatnonzero(cache.access(trace)).tolist()])
print(json.dumps({"numba": "numba" in sys.modules, "runs": out}))
"""


def test_small_batches_run_without_numba_and_agree_with_the_compiled_loops():
    """A crawl's batches (here 1,500 keys) run as plain Python, numba never imported; the same
    traces through the compiled kernels give the same hits."""
    import json
    import subprocess
    import sys

    from pycrawler.lazy_jit import compiled
    from pycrawler.seen import cache_kernel

    done = subprocess.run([sys.executable, "-c", PYTHON_MODE], capture_output=True, text=True, check=True)
    python_mode = json.loads(done.stdout)
    assert python_mode["numba"] is False
    compiled(cache_kernel)
    runs = iter(python_mode["runs"])
    for seed in range(12):
        rng = np.random.default_rng(seed)
        trace = (rng.zipf(1.2, 1500) % 400 << (seed % 3) * 20).astype(np.uint64)
        for cls in (ClockCache, LruCache, RandomCache):
            capacity, hits = next(runs)
            assert capacity == int(rng.integers(1, 120))
            assert np.flatnonzero(cls(capacity).access(trace)).tolist() == hits
