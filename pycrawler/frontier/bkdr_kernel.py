"""BKDRHash compiled with numba over a packed batch: the large-batch path of
:func:`pycrawler.frontier.assignment.bkdr_hashes` (tests hold both paths equal). The seed
comes from the caller, which owns the hash's definition, so this kernel imports nothing of
it and loads only when a batch is large enough to need it."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def bkdr_packed(buf, offsets, seed, out):
    """BKDRHash (top bit cleared) with multiplier ``seed`` of each ``buf[offsets[i]:offsets[i+1]]`` into ``out[i]``."""
    for r in range(offsets.shape[0] - 1):
        h = np.uint32(0)
        for p in range(offsets[r], offsets[r + 1]):
            h = np.uint32(h * np.uint32(seed) + np.uint32(buf[p]))
        out[r] = h & np.uint32(0x7FFFFFFF)
