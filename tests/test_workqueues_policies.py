"""Queue assignment, canonicalisation and Visited tables behind the work-queue frontier."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.errors import BadInput
from pycrawler.frontier import assignment
from pycrawler.frontier.assignment import bkdr_hash, bkdr_hashes, get_assignment
from pycrawler.frontier.politeness import Outcome, Politeness
from pycrawler.frontier.workqueues import WorkQueueFrontier
from pycrawler.keys.canon import _safe_many, canonicalize, canonicalize_many, safe
from pycrawler.seen.bloom import BloomFilter
from pycrawler.seen.drum import DrumVisited
from pycrawler.seen.exact import ExactVisited


@pytest.mark.parametrize("policy,url,key", [
    ("host", "http://WWW.Example.com:80/a", "www.example.com"),
    ("host", "https://user@example.com:8443/", "example.com#8443"),
    ("surt", "http://www.example.com/a", "com,example,www,"),
    ("surt", "http://www.example.com:8080/a", "com,example,www,#8080"),
    ("surt", "http://10.1.2.3/a", "10.1.2.3"),
    ("domain", "http://a.b.example.co.uk/x", "example.co.uk"),
    ("domain", "http://news.example.com/x", "example.com"),
    ("domain", "http://user.github.io/x", "user.github.io"),
    ("domain", "http://127.0.0.1:8000/x", "127.0.0.1"),
    ("domain", "http://localhost/x", "localhost"),
])
def test_class_keys(policy, url, key):
    assert get_assignment(policy).class_keys([url]) == [key]
    assert get_assignment(policy).class_key(url) == key


def test_bkdr_hash_is_the_classic_seed_131_hash():
    assert bkdr_hash("abc") == (97 * 131 + 98) * 131 + 99
    long_url = "http://example.com/" + "x" * 500
    expected = 0
    for byte in long_url.encode():
        expected = (expected * 131 + byte) % 2**32
    assert bkdr_hash(long_url) == expected & 0x7FFFFFFF
    urls = ["http://a/", long_url, "http://\u00e9/"]
    assert bkdr_hashes(urls).tolist() == [bkdr_hash(u) for u in urls]


@pytest.mark.parametrize("compiled", [False, True])
def test_bkdr_hashes_in_numpy_and_compiled_agree_with_bkdr_hash(compiled, monkeypatch):
    if compiled:
        monkeypatch.setattr(assignment, "COMPILED_BATCH", 1)
    urls = ["http://a/", "http://example.com/" + "x" * 500, "http://\u00e9/\ud800", "u" * 64]
    assert bkdr_hashes(urls).tolist() == [bkdr_hash(u) for u in urls]
    for bad in (None, ""):
        with pytest.raises(BadInput):
            bkdr_hashes(["http://a/", bad])


def test_bkdr_policies_spread_urls_and_name_their_politeness_key():
    urls = [f"http://big.example/{i}" for i in range(1000)]
    spread = get_assignment("bkdr:16").class_keys(urls)
    assert len(set(spread)) == 16 and max(spread.count(k) for k in set(spread)) < 1000 / 16 * 1.5
    within = get_assignment("bkdr-host:4")
    keys = within.class_keys(urls)
    assert {within.politeness_key(k) for k in keys} == {"big.example"} and len(set(keys)) == 4
    assert within.class_keys(["http://h.example:81/x"])[0].startswith("h.example#81/")


def test_parallel_host_gives_a_host_n_queues_each_polite_on_its_own_as_heritrixs_parallel_queues():
    urls = [f"http://big.example/{i}" for i in range(1000)] + [f"http://h.example:81/{i}" for i in range(1000)]
    parallel = get_assignment("parallel-host:4")
    keys = parallel.class_keys(urls)
    # Heritrix's spelling: the host's own key for subqueue 0, "+N" after it for the others
    assert set(keys) == {f"{host}{suffix}" for host in ("big.example", "h.example#81")
                         for suffix in ("", "+1", "+2", "+3")}
    assert max(keys.count(k) for k in set(keys)) < 1000 / 4 * 1.3
    assert keys == [parallel.class_key(u) for u in urls]   # one URL, one queue, batch or not
    assert {parallel.politeness_key(k) for k in keys} == set(keys) and not parallel.grouped


@pytest.mark.parametrize("spec", ["bkdr", "bkdr:0", "host:3", "ip"])
def test_unknown_policies_are_refused(spec):
    with pytest.raises(BadInput, match="queue assignment"):
        get_assignment(spec)


@pytest.mark.parametrize("url,canonical", [
    ("HTTP://Example.COM:80/a/./b/../C?x=%7e%41%2f#frag", "http://example.com/a/C?x=~A%2F"),
    ("http://example.com", "http://example.com/"),
    ("https://u:P@Ex.com:443?q=a b", "https://u:P@ex.com/?q=a%20b"),
    ("http://[::1]:8080/%zz/\u00e9", "http://[::1]:8080/%25zz/%C3%A9"),
    ("http://example.com:/Path/Case", "http://example.com/Path/Case"),
    ("http://example.com/a%2fb", "http://example.com/a%2Fb"),
])
def test_the_safe_canonical_form(url, canonical):
    assert canonicalize(url, "safe") == canonical
    assert canonicalize(canonical, "safe") == canonical


def test_the_fast_path_agrees_with_the_general_one():
    urls = ["http://a.b/x/y.html", "http://a.b/c?d=e&f=/g", "https://a.b/", "http://a.b/x/./y", "http://a.b/p?q=/./",
            "http://a.b/x/../", "http://a.b/~u/", "http://a.b/./y", "http://a.b/..",
            # ports: a non-default one stays on the fast path; defaults and odd spellings leave it
            "http://127.0.0.1:8080/p1.html", "http://a.b:80/", "https://a.b:443/", "https://a.b:80/", "http://a.b:443/",
            "http://a.b:080/", "http://a.b:0/", "http://a.b:/", "http://a.b:123456/"]
    assert _safe_many(urls) == [safe(u) for u in urls]


@settings(max_examples=500, deadline=None)
@given(st.tuples(st.sampled_from(["http", "https", "HTTP"]),
                 st.text("aZ0-.", min_size=1, max_size=6),
                 st.sampled_from(["", ":", ":80", ":443", ":8080", ":0", ":08", ":65535", ":123456"]),
                 st.text("ab/.?%2f~#: \u00e9", max_size=12)))
def test_the_fast_path_agrees_with_the_general_one_on_any_spelling(parts):
    scheme, host, port, tail = parts
    url = f"{scheme}://{host}{port}/{tail}"
    assert _safe_many([url]) == [safe(url)]


def test_canonicalisers_are_pluggable():
    urls = ["http://www.Example.com/b?z=1&a=2", "relative/link"]
    assert canonicalize_many(urls, "w3lib") == ["http://www.example.com/b?a=2&z=1", None]
    assert canonicalize_many(urls, "heritrix") == ["http://example.com/b?z=1&a=2", None]
    assert canonicalize_many(urls, "none") == [urls[0], None]
    with pytest.raises(BadInput, match="not an absolute URL"):
        canonicalize("relative/link")
    with pytest.raises(BadInput, match="canonicalizer"):
        canonicalize_many(urls, "aggressive")


def test_a_lossy_canonical_form_keys_the_url_but_its_normal_form_is_fetched(env):
    frontier = WorkQueueFrontier(env, ExactVisited(env, "visited"), create=True, canonicalizer="heritrix",
                                 politeness=Politeness.none())
    result = frontier.schedule(["http://www.Example.com/Page", "http://example.com/page"])
    assert (result.enqueued, result.duplicates) == (1, 1)
    assert frontier.next().ori_url == "http://www.example.com/Page"


def visited_table(kind, env, tmp_path):
    if kind == "bloom":
        return BloomFilter.create(tmp_path / "seen.bloom", capacity=10_000, fpr=1e-6)
    if kind == "drum":
        return DrumVisited(tmp_path / "drum", env=env)
    return ExactVisited(env, "visited")


@pytest.mark.parametrize("kind", ["exact", "bloom", "drum"])
def test_every_visited_table_dedupes_the_schedule(env, tmp_path, kind):
    visited = visited_table(kind, env, tmp_path)
    frontier = WorkQueueFrontier(env, visited, create=True, politeness=Politeness.none())
    frontier.schedule([f"http://h{i % 3}.example/{i}" for i in range(30)], layer=1)
    frontier.schedule([f"http://h{i % 3}.example/{i}" for i in range(20, 40)], layer=2)
    frontier.flush()  # DRUM answers when it merges
    handed = []
    while batch := frontier.next_batch(10):
        handed += batch
        frontier.completed_many((r, Outcome.success()) for r in batch)
    assert sorted(r.ori_url for r in handed) == sorted(f"http://h{i % 3}.example/{i}" for i in range(40))
    assert {r.layer for r in handed if int(r.ori_url.rsplit("/", 1)[1]) >= 30} == {2}
    assert frontier.totals["duplicates"] == 10
    visited.close()


def test_a_frontier_with_nothing_to_hand_out_refills_from_a_part_of_a_drum_round(env, tmp_path):
    """refill has DRUM merge a bucket at a time until a URL is enqueued, not a whole round (which
    at scale holds the crawl for tens of seconds); flush still delivers everything."""
    visited = DrumVisited(tmp_path / "drum", env=env, num_buckets=16)
    frontier = WorkQueueFrontier(env, visited, create=True, politeness=Politeness.none())
    urls = [f"http://h{i % 5}.example/{i}" for i in range(200)]
    frontier.schedule(urls)
    assert len(frontier) == 0  # DRUM answers when it merges
    frontier.refill()
    assert visited.drum.merges == 1 and 0 < len(frontier) < 200
    frontier.flush()
    assert len(frontier) == 200 and visited.drum.merges <= 16
    assert frontier.states.fewer_than(201) and not frontier.states.fewer_than(200)  # len(frontier) < n
    handed = []
    while batch := frontier.next_batch(50):
        handed += batch
        frontier.completed_many((r, Outcome.success()) for r in batch)
    assert sorted(r.ori_url for r in handed) == sorted(urls)
    visited.close()
