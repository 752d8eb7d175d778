"""The Visited protocol (pycrawler/seen/protocol.py), held once for every table behind it: the
exact JE set, the Bloom filter, DRUM, a URL cache in front of DRUM, and tables bound to the
transactions of a JE environment (the exact set in it, a Bloom filter through its mark log, DRUM
with its repository there).

What each table does beyond the protocol (a Bloom filter's false-positive rate and file, DRUM's
merges and buckets, the cache's policies, the exact set's key layout) is held by its own module:
tests/test_bloom.py, test_drum.py, test_url_cache.py, test_seen_exact.py.
"""

from __future__ import annotations

import contextlib
import dataclasses

import numpy as np
import pytest

from pycrawler.errors import BadInput
from pycrawler.keys import fingerprints64
from pycrawler.seen import BloomFilter, ExactVisited, SynchronousVisited, Visited, per_key
from pycrawler.seen.cache import ClockCache
from pycrawler.seen.cached import cached
from pycrawler.seen.drum import DrumVisited
from pycrawler.seen.synchronous import MarkLog


@dataclasses.dataclass
class Subject:
    """A table under test; ``env`` is set when it is bound to that environment, and its queued
    checks and flushes then run in transactions of it, as a frontier's do."""

    table: Visited
    env: object = None

    @property
    def synchronous(self) -> bool:
        return isinstance(self.table, SynchronousVisited)

    def transaction(self):
        return self.env.begin() if self.env is not None else contextlib.nullcontext()

    def add_batch(self, keys, aux=None) -> None:
        with self.transaction() as txn:
            self.table.add_batch(keys, aux, txn=txn)

    def flush(self) -> None:
        with self.transaction() as txn:
            self.table.flush(txn=txn)


def bloom() -> BloomFilter:
    return BloomFilter(10_000, 1e-9)  # no false positive among the few keys a test adds


TABLES = {
    "exact": lambda env, folder: Subject(ExactVisited(env)),
    "bloom": lambda env, folder: Subject(bloom()),
    "drum": lambda env, folder: Subject(DrumVisited(folder, num_buckets=2)),
    "cached drum": lambda env, folder: Subject(cached(DrumVisited(folder, num_buckets=2), ClockCache(4))),
    "bound exact": lambda env, folder: Subject(ExactVisited(env).bound_to(env), env),
    "bound bloom": lambda env, folder: Subject(bloom().bound_to(env), env),
    "bound drum": lambda env, folder: Subject(DrumVisited(folder, env=env, num_buckets=2).bound_to(env), env),
}
BOUND = [name for name in TABLES if name.startswith("bound")]
BOUND_SYNCHRONOUS = ["bound exact", "bound bloom"]


def open_subject(name, env, tmp_path):
    subject = TABLES[name](env, tmp_path / "drum")
    yield subject
    subject.table.close()


@pytest.fixture(params=list(TABLES))
def subject(request, env, tmp_path):
    yield from open_subject(request.param, env, tmp_path)


@pytest.fixture(params=BOUND)
def bound(request, env, tmp_path):
    yield from open_subject(request.param, env, tmp_path)


@pytest.fixture(params=BOUND_SYNCHRONOUS)
def bound_synchronous(request, env, tmp_path):
    yield from open_subject(request.param, env, tmp_path)


def keys(values) -> np.ndarray:
    return np.array(values, dtype=np.uint64)


def listen(table: Visited) -> list[tuple[list, list, list]]:
    """The batches the table's receiver gets, as (keys, aux, unique) lists."""
    batches = []
    table.set_receiver(lambda k, aux, unique: batches.append((k.tolist(), list(aux), unique.tolist())))
    return batches


def results(batches) -> list[tuple]:
    """Every (key, aux, unique) the batches held, in a fixed order (an asynchronous table
    delivers in its own)."""
    return sorted((triple for batch in batches for triple in zip(*batch)), key=repr)


def url_keys(table: Visited, urls) -> list[int]:
    """The keys the table's URL forms use: MD5 fingerprints, or a Bloom filter's own."""
    return getattr(table, "url_keys", fingerprints64)(urls).tolist()


# -- the synchronous conveniences ---------------------------------------------------------------

def test_the_first_occurrence_of_a_key_is_new_within_and_across_batches(subject):
    table = subject.table
    assert table.add_many([7, 8, 7, 9, 8]).tolist() == [True, True, False, True, False]
    assert table.add_many(keys([9, 10])).tolist() == [False, True]
    assert table.contains_many([7, 10, 11]).tolist() == [True, True, False]
    assert table.contains(8) and 8 in table and 12 not in table
    assert len(table) == 4
    assert table.add_many([11]).tolist() == [True], "contains_many added a key"


def test_keys_span_all_64_bits(subject):
    extremes = [0, 1, 2**63 - 1, 2**63, 2**64 - 1]
    assert subject.table.add_many(extremes).all()
    assert subject.table.contains_many(keys(extremes)).all()
    assert not subject.table.add_many(extremes[::-1]).any()


def test_keys_that_are_not_64_bit_unsigned_ints_and_aux_of_another_length_are_bad_input(subject):
    with pytest.raises(BadInput):
        subject.table.add_many([-1])
    with pytest.raises(BadInput):
        subject.table.add_many(["http://a/"])
    with pytest.raises(BadInput):
        subject.add_batch([1, 2], aux=["only one"])


# -- the asynchronous protocol ------------------------------------------------------------------

def test_the_receiver_gets_each_key_with_its_aux_and_whether_it_was_new_and_flush_delivers_everything(subject):
    table = subject.table
    heard = listen(table)
    subject.add_batch(keys([1, 2, 1]), ["a", "b", "c"])
    table.add(3)
    subject.add_batch([2, 4], ["d", "e"])
    if subject.synchronous:  # resolved at once, one receiver call per add, before it returns
        assert heard == [([1, 2, 1], ["a", "b", "c"], [True, True, False]), ([3], [None], [True]),
                         ([2, 4], ["d", "e"], [False, True])]
    subject.flush()
    assert results(heard) == sorted([(1, "a", True), (2, "b", True), (1, "c", False), (3, None, True),
                                     (2, "d", False), (4, "e", True)], key=repr)
    heard.clear()
    subject.flush()
    assert heard == [], "a second flush delivered again"


def test_every_queued_check_is_delivered_once_first_occurrences_new(subject):
    """Batches of repeats among themselves and of earlier batches, flushed now and then: the
    results are those of a Python set, every payload with its own key."""
    table = subject.table
    heard = listen(table)
    rng = np.random.default_rng(7)
    spread = np.uint64(0x9E3779B97F4A7C15)  # keys over the whole 64-bit range
    seen, expected = set(), []
    for round_ in range(6):
        batch = rng.integers(0, 300, 150).astype(np.uint64) * spread
        aux = [f"{round_}.{i}" for i in range(len(batch))]
        subject.add_batch(batch, aux)
        for key, payload in zip(batch.tolist(), aux):
            expected.append((key, payload, key not in seen))
            seen.add(key)
        if round_ % 3 == 1:
            subject.flush()
    subject.flush()
    assert results(heard) == sorted(expected, key=repr)
    assert len(table) == len(seen)


def test_flush_some_delivers_a_part_at_a_time_and_everything_once_none_is_left(subject):
    """flush_some delivers at least one queued key's result while any is queued, and says
    whether more are; request_flush (resolve soon) changes no result."""
    table = subject.table
    heard = listen(table)
    batch = np.arange(1, 41, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    subject.add_batch(batch, [str(i) for i in range(40)])
    table.request_flush()
    more = True
    while more:
        before = len(results(heard))
        with subject.transaction() as txn:
            more = table.flush_some(txn=txn)
        assert len(results(heard)) > before or before == 40
    assert results(heard) == sorted(((key, str(i), True) for i, key in enumerate(batch.tolist())), key=repr)
    heard.clear()
    subject.flush()
    assert heard == []


def test_per_key_and_the_url_forms(subject):
    table = subject.table
    heard = []
    table.set_receiver(per_key(lambda key, aux, unique: heard.append((key, aux, unique))))
    table.add_urls(["http://a/", "http://b/", "http://a/"])
    a, b = url_keys(table, ["http://a/", "http://b/"])
    table.add(b, aux="again")
    subject.flush()
    expected = [(a, "http://a/", True), (b, "http://b/", True), (a, "http://a/", False), (b, "again", False)]
    assert heard == expected if subject.synchronous else sorted(heard, key=repr) == sorted(expected, key=repr)
    assert table.contains_urls(["http://a/", "http://c/"]).tolist() == [True, False]
    assert table.add_many_urls(["http://c/", "http://a/", "http://c/"]).tolist() == [True, False, False]
    table.add_urls(["http://d/"], aux=["given"])
    subject.flush()
    assert heard[-1] == (url_keys(table, ["http://d/"])[0], "given", True)


def test_without_a_receiver_results_are_dropped_and_keys_still_added(subject):
    subject.table.set_receiver(None)
    subject.add_batch([21, 22, 21])
    subject.flush()
    assert subject.table.contains_many([21, 22, 23]).tolist() == [True, True, False]


def test_close_delivers_what_is_queued_and_may_be_called_again(subject):
    heard = listen(subject.table)
    subject.add_batch([5, 6, 5], ["x", "y", "z"])
    subject.table.close()
    subject.table.close()
    assert results(heard) == sorted([(5, "x", True), (6, "y", True), (5, "z", False)], key=repr)


def test_figures_are_numbers_read_without_changing_the_table_and_a_wrapper_shows_its_tables(subject):
    subject.add_batch([31, 32])
    subject.flush()
    figures = subject.table.figures()
    assert all(isinstance(value, int | float) for value in figures.values()), figures
    inner = getattr(subject.table, "table", subject.table)  # a URL cache's or a mark log's table
    assert inner.figures() == figures
    if isinstance(inner, BloomFilter | DrumVisited):
        assert figures  # the console shows them, bound or behind a cache
    assert subject.table.contains_many([31, 32, 33]).tolist() == [True, True, False]


# -- bound to an environment --------------------------------------------------------------------

def test_binding_gives_a_table_in_the_environments_transactions_or_refuses_an_asynchronous_one(subject, tmp_path):
    from pycrawler.store import Environment

    if subject.env is not None:
        assert subject.table.bound_to(subject.env) is subject.table
    with Environment(tmp_path / "other", create=True) as other:
        try:
            bound = subject.table.bound_to(other)
        except BadInput:
            assert not subject.synchronous, "a synchronous table is bound through a mark log"
        else:
            assert bound.joins_transactions_of(other)
            assert bound is subject.table or isinstance(bound, MarkLog)


class Aborted(Exception):
    """The caller's transaction failed after the table was given it."""


def test_a_bound_table_calls_a_key_seen_only_once_what_its_receiver_wrote_for_it_has_committed(bound):
    """The frontier's case: the receiver enqueues each new key in the caller's transaction, and
    the table's marks commit with that transaction or not at all."""
    table, env = bound.table, bound.env
    enqueued = env.open_database("enqueued", create=True)
    current, new = {}, []

    def enqueue(batch_keys, aux, unique):
        for key in batch_keys[unique].tolist():
            enqueued.put(key.to_bytes(8, "big"), b"", txn=current["txn"])
            new.append(key)

    table.set_receiver(enqueue)
    with pytest.raises(Aborted):
        with env.begin() as current["txn"]:
            table.add_batch(keys([5, 7, 5, 9]), ["a", "b", "c", "d"], txn=current["txn"])
            table.flush(txn=current["txn"])
            raise Aborted
    assert len(table) == 0 and enqueued.count() == 0, "the marks of an aborted transaction stayed"
    new.clear()
    with env.begin() as current["txn"]:
        table.add_batch(keys([5, 7, 5, 9]), ["e", "f", "g", "h"], txn=current["txn"])
        table.flush(txn=current["txn"])
    assert sorted(new) == [5, 7, 9], "each key is new exactly once, in the transaction that committed"
    assert sorted(int.from_bytes(key, "big") for key in enqueued.keys()) == [5, 7, 9]
    assert len(table) == 3 and table.contains_many([5, 7, 9]).all()


def test_a_bound_synchronous_table_checks_now_and_commits_with_the_caller(bound_synchronous):
    """``add_many`` with a transaction: a synchronous table's form (the frontier checks through
    it); DRUM takes its caller's transaction in ``add_batch`` and ``flush`` only."""
    table, env = bound_synchronous.table, bound_synchronous.env
    assert bound_synchronous.synchronous
    with pytest.raises(Aborted):
        with env.begin() as txn:
            assert table.add_many([11, 12, 11], txn=txn).tolist() == [True, True, False]
            raise Aborted
    assert len(table) == 0
    with env.begin() as txn:
        assert table.add_many([11, 12, 11], txn=txn).tolist() == [True, True, False]
    assert table.contains_many([11, 12]).all() and len(table) == 2
