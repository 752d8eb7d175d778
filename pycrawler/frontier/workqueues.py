"""The work-queue frontier: Heritrix's ``BdbFrontier`` / ``WorkQueueFrontier``, in Python on JE.

URLs wait in per-site *work queues*; the frontier hands out at most one URL of a queue at a
time and, when its fetch completes, *snoozes* the queue for a politeness delay (Mercator's
rule: a multiple of the fetch's duration, see :mod:`.politeness`). Which queue a URL joins is
the queue-assignment policy's choice (:mod:`.assignment`: host, SURT authority, registered
domain, BKDRHash).

On disk (one JE environment):

=================  ==============================================================================
database           contents
=================  ==============================================================================
``pending``        every URL not yet finished, in Heritrix's layout: key = class key UTF-8,
                   ``0x00``, scheduling directive byte, precedence byte, 48-bit ordinal
                   big-endian; value = the :class:`~pycrawler.records.crawl_url.CrawlUrl`
                   record. A queue is one contiguous key range; the key ``classKey + 0x00``
                   with an empty value is its *cap* (Heritrix writes one per queue too).
``queues``         one record per queue: URLs fetched, succeeded, failed, wake time, and (valid
                   after a clean close) its URL count
``retries``        pending key -> attempts so far, for URLs in a transient-failure retry
``frontier_meta``  ``clean``: present after a clean close, holding the next ordinal;
                   ``seen_key``: the seen-key scheme (:mod:`pycrawler.keys.schemes`) the
                   Visited table is keyed by, written when the frontier is created (absent in
                   stores made before schemes existed: ``md5``)
=================  ==============================================================================

Order within a queue is key order: a lower directive byte first (Heritrix's
``SchedulingConstants``: 0 HIGHEST, 1 HIGH, 2 MEDIUM, 3 NORMAL), then a lower precedence (1
is Heritrix's most urgent; capped at 127), then the ordinal: first come, first served. A
frontier created with ``lifo`` counts its ordinals down instead (the key holds
``ORDINAL_LIMIT - 1 - n`` for the n-th URL): last come, first served within an order, the
depth-first order of Scrapy's default queues. The choice is kept in ``frontier_meta``
(``order``) for the store's life, since the stored keys are read by it.

**In process, and why nothing is lost.** As in Heritrix, a URL handed out by :meth:`next`
stays in ``pending`` until :meth:`completed` finishes it; only then is its record deleted
(completions are group-committed, see :meth:`completed`). So a kill -9 can lose no URL: what
was in process is still in its queue, at its place near the head, and is handed out again
after the restart. Nothing else is handed out twice: a URL enters ``pending`` only when the
Visited table calls it new (unless forced), and a finished URL's deletion is committed.

**Seen keys.** The frontier keys its Visited table by one scheme for its whole life: ``md5``
(pycrawler's own) or ``heritrix`` (Heritrix's ``createKey`` over Heritrix's canonical form,
so it dedupes against a Heritrix crawl's seen set). Opening a frontier with another scheme
than the one it was created with is refused: the table would call every URL new.

**Restoring.** :meth:`WorkQueueFrontier.restore` puts URLs at exact places (queue, directive,
precedence, ordinal) without the Visited check: how a Heritrix crawl's pending URLs are
imported (:mod:`pycrawler.heritrix.migrate`).

**RAM** holds per-queue state only (a few fields and up to ``prefetch`` head records per
queue): it grows with the number of queues, not of URLs. :meth:`next` does not cross into
the JVM per call: the heads of the queues it is about to serve are read in one Java call
(``org.pycrawler.bridge.WorkQueues.heads``), a few records per queue.

**Restart.** A clean :meth:`close` writes every queue's record and the next ordinal, so
opening again reads them. After a crash the counters are rebuilt by one Java walk over the
keys of ``pending`` (``WorkQueues.census``): counts per queue and the largest ordinal (the
smallest, for ``lifo``).

Queue states: ``ready`` (may hand out now), ``in_process`` (one URL out), ``snoozed`` (resting
for politeness or retry backoff), ``inactive`` (has URLs, waiting for a slot under
``max_active_queues``), ``retired`` (its ``queue_budget`` of fetches is spent; its URLs stay
pending), ``empty``.
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import dataclasses
import functools
import heapq
import os
import struct
import threading
import time
from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import BadInput
from ..keys.canon import Canonicalizer, get_canonicalizer
from ..keys.schemes import DEFAULT_SEEN_KEY, SeenKeyScheme, get_seen_key_scheme
from ..records.crawl_url import CrawlUrl, _read_string, encode
from ..seen.protocol import SynchronousVisited, Visited, as_keys
from ..store import Environment
from ..store.java_errors import je_errors
from ..store.packing import pack, unpack
from .assignment import QueueAssignment, get_assignment
from .pending_records import (DEFAULT_PRECEDENCE, MAX_PRECEDENCE, NORMAL, ORDINAL_LIMIT, decode_entry, encode_entries,
                              pending_key, pending_keys, queue_prefix)
from .politeness import FAILURE, RETRY, SUCCESS, Outcome, Politeness
from .protocol import TodoFrontier
from .todo import JE_CONFIG

PENDING, QUEUES, RETRIES, META = "pending", "queues", "retries", "frontier_meta"

READY, IN_PROCESS, SNOOZED, INACTIVE, RETIRED, EMPTY = range(6)
STATE_NAMES = ("ready", "in_process", "snoozed", "inactive", "retired", "empty")

_CLEAN = b"clean"
_SEEN_KEY = b"seen_key"
_ORDER = b"order"      # b"lifo" in a frontier created last-in-first-out; absent: first-in-first-out
_NEXT_ORDINAL = struct.Struct(">Q")  # the value of _CLEAN
_RECORD = struct.Struct(">BQQQdQ")   # version, fetched, succeeded, failed, wake (epoch s), count
_RECORD_VERSION = 1


# -- per-queue state ------------------------------------------------------------------------------

class _Group:
    """The politeness key several queues share (``bkdr-host``): one in process, one timer."""

    __slots__ = ("busy", "wake", "waiting")

    def __init__(self):
        self.busy = False
        self.wake = 0.0
        self.waiting: list[WorkQueue] = []


class WorkQueue:
    """One queue's state in RAM: a few fields and the records read ahead from its head."""

    __slots__ = ("class_key", "prefix", "state", "active", "count", "fetched", "succeeded", "failed", "wake",
                 "in_process", "buffer", "read_through", "group")

    def __init__(self, class_key: str, prefix: bytes, group: _Group | None):
        self.class_key = class_key
        self.prefix = prefix
        self.state = EMPTY
        self.active = False
        self.count = 0              # URLs in pending, the one in process included
        self.fetched = self.succeeded = self.failed = 0
        self.wake = 0.0             # epoch seconds when a snooze ends
        self.in_process: tuple[bytes, bytes] | None = None
        self.buffer: list[tuple[bytes, bytes]] = []   # head records read ahead, key order
        self.read_through: bytes | None = None       # the largest key read from JE so far
        self.group = group

    @property
    def state_name(self) -> str:
        return STATE_NAMES[self.state]

    def unread(self) -> int:
        return self.count - len(self.buffer) - (self.in_process is not None)

    def record(self) -> bytes:
        return _RECORD.pack(_RECORD_VERSION, self.fetched, self.succeeded, self.failed, self.wake, self.count)

    def __repr__(self) -> str:
        return f"<WorkQueue {self.class_key!r} {self.state_name} {self.count} URLs>"


@dataclasses.dataclass
class Scheduled:
    """What one :meth:`WorkQueueFrontier.schedule` call did."""

    enqueued: int = 0      # new URLs put in queues (for an asynchronous Visited table: so far)
    duplicates: int = 0    # already seen (dropped)
    rejected: int = 0      # not absolute URLs
    unique: np.ndarray | None = None   # per URL given, True where the Visited table called it new
                                       # (synchronous tables only: an asynchronous one answers later)


class WorkQueueFrontier(TodoFrontier):
    """Heritrix-style politeness frontier on an open :class:`~pycrawler.store.Environment`.

    It also speaks the TODO protocol (``put_urls`` = :meth:`schedule`, ``get_next_batch`` =
    :meth:`next_batch` with each URL finished at once, the book's at-most-once ``getNext``),
    so the ``pycrawler frontier`` commands drive it like any TODO store.

    ``visited``: any :class:`~pycrawler.seen.protocol.Visited` table (Bloom, exact JE set,
    DRUM); ``assignment``: a policy or its name (:func:`.assignment.get_assignment`);
    ``seen_key``: how URLs are keyed in ``visited``, ``md5`` or ``heritrix``
    (:mod:`pycrawler.keys.schemes`; None: the scheme the store was created with, ``md5`` for
    a new one); ``canonicalizer``: ``safe``, ``w3lib``, ``heritrix`` or ``none`` (None: the
    seen-key scheme's own, else ``safe``; ``heritrix`` keys require ``heritrix``);
    ``politeness``: the delay rule; ``queue_budget``: fetches after which a queue retires
    (None: no limit); ``max_active_queues``: queues that may be ready, in process or snoozed
    at once (None: no cap); ``prefetch``: head records read per queue per Java call;
    ``commit_every`` / ``commit_interval``: group commit of single :meth:`completed` calls;
    ``record_interval``: seconds between writes of the touched queues' records (their fetch
    counters and wake times); ``lifo``: last in, first out within an order (None: as the store
    was created, first in, first out for a new one; another value than the store's is
    refused); ``clock``: the time source (epoch seconds).
    """

    layout = "workqueues"
    order = "politeness"

    def __init__(self, env: Environment, visited: Visited | None = None, *, create: bool = False,
                 assignment: str | QueueAssignment = "host", seen_key: str | SeenKeyScheme | None = None,
                 canonicalizer: str | Canonicalizer | None = None,
                 politeness: Politeness | None = None, queue_budget: int | None = None,
                 max_active_queues: int | None = None, prefetch: int = 8, commit_every: int = 1000,
                 commit_interval: float = 0.2, record_interval: float = 5.0, lifo: bool | None = None,
                 clock=time.time):
        self.env = env
        self.read_only = env.read_only
        if not (env.access.local or self.read_only):
            raise BadInput(f"{env.path} holds a work-queue frontier, whose queues live in the process that opened it "
                           "(a crawl): through an address it is read for its statistics only (frontier stats)")
        names = env.database_names()
        if not create and PENDING not in names:
            raise BadInput(f"{env.path} holds no work-queue frontier (no {PENDING!r} database; it has: "
                           f"{', '.join(names) or 'none'})")
        make = create and not self.read_only
        self.pending = env.open_database(PENDING, create=make)
        self.queue_records = env.open_database(QUEUES, create=make) if make or QUEUES in names else None
        self.retry_records = env.open_database(RETRIES, create=make) if make or RETRIES in names else None
        self.meta = env.open_database(META, create=make) if make or META in names else None
        # Bound: the table calls a URL seen only once the transaction that enqueued it commits.
        self.visited = visited.bound_to(env) if visited is not None and not self.read_only else visited
        self._delivery = None   # the transaction an asynchronous table's results are enqueued in
        self.assignment = get_assignment(assignment)
        self.seen_key = self._bind_seen_key(seen_key, fresh=PENDING not in names)
        self.lifo = self._bind_order(lifo, fresh=PENDING not in names)
        given = canonicalizer if isinstance(canonicalizer, Canonicalizer) else None
        name = self.seen_key.canonicalizer_for(given.name if given else canonicalizer)
        self.canonicalizer = given or get_canonicalizer(name)
        self.politeness = politeness or Politeness()
        self.queue_budget = queue_budget
        self.max_active_queues = max_active_queues
        self.prefetch = max(1, prefetch)
        self.commit_every = commit_every
        self.commit_interval = commit_interval
        self.record_interval = record_interval
        self._records_written = clock()
        self.clock = clock
        self._lock = threading.RLock()
        self._owns_env = self._owns_visited = False
        self.queues: dict[str, WorkQueue] = {}
        self._groups: dict[str, _Group] = {}
        self._ready: collections.deque[WorkQueue] = collections.deque()
        self._inactive: collections.deque[WorkQueue] = collections.deque()
        self._snoozed: list[tuple[float, int, WorkQueue]] = []
        self._snooze_seq = 0
        self._active = 0
        self._out: dict[str, WorkQueue] = {}          # URL handed out -> its queue
        self._attempts: dict[bytes, int] = {}         # pending key -> transient failures so far
        self._finished_keys: list[bytes] = []         # completions not yet committed
        self._retry_writes: dict[bytes, int | None] = {}
        self._dirty: set[WorkQueue] = set()
        self._first_uncommitted = 0.0
        self.totals = collections.Counter()
        self._next_ordinal = 0
        if self.visited is not None and not isinstance(self.visited, SynchronousVisited):
            self.visited.set_receiver(self._receive)
        self._load()

    @classmethod
    def open(cls, path: str | os.PathLike, visited: Visited | None = None, *, create: bool = False,
             read_only: bool = False, durability: str = "write_no_sync", cache_size: int | None = None,
             **options) -> "WorkQueueFrontier":
        """Open (``create``: or make) the frontier in the environment at ``path``; closing the
        frontier closes the environment. Without ``visited``, the exact JE set in the same
        environment (database ``visited``) is used, and closed with the frontier."""
        from ..seen.exact import ExactVisited

        env = Environment(path, create=create, read_only=read_only, cache_size=cache_size,
                          durability=None if read_only else durability, config=JE_CONFIG)
        try:
            own_visited = visited is None and not read_only
            if own_visited:
                visited = ExactVisited(env, "visited", create=create)
            frontier = cls(env, visited, create=create, **options)
        except BaseException:
            env.close()
            raise
        frontier._owns_env = True
        frontier._owns_visited = own_visited
        return frontier

    def _bind_seen_key(self, requested: str | SeenKeyScheme | None, fresh: bool) -> SeenKeyScheme:
        """The store's seen-key scheme: recorded when the frontier is created; afterwards a
        different ``requested`` scheme is refused (its keys would never match the table's)."""
        stored = self.meta.get(_SEEN_KEY) if self.meta is not None else None
        if stored is None and fresh and self.meta is not None:
            scheme = get_seen_key_scheme(requested or DEFAULT_SEEN_KEY)
            self.meta.put(_SEEN_KEY, scheme.name.encode())
            return scheme
        stored_name = stored.decode() if stored is not None else DEFAULT_SEEN_KEY
        scheme = get_seen_key_scheme(requested or stored_name)
        if scheme.name != stored_name:
            raise BadInput(f"{self.env.path} holds a frontier whose seen keys are {stored_name!r}; opening it with "
                           f"seen key {scheme.name!r} would call every URL it has seen new")
        return scheme

    def _bind_order(self, lifo: bool | None, fresh: bool) -> bool:
        """The store's order within a level: recorded when the frontier is created; afterwards
        another ``lifo`` than the store's is refused (its keys were counted the other way)."""
        if fresh and self.meta is not None:
            if lifo:
                self.meta.put(_ORDER, b"lifo")
            return bool(lifo)
        stored = self.meta is not None and self.meta.get(_ORDER) == b"lifo"
        if lifo is not None and lifo != stored:
            raise BadInput(f"{self.env.path} holds a {'last' if stored else 'first'}-in-first-out frontier; it "
                           f"cannot be opened {'last' if lifo else 'first'}-in-first-out")
        return stored

    def _key_ordinal(self, n: int) -> int:
        """The ordinal the key of the n-th URL holds: n, or counted down for ``lifo``."""
        return ORDINAL_LIMIT - 1 - n if self.lifo else n

    # -- restart --------------------------------------------------------------------------------
    def _load(self) -> None:
        now = self.clock()
        records = {}
        if self.queue_records is not None:
            records = {k.decode("utf-8", "surrogatepass"): _RECORD.unpack(v) for k, v in self.queue_records.items()}
        clean = self.meta.get(_CLEAN) if self.meta is not None else None
        if clean is not None:
            (self._next_ordinal,) = _NEXT_ORDINAL.unpack(clean)
            counts = {key: record[5] for key, record in records.items()}
        else:
            counts = self._census()
        if self.retry_records is not None:
            self._attempts = {k: v[0] for k, v in self.retry_records.items()}
        for class_key in sorted(counts.keys() | records.keys()):
            queue = self._queue(class_key)
            queue.count = counts.get(class_key, 0)
            if class_key in records:
                _, queue.fetched, queue.succeeded, queue.failed, queue.wake, _ = records[class_key]
        if clean is not None and not self.read_only:
            # From here on the records' counts go stale: a crash must rebuild them.
            self.meta.delete(_CLEAN)
        for queue in self.queues.values():
            self._settle(queue, now)

    def _census(self) -> dict[str, int]:
        census = self.pending.queue_census()
        self._next_ordinal = (ORDINAL_LIMIT - census.min_ordinal if self.lifo and census.min_ordinal >= 0
                              else census.max_ordinal + 1)
        return {p[:-1].decode("utf-8", "surrogatepass"): c
                for p, c in zip(census.prefixes, census.counts) if p.endswith(b"\x00")}

    @functools.cached_property
    def _java(self):
        """The bridge's ``WorkQueues`` and JPype's array types, for the calls that write and
        read ahead beside JE (a frontier read through a gateway makes none)."""
        import jpype

        return jpype.JClass("org.pycrawler.bridge.WorkQueues"), jpype.JArray(jpype.JByte), jpype.JArray(jpype.JInt)

    def _queue(self, class_key: str) -> WorkQueue:
        queue = self.queues.get(class_key)
        if queue is None:
            group = None
            if self.assignment.grouped:
                name = self.assignment.politeness_key(class_key)
                group = self._groups.get(name) or self._groups.setdefault(name, _Group())
            queue = self.queues[class_key] = WorkQueue(class_key, queue_prefix(class_key), group)
        return queue

    # -- queue states -----------------------------------------------------------------------------
    def _settle(self, queue: WorkQueue, now: float) -> None:
        """Put a queue that has nothing in process into the state its counters call for."""
        if queue.count == 0 or (self.queue_budget is not None and queue.fetched >= self.queue_budget):
            queue.state = EMPTY if queue.count == 0 else RETIRED
            self._deactivate(queue, now)
        elif not queue.active:
            if self.max_active_queues is None or self._active < self.max_active_queues:
                queue.active = True
                self._active += 1
                self._settle(queue, now)
            elif queue.state != INACTIVE:
                queue.state = INACTIVE
                self._inactive.append(queue)
        elif queue.wake > now:
            queue.state = SNOOZED
            self._snooze_seq += 1
            heapq.heappush(self._snoozed, (queue.wake, self._snooze_seq, queue))
        else:
            queue.state = READY
            self._ready.append(queue)

    def _deactivate(self, queue: WorkQueue, now: float) -> None:
        if not queue.active:
            return
        queue.active = False
        self._active -= 1
        while self._inactive and (self.max_active_queues is None or self._active < self.max_active_queues):
            waiting = self._inactive.popleft()
            if waiting.state == INACTIVE:
                self._settle(waiting, now)

    def _wake(self, now: float) -> None:
        heap = self._snoozed
        while heap and heap[0][0] <= now:
            wake, _, queue = heapq.heappop(heap)
            if queue.state == SNOOZED and queue.wake == wake:
                self._settle(queue, now)

    # -- schedule -----------------------------------------------------------------------------------
    def schedule(self, urls: Iterable[str | CrawlUrl], *, layer: int = 0, directive: int = NORMAL,
                 precedence: int = DEFAULT_PRECEDENCE, force: bool = False, seen_keys=None,
                 with_completions: bool = False) -> Scheduled:
        """Canonicalise ``urls`` (strings, or CrawlUrl records whose ``ori_url`` is the URL),
        pass them through the Visited table and enqueue the new ones, in one transaction.

        ``force`` enqueues every valid URL even when seen before (a force-fetch). Strings
        become records with ``layer``. The enqueued record's ``ori_url`` is the canonical URL
        when the canonicaliser's form is fetchable, else the URL as given. ``seen_keys``: the
        Visited keys of ``urls``, one per URL, when the caller keys them by something else than
        the canonical URL (a Scrapy request's fingerprint); None: the seen-key scheme's keys.
        ``with_completions``: commit the completions :meth:`completed` recorded so far in the
        same transaction (a synchronous Visited table; with an asynchronous one the URLs are
        enqueued at :meth:`flush`, which commits the completions after them): one commit where
        a caller finishing a page and scheduling its links would otherwise make two."""
        self._require_writable()
        if not 0 <= directive <= MAX_PRECEDENCE or not 0 <= precedence:
            raise BadInput(f"directive must be in 0..{MAX_PRECEDENCE} and precedence >= 0")
        if self.visited is None:
            raise BadInput("this frontier was opened without a Visited table: it cannot schedule")
        encode(CrawlUrl(ori_url="x", layer=layer))  # refuses a layer a record cannot hold
        items = list(urls)
        originals = [item.ori_url if isinstance(item, CrawlUrl) else item for item in items]
        canonical = self.canonicalizer.many(originals)
        valid = [i for i, c in enumerate(canonical) if c is not None]
        result = Scheduled(rejected=len(items) - len(valid))
        if not valid:
            if with_completions:
                self.completed_many(())
            return result
        if seen_keys is None:
            seen_keys = self.seen_key.keys([canonical[i] for i in valid])
        else:
            seen_keys = as_keys(seen_keys)
            if len(seen_keys) != len(items):
                raise BadInput(f"{len(seen_keys)} seen keys for {len(items)} URLs")
            seen_keys = seen_keys[valid]
        fetchable = self.canonicalizer.fetchable
        fetch_urls = [canonical[i] if fetchable else originals[i] for i in valid]
        records = [items[i] for i in valid]
        with self._lock:
            if isinstance(self.visited, SynchronousVisited):
                # The table's marks commit with the enqueue (it is bound to this environment).
                with self.env.begin() as txn:
                    unique = self.visited.add_many(seen_keys, txn=txn)
                    chosen = np.arange(len(valid)) if force else np.flatnonzero(unique)
                    chosen = chosen.tolist()
                    chosen_urls = [fetch_urls[i] for i in chosen]
                    values = encode_entries([records[i] for i in chosen], chosen_urls, layer)
                    result.enqueued = self._enqueue(chosen_urls, values, directive, precedence, txn)
                    if with_completions:
                        self._commit(txn=txn)
                result.duplicates = len(valid) - int(unique.sum()) if not force else 0
                result.unique = np.zeros(len(items), dtype=bool)
                result.unique[valid] = unique
            else:
                values = encode_entries(records, fetch_urls, layer)
                with self._delivering() as txn:
                    if force:
                        result.enqueued = self._enqueue(fetch_urls, values, directive, precedence, txn)
                        self.visited.add_batch(seen_keys, txn=txn)
                    else:
                        head = bytes((directive, min(precedence, MAX_PRECEDENCE)))
                        before = self.totals["enqueued"]
                        self.visited.add_batch(seen_keys, [head + v for v in unpack(*values)], txn=txn)
                        result.enqueued = self.totals["enqueued"] - before
        self.totals["rejected"] += result.rejected
        self.totals["duplicates"] += result.duplicates
        return result

    def keys_of(self, urls: Sequence[str]) -> np.ndarray:
        """The Visited keys of ``urls``, one per URL (of its canonical form when it has one):
        how another frontier with the same settings names the same URLs."""
        canonical = self.canonicalizer.many(list(urls))
        return self.seen_key.keys([c if c is not None else u for c, u in zip(canonical, urls)])

    def mark_seen(self, keys) -> None:
        """Put the URLs of Visited ``keys`` (:meth:`keys_of`) in the Visited table without
        enqueueing them: they were fetched elsewhere (by a cluster worker that owned their host
        before this one), so a link to them is a repeat."""
        self._require_writable()
        keys = as_keys(keys)
        if not len(keys):
            return
        with self._lock, self._delivering() as txn:
            if isinstance(self.visited, SynchronousVisited):
                self.visited.add_many(keys, txn=txn)
            else:  # payload-less keys: learnt, never enqueued
                self.visited.add_batch(keys, txn=txn)

    @contextlib.contextmanager
    def _delivering(self):
        """A transaction for a call to the Visited table: what the table writes, and the URLs
        it delivers as new meanwhile (enqueued by :meth:`_receive`), commit together in it."""
        with self.env.begin() as txn:
            self._delivery = txn
            try:
                yield txn
            finally:
                self._delivery = None

    def _receive(self, keys, aux: Sequence, unique) -> None:
        """Receiver of an asynchronous Visited table: enqueue what it calls new."""
        flags = np.asarray(unique).tolist()
        fresh = [a for a, new in zip(aux, flags) if new and a is not None]
        # Payload-less keys are forced URLs, already enqueued: neither new nor duplicates here.
        self.totals["duplicates"] += sum(1 for a, new in zip(aux, flags) if not new and a is not None)
        by_order: dict[bytes, list[bytes]] = {}
        for entry in fresh:
            by_order.setdefault(entry[:2], []).append(entry[2:])
        with self._lock:
            for head, values in by_order.items():
                urls = [_read_string(v, 1)[0] for v in values]
                self._enqueue(urls, pack(values), head[0], head[1], self._delivery)

    def _enqueue(self, urls: list[str], values: tuple[bytes, np.ndarray], directive: int, precedence: int,
                 txn=None) -> int:
        """Append ``urls`` (their pending values packed) to the tails of their queues, in the
        order given, in one Java call: in ``txn``, or in a transaction of its own.

        Per URL, Python only names the queue (one dict lookup); keys are built in a compiled
        loop and the per-queue bookkeeping runs once per queue of the batch."""
        if not urls:
            return 0
        first = self._next_ordinal
        if first + len(urls) >= ORDINAL_LIMIT:
            raise BadInput("the frontier's 48-bit ordinals are spent")
        batch_queues, slots, caps = self._queues_of(self.assignment.class_keys(urls))
        keys = pending_keys([q.prefix for q in batch_queues], slots, directive, precedence, self._key_ordinal(first),
                            -1 if self.lifo else 1)
        if txn is not None:
            self._insert(keys, values, caps, txn)
        else:
            with self.env.begin() as own:
                self._insert(keys, values, caps, own)
        self._next_ordinal = first + len(urls)
        order = bytes((directive, min(precedence, MAX_PRECEDENCE)))

        def early(queue: WorkQueue, slot: int) -> list[int]:
            # Keys that sort before what was read ahead join the buffer: those of a more urgent
            # order, and for lifo those of the same order too (a new ordinal is smaller than any
            # read). First in, first out, a new ordinal is larger than any read: this is rare.
            head = queue.read_through[len(queue.prefix):len(queue.prefix) + 2]
            before = order <= head if self.lifo else order < head
            return np.flatnonzero(slots == slot).tolist() if before else []

        self._admit(batch_queues, slots, keys, values, early)
        self.totals["enqueued"] += len(urls)
        return len(urls)

    def _queues_of(self, class_keys: Sequence[str]) -> tuple[list[WorkQueue], np.ndarray, list[bytes]]:
        """(the batch's distinct queues, each URL's slot among them, the caps of new queues)."""
        slot_of: dict[str, int] = {}
        slots = np.array([slot_of.setdefault(k, len(slot_of)) for k in class_keys], dtype=np.int64)
        batch_queues: list[WorkQueue] = []
        caps: list[bytes] = []
        for class_key in slot_of:
            queue = self.queues.get(class_key)
            if queue is None:
                queue = self._queue(class_key)
                caps.append(queue.prefix)
            batch_queues.append(queue)
        return batch_queues, slots, caps

    def _admit(self, batch_queues: list[WorkQueue], slots: np.ndarray, keys: tuple[bytes, np.ndarray],
               values: tuple[bytes, np.ndarray], early) -> None:
        """Count written URLs into their queues, once per queue: ``early(queue, slot)`` names
        the rows of the queue's slot that sort before what it has read ahead (they join its
        buffer); it is asked only of queues that have read ahead."""
        now = self.clock()
        for slot, (queue, count) in enumerate(zip(batch_queues, np.bincount(slots).tolist())):
            was_empty = queue.count == 0
            queue.count += count
            if queue.read_through is not None:
                self._buffer_early(queue, keys, values, early(queue, slot))
                self._trim(queue)
            if was_empty and queue.state == EMPTY:
                self._settle(queue, now)

    def restore(self, entries: Sequence[tuple[str, int, int, int, bytes]]) -> int:
        """Put URLs back at exact places: each entry is (class key, directive, precedence,
        ordinal, pending value), as another frontier held it (a Heritrix crawl's ``pending``,
        see :mod:`pycrawler.heritrix.migrate`). Returns how many were written.

        No Visited check: the URLs are already in the seen set they came with. The batch is
        written in one transaction and one Java call; later ordinals of this frontier start
        above the largest restored one, so new URLs queue behind them. A key the frontier
        holds already is refused (the batch is then not written)."""
        self._require_writable()
        entries = list(entries)
        if not entries:
            return 0
        for _, directive, precedence, ordinal, _ in entries:
            if not (0 <= directive <= MAX_PRECEDENCE and 0 <= precedence and 0 <= ordinal < ORDINAL_LIMIT):
                raise BadInput(f"a restored URL needs directive 0..{MAX_PRECEDENCE}, precedence >= 0 and a "
                               f"48-bit ordinal; got {directive}, {precedence}, {ordinal}")
        prefixes: dict[str, bytes] = {}
        key_list = [pending_key(prefixes.get(class_key) or prefixes.setdefault(class_key, queue_prefix(class_key)),
                                directive, precedence, ordinal)
                    for class_key, directive, precedence, ordinal, _ in entries]
        with self._lock:
            if len(set(key_list)) < len(key_list):
                raise BadInput("restore was given two URLs for one place (same queue, directive, precedence, ordinal)")
            keys, values = pack(key_list), pack([e[4] for e in entries])
            with self.env.begin() as txn:
                held = np.flatnonzero(self.pending.contains_many(keys, txn=txn))
                if len(held):
                    queue, _, _, ordinal, _ = entries[held[0]]
                    raise BadInput(f"restore would overwrite {len(held)} pending URLs of {self.env.path} (the first: "
                                   f"queue {queue!r}, ordinal {ordinal})")
                batch_queues, slots, caps = self._queues_of([e[0] for e in entries])
                self._insert(keys, values, caps, txn)
            self._next_ordinal = max(self._next_ordinal, max(e[3] for e in entries) + 1)

            def early(queue: WorkQueue, slot: int) -> list[int]:
                data, offsets = keys
                return [i for i in np.flatnonzero(slots == slot).tolist()
                        if data[offsets[i]:offsets[i + 1]] < queue.read_through]

            self._admit(batch_queues, slots, keys, values, early)
            self.totals["restored"] += len(entries)
            return len(entries)

    def _insert(self, keys: tuple[bytes, np.ndarray], values: tuple[bytes, np.ndarray], caps: list[bytes],
                txn) -> None:
        """Write the packed pending records, and an empty cap record per new queue."""
        if caps:
            cap_data, cap_offsets = pack(caps)
            keys = keys[0] + cap_data, np.concatenate([keys[1], cap_offsets[1:] + keys[1][-1]])
            values = values[0], np.concatenate([values[1], np.full(len(caps), values[1][-1], dtype=np.int32)])
        work_queues, jbytes, jints = self._java
        with je_errors(f"{self.env.path} database {PENDING!r}"):
            work_queues.enqueue(self.pending.java, txn.java, jbytes(keys[0]), jints(keys[1]), jbytes(values[0]),
                                jints(values[1]))

    @staticmethod
    def _buffer_early(queue: WorkQueue, keys: tuple[bytes, np.ndarray], values: tuple[bytes, np.ndarray],
                      rows: list[int]) -> None:
        (key_data, key_offsets), (value_data, value_offsets) = keys, values
        for i in rows:
            bisect.insort(queue.buffer, (key_data[key_offsets[i]:key_offsets[i + 1]],
                                         value_data[value_offsets[i]:value_offsets[i + 1]]))

    def _trim(self, queue: WorkQueue) -> None:
        """Keep a queue's read-ahead within ``2 * prefetch`` records: under ``lifo`` every new
        URL of the head's order joins it, which would otherwise hold the queue's growth in RAM.
        The records cut off stay in ``pending``, after the new ``read_through``, to be read
        again (:meth:`next_batch` commits finished URLs first, so none of those is read back)."""
        if self.lifo and len(queue.buffer) > 2 * self.prefetch:
            del queue.buffer[self.prefetch:]
            queue.read_through = queue.buffer[-1][0]

    # -- next -------------------------------------------------------------------------------------
    def next_batch(self, n: int, now: float | None = None) -> list[CrawlUrl]:
        """Up to ``n`` URLs, each from a different ready queue; fewer (or none) when fewer
        queues are ready. Each stays in process until :meth:`completed`."""
        self._require_writable()
        with self._lock:
            now = self.clock() if now is None else now
            if self._finished_keys and now - self._first_uncommitted >= self.commit_interval:
                self._commit()
            self._wake(now)
            chosen: list[WorkQueue] = []
            while len(chosen) < n and self._ready:
                queue = self._ready.popleft()
                if queue.state != READY:
                    continue
                group = queue.group
                if group is not None and (group.busy or group.wake > now):
                    self._hold_for_group(queue, group, now)
                    continue
                queue.state = IN_PROCESS
                if group is not None:
                    group.busy = True
                chosen.append(queue)
            reads = [q for q in chosen if not q.buffer and q.unread() > 0]
            if reads and self.lifo and self._finished_keys:
                # A trimmed read-ahead can sit before finished URLs whose deletion is not
                # committed yet: commit it, so the read does not hand them out again.
                self._commit()
            self._read_heads(reads)
            out = []
            for queue in chosen:
                if not queue.buffer:  # the counters promised URLs the store does not hold
                    queue.count = 0
                    self._release_group(queue, now, 0.0)
                    self._settle(queue, now)
                    continue
                key, value = queue.in_process = queue.buffer.pop(0)
                record = decode_entry(value)
                self._out[record.ori_url] = queue
                out.append(record)
            self.totals["handed_out"] += len(out)
            return out

    def next(self, now: float | None = None) -> CrawlUrl | None:
        """One URL from a ready queue; None when no queue is ready (see :meth:`wait_time`)."""
        batch = self.next_batch(1, now)
        return batch[0] if batch else None

    def poll(self, n: int, now: float | None = None) -> tuple[list[CrawlUrl], float | None]:
        """(:meth:`next_batch`, :meth:`wait_time`): what an event loop needs in one call."""
        batch = self.next_batch(n, now)
        return batch, self.wait_time(now)

    def wait_time(self, now: float | None = None) -> float | None:
        """Seconds until a queue can hand out a URL: 0 when one is ready now; None when
        nothing will wake by itself (every queue is empty, retired, inactive or in process)."""
        with self._lock:
            now = self.clock() if now is None else now
            while self._ready and self._ready[0].state != READY:
                self._ready.popleft()
            if self._ready:
                return 0.0
            heap = self._snoozed
            while heap and not (heap[0][2].state == SNOOZED and heap[0][2].wake == heap[0][0]):
                heapq.heappop(heap)
            return max(0.0, heap[0][0] - now) if heap else None

    def _hold_for_group(self, queue: WorkQueue, group: _Group, now: float) -> None:
        if group.busy:
            queue.state = SNOOZED
            group.waiting.append(queue)
        else:
            queue.wake = group.wake
            self._settle(queue, now)

    def _release_group(self, queue: WorkQueue, now: float, delay: float) -> None:
        group = queue.group
        if group is None:
            return
        group.busy = False
        group.wake = now + delay
        waiting, group.waiting = group.waiting, []
        for other in waiting:
            if other.state == SNOOZED:
                other.wake = max(other.wake, group.wake)
                self._settle(other, now)

    def _read_heads(self, queues: list[WorkQueue]) -> None:
        """Fill the read-ahead buffers of ``queues`` in one Java call."""
        if not queues:
            return
        queues.sort(key=lambda q: q.prefix)
        prefixes = pack([q.prefix for q in queues])
        after = pack([q.read_through or b"" for q in queues])
        work_queues, jbytes, jints = self._java
        counts = jints(len(queues))
        with je_errors(f"{self.env.path} database {PENDING!r}"):
            page = work_queues.heads(self.pending.java, jbytes(prefixes[0]), jints(prefixes[1]), jbytes(after[0]),
                                     jints(after[1]), self.prefetch, counts)
        keys = unpack(page[0].data, page[0].offsets)
        values = unpack(page[1].data, page[1].offsets)
        at = 0
        for queue, got in zip(queues, np.asarray(counts).tolist()):
            if got:
                queue.buffer.extend(zip(keys[at:at + got], values[at:at + got]))
                queue.read_through = keys[at + got - 1]
                at += got

    # -- completed ------------------------------------------------------------------------------
    def completed(self, url: str | CrawlUrl, outcome: Outcome | None = None, now: float | None = None) -> bool:
        """Finish a URL that :meth:`next` handed out; True when its outcome is final.

        A transient failure (``Outcome.retry``) leaves the URL at the head of its queue and
        snoozes the queue for the backoff; after ``politeness.max_retries`` it becomes a final
        failure. Finished URLs are deleted in group commits: after ``commit_every``
        completions, at the first :meth:`next_batch` ``commit_interval`` seconds later, or at
        :meth:`flush` / :meth:`close`. A URL finished but not yet committed when the process
        dies is handed out again after the restart (it counts as in process);
        :meth:`completed_many` commits before it returns."""
        with self._lock:
            final = self._complete(url, outcome or Outcome(), self.clock() if now is None else now)
            if len(self._finished_keys) + len(self._retry_writes) >= self.commit_every:
                self._commit()
            return final

    def completed_many(self, items: Iterable[tuple[str | CrawlUrl, Outcome]], now: float | None = None,
                       txn=None) -> int:
        """:meth:`completed` for a batch, committed (durable) when it returns, or written in
        ``txn``, which then commits it with the caller's own writes; returns how many
        outcomes were final."""
        with self._lock:
            now = self.clock() if now is None else now
            finals = sum(self._complete(url, outcome, now) for url, outcome in items)
            self._commit(txn=txn)
            return finals

    def _complete(self, url: str | CrawlUrl, outcome: Outcome, now: float) -> bool:
        self._require_writable()
        name = url.ori_url if isinstance(url, CrawlUrl) else url
        queue = self._out.pop(name, None)
        if queue is None or queue.in_process is None:
            raise BadInput(f"{name!r} is not in process (handed out by next() and not completed)")
        key, value = queue.in_process
        queue.in_process = None
        if not self._finished_keys and not self._retry_writes:
            self._first_uncommitted = now
        kind = outcome.kind
        delay = self.politeness.delay(outcome.fetch_seconds, outcome.crawl_delay)
        if kind == RETRY:
            attempts = self._attempts.get(key, 0) + 1
            if attempts <= self.politeness.max_retries:
                self._attempts[key] = self._retry_writes[key] = attempts
                bisect.insort(queue.buffer, (key, value))
                self.totals["retried"] += 1
                self._after_fetch(queue, now, max(delay, self.politeness.backoff(attempts)))
                return False
            kind = FAILURE
        if self._attempts.pop(key, None) is not None:
            self._retry_writes[key] = None
        self._finished_keys.append(key)
        queue.count -= 1
        queue.fetched += 1
        if kind == SUCCESS:
            queue.succeeded += 1
        else:
            queue.failed += 1
        self.totals[kind] += 1
        self._dirty.add(queue)
        self._after_fetch(queue, now, delay)
        return True

    def _after_fetch(self, queue: WorkQueue, now: float, delay: float) -> None:
        queue.wake = now + delay if delay > 0 else 0.0
        self._release_group(queue, now, delay)
        queue.state = SNOOZED  # not READY: _settle decides from the counters and the wake time
        self._settle(queue, now)

    def _commit(self, records: bool = False, txn=None) -> None:
        """Write the finished URLs' deletions and retry counts in one transaction (``txn``, or
        one of its own), with the touched queues' records when ``records`` or
        ``record_interval`` has passed.

        Why the records wait: one record per finished URL would double the writes of the hot
        path; what a crash can lose is a few seconds of the fetch counters (a budget may allow
        that many extra fetches), never a URL."""
        now = self.clock()
        records = records or now - self._records_written >= self.record_interval
        if not (self._finished_keys or self._retry_writes or (records and self._dirty)):
            return
        retry_put = [(k, bytes((a,))) for k, a in self._retry_writes.items() if a is not None]
        retry_drop = [k for k, a in self._retry_writes.items() if a is None]
        dirty = sorted(self._dirty, key=lambda q: q.prefix) if records else []
        with contextlib.nullcontext(txn) if txn is not None else self.env.begin() as txn:
            if self._finished_keys:
                self.pending.delete_many(pack(self._finished_keys), txn=txn)
            if retry_put:
                self.retry_records.put_many(pack([k for k, _ in retry_put]), pack([v for _, v in retry_put]), txn=txn)
            if retry_drop:
                self.retry_records.delete_many(pack(retry_drop), txn=txn)
            if dirty:
                self.queue_records.put_many(pack([q.prefix[:-1] for q in dirty]), pack([q.record() for q in dirty]),
                                            txn=txn)
        self._finished_keys, self._retry_writes = [], {}
        if records:
            self._dirty, self._records_written = set(), now

    def flush(self) -> None:
        """Commit every completion recorded so far, and resolve an asynchronous Visited
        table's queued checks (DRUM), enqueueing the URLs it calls new."""
        with self._lock:
            if not self.read_only:
                if self.visited is not None:
                    with self._delivering() as txn:
                        self.visited.flush(txn=txn)
                self._commit(records=True)

    # -- the TODO protocol ---------------------------------------------------------------------------
    def put_urls(self, batch: Iterable[CrawlUrl]) -> int:
        """:meth:`schedule` the records; returns how many were given (duplicates included)."""
        batch = list(batch)
        self.schedule(batch)
        return len(batch)

    def get_next_batch(self, n: int) -> list[CrawlUrl]:
        """Up to ``n`` URLs from ready queues, round after round, each finished as it is
        returned (removed for good, as the book's ``getNext`` does)."""
        out: list[CrawlUrl] = []
        while len(out) < n and (batch := self.next_batch(n - len(out))):
            self.completed_many((record, Outcome.success()) for record in batch)
            out += batch
        return out

    # -- budgets ------------------------------------------------------------------------------------
    def set_queue_budget(self, budget: int | None) -> None:
        """Change the per-queue fetch budget; retired queues under the new budget come back."""
        with self._lock:
            self.queue_budget = budget
            now = self.clock()
            for queue in list(self.queues.values()):
                if queue.in_process is None and queue.state in (RETIRED, READY, SNOOZED):
                    self._settle(queue, now)

    # -- inspection -----------------------------------------------------------------------------
    def __len__(self) -> int:
        """URLs not finished (waiting or in process)."""
        return sum(q.count for q in self.queues.values())

    def in_process(self) -> int:
        return len(self._out)

    def stats(self) -> dict:
        """Queues and URLs by state, and totals of this run."""
        by_state = {name: {"queues": 0, "urls": 0} for name in STATE_NAMES}
        with self._lock:
            for queue in self.queues.values():
                entry = by_state[STATE_NAMES[queue.state]]
                entry["queues"] += 1
                entry["urls"] += queue.count
            return {"layout": self.layout, "assignment": self.assignment.name,
                    "canonicalizer": self.canonicalizer.name, "queues": len(self.queues),
                    "pending": sum(e["urls"] for e in by_state.values()), "in_process": len(self._out),
                    "by_state": by_state, "totals": dict(self.totals)}

    def queue_table(self, limit: int | None = None) -> list[tuple[str, str, int, int]]:
        """(class key, state, URLs, fetched) of the largest queues first."""
        with self._lock:
            rows = sorted(self.queues.values(), key=lambda q: (-q.count, q.class_key))
            return [(q.class_key, q.state_name, q.count, q.fetched) for q in rows[:limit]]

    def _require_writable(self) -> None:
        if self.read_only:
            raise BadInput(f"{self.env.path} is open read-only")

    # -- life cycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Commit, write every queue's record and the clean-close marker, release the store
        (the environment too when :meth:`open` made it). Idempotent."""
        with self._lock:
            if self.env.closed:
                return
            if not self.read_only:
                self.flush()
                queues = sorted(self.queues.values(), key=lambda q: q.prefix)
                with self.env.begin() as txn:
                    if queues:
                        self.queue_records.put_many(pack([q.prefix[:-1] for q in queues]),
                                                    pack([q.record() for q in queues]), txn=txn)
                    self.meta.put(_CLEAN, _NEXT_ORDINAL.pack(self._next_ordinal), txn=txn)
            if self.visited is not None and self._owns_visited:
                self.visited.close()
            if self._owns_env:
                self.env.close()

    def __enter__(self) -> "WorkQueueFrontier":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<WorkQueueFrontier {self.assignment.name} in {str(self.env.path)!r}: "
                f"{len(self.queues)} queues>")


def open_store(path: str | os.PathLike, *, read_only: bool = False, **options) -> WorkQueueFrontier | None:
    """The work-queue frontier in the directory ``path``, or served at the address ``path``
    (``py4j://``: read-only only, see :class:`WorkQueueFrontier`); None when there is no JE
    environment or one without a ``pending`` database (another kind of store)."""
    from .. import store
    from ..store.gateway_address import is_address
    from ..store.logfile import jdb_files

    if is_address(str(path)):
        env = store.open(str(path), read_only=read_only)
        try:
            frontier = WorkQueueFrontier(env, **options) if PENDING in env.database_names() else None
        except BaseException:
            env.close()
            raise
        if frontier is None:
            env.close()
            return None
        frontier._owns_env = True
        return frontier
    if not (os.path.isdir(path) and jdb_files(path)):
        return None
    with Environment(path, read_only=True) as env:
        if PENDING not in env.database_names():
            return None
    return WorkQueueFrontier.open(path, read_only=read_only, **options)
