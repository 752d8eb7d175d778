"""DRUM's contract: the article's five outcomes, arrival order within a batch, buffers that
spill to disk buckets, disk buckets that trigger merges, synchronize/close, and a repository
that persists across reopen. The kill -9 half of the contract is tests/test_drum_crash.py."""

from __future__ import annotations

import numpy as np
import pytest

from pycrawler.errors import BadInput
from pycrawler.seen.drum import Collector, Dispatcher, Drum, DrumVisited, HostCache
from pycrawler.seen.drum.blobs import Blobs


def keys(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def outcomes(collector: Collector) -> set[tuple]:
    return set(collector.results)


@pytest.fixture
def small(tmp_path):
    """A DRUM with tiny buffers and blocks, so few operations exercise every path."""
    collector = Collector()
    drum = Drum(tmp_path / "drum", collector, num_buckets=4, bucket_buffer_elems=3, bucket_bytes=1 << 20,
                block_keys=4)
    yield drum, collector
    drum.close()


def test_the_five_outcomes(small):
    drum, got = small
    drum.update(5, b"five", b"u")
    drum.synchronize()
    got.results.clear()
    drum.check(5, b"a")
    drum.check(6, b"b")
    drum.check_update(5, b"FIVE", b"c")
    drum.check_update(7, b"seven", b"d")
    drum.update(8, b"eight", b"e")
    drum.synchronize()
    assert outcomes(got) == {
        ("duplicate_key_check", 5, b"five", b"a"),
        ("unique_key_check", 6, None, b"b"),
        ("duplicate_key_update", 5, b"FIVE", b"c"),
        ("unique_key_update", 7, b"seven", b"d"),
        ("update", 8, b"eight", b"e"),
    }


def test_same_key_twice_in_a_batch_first_is_unique(small):
    drum, got = small
    drum.check_update_many(keys(9, 9, 2**64 - 1, 9), aux=[b"1", b"2", b"3", b"4"])
    drum.synchronize()
    assert sorted(got.results, key=lambda r: r[3]) == [
        ("unique_key_update", 9, b"", b"1"), ("duplicate_key_update", 9, b"", b"2"),
        ("unique_key_update", 2**64 - 1, b"", b"3"), ("duplicate_key_update", 9, b"", b"4")]


def test_a_check_after_an_update_in_the_same_batch_sees_it(small):
    drum, got = small
    drum.check(3, b"before")
    drum.update(3, b"v1", b"update")
    drum.check(3, b"after")
    drum.synchronize()
    assert outcomes(got) == {("unique_key_check", 3, None, b"before"), ("update", 3, b"v1", b"update"),
                             ("duplicate_key_check", 3, b"v1", b"after")}


def test_nothing_is_dispatched_before_a_merge(small):
    drum, got = small
    drum.check_update_many(keys(1, 2, 3, 4, 5))
    assert got.results == []
    drum.synchronize()
    assert len(got.results) == 5


def test_full_buffers_spill_to_disk_and_a_full_disk_bucket_merges_every_bucket(tmp_path):
    got = Collector()
    with Drum(tmp_path / "drum", got, num_buckets=2, bucket_buffer_elems=10, bucket_bytes=400) as drum:
        low = np.arange(1, 10, dtype=np.uint64)  # bucket 0 only: stays in RAM (9 < 10)
        drum.check_update_many(low)
        assert drum._disk[0].size == 0
        drum.check_update_many(low + np.uint64(100))  # 18 >= 10: spilled, but 8*18 B < 400 B
        assert drum._disk[0].size > 0 and drum.merges == 0 and got.results == []
        high = np.arange(1, 5, dtype=np.uint64) | np.uint64(1 << 63)  # bucket 1, in RAM
        drum.check_update_many(high)
        drum.check_update_many(np.arange(200, 260, dtype=np.uint64))  # bucket 0 passes 400 B
        assert drum.merges == 2  # both buckets, bucket 1 straight from its RAM buffer
        assert len(got.results) == 9 + 9 + 4 + 60


def test_a_round_takes_in_more_operations_as_the_repository_grows(tmp_path):
    """A round rewrites the repository, so the disk bucket size that starts one grows with it
    (merge_ratio of its key bytes over the buckets), up to max_bucket_bytes; the key count it is
    figured from is kept with the merges and read back on reopen."""
    settings = dict(num_buckets=2, bucket_buffer_elems=10, bucket_bytes=400, max_bucket_bytes=4_000)
    spread = np.uint64(0x9E3779B97F4A7C15)
    with Drum(tmp_path / "drum", **settings) as drum:
        assert drum.bucket_limit() == 400
        drum.check_update_many(np.arange(1, 301, dtype=np.uint64) * spread)
        drum.synchronize()
        assert drum.bucket_limit() == 600  # 0.5 x 300 keys x 8 bytes / 2 buckets
        merges = drum.merges
        drum.check_update_many(np.arange(301, 411, dtype=np.uint64) * spread)
        assert all(400 < disk.size < 600 for disk in drum._disk)  # past bucket_bytes, under the limit
        assert drum.merges == merges
        drum.check_update_many(np.arange(411, 5001, dtype=np.uint64) * spread)
        drum.synchronize()
        assert drum.bucket_limit() == 4_000  # 0.5 x 5,000 x 8 / 2 = 10,000, held to the maximum
    with Drum(tmp_path / "drum", **settings) as drum:
        assert drum.repository.keys() == drum.count() == 5_000
        assert drum.bucket_limit() == 4_000


SPREAD = np.uint64(0x9E3779B97F4A7C15)  # multiplies 1, 2, 3... into keys spread over every bucket


def test_a_paced_round_merges_a_bucket_per_call_and_calls_each_key_once(tmp_path):
    """With round_share, the call that fills a bucket past its limit merges one bucket, and each
    call after it one more (a share of 1 rests for no time), so no call holds a whole round; the
    outcomes are those of a whole round."""
    got = Collector()
    with Drum(tmp_path / "drum", got, num_buckets=4, bucket_buffer_elems=10, bucket_bytes=400,
              round_share=1.0) as drum:
        drum.check_update_many(np.arange(1, 201, dtype=np.uint64) * SPREAD)
        assert (drum.merges, drum.rounds) == (1, 0)
        for call in range(3):
            drum.check_update_many(np.arange(201 + call, 202 + call, dtype=np.uint64) * SPREAD)
            assert drum.merges == 2 + call
        assert drum.rounds == 1
        drum.check_update_many(np.arange(1, 11, dtype=np.uint64) * SPREAD)  # seen in the round
        drum.synchronize()
    unique = [key for outcome, key, *_ in got.results if outcome == "unique_key_update"]
    duplicate = [key for outcome, key, *_ in got.results if outcome == "duplicate_key_update"]
    assert sorted(unique) == sorted((np.arange(1, 204, dtype=np.uint64) * SPREAD).tolist())
    assert sorted(duplicate) == sorted((np.arange(1, 11, dtype=np.uint64) * SPREAD).tolist())


def test_a_resting_round_waits_its_share_but_not_for_an_overgrown_bucket(tmp_path):
    """After a step, a paced round rests for (1 - share) / share of the step's time; a bucket
    grown past twice its limit meanwhile is merged at once (it is read whole into RAM)."""
    with Drum(tmp_path / "drum", num_buckets=4, bucket_buffer_elems=10, bucket_bytes=400,
              round_share=1e-9) as drum:
        drum.check_update_many(np.arange(1, 201, dtype=np.uint64) * SPREAD)
        assert drum.merges == 1
        drum.check_update_many(np.arange(201, 211, dtype=np.uint64) * SPREAD)
        assert drum.merges == 1  # resting
        top = np.uint64(3 << 62)  # bucket 3's key range
        drum.check_update_many(top + np.arange(1, 101, dtype=np.uint64))
        assert drum.merges == 2 and drum._disk[3].size == 0
        drum.synchronize()
        assert drum.rounds == 2 and not drum.queued()  # the round under way, then bucket 0's new keys
        assert drum.count() == 310


def test_a_requested_round_is_merged_a_bucket_at_a_time(tmp_path):
    """request_round starts a round before any bucket reaches its limit; merge_next merges one
    bucket holding operations now, and says when none was left."""
    got = Collector()
    with Drum(tmp_path / "drum", got, num_buckets=4, round_share=0.5) as drum:
        drum.check_update_many(np.arange(1, 41, dtype=np.uint64) * SPREAD)
        drum.check_update_many(np.arange(41, 51, dtype=np.uint64) * SPREAD)
        assert drum.merges == 0  # far under the 8 MB limit
        drum.request_round()
        assert drum.merges == 0  # the round is carried on by the calls to come
        delivered = []
        while drum.merge_next():
            delivered.append(len(got.results))
        assert drum.merges == len(delivered) == 4 and drum.rounds == 1
        assert delivered == sorted(set(delivered)) and delivered[-1] == 50
        assert not drum.queued() and not drum.merge_next()


def test_a_repository_from_before_the_key_count_is_counted_once(tmp_path):
    with Drum(tmp_path / "drum", block_keys=4) as drum:
        drum.check_update_many(np.arange(1, 101, dtype=np.uint64))
    with Drum(tmp_path / "drum", block_keys=4) as drum:
        assert drum.repository.meta.delete(b"keys")  # as a repository written before merges counted
    with Drum(tmp_path / "drum", block_keys=4) as drum:
        assert drum.repository.keys() == 100
        drum.check_update_many(np.arange(51, 151, dtype=np.uint64))
        drum.synchronize()
        assert drum.repository.keys() == drum.count() == 150


def test_close_synchronizes_and_reopen_remembers(tmp_path):
    got = Collector()
    with Drum(tmp_path / "drum", got, block_keys=2) as drum:
        drum.update_many(keys(10, 20, 30), [b"a", b"b", b"c"])
    assert len(got.results) == 3  # delivered by close()
    got = Collector()
    with Drum(tmp_path / "drum", got, block_keys=2) as drum:
        assert drum.count() == 3
        drum.check_many(keys(20, 25))
    assert outcomes(got) == {("duplicate_key_check", 20, b"b", b""), ("unique_key_check", 25, None, b"")}


def test_reopen_with_another_bucket_count_is_refused(tmp_path):
    Drum(tmp_path / "drum", num_buckets=4).close()
    with pytest.raises(BadInput, match="num_buckets"):
        Drum(tmp_path / "drum", num_buckets=8)


def test_many_merges_agree_with_a_python_set(tmp_path):
    class Unique(Dispatcher):
        def __init__(self):
            self.keys = []

        def unique_key_update(self, keys, values, aux):
            self.keys.extend(keys.tolist())

    unique, model, expected = Unique(), set(), []
    rng = np.random.default_rng(3)
    with Drum(tmp_path / "drum", unique, num_buckets=8, bucket_buffer_elems=50, bucket_bytes=2_000,
              block_keys=16) as drum:
        for _ in range(20):
            batch = (rng.integers(0, 3_000, 400).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15))
            drum.check_update_many(batch)
            for k in batch.tolist():
                if k not in model:
                    model.add(k)
                    expected.append(k)
        assert drum.merges > 8  # merges ran before close
    assert sorted(unique.keys) == sorted(expected)  # each key unique exactly once


@pytest.mark.parametrize("width", [5, 16])
def test_keys_of_any_fixed_width(tmp_path, width):
    got = Collector()
    a, b = b"\x01" * width, b"\xff" * (width - 1) + b"\x00"
    with Drum(tmp_path / "drum", got, key_bytes=width, num_buckets=2) as drum:
        drum.check_update_many([a, b, a], values=[b"x", b"y", b"z"])
    assert [(r[0], r[1], r[2]) for r in sorted(got.results, key=lambda r: r[2])] == [
        ("unique_key_update", a, b"x"), ("unique_key_update", b, b"y"), ("duplicate_key_update", a, b"z")]


def test_a_dispatcher_that_ignores_outcomes_gets_nothing_built(tmp_path):
    with Drum(tmp_path / "drum") as drum:
        drum.check_update_many(keys(1, 2, 3), aux=[b"a", b"b", b"c"])
        drum.synchronize()
        assert drum.dispatcher.wanted() == frozenset()


def test_drum_visited_delivers_what_it_queued_when_it_merges(tmp_path):
    """The Visited protocol it keeps is held for every table by tests/test_visited_contract.py;
    DRUM's own part of it is when: nothing reaches the receiver before a merge."""
    heard = []
    with DrumVisited(tmp_path / "seen", num_buckets=4) as seen:
        seen.set_receiver(lambda k, aux, unique: heard.extend(zip(aux, unique.tolist())))
        seen.add_urls(["http://a.example/", "http://b.example/", "http://a.example/"])
        assert heard == []
        seen.flush()
        assert len(heard) == 3


def test_host_cache_misses_then_hits(tmp_path):
    answers = []
    with HostCache(tmp_path / "robots", lambda hosts, records, aux: answers.extend(zip(hosts, records, aux)),
                   num_buckets=2) as cache:
        cache.lookup_many(["a.example", "b.example"], aux=[1, 2])
        cache.flush()
        assert sorted(answers) == [("a.example", None, 1), ("b.example", None, 2)]
        cache.store_many(["a.example"], [b"User-agent: *\nDisallow: /private"])
        cache.lookup_many(["a.example"])
        cache.flush()
        assert answers[-1] == ("a.example", b"User-agent: *\nDisallow: /private", None)


def test_bound_drum_merges_in_the_callers_transaction_and_keeps_its_files_until_the_commit(tmp_path, env):
    seen = DrumVisited(tmp_path / "drum", env=env, num_buckets=2)
    assert seen.bound_to(env) is seen
    delivered = []
    seen.set_receiver(lambda keys, aux, unique: delivered.extend(zip(keys.tolist(), aux, unique.tolist())))
    with pytest.raises(RuntimeError):
        with env.begin() as txn:
            seen.add_batch(np.array([3, 4], dtype=np.uint64), ["a", "b"], txn=txn)
            seen.flush(txn=txn)
            raise RuntimeError("what the receiver wrote failed")
    assert seen.drum.count() == 0, "the merge committed without the receiver's writes"
    assert list((tmp_path / "drum" / "buckets").glob("*.kv")), "the only copy of the operations was deleted"
    with env.begin() as txn:
        seen.add_batch(np.array([4, 5], dtype=np.uint64), ["c", "d"], txn=txn)
    assert list((tmp_path / "drum" / "buckets").glob("*.kv")), "a bound add_batch left its checks in RAM"


def test_checks_queued_through_a_bound_add_batch_survive_an_abandoned_process(tmp_path, env):
    first = DrumVisited(tmp_path / "drum", env=env, num_buckets=2)
    with env.begin() as txn:
        first.add_batch(np.array([8, 9], dtype=np.uint64), ["x", "y"], txn=txn)
    first.drum.repository.close()  # what a kill -9 leaves: the buckets on disk, nothing merged
    again = DrumVisited(tmp_path / "drum", env=env, num_buckets=2)
    delivered = []
    again.set_receiver(lambda keys, aux, unique: delivered.extend(zip(aux, unique.tolist())))
    with env.begin() as txn:
        again.flush(txn=txn)
    assert sorted(delivered) == [("x", True), ("y", True)]


def test_a_drum_repository_in_its_own_environment_is_adopted_by_the_state(tmp_path):
    from pycrawler.seen.tables import open_visited
    from pycrawler.store import Environment

    state = tmp_path / "state"
    with DrumVisited(state / "drum") as old:  # the layout before: drum/repository
        old.add_many(np.array([21, 22], dtype=np.uint64))
    assert (state / "drum" / "repository").is_dir()
    with Environment(state, create=True) as env:
        with open_visited("drum", env, state, bloom_capacity=10) as seen:
            assert seen.joins_transactions_of(env)
            assert seen.contains_many(np.array([21, 22, 23], dtype=np.uint64)).tolist() == [True, True, False]
    assert not (state / "drum" / "repository").exists()


def test_a_slice_of_blobs_reads_as_the_strings_it_names():
    # An add's aux is gathered once in bucket order and handed to each bucket as a slice.
    accent = "é".encode()
    blobs = Blobs.of([b"a", b"", b"bcd", "é", b"ef"])
    part = blobs.slice(1, 4)
    assert list(part) == [b"", b"bcd", accent] and part[2] == accent and len(part) == 3 and part.nbytes == 5
    assert part.take(np.array([2, 0])).tolist() == [accent, b""]
    assert Blobs.concat([part, blobs.slice(4, 5)]).tolist() == [b"", b"bcd", accent, b"ef"]
