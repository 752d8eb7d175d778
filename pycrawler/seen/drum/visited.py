"""URL-seen on DRUM behind the Visited protocol, so the frontier uses it like Bloom or the
exact JE set: ``add_batch`` is DRUM's ``check_update`` with the payload as aux, and the
receiver hears each merge's unique and duplicate keys.

Payloads travel through DRUM's disk buckets, so they are encoded: ``None``, ``str`` (UTF-8)
and ``bytes`` compactly, anything else pickled (the bucket files are this table's own).
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import BadInput
from ..protocol import Visited, as_keys
from .blobs import Blobs
from .dispatcher import Dispatcher
from .engine import Drum

_STR, _BYTES, _PICKLE, _INDEX = b"s", b"b", b"p", b"i"

BUCKET_BYTES_VARIABLE = "PYCRAWLER_DRUM_BUCKET_BYTES"
"""For tests only: a disk bucket's size (bytes) that starts a merge round, in place of
:class:`Drum`'s 8 MB, so that a crawl of a few hundred pages also merges inside the enqueue
of a flush, not only when its frontier runs dry."""
BUCKETS_VARIABLE = "PYCRAWLER_DRUM_BUCKETS"
"""For tests only: the number of buckets of a new DRUM, in place of :class:`Drum`'s 64, so that
a crawl of a few hundred pages ends several paced merge rounds (a round merges a bucket per
step). tests/crashpoints.py sets both, to kill a crawl inside its rounds and at their ends."""
_INDEX_CODE = _INDEX[0]

ROUND_SHARE = 0.125
"""The share of its caller's time a merge round may take (:class:`Drum`'s ``round_share``): a
crawl that adds its links at each commit keeps most of its time for fetching while a round
rewrites the repository and enqueues what it found new, rather than none of it (a round at 1M
pages takes 20-35 s). A quarter slowed the crawl by a fifth for the 100 s of the round at 150k
pages of the 1M-page synthetic web (scripts/bench/scale.py); an eighth spreads the same work
over twice as long at half the cost a second. Buckets fill meanwhile; one past twice its limit
is merged out of turn."""


def encode_payloads(aux: Sequence[Any]) -> Blobs:
    def one(payload) -> bytes:
        if payload is None:
            return b""
        if isinstance(payload, str):
            return _STR + payload.encode()
        if isinstance(payload, bytes):
            return _BYTES + payload
        return _PICKLE + pickle.dumps(payload)

    return Blobs.of(one(p) for p in aux)


def decode_payload(raw: bytes) -> Any:
    if not raw:
        return None
    tag, body = raw[:1], raw[1:]
    if tag == _STR:
        return body.decode()
    if tag == _BYTES:
        return body
    return pickle.loads(body)


def _index_aux(n: int) -> Blobs:
    """Aux naming each key's position in a synchronous call: tag + 8-byte index."""
    rows = np.empty((n, 9), dtype=np.uint8)
    rows[:, 0] = _INDEX_CODE
    rows[:, 1:] = np.arange(n, dtype="<u8").view(np.uint8).reshape(n, 8)
    return Blobs(rows.ravel(), np.arange(0, 9 * n + 1, 9, dtype=np.int64))


class _Route(Dispatcher):
    """Sends a merge's results to the receiver, or to the answers of a synchronous call."""

    def __init__(self, table: DrumVisited):
        self.table = table

    def unique_key_update(self, keys, values, aux):
        self.table._deliver(keys, aux, True)

    def duplicate_key_update(self, keys, values, aux):
        self.table._deliver(keys, aux, False)

    def unique_key_check(self, keys, aux):
        self.table._deliver(keys, aux, False)

    def duplicate_key_check(self, keys, values, aux):
        self.table._deliver(keys, aux, True)


class DrumVisited(Visited):
    """A Visited table on a :class:`Drum` in folder ``path`` (``drum_options`` go to Drum;
    ``env=``: its repository in that JE environment, which the table is then bound to).

    Results reach the receiver when DRUM merges: a bucket at a time, in rounds that a disk
    bucket's filling or :meth:`request_flush` starts and the adds that follow carry on (each
    taking at most ``round_share`` of the time, :data:`ROUND_SHARE` unless given), at
    :meth:`flush_some` and whole at :meth:`flush` or :meth:`close`. The synchronous conveniences (:meth:`add_many`, :meth:`contains_many`)
    merge at once, delivering every queued result too: use them sparingly.

    Bound (a ``txn`` given): a merge the call runs writes its blocks and marker in ``txn``, and
    its results reach the receiver to be written in ``txn`` too, so a URL is in the repository
    only if what the receiver made of it is committed; and the call ends by appending the RAM
    buffers to the bucket files, so the checks it queued are replayed after a crash.
    """

    def __init__(self, path, **drum_options):
        if small := os.environ.get(BUCKET_BYTES_VARIABLE):
            drum_options.setdefault("bucket_bytes", int(small))
        if few := os.environ.get(BUCKETS_VARIABLE):
            drum_options.setdefault("num_buckets", int(few))
        drum_options.setdefault("round_share", ROUND_SHARE)
        self._answers: np.ndarray | None = None
        self.drum = Drum(path, _Route(self), **drum_options)

    def add_batch(self, keys, aux: Sequence[Any] | None = None, txn=None) -> None:
        keys = as_keys(keys)
        if aux is not None and len(aux) != len(keys):
            raise BadInput(f"aux has {len(aux)} entries for {len(keys)} keys")
        self.drum.check_update_many(keys, aux=None if aux is None else encode_payloads(aux), txn=txn)
        if txn is not None:
            self.drum.persist()

    def flush(self, txn=None) -> None:
        self.drum.synchronize(txn)

    def flush_some(self, txn=None) -> bool:
        """Merge the next bucket that holds checks (a part of a round): see
        :meth:`Drum.merge_next`."""
        self.drum.merge_next(txn)
        return self.drum.queued()

    def request_flush(self) -> None:
        """Start a merge round that the adds to come carry on: see :meth:`Drum.request_round`."""
        self.drum.request_round()

    def joins_transactions_of(self, env) -> bool:
        return self.drum.env is env

    def add_many(self, keys) -> np.ndarray:
        keys = as_keys(keys)
        return self._answer(keys, self.drum.check_update_many, keys, aux=_index_aux(len(keys)))

    def contains_many(self, keys) -> np.ndarray:
        keys = as_keys(keys)
        return self._answer(keys, self.drum.check_many, keys, aux=_index_aux(len(keys)))

    def _answer(self, keys, submit, *args, **kwargs) -> np.ndarray:
        self._answers = np.zeros(len(keys), dtype=bool)
        try:
            submit(*args, **kwargs)
            self.drum.synchronize()
            return self._answers
        finally:
            self._answers = None

    def _deliver(self, keys: np.ndarray, aux: Blobs, flag: bool) -> None:
        lengths = aux.lengths()
        first = np.zeros(len(keys), dtype=np.uint8)
        nonempty = lengths > 0
        first[nonempty] = aux.data[aux.offsets[:-1][nonempty]]
        is_index = first == _INDEX_CODE
        if is_index.any():
            at = aux.take(np.flatnonzero(is_index))
            rows = at.data.reshape(-1, 9)[:, 1:].copy().view("<u8").ravel()
            self._answers[rows.astype(np.int64)] = flag
        if self._receiver is not None and not is_index.all():
            queued = np.flatnonzero(~is_index)
            payloads = [decode_payload(raw) for raw in aux.take(queued)]
            self._receiver(keys[queued], payloads, np.full(len(queued), flag))

    def __len__(self) -> int:
        return self.drum.count()

    def figures(self) -> dict:
        return self.drum.figures()

    def close(self) -> None:
        self.drum.close()

    def __repr__(self) -> str:
        return f"<DrumVisited {str(self.drum.path)!r}>"
