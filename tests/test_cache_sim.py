"""``pycrawler cache-sim``: exact miss counts that hold the theory's bounds, traces read in
both formats, and the command's CSV, plot and errors."""

from __future__ import annotations

import collections
import functools
import gzip

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.cachesim.sweep import CSV_HEADER, POLICIES, Trace, parse_policies, parse_sizes, sweep
from pycrawler.cachesim.trace import read_trace
from pycrawler.cli import main
from pycrawler.errors import BadInput
from pycrawler.keys.xxh64 import xxh64_urls
from pycrawler.seen.cache import ClockCache, LruCache, RandomCache

SIZES = [1, 2, 3, 5, 8, 13, 64]
traces = st.lists(st.integers(0, 25), min_size=1, max_size=400).map(lambda t: np.array(t, dtype=np.uint64))


def misses_by(trace, policies=POLICIES, sizes=SIZES):
    return {(r.policy, r.size): r.misses for r in sweep(Trace.of(trace), policies, sizes)}


@settings(max_examples=120, deadline=None)
@given(traces)
def test_min_never_misses_more_than_a_policy_that_caches_every_requested_key(trace):
    misses = misses_by(trace)
    for size in SIZES:
        assert all(misses["min", size] <= misses[p, size] for p in ("lru", "clock", "random"))


@settings(max_examples=120, deadline=None)
@given(traces)
def test_min_bypass_never_misses_more_than_any_policy_starting_empty(trace):
    misses = misses_by(trace)
    for size in SIZES:
        assert all(misses["min-bypass", size] <= misses[p, size] for p in ("min", "lru", "clock", "random",
                                                                          "static-cold"))


@settings(max_examples=120, deadline=None)
@given(traces)
def test_min_bypass_misses_no_fewer_than_min_with_one_slot_more(trace):
    # The extra slot holds the key MIN-bypass leaves out, for its one request.
    misses = misses_by(trace, ["min", "min-bypass"], range(1, 12))
    assert all(misses["min", size + 1] <= misses["min-bypass", size] for size in range(1, 11))


@settings(max_examples=120, deadline=None)
@given(traces)
def test_static_hits_every_request_of_the_k_most_requested_keys_and_static_cold_all_but_the_first(trace):
    misses = misses_by(trace)
    counts = sorted(collections.Counter(trace.tolist()).values(), reverse=True)
    for size in SIZES:
        pinned = counts[:size]
        assert misses["static", size] == len(trace) - sum(pinned)
        assert misses["static-cold", size] == misses["static", size] + len(pinned)


@settings(max_examples=120, deadline=None)
@given(traces)
def test_infinite_misses_exactly_the_distinct_keys(trace):
    misses = misses_by(trace)
    distinct = len(set(trace.tolist()))
    assert {misses["infinite", size] for size in SIZES} == {distinct}
    starting_empty = [p for p in POLICIES if p != "static"]
    assert all(misses[p, size] >= distinct for p in starting_empty for size in SIZES)  # the cold misses


@settings(max_examples=120, deadline=None)
@given(traces, st.lists(st.integers(1, 40), min_size=1, max_size=6))
def test_lru_from_stack_distances_equals_lru_simulated_at_each_size(trace, sizes):
    misses = misses_by(trace, ["lru"], sizes)
    for size in set(sizes):
        cache = LruCache(size)
        cache.access(trace)
        assert misses["lru", size] == cache.misses


@settings(max_examples=60, deadline=None)
@given(traces)
def test_clock_and_random_rows_are_the_crawl_caches_counts(trace):
    misses = misses_by(trace, ["clock", "random"])
    for size in SIZES:
        for policy, cls in (("clock", ClockCache), ("random", RandomCache)):
            cache = cls(size)
            cache.access(trace)
            assert misses[policy, size] == cache.misses


def optimal_misses(trace, size, may_bypass):
    """The fewest misses any policy with ``size`` slots starting empty can have, by exhaustive
    search over its choices on each miss: which cached key to evict (or none while a slot is
    free), and, if ``may_bypass``, also leaving the requested key out. What MIN must equal."""
    requests = tuple(trace.tolist())

    @functools.cache
    def best(t, held):
        if t == len(requests):
            return 0
        key = requests[t]
        if key in held:
            return best(t + 1, held)
        options = [held | {key}] if len(held) < size else [(held - {out}) | {key} for out in held]
        return 1 + min(best(t + 1, h) for h in options + ([held] if may_bypass else []))

    return best(0, frozenset())


small_traces = st.lists(st.integers(0, 5), min_size=1, max_size=16).map(lambda t: np.array(t, dtype=np.uint64))


@settings(max_examples=150, deadline=None)
@given(small_traces, st.integers(1, 4))
def test_min_is_the_optimum_of_demand_paging(trace, size):
    assert misses_by(trace, ["min"], [size])["min", size] == optimal_misses(trace, size, may_bypass=False)


@settings(max_examples=150, deadline=None)
@given(small_traces, st.integers(1, 4))
def test_min_bypass_is_the_optimum_of_policies_that_may_leave_a_key_out(trace, size):
    assert misses_by(trace, ["min-bypass"], [size])["min-bypass", size] == optimal_misses(trace, size, may_bypass=True)


def test_min_always_caches_the_requested_key_and_min_bypass_may_not():
    # One slot, 1 2 1: MIN must let 2 in, so 1 misses again; MIN-bypass leaves 2 out and keeps 1.
    one_slot = misses_by(np.array([1, 2, 1], dtype=np.uint64), ["min", "min-bypass"], [1])
    assert one_slot == {("min", 1): 3, ("min-bypass", 1): 2}
    # Two slots, 9 1 2 1 2: 9 is never requested again, so it leaves for 2 and 1 stays.
    assert misses_by(np.array([9, 1, 2, 1, 2], dtype=np.uint64), ["min"], [2]) == {("min", 2): 3}


def test_static_pins_the_most_requested_keys_and_static_cold_misses_their_first_request():
    trace = np.array([5, 1, 5, 2, 5, 1, 3], dtype=np.uint64)  # 5 thrice, 1 twice
    misses = misses_by(trace, ["static", "static-cold"], [1, 2, 10])
    assert [misses["static", k] for k in (1, 2, 10)] == [4, 2, 0]
    assert [misses["static-cold", k] for k in (1, 2, 10)] == [5, 4, 4]


def test_static_beats_min_when_the_cache_holds_the_repeated_keys_as_in_the_paper():
    # Seed 002's artifact: STATIC's initial loading is free, MIN's is not.
    trace = np.array([0, 1, 2, 3, 0, 1, 2, 3], dtype=np.uint64)
    misses = misses_by(trace, ["static", "min", "min-bypass"], [3])
    assert (misses["static", 3], misses["min-bypass", 3], misses["min", 3]) == (2, 5, 5)


def test_lru_and_min_curves_never_rise_with_size():
    trace = np.random.default_rng(4).zipf(1.2, 30_000).astype(np.uint64)
    rows = sweep(Trace.of(trace), ["lru", "min", "min-bypass"], parse_sizes("2^0..2^12"))
    for policy in ("lru", "min", "min-bypass"):
        rates = [r.miss_rate for r in rows if r.policy == policy]
        assert rates == sorted(rates, reverse=True)


def test_sizes_and_policies_parse():
    assert parse_sizes("2^0..2^3") == [1, 2, 4, 8]
    assert parse_sizes("50000,2^4,1k") == [16, 1000, 50000]
    assert parse_policies("MIN,lru,min") == ["min", "lru"] and parse_policies("all") == list(POLICIES)
    assert parse_policies("static-cold,min-bypass") == ["static-cold", "min-bypass"]
    for bad in ("2^3..2^1", "2^1..3^4", "0", "x..y", ""):
        with pytest.raises(BadInput):
            parse_sizes(bad)
    with pytest.raises(BadInput):
        parse_policies("lru,lfu")


# -- traces --------------------------------------------------------------------------------------

URLS = ["http://a.example/", "http://b.example/x", "http://a.example/", "http://c.example/\u00e9"]


def test_url_traces_are_keyed_by_xxh64_of_each_line_plain_or_gzipped(tmp_path):
    text = "\n".join(URLS[:2]) + "\n\n" + "\n".join(URLS[2:])  # an empty line, no final newline
    (tmp_path / "t.txt").write_text(text, encoding="utf-8")
    with gzip.open(tmp_path / "t.gz", "wt", encoding="utf-8") as f:
        f.write(text)
    expected = xxh64_urls(URLS).tolist()
    assert read_trace(tmp_path / "t.txt").tolist() == expected
    assert read_trace(tmp_path / "t.gz").tolist() == expected


def test_lines_split_across_read_chunks_are_whole(tmp_path, monkeypatch):
    import pycrawler.cachesim.trace as trace_module

    monkeypatch.setattr(trace_module, "CHUNK", 7)
    (tmp_path / "t.txt").write_text("\n".join(URLS) + "\n")
    assert read_trace(tmp_path / "t.txt").tolist() == xxh64_urls(URLS).tolist()


def test_key_traces_are_little_endian_u64(tmp_path):
    keys = np.array([0, 1, 2**64 - 1], dtype="<u8")
    (tmp_path / "k.u64").write_bytes(keys.tobytes())
    assert read_trace(tmp_path / "k.u64").tolist() == keys.tolist()
    (tmp_path / "odd.u64").write_bytes(b"\x00" * 9)
    with pytest.raises(BadInput, match="8-byte"):
        read_trace(tmp_path / "odd.u64")


# -- the command ----------------------------------------------------------------------------------

def test_command_writes_one_csv_row_per_policy_and_size_and_a_plot(tmp_path, capsys):
    keys = np.random.default_rng(0).zipf(1.3, 5_000).astype("<u8")
    (tmp_path / "t.u64").write_bytes(keys.tobytes())
    assert main(["cache-sim", str(tmp_path / "t.u64"), "--sizes", "2^0..2^4", "--csv", str(tmp_path / "c.csv"),
                 "--plot", str(tmp_path / "c.png")]) == 0
    lines = (tmp_path / "c.csv").read_text().splitlines()
    assert lines[0] == CSV_HEADER == "policy,size,requests,hits,misses,miss_rate"
    rows = [line.split(",") for line in lines[1:]]
    assert [(p, int(s)) for p, s, *_ in rows] == [(p, 2**e) for p in POLICIES for e in range(5)]
    assert all(int(req) == 5_000 and int(h) + int(m) == 5_000 and float(r) == pytest.approx(int(m) / 5_000, abs=1e-6)
               for _, _, req, h, m, r in rows)
    assert (tmp_path / "c.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    err = capsys.readouterr().err
    assert "5,000 requests" in err
    timed = err.split("seconds per policy, all sizes: ")[1].splitlines()[0].split(", ")
    assert [entry.split(" ")[0] for entry in timed] == list(POLICIES)
    assert all(float(entry.split(" ")[1]) >= 0 for entry in timed)


@pytest.mark.parametrize("args, message", [
    (["missing.txt"], "is not a file"),
    (["t.txt", "--sizes", "2^5..2^1"], "powers of one base"),
    (["t.txt", "--policies", "lfu"], "--policies"),
    (["empty.txt"], "no requests"),
    (["t.txt", "--csv", "nowhere/c.csv"], "not a directory"),
    (["cut.gz"], "is damaged"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.txt").write_text("http://a.example/\n")
    (tmp_path / "empty.txt").write_text("\n")
    (tmp_path / "cut.gz").write_bytes(gzip.compress(b"http://a.example/\n" * 1000)[:40])
    assert main(["cache-sim", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_the_summary_names_the_smallest_size_with_80_percent_hits(tmp_path, capsys):
    # 10 keys, each requested 10 times in a row: LRU of one entry hits 90%, STATIC needs them all.
    (tmp_path / "t.u64").write_bytes(np.repeat(np.arange(10, dtype="<u8"), 10).tobytes())
    assert main(["cache-sim", str(tmp_path / "t.u64"), "--sizes", "1,4,16", "--policies", "lru,static"]) == 0
    assert "80% hits from size lru 1, static 16" in capsys.readouterr().err
    assert main(["cache-sim", str(tmp_path / "t.u64"), "--sizes", "1", "--policies", "static"]) == 0
    assert "80% hits from size static -" in capsys.readouterr().err
