"""A spill file gives back every record it was given, by number, in whatever order asked."""

from __future__ import annotations

import random

import pytest

from pycrawler.spill import SpillFile


def test_records_come_back_by_number_in_the_order_asked():
    rng = random.Random(7)
    records = [bytes(rng.randrange(256) for _ in range(rng.randrange(40))) for _ in range(5000)]
    with SpillFile() as spill:
        for first in range(0, len(records), 333):
            spill.extend(records[first:first + 333])
        assert len(spill) == len(records)
        asked = [rng.randrange(len(records)) for _ in range(3000)] + [0, 0, len(records) - 1]
        assert spill.read(asked) == [records[i] for i in asked]
        assert [r for batch in spill.batches(700) for r in batch] == records
        assert spill.read([]) == []
        with pytest.raises(IndexError):
            spill.read([len(records)])
