"""The sized Bloom filter: sizing, its URL keys, the measured false-positive rate, its
memory-mapped file, and its marks bound to JE commits. The Visited protocol it keeps is held for
every table by tests/test_visited_contract.py."""

import math
import os
import signal
import struct
import subprocess
import sys

import numpy as np
import pytest
import xxhash
from crawl_sites import ROOT

from pycrawler.errors import BadInput, DiskFull
from pycrawler.keys import fingerprint64, fingerprints64
from pycrawler.seen import BloomFilter, optimal_parameters
from pycrawler.seen.bloom import BLOCKED, CLASSIC, HEADER_SIZE, blocked_false_positive_rate, blocked_parameters


def random_keys(n, seed):
    return np.random.default_rng(seed).integers(0, 2**64 - 1, n, dtype=np.uint64, endpoint=True)


def test_optimal_parameters_follow_the_textbook_formulas():
    m, k = optimal_parameters(1_000_000, 0.01)
    assert m % 64 == 0 and abs(m - 1_000_000 * -math.log(0.01) / math.log(2) ** 2) < 64
    assert k == 7
    with pytest.raises(BadInput):
        optimal_parameters(0, 0.01)
    with pytest.raises(BadInput):
        optimal_parameters(10, 1.5)


def test_blocked_sizing_meets_the_target_rate_with_a_few_more_bits_than_classic():
    for capacity, target in ((1_000_000, 0.01), (10_000, 0.001), (1, 0.5)):
        m, k = blocked_parameters(capacity, target)
        assert m % 512 == 0 and m >= optimal_parameters(capacity, target)[0]
        assert blocked_false_positive_rate(capacity, m // 512, k) <= target
        assert m == 512 or blocked_false_positive_rate(capacity, m // 512 - 1, k) > target
    m, k = blocked_parameters(1_000_000, 0.01)
    assert m < 1.15 * optimal_parameters(1_000_000, 0.01)[0] and k in (6, 7, 8)


@pytest.mark.parametrize("version", [BLOCKED, CLASSIC])
def test_measured_false_positive_rate_at_capacity_is_within_1_2x_of_target(version):
    capacity, target = 200_000, 0.01
    f = BloomFilter(capacity, target, version=version)
    f.add_many(random_keys(capacity, 1))
    probes = 400_000
    rate = f.contains_many(random_keys(probes, 2)).mean()
    assert rate <= 1.2 * target
    if version == CLASSIC:  # fill ** k holds for probes spread over the whole array only
        assert abs(f.false_positive_rate() - target) < 0.2 * target
    # The console's figures, estimated from the count alone, agree with the bits and the probes.
    figures = f.figures()
    assert figures["fill"] == len(f) / capacity and figures["target_false_positive_rate"] == target
    assert abs(figures["bits_set"] - np.unpackbits(f._live_bits()).mean()) < 0.01
    assert abs(figures["false_positive_rate"] - rate) < 0.2 * target


@pytest.mark.parametrize("version", [BLOCKED, CLASSIC])
def test_sequential_keys_hash_as_well_as_random_ones(version):
    f = BloomFilter(100_000, 0.01, version=version)
    f.add_many(np.arange(100_000, dtype=np.uint64))
    assert f.contains_many(np.arange(100_000, 300_000, dtype=np.uint64)).mean() <= 0.012


def test_url_forms_key_urls_by_xxh64_in_format_2_and_by_md5_fingerprint_in_format_1():
    blocked, classic = BloomFilter(1000, 0.001), BloomFilter(1000, 0.001, version=CLASSIC)
    urls = ["http://a/", "http://\u00e9.example/\ud800", "http://a/"]
    for f in (blocked, classic):
        assert f.add_many_urls(urls).tolist() == [True, True, False]
        assert f.contains_many(f.url_keys(urls[1:2])).tolist() == [True]
        assert f.contains_urls(["http://a/", "http://c/"]).tolist() == [True, False]
    assert blocked.url_keys(urls).tolist() == [xxhash.xxh64_intdigest(u.encode("utf-8", "surrogatepass"))
                                               for u in urls]
    assert classic.url_keys(urls).tolist() == fingerprints64(urls).tolist()


MASK64 = 2**64 - 1


def reference_bits(key, m, k):
    """Format 1's probes in plain Python: splitmix64 finaliser, double hashing, multiply-shift."""

    def mix(x):
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
        return x ^ (x >> 31)

    h1 = mix((key + 0x9E3779B97F4A7C15) & MASK64)
    h2 = mix(h1) | 1
    return {(((h1 + i * h2) & MASK64) >> 32) * m >> 32 for i in range(k)}


def reference_blocked_bits(key, m, k):
    """Format 2's probes in plain Python: one 512-bit block, 9 bits of h2 per probe."""
    h1 = mix((key + 0x9E3779B97F4A7C15) & MASK64)
    block = (h1 >> 32) * (m // 512) >> 32
    w, bits = mix(h1), set()
    for i in range(k):
        if i and i % 7 == 0:
            w = mix(w)
        bits.add(block * 512 + (w & 511))
        w >>= 9
    return bits


def mix(x):
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


@pytest.mark.parametrize("version, reference", [(CLASSIC, reference_bits), (BLOCKED, reference_blocked_bits)])
def test_hashing_is_the_documented_stable_format(tmp_path, version, reference):
    """The bits a key sets are fixed by the file format, the same in every process."""
    f = BloomFilter.create(tmp_path / "f", capacity=300, fpr=0.0001, version=version)
    assert version == BLOCKED or f.k > 7  # format 2's remix after 7 probes is exercised below
    keys = [0, 1, 2**63, 2**64 - 1, fingerprint64("http://example.com/")]
    f.add_many(keys)
    f.close()
    head = np.fromfile(tmp_path / "f", dtype=np.uint8)
    assert struct.unpack_from("<I", head, 8)[0] == version
    bits = np.unpackbits(head[HEADER_SIZE:], bitorder="little")
    assert set(np.flatnonzero(bits).tolist()) == set().union(*(reference(key, f.m, f.k) for key in keys))
    assert reference_bits(0, 128, 1) == {113}   # pinned: a change here is a format change
    assert reference_blocked_bits(0, 1024, 2) == {618, 703}


def test_blocked_filters_with_more_than_seven_probes_remix():
    f = BloomFilter(300, 0.0001)
    assert f.k > 7
    f.add_many([12345])
    assert set(np.flatnonzero(np.unpackbits(f._bits, bitorder="little")).tolist()) == \
        reference_blocked_bits(12345, f.m, f.k)


def test_format_1_files_still_open_and_keep_their_layout(tmp_path):
    path = tmp_path / "old.bloom"
    f = BloomFilter.create(path, 10_000, version=CLASSIC)
    f.add_many_urls(["http://a/"])
    f.close()
    g = BloomFilter.open(path)
    assert g.version == CLASSIC and g.contains_many(fingerprints64(["http://a/"])).tolist() == [True]
    g.close()


def test_file_round_trip_keeps_bits_count_and_parameters(tmp_path):
    path = tmp_path / "visited.bloom"
    f = BloomFilter.create(path, capacity=10_000, fpr=0.01)
    keys = random_keys(5000, 3)
    f.add_many(keys)
    count = len(f)
    f.close()
    g = BloomFilter.open(path)
    assert (g.m, g.k, g.capacity, g.fpr, len(g)) == (f.m, f.k, 10_000, 0.01, count)
    assert g.contains_many(keys).all()
    assert not g.add_many(keys[:10]).any()
    g.close()
    assert path.stat().st_size == HEADER_SIZE + f.m // 8


def test_create_refuses_to_overwrite(tmp_path):
    BloomFilter.create(tmp_path / "f", 100).close()
    with pytest.raises(BadInput):
        BloomFilter.create(tmp_path / "f", 100)


def allocated_bytes(path) -> int:
    return os.stat(path).st_blocks * 512


def test_a_new_file_has_every_byte_allocated_so_its_mapping_cannot_meet_a_full_disk(tmp_path):
    path = tmp_path / "visited.bloom"
    BloomFilter.create(path, 1_000_000).close()
    assert allocated_bytes(path) >= path.stat().st_size > 1_000_000  # not sparse


def test_a_sparse_file_of_an_earlier_release_is_allocated_when_opened_for_writing(tmp_path):
    path = tmp_path / "visited.bloom"
    BloomFilter.create(path, 1_000_000).close()
    header = path.read_bytes()[:HEADER_SIZE]
    size = path.stat().st_size
    path.unlink()
    with open(path, "wb") as f:  # what create did before: the header, then a hole
        f.write(header)
        f.truncate(size)
    BloomFilter.open(path, read_only=True).close()
    assert allocated_bytes(path) < size // 2  # a read-only open changes nothing
    BloomFilter.open(path).close()
    assert allocated_bytes(path) >= size


CREATE = "import sys; from pycrawler.seen import BloomFilter; BloomFilter.create(sys.argv[1], 100_000).close()"


def create_killed_at(point: str, path) -> None:
    """Create a filter at ``path`` in a process that kills itself (SIGKILL) at failpoint ``point``."""
    killed = subprocess.run([sys.executable, "-c", CREATE, str(path)], cwd=ROOT, capture_output=True, text=True,
                            env=os.environ | {"PYCRAWLER_FAILPOINT": point}, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr


def test_a_creation_killed_before_its_rename_leaves_no_filter_and_the_next_creation_replaces_its_part(tmp_path):
    path = tmp_path / "visited.bloom"
    create_killed_at("bloom.create.written", path)
    assert not path.exists() and path.with_name("visited.bloom.part").exists()
    BloomFilter.create(path, 100_000).close()
    assert not path.with_name("visited.bloom.part").exists()
    reopened = BloomFilter.open(path)
    assert (reopened.capacity, len(reopened)) == (100_000, 0)
    reopened.close()


def test_a_creation_killed_after_its_rename_leaves_a_whole_filter(tmp_path):
    path = tmp_path / "visited.bloom"
    create_killed_at("bloom.create.renamed", path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["visited.bloom"]
    reopened = BloomFilter.open(path)
    assert (reopened.capacity, len(reopened)) == (100_000, 0)
    reopened.close()


def test_a_filter_larger_than_the_free_space_is_a_full_disk_at_creation_and_leaves_nothing(small_filesystem):
    disk = small_filesystem(2)
    with pytest.raises(DiskFull, match="the disk is full") as refused:
        BloomFilter.create(disk.path / "visited.bloom", 10_000_000)  # about 18 MB
    assert refused.value.exit_code == 75 and "visited.bloom" in str(refused.value)
    assert list(disk.path.iterdir()) == []


def test_wrong_magic_version_size_or_truncation_is_bad_input(tmp_path):
    path = tmp_path / "f"
    BloomFilter.create(path, 1000).close()
    good = path.read_bytes()
    cases = {
        "magic": b"NOTBLOOM" + good[8:],
        "version": good[:8] + struct.pack("<I", 99) + good[12:],
        "truncated": good[:-1],
        "extended": good + b"\0",
        "header only": good[:HEADER_SIZE - 1],
        "empty": b"",
    }
    for _name, data in cases.items():
        path.write_bytes(data)
        with pytest.raises(BadInput):
            BloomFilter.open(path)
    with pytest.raises(BadInput):
        BloomFilter.open(tmp_path / "absent")


def test_a_closed_filter_refuses_work():
    f = BloomFilter(100)
    f.close()
    with pytest.raises(BadInput):
        f.contains(1)


def test_a_bloom_file_bound_to_an_environment_marks_only_what_was_committed(tmp_path, env):
    from pycrawler.seen.synchronous import MarkLog

    bloom = BloomFilter.create(tmp_path / "seen.bloom", capacity=1000, fpr=1e-6)
    bound = bloom.bound_to(env)
    assert isinstance(bound, MarkLog)
    keys = np.array([5, 7, 5, 9], dtype=np.uint64)
    with pytest.raises(RuntimeError):
        with env.begin() as txn:
            assert bound.add_many(keys, txn=txn).tolist() == [True, True, False, True]
            raise RuntimeError("the enqueue failed")
    assert not bloom.contains_many(keys).any(), "marked although the transaction aborted"
    with env.begin() as txn:
        assert bound.add_many(keys, txn=txn).tolist() == [True, True, False, True]
        assert not bloom.contains_many(keys).any(), "marked before the commit"
    assert bloom.contains_many(keys).all()


def test_marks_committed_but_not_yet_in_the_bloom_file_are_replayed_when_bound_again(tmp_path, env):
    from pycrawler.seen.synchronous import LOG_DATABASE, MarkLog

    keys = np.array([11, 12, 13], dtype=np.uint64)
    log = env.open_database(LOG_DATABASE, create=True)
    log.put((0).to_bytes(8, "big"), keys.astype(">u8").tobytes())  # what a kill after the commit leaves
    bloom = BloomFilter.create(tmp_path / "seen.bloom", capacity=1000, fpr=1e-6)
    MarkLog(bloom, env)
    assert bloom.contains_many(keys).all()
    assert log.count() == 0


def test_the_mark_log_holds_only_the_last_batch_not_yet_known_marked(tmp_path, env):
    """Each batch's record takes the place of the last one, whose keys are marked by then (one
    write a batch); a batch with nothing new leaves the log empty; the table holds every key."""
    from pycrawler.seen.synchronous import LOG_DATABASE

    bloom = BloomFilter.create(tmp_path / "seen.bloom", capacity=1000, fpr=1e-6)
    bound = bloom.bound_to(env)
    log = env.open_database(LOG_DATABASE)
    for batch, fresh in (([1, 2], [1, 2]), ([2, 3], [3]), ([4], [4])):
        with env.begin() as txn:
            bound.add_many(np.array(batch, dtype=np.uint64), txn=txn)
        assert [np.frombuffer(keys, dtype=">u8").tolist() for _, keys in log.items()] == [fresh]
    with env.begin() as txn:
        assert not bound.add_many(np.array([1, 4], dtype=np.uint64), txn=txn).any()
    assert log.count() == 0
    assert bloom.contains_many(np.array([1, 2, 3, 4], dtype=np.uint64)).all()
