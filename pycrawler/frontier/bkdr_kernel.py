"""BKDRHash compiled with numba over a packed batch: the large-batch path of
:func:`pycrawler.frontier.assignment.bkdr_hashes` (tests hold both paths equal)."""

from __future__ import annotations

import numba
import numpy as np

from .assignment import BKDR_SEED


@numba.njit(cache=True)
def bkdr_packed(buf, offsets, out):
    """BKDRHash (seed 131, top bit cleared) of each ``buf[offsets[i]:offsets[i+1]]`` into ``out[i]``."""
    for r in range(offsets.shape[0] - 1):
        h = np.uint32(0)
        for p in range(offsets[r], offsets[r + 1]):
            h = np.uint32(h * np.uint32(BKDR_SEED) + np.uint32(buf[p]))
        out[r] = h & np.uint32(0x7FFFFFFF)
