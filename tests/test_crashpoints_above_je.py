"""The crash-point harness's CI form (tests/test_crashpoints.py) for the modes that add steps
above the store: a URL cache in front of the exact set and the Bloom filter, and a one-worker
cluster of each kind (its handover and outbox). The JE under them is held on every JE by the
modes of tests/test_crashpoints.py, so these run in the JE 3.3 leg only (tests/conftest.py ANY_JE)."""

from __future__ import annotations

import pytest

from test_crashpoints import kill_at_every_failpoint

ABOVE_JE_PAIRS = [["exact+cache", "bloom+cache"], ["cluster-split", "cluster-central"]]


@pytest.mark.parametrize("names", ABOVE_JE_PAIRS, ids="-".join)
def test_a_kill_at_every_failpoint_and_at_random_loses_no_page(names):
    kill_at_every_failpoint(names)


def test_the_two_files_cover_every_mode():
    from crashpoints import MODES
    from test_crashpoints import JE_PAIRS

    assert sorted(name for pair in JE_PAIRS + ABOVE_JE_PAIRS for name in pair) == sorted(MODES)
