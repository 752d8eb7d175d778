"""The exact Visited set on JE: put-if-absent semantics, its key layout, the protocol."""

import numpy as np
import pytest

from pycrawler.errors import BadInput
from pycrawler.keys import fingerprint64
from pycrawler.seen import ExactVisited, per_key


def test_first_occurrence_is_new_within_and_across_batches(env):
    seen = ExactVisited(env)
    assert seen.add_many([7, 8, 7, 9, 8]).tolist() == [True, True, False, True, False]
    assert seen.add_many([9, 10]).tolist() == [False, True]
    assert seen.contains_many([7, 10, 11]).tolist() == [True, True, False]
    assert 8 in seen and 12 not in seen
    assert len(seen) == 4


def test_batches_larger_than_one_jvm_crossing_keep_order(env):
    seen = ExactVisited(env, batch=3)
    keys = np.array([1, 2, 3, 1, 4, 2, 5], dtype=np.uint64)
    assert seen.add_many(keys).tolist() == [True, True, True, False, True, False, True]


def test_keys_are_8_byte_big_endian_with_empty_values(env):
    seen = ExactVisited(env, name="alreadySeen")
    seen.add_many([2**64 - 1, 1, 256])
    assert list(seen.db.items()) == [((1).to_bytes(8, "big"), b""), ((256).to_bytes(8, "big"), b""),
                                     ((2**64 - 1).to_bytes(8, "big"), b"")]


def test_long_binding_layout_flips_the_sign_bit(env):
    seen = ExactVisited(env, name="alreadySeenUrl", long_binding=True)
    seen.add_many([0, 2**63])   # as Java longs: 0 and Long.MIN_VALUE, stored in signed order
    assert list(seen.db.keys()) == [bytes(8), bytes.fromhex("8000000000000000")]
    assert seen.contains_many([0, 2**63, 1]).tolist() == [True, True, False]


def test_receiver_and_url_forms(env):
    seen = ExactVisited(env)
    results = []
    seen.set_receiver(per_key(lambda key, aux, unique: results.append((key, aux, unique))))
    seen.add_urls(["http://a/", "http://b/", "http://a/"])
    seen.add(fingerprint64("http://b/"), aux="again")
    seen.flush()
    assert results == [(fingerprint64("http://a/"), "http://a/", True), (fingerprint64("http://b/"), "http://b/", True),
                       (fingerprint64("http://a/"), "http://a/", False), (fingerprint64("http://b/"), "again", False)]
    assert seen.contains_urls(["http://a/", "http://c/"]).tolist() == [True, False]


def test_state_survives_reopening(tmp_path):
    from pycrawler.store import Environment

    with Environment(tmp_path / "env", create=True) as env:
        ExactVisited(env).add_many([5, 6])
    with Environment(tmp_path / "env", read_only=True) as env:
        seen = ExactVisited(env, create=False)
        assert seen.contains_many([5, 6, 7]).tolist() == [True, True, False]


def test_bad_keys_and_mismatched_aux_are_bad_input(env):
    seen = ExactVisited(env)
    with pytest.raises(BadInput):
        seen.add_many([-1])
    with pytest.raises(BadInput):
        seen.add_batch([1, 2], aux=["only one"])
