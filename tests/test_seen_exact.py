"""The exact Visited set on JE: batches of any size in order, its key layout, its persistence.
The Visited protocol it keeps is held for every table by tests/test_visited_contract.py."""

import numpy as np

from pycrawler.seen import ExactVisited


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


def test_state_survives_reopening(tmp_path):
    from pycrawler.store import Environment

    with Environment(tmp_path / "env", create=True) as env:
        ExactVisited(env).add_many([5, 6])
    with Environment(tmp_path / "env", read_only=True) as env:
        seen = ExactVisited(env, create=False)
        assert seen.contains_many([5, 6, 7]).tolist() == [True, True, False]
