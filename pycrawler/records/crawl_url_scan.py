"""The compiled first pass of a large CrawlUrl batch decode (numba; see
:func:`pycrawler.records.crawl_url.decode_packed`): where every string of every record lies,
and the ints, times and reference counts, with no Python object made. Imported on first
use, so a process that decodes records a few at a time (a crawl) never loads numba."""

from __future__ import annotations

import numba
import numpy as np

from .crawl_url_layout import INT_BIAS, LONG_BIAS, SCAN_BAD_VERSION, SCAN_OK, SCAN_TRAILING, SCAN_TRUNCATED


@numba.njit(cache=True, inline="always")
def _int32_at(data, pos):
    return ((np.int64(data[pos]) << 24) | (np.int64(data[pos + 1]) << 16) | (np.int64(data[pos + 2]) << 8)
            | np.int64(data[pos + 3])) - np.int64(INT_BIAS)


@numba.njit(cache=True, inline="always")
def _int64_at(data, pos):
    value = np.int64(0)
    for j in range(8):
        value = (value << 8) | np.int64(data[pos + j])
    return value ^ np.int64(-LONG_BIAS)  # flip the sign bit back


@numba.njit(cache=True, inline="always")
def _skip_string(data, pos, end, starts, ends, r, f):
    """Past the string at ``pos``; records its bounds in column f (start -1: null). -1 if cut."""
    if pos + 1 < end and data[pos] == 0xFF and data[pos + 1] == 0:
        if f >= 0:
            starts[r, f] = -1
        return pos + 2
    stop = pos
    while stop < end and data[stop] != 0:
        stop += 1
    if stop >= end:
        return -1
    if f >= 0:
        starts[r, f] = pos
        ends[r, f] = stop
    return stop + 1


@numba.njit(cache=True, inline="always")
def _skip_strings(data, pos, end, starts, ends, r, f, n):
    """Past ``n`` consecutive strings, recorded in columns f .. f+n-1. -1 if cut."""
    for i in range(n):
        pos = _skip_string(data, pos, end, starts, ends, r, f + i)
        if pos < 0:
            return -1
    return pos


@numba.njit(cache=True)
def scan(data, offsets, starts, ends, ints, times, refs, status):
    """Field positions and fixed values of every record of a packed batch (see above).
    times[r] = (timestamp present, its ms, its nanos, date present, its ms);
    refs[r] = (reference count or -1, where the references start)."""
    for r in range(offsets.shape[0] - 1):
        pos, end = offsets[r], offsets[r + 1]
        status[r, 1] = pos
        if pos >= end or data[pos] != 1:
            status[r, 0] = SCAN_BAD_VERSION
            continue
        pos += 1
        status[r, 0] = SCAN_TRUNCATED
        f = 0
        # the text fields, with the ints between them: 2 strings, 3 ints, 3 strings, int, string, int
        pos = _skip_strings(data, pos, end, starts, ends, r, f, 2)
        f += 2
        if pos < 0 or pos + 12 > end:
            continue
        for j in range(3):
            ints[r, j] = _int32_at(data, pos + 4 * j)
        pos += 12
        pos = _skip_strings(data, pos, end, starts, ends, r, f, 3)
        f += 3
        if pos < 0 or pos + 4 > end:
            continue
        ints[r, 3] = _int32_at(data, pos)
        pos = _skip_string(data, pos + 4, end, starts, ends, r, f)
        f += 1
        if pos < 0 or pos + 5 > end:
            continue
        ints[r, 4] = _int32_at(data, pos)
        pos += 4
        times[r, 0] = data[pos]
        if data[pos]:
            if pos + 13 > end:
                continue
            times[r, 1] = _int64_at(data, pos + 1)
            times[r, 2] = _int32_at(data, pos + 9)
            pos += 13
        else:
            pos += 1
        if pos >= end:
            continue
        times[r, 3] = data[pos]
        if data[pos]:
            if pos + 9 > end:
                continue
            times[r, 4] = _int64_at(data, pos + 1)
            pos += 9
        else:
            pos += 1
        pos = _skip_strings(data, pos, end, starts, ends, r, f, 2)
        f += 2
        if pos < 0 or pos + 4 > end:
            continue
        count = _int32_at(data, pos)
        pos += 4
        refs[r, 0], refs[r, 1] = count, pos
        for _ in range(count):
            pos = _skip_string(data, pos, end, starts, ends, r, -1)
            if pos < 0:
                break
        if pos < 0 or pos + 4 > end:
            continue
        ints[r, 5] = _int32_at(data, pos)
        pos += 4
        status[r, 0] = SCAN_OK if pos == end else SCAN_TRAILING
        status[r, 1] = pos
