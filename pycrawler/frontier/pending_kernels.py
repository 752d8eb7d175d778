"""The compiled loops that build a bulk schedule batch of the work-queue frontier: pending
keys and values as packed buffers, with no bytes object per URL (the large-batch path of
:func:`pycrawler.frontier.pending_records.pending_keys` and
:func:`~pycrawler.frontier.pending_records.encode_entries`; tests hold both paths equal)."""

from __future__ import annotations

import numba


@numba.njit(cache=True)
def framed_kernel(buf, offsets, head, tail, out, out_offsets):
    """Record i of ``out`` = head + record i of ``buf`` + tail."""
    at = 0
    for i in range(offsets.shape[0] - 1):
        out_offsets[i] = at
        for b in head:
            out[at] = b
            at += 1
        for p in range(offsets[i], offsets[i + 1]):
            out[at] = buf[p]
            at += 1
        for b in tail:
            out[at] = b
            at += 1
    out_offsets[offsets.shape[0] - 1] = at


@numba.njit(cache=True)
def keys_kernel(prefixes, prefix_offsets, slots, order, first, step, out, out_offsets):
    """Key i = prefix ``slots[i]`` + order (2 bytes) + ordinal ``first + step * i`` (6 bytes big-endian)."""
    at = 0
    for i in range(slots.shape[0]):
        out_offsets[i] = at
        q = slots[i]
        for p in range(prefix_offsets[q], prefix_offsets[q + 1]):
            out[at] = prefixes[p]
            at += 1
        out[at] = order[0]
        out[at + 1] = order[1]
        ordinal = first + step * i
        for j in range(6):
            out[at + 7 - j] = (ordinal >> (8 * j)) & 0xFF
        at += 8
    out_offsets[slots.shape[0]] = at
