"""The work-queue frontier: Heritrix's key layout, politeness, retries, budgets, restart."""

from __future__ import annotations

import pytest

from pycrawler.errors import BadInput
from pycrawler.frontier import pending_records
from pycrawler.frontier.politeness import Outcome, Politeness
from pycrawler.frontier.pending_records import (
    HIGH,
    HIGHEST,
    NORMAL,
    decode_entry,
    decode_key,
    encode_entries,
    encode_entry,
    encode_found,
    pending_key,
    pending_keys,
    queue_prefix,
)
from pycrawler.frontier.workqueues import WorkQueueFrontier
from pycrawler.records.crawl_url import CrawlUrl, decode, encode
from pycrawler.seen.exact import ExactVisited

NO_WAIT = Politeness.none()


class Clock:
    """A hand-moved clock, so politeness is tested without sleeping."""

    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


def frontier_in(env, clock=None, **options) -> WorkQueueFrontier:
    options.setdefault("politeness", NO_WAIT)
    return WorkQueueFrontier(env, ExactVisited(env, "visited"), create=True, clock=clock or Clock(), **options)


def urls_of(records):
    return [r.ori_url for r in records]


def heritrix_reading(key: bytes) -> tuple[str, int, int, int]:
    """How Heritrix's BdbMultipleWorkQueues reads a key: class key up to the first 0x00, then
    a big-endian long whose top byte is the directive, next byte the precedence, rest the ordinal."""
    zero = key.index(0)
    long_value = int.from_bytes(key[zero + 1:zero + 9], "big")
    return key[:zero].decode(), long_value >> 56, (long_value >> 48) & 0xFF, long_value & 0xFFFFFFFFFFFF


def test_pending_keys_are_heritrix_insert_keys(env):
    frontier = frontier_in(env)
    frontier.schedule(["http://a.example/1", "http://b.example/1", "http://a.example/2"])
    frontier.schedule(["http://a.example/urgent"], directive=HIGHEST, precedence=5)
    keys = [k for k, v in frontier.pending.items() if v]
    assert [heritrix_reading(k) for k in keys] == [
        ("a.example", HIGHEST, 5, 3), ("a.example", NORMAL, 1, 0), ("a.example", NORMAL, 1, 2),
        ("b.example", NORMAL, 1, 1)]
    assert [decode_key(k) for k in keys] == [heritrix_reading(k) for k in keys]
    caps = [k for k, v in frontier.pending.items() if not v]
    assert caps == [b"a.example\x00", b"b.example\x00"]
    assert pending_key(queue_prefix("h"), 3, 500, 7) == b"h\x00\x03\x7f\x00\x00\x00\x00\x00\x07"


def test_values_are_crawl_url_records(env):
    frontier = frontier_in(env)
    frontier.schedule(["http://a.example/x"], layer=2)
    frontier.schedule([CrawlUrl("http://a.example/y", title="kept", layer=4)])
    values = [v for v in frontier.pending.values() if v]
    assert [decode(v) for v in values] == [CrawlUrl("http://a.example/x", layer=2),
                                           CrawlUrl("http://a.example/y", title="kept", layer=4)]


@pytest.mark.parametrize("url,layer", [("http://a/", 0), ("http://a/\u00e9", 3), ("http://a/" + "p" * 300, -5)])
def test_the_fast_entry_codec_writes_and_reads_what_the_crawl_url_codec_does(url, layer):
    record = CrawlUrl(ori_url=url, layer=layer)
    assert encode_entry(url, url, layer) == encode(record)
    assert decode_entry(encode(record)) == record
    full = CrawlUrl(ori_url=url, title="t", url_references=["x"], layer=layer)
    assert decode_entry(encode(full)) == full


@pytest.mark.parametrize("items", [
    ["http://a/", "http://b.example/x?y=1", "http://a/" + "p" * 300],       # the compiled path
    ["http://a/", "http://a/\u00e9"],                                       # non-ASCII: record by record
    ["http://a/", CrawlUrl("http://a/y", title="kept", layer=4)],          # a full record in the batch
])
@pytest.mark.parametrize("compiled", [False, True])
def test_batch_entries_are_the_single_entries_packed(items, compiled, monkeypatch):
    if compiled:
        monkeypatch.setattr(pending_records, "COMPILED_BATCH", 1)
    urls = [i.ori_url if isinstance(i, CrawlUrl) else i for i in items]
    data, offsets = encode_entries(items, urls, 7)
    assert [data[a:b] for a, b in zip(offsets[:-1], offsets[1:])] == [encode_entry(i, u, 7) for i, u in zip(items, urls)]


@pytest.mark.parametrize("urls,texts", [
    (["http://a/", "http://b.example:8080/x?y=1"], ["L http://a/", " -"]),   # ASCII: one join for the batch
    (["http://a/", "http://a/\u00e9"], ["L http://a/", "LX http://a/"]),      # non-ASCII: record by record
    (["http://a/", "http://a/b"], ["L http://a/", "L http://a/\x00"]),        # a NUL: record by record
])
def test_found_entries_are_the_records_of_the_links_encoded(urls, texts):
    layers = [0, -(1 << 31)][:len(urls) - 1] + [(1 << 31) - 1]
    data, offsets = encode_found(urls, layers, texts)
    assert [data[a:b] for a, b in zip(offsets[:-1], offsets[1:])] == [
        encode(CrawlUrl(ori_url=u, abstract_text=t, layer=n)) for u, n, t in zip(urls, layers, texts)]
    with pytest.raises(BadInput, match="layer"):
        encode_found(urls, [0, 1 << 31], texts)


@pytest.mark.parametrize("table", ["exact", "bloom", "drum"])
def test_links_given_with_their_layers_and_texts_enqueue_as_their_records_would(tmp_path, table):
    """The crawl's schedule path (LinkScheduler: URLs, layers and texts, the values built for the
    new URLs only) writes the keys and values, in the order, and counts the totals, that
    scheduling each link's record writes, whatever the seen table (DRUM answering at its flush)."""
    from pycrawler.crawl.discovery import LinkScheduler, discovered
    from pycrawler.seen.tables import open_visited
    from pycrawler.store import Environment

    links = [(f"http://h{i % 3}.example:8080/p{i}", 2 - i % 3, "L" * (2 - i % 3), f"http://h0.example:8080/v{i}")
             for i in range(30)]
    links += [("http://h1.example:8080/p4", 0, "", None), ("not a url", 1, "L", "http://h0.example:8080/"),
              ("HTTP://h2.example:8080/p5#frag", 1, "LX", "http://h0.example:8080/")]
    pending = []
    for way in ("records", "links"):
        state = tmp_path / way
        with Environment(state / "env", create=True) as env:
            visited = open_visited(table, env, state, bloom_capacity=1000)
            frontier = WorkQueueFrontier(env, visited, create=True, politeness=NO_WAIT, clock=Clock())
            for batch in (links[:20], links):          # the second batch: 20 repeats among new links
                if way == "links":
                    LinkScheduler(frontier)(batch)
                else:
                    records = sorted((discovered(*link) for link in batch), key=lambda record: record.layer)
                    frontier.schedule(records, layer=records[0].layer)
            frontier.flush()
            pending.append((list(frontier.pending.items()), dict(frontier.totals)))
            frontier.close()
            visited.close()
    assert pending[0] == pending[1]
    # 30 new URLs; the second batch's first 20 again, and p4 and p5 found again, are repeats.
    assert pending[1][1] == {"enqueued": 30, "duplicates": 22, "rejected": 1}
    records = {record.ori_url: record for record in (decode_entry(value) for _, value in pending[1][0] if value)}
    assert records["http://h2.example:8080/p29"] == discovered(*links[29])


@pytest.mark.parametrize("compiled", [False, True])
def test_batch_keys_are_the_single_keys_packed(compiled, monkeypatch):
    if compiled:
        monkeypatch.setattr(pending_records, "COMPILED_BATCH", 1)
    prefixes = [queue_prefix("a.example"), queue_prefix("\u00e9.example#8080")]
    data, offsets = pending_keys(prefixes, [1, 0, 1], HIGH, 300, (1 << 40) + 5)
    assert [data[a:b] for a, b in zip(offsets[:-1], offsets[1:])] == [
        pending_key(prefixes[slot], HIGH, 300, (1 << 40) + 5 + i) for i, slot in enumerate([1, 0, 1])]
    data, offsets = pending_keys(prefixes, [1, 0, 1], HIGH, 300, (1 << 40) + 5, step=-1)   # a lifo count down
    assert [data[a:b] for a, b in zip(offsets[:-1], offsets[1:])] == [
        pending_key(prefixes[slot], HIGH, 300, (1 << 40) + 5 - i) for i, slot in enumerate([1, 0, 1])]


def test_fifo_within_a_queue_and_higher_directives_jump_the_line(env):
    frontier = frontier_in(env)
    frontier.schedule([f"http://a.example/{i}" for i in range(3)])
    frontier.schedule(["http://a.example/high"], directive=HIGH)
    order = []
    while batch := frontier.next_batch(5):
        order += urls_of(batch)
        frontier.completed_many((r, Outcome.success()) for r in batch)
    assert order == ["http://a.example/high", "http://a.example/0", "http://a.example/1", "http://a.example/2"]


def test_a_url_scheduled_ahead_of_the_read_ahead_is_still_handed_out_first(env):
    frontier = frontier_in(env, prefetch=8)
    frontier.schedule([f"http://a.example/{i}" for i in range(4)])
    first = frontier.next()
    frontier.schedule(["http://a.example/now"], directive=HIGHEST)
    frontier.completed(first, Outcome.success())
    assert frontier.next().ori_url == "http://a.example/now"


def test_lifo_within_a_level_newest_first_while_the_read_ahead_stays_bounded(env):
    frontier = frontier_in(env, lifo=True, prefetch=2)
    frontier.schedule([f"http://a.example/{i}" for i in range(3)])
    frontier.schedule(["http://a.example/low"], directive=NORMAL + 1)
    first = frontier.next()
    assert first.ori_url == "http://a.example/2"
    frontier.schedule([f"http://a.example/new{i}" for i in range(10)])   # while 2 is out: all jump ahead
    queue = frontier.queues["a.example"]
    assert len(queue.buffer) <= 4   # cut back to the read-ahead; the rest stays in JE, read again
    frontier.completed(first, Outcome.success())   # finished, its deletion not committed yet
    order = []
    while batch := frontier.next_batch(5):
        order += urls_of(batch)
        for record in batch:
            frontier.completed(record, Outcome.success())
    assert order == [f"http://a.example/new{i}" for i in reversed(range(10))] + [
        "http://a.example/1", "http://a.example/0", "http://a.example/low"]


def test_lifo_is_kept_by_the_store_and_survives_a_crash(tmp_path, clock):
    frontier = WorkQueueFrontier.open(tmp_path, create=True, politeness=NO_WAIT, clock=clock, lifo=True)
    frontier.schedule([f"http://a.example/{i}" for i in range(4)])
    frontier.completed_many((r, Outcome.success()) for r in frontier.next_batch(1))   # 3, the newest
    frontier.env.close()  # as after a crash
    with pytest.raises(BadInput, match="last-in-first-out frontier"):
        WorkQueueFrontier.open(tmp_path, politeness=NO_WAIT, clock=clock, lifo=False)
    with WorkQueueFrontier.open(tmp_path, politeness=NO_WAIT, clock=clock) as frontier:
        assert frontier.lifo
        frontier.schedule(["http://a.example/after"])   # the count down goes on below the stored keys
        order = []
        while batch := frontier.next_batch(1):
            order += urls_of(batch)
            frontier.completed_many((r, Outcome.success()) for r in batch)
    assert order == ["http://a.example/after", "http://a.example/2", "http://a.example/1", "http://a.example/0"]
    with WorkQueueFrontier.open(tmp_path / "fifo", create=True) as frontier:
        assert not frontier.lifo
    with pytest.raises(BadInput, match="first-in-first-out frontier"):
        WorkQueueFrontier.open(tmp_path / "fifo", lifo=True)


def test_one_url_per_queue_in_process_and_none_when_nothing_is_ready(env, clock):
    frontier = frontier_in(env, clock)
    frontier.schedule(["http://a.example/1", "http://a.example/2", "http://b.example/1"])
    assert urls_of(frontier.next_batch(10)) == ["http://a.example/1", "http://b.example/1"]
    assert frontier.next() is None
    assert frontier.wait_time() is None  # everything is in process: only a completion wakes a queue
    assert frontier.stats()["by_state"]["in_process"] == {"queues": 2, "urls": 3}


def test_politeness_is_a_multiple_of_the_fetch_time_within_bounds(env, clock):
    politeness = Politeness(delay_factor=10, min_delay=2, max_delay=30)
    frontier = frontier_in(env, clock, politeness=politeness)
    frontier.schedule([f"http://a.example/{i}" for i in range(5)])
    frontier.completed(frontier.next(), Outcome.success(fetch_seconds=0.5))
    assert frontier.next() is None and frontier.wait_time() == pytest.approx(5.0)
    assert frontier.stats()["by_state"]["snoozed"]["queues"] == 1
    clock.now += 5.0
    record = frontier.next()
    frontier.completed(record, Outcome.success(fetch_seconds=0.01))    # 0.1 s -> min 2 s
    assert frontier.wait_time() == pytest.approx(2.0)
    clock.now += 2.0
    frontier.completed(frontier.next(), Outcome.success(fetch_seconds=60))  # 600 s -> max 30 s
    assert frontier.wait_time() == pytest.approx(30.0)
    clock.now += 30.0
    frontier.completed(frontier.next(), Outcome.success(fetch_seconds=0.1, crawl_delay=45))
    assert frontier.wait_time() == pytest.approx(45.0)  # robots.txt Crawl-delay beats the maximum


def test_politeness_defaults_follow_mercator():
    assert Politeness().delay(1.0) == 10.0
    assert Politeness().delay(0.01) == Politeness().min_delay
    assert Politeness().delay(0.1, crawl_delay=10_000) == Politeness().respect_crawl_delay_up_to


def test_duplicates_are_dropped_canonical_spellings_merge_and_force_fetches_again(env):
    frontier = frontier_in(env)
    result = frontier.schedule(["http://A.example:80/x#top", "http://a.example/x", "not a url", "http://a.example/y"])
    assert (result.enqueued, result.duplicates, result.rejected) == (2, 1, 1)
    assert frontier.schedule(["http://a.example/y"]).enqueued == 0
    assert frontier.schedule(["http://a.example/y"], force=True).enqueued == 1
    assert len(frontier) == 3


def test_a_url_is_handed_out_once_in_a_crawl(env):
    frontier = frontier_in(env)
    frontier.schedule([f"http://h{i % 7}.example/{i}" for i in range(200)])
    handed = []
    while batch := frontier.next_batch(50):
        handed += urls_of(batch)
        frontier.completed_many((r, Outcome.success()) for r in batch)
        frontier.schedule(handed[-10:])  # links back to pages already fetched
    assert sorted(handed) == sorted(f"http://h{i % 7}.example/{i}" for i in range(200))
    assert len(frontier) == 0 and frontier.stats()["by_state"]["empty"]["queues"] == 7


def test_transient_failures_retry_with_backoff_then_fail_for_good(env, clock):
    politeness = Politeness(delay_factor=0, min_delay=0, max_delay=0, retry_delay=10, max_retries=2)
    frontier = frontier_in(env, clock, politeness=politeness)
    frontier.schedule(["http://a.example/flaky", "http://a.example/next"])
    assert frontier.completed(frontier.next(), Outcome.retry()) is False
    assert frontier.wait_time() == pytest.approx(10)
    clock.now += 10
    record = frontier.next()
    assert record.ori_url == "http://a.example/flaky"  # still the head of its queue
    assert frontier.completed(record, Outcome.retry()) is False
    assert frontier.wait_time() == pytest.approx(20)
    clock.now += 20
    assert frontier.completed(frontier.next(), Outcome.retry()) is True  # third failure: final
    assert frontier.next().ori_url == "http://a.example/next"
    assert frontier.totals["retried"] == 2 and frontier.totals["failure"] == 1


def test_completing_a_url_that_is_not_out_is_refused(env):
    frontier = frontier_in(env)
    frontier.schedule(["http://a.example/1"])
    with pytest.raises(BadInput, match="not in process"):
        frontier.completed("http://a.example/1", Outcome.success())


def test_a_queue_retires_when_its_budget_is_spent(env):
    frontier = frontier_in(env, queue_budget=2)
    frontier.schedule([f"http://a.example/{i}" for i in range(4)] + ["http://b.example/1"])
    fetched = []
    while batch := frontier.next_batch(10):
        fetched += urls_of(batch)
        frontier.completed_many((r, Outcome.success()) for r in batch)
    assert fetched == ["http://a.example/0", "http://b.example/1", "http://a.example/1"]
    assert frontier.stats()["by_state"]["retired"] == {"queues": 1, "urls": 2}
    frontier.set_queue_budget(None)
    assert frontier.next().ori_url == "http://a.example/2"


def test_queues_over_the_active_cap_wait_inactive(env):
    frontier = frontier_in(env, max_active_queues=2)
    frontier.schedule(["http://a.example/1", "http://b.example/1", "http://c.example/1", "http://c.example/2"])
    states = frontier.stats()["by_state"]
    assert states["ready"]["queues"] == 2 and states["inactive"] == {"queues": 1, "urls": 2}
    batch = frontier.next_batch(10)
    assert urls_of(batch) == ["http://a.example/1", "http://b.example/1"]
    frontier.completed_many((r, Outcome.success()) for r in batch)  # both queues empty: c activates
    assert urls_of(frontier.next_batch(10)) == ["http://c.example/1"]


def test_hashing_within_a_host_keeps_one_fetch_per_host(env, clock):
    frontier = frontier_in(env, clock, assignment="bkdr-host:4", politeness=Politeness(
        delay_factor=0, min_delay=1, max_delay=1))
    frontier.schedule([f"http://big.example/{i}" for i in range(20)] + ["http://small.example/1"])
    assert len([q for q in frontier.queues if q.startswith("big.example/")]) == 4
    batch = frontier.next_batch(10)
    assert sorted(r.ori_url.split("/")[2] for r in batch) == ["big.example", "small.example"]
    big = next(r for r in batch if "big" in r.ori_url)
    frontier.completed(big, Outcome.success())
    assert frontier.next_batch(10) == []          # the host rests 1 s, whichever queue asks
    clock.now += 1
    assert len(frontier.next_batch(10)) == 1


def test_parallel_queues_give_a_host_n_fetches_at_once_each_queue_resting_on_its_own(env, clock):
    frontier = frontier_in(env, clock, assignment="parallel-host:4", politeness=Politeness(
        delay_factor=0, min_delay=1, max_delay=1))
    frontier.schedule([f"http://big.example/{i}" for i in range(20)] + ["http://small.example/1"])
    batch = frontier.next_batch(10)
    assert sorted(r.ori_url.split("/")[2] for r in batch) == ["big.example"] * 4 + ["small.example"]
    big = next(r for r in batch if "big" in r.ori_url)
    frontier.completed(big, Outcome.success())
    assert frontier.next_batch(10) == []          # that queue rests 1 s; the other three are out
    frontier.completed_many((r, Outcome.success()) for r in batch if r is not big)
    clock.now += 1
    assert len(frontier.next_batch(10)) == 4


def test_hashing_over_all_urls_spreads_one_site_over_queues(env):
    frontier = frontier_in(env, assignment="bkdr:8")
    frontier.schedule([f"http://big.example/{i}" for i in range(100)])
    assert len(frontier.queues) == 8
    assert len(frontier.next_batch(20)) == 8  # eight fetches of one site at once: the trade-off


def test_a_clean_restart_keeps_queues_counters_and_in_process_urls(tmp_path, clock):
    politeness = Politeness(delay_factor=0, min_delay=60, max_delay=60)
    with WorkQueueFrontier.open(tmp_path, create=True, politeness=politeness, clock=clock) as frontier:
        frontier.schedule([f"http://h{i % 3}.example/{i}" for i in range(9)])
        first = frontier.next_batch(3)
        frontier.completed_many((r, Outcome.success()) for r in first[:2])
        assert frontier.next_batch(3) == []  # two queues rest 60 s, the third has a URL out
    with WorkQueueFrontier.open(tmp_path, politeness=politeness, clock=clock) as frontier:
        assert len(frontier) == 7 and frontier.totals == {}
        assert {q.class_key: q.fetched for q in frontier.queues.values()} == {
            "h0.example": 1, "h1.example": 1, "h2.example": 0}
        assert frontier.stats()["by_state"]["snoozed"]["queues"] == 2  # their wake times persist
        assert urls_of(frontier.next_batch(3)) == [first[2].ori_url]   # in process: back at the head
        assert frontier.schedule(["http://h0.example/0"]).duplicates == 1
        clock.now += 60
        assert len(frontier.next_batch(3)) == 2


def test_counters_are_rebuilt_from_the_keys_without_a_clean_close(tmp_path, clock):
    frontier = WorkQueueFrontier.open(tmp_path, create=True, politeness=NO_WAIT, clock=clock)
    frontier.schedule([f"http://h{i % 3}.example/{i}" for i in range(9)])
    frontier.completed_many((r, Outcome.success()) for r in frontier.next_batch(3))
    frontier.env.close()  # as after a crash: no queue records, no clean marker
    with WorkQueueFrontier.open(tmp_path, politeness=NO_WAIT, clock=clock) as frontier:
        assert {q.class_key: q.count for q in frontier.queues.values()} == {
            "h0.example": 2, "h1.example": 2, "h2.example": 2}
        frontier.schedule(["http://h0.example/new"])
        keys = [decode_key(k) for k, v in frontier.pending.items(prefix=b"h0.example\x00") if v]
        assert keys[-1][3] == 9  # the ordinal continues after the largest one stored


def test_a_released_url_frees_its_queue_at_once_and_stays_pending_until_its_completion(tmp_path, clock):
    """release(): the queue hands out its next URL as the fetch ends (after its delay), not at
    the commit; what a kill before the commit leaves is the released URL, handed out again."""
    with WorkQueueFrontier.open(tmp_path, create=True, politeness=NO_WAIT, clock=clock) as frontier:
        frontier.schedule([f"http://a.example/{i}" for i in range(4)])
        first = frontier.next()
        assert frontier.next() is None  # one URL of a queue out at a time
        frontier.release(first, Outcome.success())
        second = frontier.next()
        assert second.ori_url == "http://a.example/1"
        frontier.release(second, Outcome.success())
        frontier.completed_many([(first, Outcome.success())])  # the first committed, the second not yet
        frontier.env.close()  # a kill -9 now
    with WorkQueueFrontier.open(tmp_path, politeness=NO_WAIT, clock=clock) as frontier:
        assert len(frontier) == 3
        assert urls_of(frontier.next_batch(1)) == ["http://a.example/1"]


def test_released_urls_wait_their_politeness_delay_from_the_end_of_the_fetch(env, clock):
    frontier = frontier_in(env, clock, politeness=Politeness(delay_factor=0, min_delay=5, max_delay=5))
    frontier.schedule(["http://a.example/1", "http://a.example/2"])
    frontier.release(frontier.next(), Outcome.success())
    assert frontier.next() is None and frontier.wait_time() == pytest.approx(5)
    clock.now += 5
    assert frontier.next().ori_url == "http://a.example/2"


def test_a_close_with_a_release_not_completed_counts_the_queues_again(tmp_path, clock):
    with WorkQueueFrontier.open(tmp_path, create=True, politeness=NO_WAIT, clock=clock) as frontier:
        frontier.schedule(["http://a.example/1", "http://a.example/2"])
        frontier.release(frontier.next(), Outcome.success())  # its flush failed: never completed
    with WorkQueueFrontier.open(tmp_path, politeness=NO_WAIT, clock=clock) as frontier:
        assert len(frontier) == 2
        assert urls_of(frontier.next_batch(1)) == ["http://a.example/1"]


def test_a_released_retry_is_handed_out_again_and_its_attempts_are_committed_with_it(tmp_path, clock):
    politeness = Politeness(delay_factor=0, min_delay=0, max_delay=0, retry_delay=10, max_retries=2)
    with WorkQueueFrontier.open(tmp_path, create=True, politeness=politeness, clock=clock) as frontier:
        frontier.schedule(["http://a.example/flaky"])
        frontier.release(frontier.next(), Outcome.retry())
        clock.now += 10
        again = frontier.next()
        assert again.ori_url == "http://a.example/flaky"
        frontier.release(again, Outcome.success())
        assert frontier.completed_many([(again, Outcome.retry()), (again, Outcome.success())]) == 1
        assert len(frontier) == 0 and frontier.totals["retried"] == 1 and frontier.totals["success"] == 1
    with WorkQueueFrontier.open(tmp_path, politeness=politeness, clock=clock) as frontier:
        assert len(frontier) == 0 and not dict(frontier.retry_records.items())


def test_a_lifo_read_ahead_read_again_skips_released_urls(env):
    frontier = frontier_in(env, lifo=True, prefetch=2)
    frontier.schedule([f"http://a.example/{i}" for i in range(3)])
    first = frontier.next()
    frontier.schedule([f"http://a.example/new{i}" for i in range(10)])  # the read-ahead is cut back
    frontier.release(first, Outcome.success())  # finished, its completion not committed
    order = []
    while batch := frontier.next_batch(5):
        order += urls_of(batch)
        for record in batch:
            frontier.release(record, Outcome.success())
    assert order == [f"http://a.example/new{i}" for i in reversed(range(10))] + ["http://a.example/1",
                                                                                 "http://a.example/0"]


def test_a_read_only_frontier_reports_and_refuses_work(tmp_path):
    with WorkQueueFrontier.open(tmp_path, create=True) as frontier:
        frontier.schedule(["http://a.example/1"])
    with WorkQueueFrontier.open(tmp_path, read_only=True) as frontier:
        assert frontier.stats()["pending"] == 1
        with pytest.raises(BadInput, match="read-only"):
            frontier.next()


def test_a_directory_without_the_pending_database_is_refused(env):
    with pytest.raises(BadInput, match="no work-queue frontier"):
        WorkQueueFrontier(env, None)
