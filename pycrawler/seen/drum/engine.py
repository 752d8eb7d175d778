"""The DRUM engine: operations in, bucketed in RAM, spilled to disk buckets, merged in order.

IRLbot's Disk Repository with Update Management (Lee, Leonard, Wang, Loguinov, WWW 2008),
after the C++ implementation described in the CodeProject article: ``check``, ``update`` and
``check_update`` are asynchronous; their results reach a :class:`Dispatcher` when a merge
runs. Keys are split by their top bits into ``num_buckets`` key ranges; each range has a RAM
buffer of ``bucket_buffer_elems`` operations that, when full, is appended to its disk bucket.
When a disk bucket grows past its limit, every bucket is merged, in key order, so the merge
walks the sorted repository once. The limit grows with the repository (``merge_ratio``): a
round rewrites the repository, so rounds must take in more operations as it grows for the
cost per operation to stay flat. See docs/drum.md for the layout and crash safety.

A round runs whole inside the call that starts it, or, with ``round_share``, spread over the
calls that follow, one bucket at a time, so that merging takes at most that share of the
caller's time: a crawl that adds its links at each commit keeps fetching while a round goes on,
where a whole round would hold its commit for as long as it rewrites the repository.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import failpoints
from ...errors import BadInput
from ...store import Environment
from .blobs import Blobs
from .buckets import DiskBucket, Operations
from .dispatcher import Dispatcher
from .repository import CHECK, CHECK_UPDATE, UPDATE, MergeResult, Repository

# (outcome, operation, whether the key was found before it; None: either)
_ROUTES = (("unique_key_check", CHECK, False), ("duplicate_key_check", CHECK, True),
           ("unique_key_update", CHECK_UPDATE, False), ("duplicate_key_update", CHECK_UPDATE, True),
           ("update", UPDATE, None))


@dataclass
class _Round:
    """A merge round under way: the next bucket to merge, the merges done before it began,
    the seconds its merges took, and when a paced round may merge again."""

    merges_before: int
    next: int = 0
    seconds: float = 0.0
    resume_at: float = 0.0


class Drum:
    """A DRUM over a JE repository, in the folder ``path``.

    ``path`` holds ``buckets/`` (the disk buckets) and, unless ``env`` is given,
    ``repository/`` (a JE environment of its own). With ``env``, the repository is the
    databases ``<name>.blocks`` and ``<name>.meta`` of that environment.

    Not thread-safe (like the original): one caller at a time.
    """

    def __init__(self, path: str | os.PathLike, dispatcher: Dispatcher | None = None, *, key_bytes: int = 8,
                 num_buckets: int = 64, bucket_buffer_elems: int = 65536, bucket_bytes: int = 8 << 20,
                 block_keys: int = 4096, env: Environment | None = None, name: str = "drum",
                 cache_size: int = 64 << 20, durability: str = "write_no_sync", merge_ratio: float = 0.5,
                 max_bucket_bytes: int = 32 << 20, round_share: float | None = None):
        if num_buckets < 1 or num_buckets & (num_buckets - 1) or num_buckets > 1 << 16:
            raise BadInput(f"num_buckets must be a power of two up to 65536, not {num_buckets}")
        if key_bytes < 1:
            raise BadInput(f"key_bytes must be positive, not {key_bytes}")
        if round_share is not None and not 0 < round_share <= 1:
            raise BadInput(f"round_share must be in (0, 1], not {round_share}")
        self.path = Path(path)
        self.key_bytes = key_bytes
        self.words = -(-key_bytes // 8)
        self.num_buckets = num_buckets
        self.bucket_buffer_elems = bucket_buffer_elems
        self.bucket_bytes = bucket_bytes
        self.merge_ratio = merge_ratio
        self.max_bucket_bytes = max(bucket_bytes, max_bucket_bytes)
        self.round_share = round_share
        self.dispatcher = dispatcher or Dispatcher()
        self._wanted = self.dispatcher.wanted()
        self._shift = np.uint64(64 - num_buckets.bit_length() + 1)
        (self.path / "buckets").mkdir(parents=True, exist_ok=True)
        self._own_env = env is None
        self.env = env or Environment(self.path / "repository", create=True, cache_size=cache_size,
                                      durability=durability)
        try:
            self.repository = Repository(self.env, name, key_bytes=key_bytes, num_buckets=num_buckets,
                                         block_keys=block_keys)
            self._disk = [DiskBucket(self.path / "buckets", b, self.words, self.repository.merged_generation(b))
                          for b in range(num_buckets)]
            self._keys = self.repository.keys()
        except BaseException:
            if self._own_env:
                self.env.close()
            raise
        self._ram: list[list[Operations]] = [[] for _ in range(num_buckets)]
        self._ram_count = [0] * num_buckets
        self._sync_files = durability == "sync"
        self.merges = 0  # bucket merges done (for statistics and tests)
        self.rounds = 0  # merge rounds (every bucket merged in key order) done
        self.last_round_s = 0.0  # seconds the last merge round spent merging
        self._round: _Round | None = None  # the merge round under way
        # wall seconds in each step of DRUM's own work, for timings()
        self._seconds = {"spill_s": 0.0, "bucket_read_s": 0.0, "merge_call_s": 0.0, "dispatch_s": 0.0}
        self.closed = False

    # -- operations ----------------------------------------------------------------------
    def check(self, key, aux=None) -> None:
        self.check_many([key], None if aux is None else [aux])

    def update(self, key, value: bytes, aux=None) -> None:
        self.update_many([key], [value], None if aux is None else [aux])

    def check_update(self, key, value: bytes = b"", aux=None) -> None:
        self.check_update_many([key], [value], None if aux is None else [aux])

    def check_many(self, keys, aux=None, txn=None) -> None:
        """Classify each key as unique or duplicate (the stored value comes with a duplicate)."""
        self._submit(CHECK, keys, None, aux, txn)

    def update_many(self, keys, values, aux=None, txn=None) -> None:
        """Store each key with its value (overwriting)."""
        self._submit(UPDATE, keys, values, aux, txn)

    def check_update_many(self, keys, values=None, aux=None, txn=None) -> None:
        """Classify each key, then store it with its value (empty when ``values`` is None)."""
        self._submit(CHECK_UPDATE, keys, values, aux, txn)

    def synchronize(self, txn=None) -> None:
        """Merge every bucket now; on return, every operation so far is dispatched, and
        committed (with ``txn``: written in it, committed when it commits).

        The ``txn`` of every operation method is the same: a transaction of the repository's
        environment that a merge the call runs writes in, and whose commit its dispatcher's
        writes in it join. The merged bucket files are deleted only once it has committed."""
        self._merge_all(txn)

    def persist(self) -> None:
        """Append every RAM buffer to its disk bucket: the operations queued so far then
        survive a crash (kill -9) and are merged after reopening, as if never interrupted."""
        for b in range(self.num_buckets):
            self._spill(b)
        failpoints.hit("drum.buffers.persisted")

    def close(self) -> None:
        """Synchronize, then release the files and the repository (idempotent)."""
        if self.closed:
            return
        try:
            self.synchronize()
        finally:
            self.closed = True
            for disk in self._disk:
                disk.close()
            self.repository.close()
            if self._own_env:
                self.env.close()

    def __enter__(self) -> Drum:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def timings(self) -> dict[str, float | int]:
        """Where DRUM's time went since it was opened: wall seconds appending RAM buffers to
        disk buckets (``spill_s``), reading bucket files back (``bucket_read_s``), in the
        repository's merge calls (``merge_call_s``, which holds the Java side's sort, block
        reads, merge, block writes and commits: ``sort_s`` ... ``commit_s``) and dispatching
        outcomes (``dispatch_s``); merge rounds, bucket merges, blocks read and written and the
        bytes written to JE."""
        java = self.repository.timings()
        figures: dict[str, float | int] = {**self._seconds, "rounds": self.rounds, "merges": self.merges}
        for name, value in java.items():
            figures[name.replace("_nanos", "_s")] = value / 1e9 if name.endswith("_nanos") else value
        return figures

    def figures(self) -> dict[str, float | int]:
        """What the operator's console shows of DRUM, from counters it keeps in Python (no call
        into the repository): keys merged into the repository, merge rounds and bucket merges
        done since the open, the wall seconds merges took (bucket reads, the repository's merge
        calls, dispatching the outcomes) and the last round's."""
        seconds = self._seconds
        return {"keys": self._keys, "rounds": self.rounds, "merges": self.merges,
                "merge_seconds": seconds["bucket_read_s"] + seconds["merge_call_s"] + seconds["dispatch_s"],
                "last_round_seconds": self.last_round_s}

    def count(self) -> int:
        """Keys in the repository (merged operations only; reads every block)."""
        return self.repository.count()

    # -- keys ----------------------------------------------------------------------------
    def _internal_keys(self, keys) -> np.ndarray:
        """(n, words) uint64 rows whose unsigned order is the keys' byte order."""
        if self.key_bytes == 8:
            arr = np.asarray(keys)
            if arr.dtype != np.uint64:
                if arr.dtype.kind == "O" or arr.dtype.kind == "S":
                    raise BadInput("8-byte keys are given as unsigned 64-bit integers")
                arr = arr.astype(np.uint64)
            return arr.reshape(-1, 1)
        arr = np.asarray(keys)
        if arr.dtype.kind in "OS":
            if any(len(k) != self.key_bytes for k in keys):
                raise BadInput(f"every key must be {self.key_bytes} bytes")
            arr = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(-1, self.key_bytes)
        if arr.ndim != 2 or arr.shape[1] != self.key_bytes:
            raise BadInput(f"keys must be rows of {self.key_bytes} bytes")
        padded = np.zeros((len(arr), self.words * 8), dtype=np.uint8)
        padded[:, :self.key_bytes] = arr
        return padded.view(">u8").astype(np.uint64)

    def _external_keys(self, keys: np.ndarray) -> np.ndarray:
        if self.key_bytes == 8:
            return keys[:, 0]
        return keys.astype(">u8").view(np.uint8).reshape(len(keys), -1)[:, :self.key_bytes]

    @staticmethod
    def _blobs(items, n: int) -> Blobs | None:
        if items is None:
            return None
        blobs = Blobs.of(items)
        if len(blobs) != n:
            raise BadInput(f"{len(blobs)} values or aux for {n} keys")
        return blobs

    # -- buckets -------------------------------------------------------------------------
    def _submit(self, op: int, keys, values, aux, txn) -> None:
        if self.closed:
            raise BadInput(f"DRUM {self.path} is closed")
        keys = self._internal_keys(keys)
        n = len(keys)
        if n == 0:
            return
        values, aux = self._blobs(values, n), self._blobs(aux, n)
        if self.num_buckets == 1:
            self._buffer(0, Operations(keys, op, values, aux))
        else:
            bucket = (keys[:, 0] >> self._shift).astype(np.uint16)
            order = np.argsort(bucket, kind="stable")  # a radix sort: keeps arrival order
            bounds = np.zeros(self.num_buckets + 1, dtype=np.int64)
            np.cumsum(np.bincount(bucket, minlength=self.num_buckets), out=bounds[1:])
            # One gather in bucket order, then a slice a bucket (not a gather a bucket: a flush's
            # add spreads over all of them).
            keys = keys[order]
            values = values.take(order) if values is not None else None
            aux = aux.take(order) if aux is not None else None
            edges = bounds.tolist()
            for b in np.flatnonzero(np.diff(bounds)).tolist():
                lo, hi = edges[b], edges[b + 1]
                self._buffer(b, Operations(keys[lo:hi], op, values.slice(lo, hi) if values is not None else None,
                                                aux.slice(lo, hi) if aux is not None else None))
        limit = self.bucket_limit()
        if self.round_share is None:
            if any(disk.size > limit for disk in self._disk):
                self._merge_all(txn)
            return
        if self._round is None and any(disk.size > limit for disk in self._disk):
            self.request_round()
        self._pace(txn, limit)

    def bucket_limit(self) -> int:
        """The size of a disk bucket that starts a merge round: ``bucket_bytes``, or
        ``merge_ratio`` times the repository's key bytes spread over the buckets once that is
        larger (a round then takes in at least half the repository's size in operations, so a
        key costs a bounded number of rewrites however large the repository grows), at most
        ``max_bucket_bytes`` (a bucket is read whole into RAM to merge)."""
        grown = int(self.merge_ratio * self._keys * self.words * 8 / self.num_buckets)
        return min(max(self.bucket_bytes, grown), self.max_bucket_bytes)

    def _buffer(self, b: int, ops: Operations) -> None:
        self._ram[b].append(ops)
        self._ram_count[b] += len(ops)
        if self._ram_count[b] >= self.bucket_buffer_elems:
            self._spill(b)

    def _spill(self, b: int) -> None:
        """Append bucket b's RAM buffer to its disk bucket."""
        if self._ram[b]:
            started = time.perf_counter()
            self._disk[b].append(Operations.concat(self._ram[b]))
            self._ram[b].clear()
            self._ram_count[b] = 0
            self._seconds["spill_s"] += time.perf_counter() - started

    # -- merge ---------------------------------------------------------------------------
    def queued(self) -> bool:
        """Whether any operation waits for a merge (in a RAM buffer or a disk bucket)."""
        return any(self._ram_count) or any(disk.size for disk in self._disk)

    def request_round(self) -> None:
        """Start a merge round, if none is under way, for the calls that follow to carry out
        (``round_share``), before any bucket reaches its limit: its caller wants the
        outcomes of what it queued soon (a frontier running low on URLs)."""
        if self._round is None and self.queued():
            self._round = _Round(self.merges)

    def merge_next(self, txn=None) -> bool:
        """Merge the next bucket that holds operations now, starting a round if none is under
        way; False when no operation was queued (nothing merged)."""
        while self.queued():
            self.request_round()
            if self._step(txn):
                return True
        return False

    def _pace(self, txn, limit: int) -> None:
        """Carry the round under way on by one bucket when its share of the time allows, or
        at once for a bucket grown past twice its limit (a bucket is read whole into RAM)."""
        round_ = self._round
        if round_ is None:
            return
        overgrown = next((b for b, disk in enumerate(self._disk) if disk.size > 2 * limit), None)
        if overgrown is not None:
            self._spill(overgrown)
            self._merge(overgrown, txn)
        elif time.monotonic() >= round_.resume_at:
            self._step(txn)

    def _step(self, txn) -> bool:
        """Merge the round's next bucket that holds operations (ending the round after its
        last bucket); whether one was merged. A paced round then rests for as long as the
        step took, times (1 - share) / share."""
        round_, started = self._round, time.perf_counter()
        merged = False
        while round_.next < self.num_buckets and not merged:
            b = round_.next
            round_.next += 1
            self._spill(b)
            if self._disk[b].size:
                self._merge(b, txn)
                merged = True
        spent = time.perf_counter() - started
        round_.seconds += spent
        if self.round_share is not None:
            round_.resume_at = time.monotonic() + spent * (1 - self.round_share) / self.round_share
        if round_.next >= self.num_buckets:
            self._round = None
            if self.merges > round_.merges_before:
                self.rounds += 1
                self.last_round_s = round_.seconds
                failpoints.hit("drum.round.merged")
        return merged

    def _merge_all(self, txn=None) -> None:
        """Merge every bucket, lowest key range first (one ordered walk of the repository):
        the round under way to its end, then a round for the buckets it had passed, if they
        have filled since."""
        self.request_round()
        while self._round is not None:
            self._step(txn)
            self.request_round()

    def _merge(self, b: int, txn=None) -> None:
        disk = self._disk[b]
        if self._sync_files:
            disk.sync()
        started = time.perf_counter()
        ops = disk.read()
        called = time.perf_counter()
        result = self.repository.merge(b, disk.generation, ops.keys, ops.ops, ops.values,
                                       want_values="duplicate_key_check" in self._wanted, txn=txn)
        failpoints.hit("drum.merge.written")
        # Committed (blocks + marker), or committing with txn: this generation must never merge again.
        self.merges += 1
        self._keys += result.added
        returned = time.perf_counter()
        calls = self._routes(ops, result)
        aux = disk.read_aux(len(ops)) if calls else None
        if txn is None:
            disk.rotate()
        else:
            txn.after_commit(disk.retire())
        dispatching = time.perf_counter()
        self._seconds["bucket_read_s"] += called - started + dispatching - returned
        self._seconds["merge_call_s"] += returned - called
        self._dispatch(ops, calls, aux)
        self._seconds["dispatch_s"] += time.perf_counter() - dispatching

    def _dispatch(self, ops: Operations, calls, aux: Blobs | None) -> None:
        for name, idx, values in calls:
            keys = self._external_keys(ops.keys[idx])
            aux_of = aux.take(idx) if aux is not None else Blobs.empty(len(idx))
            handler = getattr(self.dispatcher, name)
            if values is None:
                handler(keys, aux_of)
            else:
                handler(keys, values, aux_of)

    def _routes(self, ops: Operations, result: MergeResult) -> list[tuple[str, np.ndarray, Blobs | None]]:
        """(outcome, operation indices, values: None for unique checks, which have none) of each
        outcome the dispatcher wants and got."""
        calls = []
        uniform = not isinstance(ops.ops, np.ndarray)
        for name, op, was_found in _ROUTES:
            if name not in self._wanted or (uniform and ops.ops != op):
                continue
            mask = np.ones(len(ops), dtype=bool) if was_found is None else (result.found == was_found)
            if not uniform:
                mask &= ops.ops == op
            idx = np.flatnonzero(mask)
            if not idx.size:
                continue
            if name == "duplicate_key_check":
                values = result.checked_values
            elif name == "unique_key_check":
                values = None
            else:
                values = ops.values.take(idx) if ops.values is not None else Blobs.empty(len(idx))
            calls.append((name, idx, values))
        return calls
