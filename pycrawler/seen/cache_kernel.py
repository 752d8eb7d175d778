"""The loops of the URL caches (:mod:`pycrawler.seen.cache`): one call per batch of keys,
compiled by numba for large batches and plain Python for small ones (:mod:`pycrawler.lazy_jit`).

Every cache is a hash table over slots. ``slot_key[s]`` is the key held in slot ``s`` (of
``capacity``); ``table`` (a power of two, at least twice the capacity, so probes stay short)
maps a key to its slot by linear probing from its home cell. A cell is one uint64: the low 32
bits of ``mix(key)`` above the slot number, or :data:`FREE`. Those hash bits give the home
cell (``hash & mask``) and screen out other keys, so probing and deleting read the table
alone and touch ``slot_key`` only to confirm a match. An evicted key leaves the table by
backward-shift deletion, so there are no tombstones and a lookup never walks further than
the run its key hashes into.

Each policy adds its bookkeeping per slot:

- CLOCK: a mark byte per slot and a hand (``state[HAND]``); a hit marks, a miss sweeps the
  hand over marked slots, unmarking them, and replaces the first unmarked one;
- LRU: a doubly linked list through ``prev``/``next`` (int32), most recent at ``state[HEAD]``;
- RANDOM: a victim drawn by xorshift64* from ``state[RNG]``, so a seeded cache replays.

``state`` is an int64 array: slots used, hand or head, tail, RNG state. The access kernels
do a check and, on a miss, an insert ("the cache learns the key"); ``hit[i]`` tells which keys
were found.
"""

from __future__ import annotations

import numpy as np

from ..lazy_jit import kernel

USED, HAND, TAIL, RNG = range(4)
HEAD = HAND  # LRU keeps its list head where CLOCK keeps its hand
STATE_SIZE = 4
EMPTY = -1
"""No slot (the LRU list's ends)."""
FREE = np.uint64(0xFFFFFFFFFFFFFFFF)
"""An empty table cell (no slot number is 2^32 - 1)."""
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


@kernel(cache=True, inline="always")
def mix(key):
    """splitmix64's finaliser: spreads any keys (counters included) over the table."""
    x = key + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@kernel(cache=True, inline="always")
def _hash32(key):
    return mix(key) & _LOW


@kernel(cache=True, inline="always")
def slot_in(entry):
    """The slot number a (non-free) table cell holds."""
    return np.int64(entry & _LOW)


@kernel(cache=True, inline="always")
def find(table, slot_key, key):
    """The table cell holding ``key``, or -1 - (the empty cell where it would go)."""
    mask = table.shape[0] - 1
    hashed = _hash32(key)
    cell = np.int64(hashed) & mask
    while True:
        entry = table[cell]
        if entry == FREE:
            return -1 - cell
        if (entry >> _SHIFT) == hashed and slot_key[slot_in(entry)] == key:
            return cell
        cell = (cell + 1) & mask


@kernel(cache=True, inline="always")
def _remove(table, slot_key, slot):
    """Take the key held in ``slot`` out of the table (backward-shift deletion)."""
    mask = table.shape[0] - 1
    hole = find(table, slot_key, slot_key[slot])
    cell = hole
    while True:
        cell = (cell + 1) & mask
        moved = table[cell]
        if moved == FREE:
            break
        home = np.int64(moved >> _SHIFT) & mask
        # The entry may fill the hole unless its home lies cyclically in (hole, cell].
        if (hole < cell and hole < home <= cell) or (hole > cell and (home > hole or home <= cell)):
            continue
        table[hole] = moved
        hole = cell
    table[hole] = FREE


@kernel(cache=True, inline="always")
def _place(table, slot_key, slot, key):
    """Put ``key`` (not in the table) into ``slot``, whose previous key has been removed; the
    cell is looked up again because that removal may have shifted the run."""
    slot_key[slot] = key
    table[-1 - find(table, slot_key, key)] = (_hash32(key) << _SHIFT) | np.uint64(slot)


@kernel(cache=True, inline="always")
def _fresh_slot(used, capacity):
    """A slot never used yet and the new count of used slots, or (EMPTY, used) when the cache
    is full and the policy must pick a victim."""
    if used < capacity:
        return used, used + 1
    return np.int64(EMPTY), used


@kernel(cache=True)
def contains_kernel(table, slot_key, keys, hit):
    """Check only: ``hit[i]`` where ``keys[i]`` is cached. No state changes."""
    for i in range(keys.shape[0]):
        hit[i] = find(table, slot_key, keys[i]) >= 0


@kernel(cache=True)
def clock_kernel(table, slot_key, mark, state, keys, hit):
    # The state lives in locals during the loop: stores into the other arrays could alias it.
    capacity = slot_key.shape[0]
    used, hand = state[USED], state[HAND]
    for i in range(keys.shape[0]):
        key = keys[i]
        cell = find(table, slot_key, key)
        if cell >= 0:
            mark[slot_in(table[cell])] = 1
            hit[i] = True
            continue
        hit[i] = False
        slot, used = _fresh_slot(used, capacity)
        if slot == EMPTY:
            while mark[hand]:
                mark[hand] = 0
                hand = hand + 1 if hand + 1 < capacity else 0
            slot = hand
            hand = hand + 1 if hand + 1 < capacity else 0
            _remove(table, slot_key, slot)
        mark[slot] = 1
        _place(table, slot_key, slot, key)
    state[USED], state[HAND] = used, hand


@kernel(cache=True, inline="always")
def _xorshift(state):
    """xorshift64*: the next pseudo-random uint64 from ``state[RNG]``."""
    x = np.uint64(state[RNG])
    x ^= x >> np.uint64(12)
    x ^= x << np.uint64(25)
    x ^= x >> np.uint64(27)
    state[RNG] = np.int64(x)
    return x * np.uint64(0x2545F4914F6CDD1D)


@kernel(cache=True)
def random_kernel(table, slot_key, state, keys, hit):
    capacity = slot_key.shape[0]
    used = state[USED]
    for i in range(keys.shape[0]):
        key = keys[i]
        if find(table, slot_key, key) >= 0:
            hit[i] = True
            continue
        hit[i] = False
        slot, used = _fresh_slot(used, capacity)
        if slot == EMPTY:
            slot = np.int64(((_xorshift(state) >> np.uint64(32)) * np.uint64(capacity)) >> np.uint64(32))
            _remove(table, slot_key, slot)
        _place(table, slot_key, slot, key)
    state[USED] = used


@kernel(cache=True, inline="always")
def _push_front(prev, next_, head, tail, slot):
    """Link ``slot`` (unlinked) in as the most recent; the new (head, tail)."""
    prev[slot] = EMPTY
    next_[slot] = head
    if head != EMPTY:
        prev[head] = slot
    else:
        tail = slot
    return slot, tail


@kernel(cache=True)
def lru_kernel(table, slot_key, prev, next_, state, keys, hit):
    capacity = slot_key.shape[0]
    used, head, tail = state[USED], state[HEAD], state[TAIL]
    for i in range(keys.shape[0]):
        key = keys[i]
        cell = find(table, slot_key, key)
        if cell >= 0:
            hit[i] = True
            slot = slot_in(table[cell])
            if slot != head:  # unlink it (it has a predecessor), then make it the most recent
                before, after = prev[slot], next_[slot]
                next_[before] = after
                if after != EMPTY:
                    prev[after] = before
                else:
                    tail = before
                head, tail = _push_front(prev, next_, head, tail, slot)
            continue
        hit[i] = False
        slot, used = _fresh_slot(used, capacity)
        if slot == EMPTY:  # the least recent goes
            slot = tail
            tail = prev[slot]
            if tail != EMPTY:
                next_[tail] = EMPTY
            else:
                head = EMPTY
            _remove(table, slot_key, slot)
        _place(table, slot_key, slot, key)
        head, tail = _push_front(prev, next_, head, tail, slot)
    state[USED], state[HEAD], state[TAIL] = used, head, tail
