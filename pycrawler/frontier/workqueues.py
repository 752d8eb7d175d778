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

**In process, and why nothing is lost.** As in Heritrix, a URL handed out stays in
``pending`` until its completion is committed, so a kill -9 loses none (what the hand-out path
guarantees: :class:`~.handout_path.HandOut`); a URL enters ``pending`` only when the Visited
table calls it new (what the schedule path guarantees: :class:`~.schedule_path.Scheduler`).

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

The frontier is built from objects, each given what it depends on: the queues and the state
machine over them (:class:`~.queue_records.QueueStates`), the ``pending`` database's batch
writes, head reads and read-ahead (:class:`~.pending_table.PendingTable`), the schedule path
(:class:`~.schedule_path.Scheduler`: URLs in, through the Visited table) and the hand-out path
(:class:`~.handout_path.HandOut`: URLs out, completions back, group-committed). The two paths
share one ``QueueStates``, one ``PendingTable`` and the frontier's lock; this module opens,
restarts, inspects and closes the whole, and its methods hand each call to the object that
owns it.
"""

from __future__ import annotations

import collections
import os
import struct
import threading
import time
from collections.abc import Iterable, Sequence

import numpy as np

from ..errors import BadInput
from ..keys.canon import Canonicalizer, get_canonicalizer
from ..keys.schemes import DEFAULT_SEEN_KEY, SeenKeyScheme, get_seen_key_scheme
from ..records.crawl_url import CrawlUrl
from ..seen.protocol import Visited
from ..seen.synchronous import SynchronousVisited
from ..store import Environment
from ..store.packing import pack
from .assignment import QueueAssignment, get_assignment
from .handout_path import HandOut
from .pending_records import ORDINAL_LIMIT
from .pending_table import PendingTable
from .politeness import Outcome, Politeness
from .protocol import TodoFrontier
from .queue_records import META, PENDING, QUEUE_RECORD, QUEUES, RETRIES, QueueStates, WorkQueue
from .schedule_path import Scheduled, Scheduler
from .todo import JE_CONFIG

_CLEAN = b"clean"
_SEEN_KEY = b"seen_key"
_CANON = b"canon"      # the canonicaliser's name; absent in a frontier made before it was recorded
_ORDER = b"order"      # b"lifo" in a frontier created last-in-first-out; absent: first-in-first-out
_NEXT_ORDINAL = struct.Struct(">Q")  # the value of _CLEAN


class WorkQueueFrontier(TodoFrontier):
    """Heritrix-style politeness frontier on an open :class:`~pycrawler.store.Environment`.

    It also speaks the TODO protocol (``put_urls`` = :meth:`schedule`, ``get_next_batch`` =
    :meth:`next_batch` with each URL finished at once, the book's at-most-once ``getNext``),
    so the ``pycrawler frontier`` commands drive it like any TODO store.

    ``visited``: any :class:`~pycrawler.seen.protocol.Visited` table (Bloom, exact JE set,
    DRUM); ``assignment``: a policy or its name (:func:`.assignment.get_assignment`);
    ``seen_key``: how URLs are keyed in ``visited``, ``md5`` or ``heritrix``
    (:mod:`pycrawler.keys.schemes`; None: the scheme the store was created with, ``md5`` for
    a new one); ``canonicalizer``: ``web``, ``safe``, ``w3lib``, ``heritrix``, ``crawler4j`` or ``none``
    (:mod:`pycrawler.keys.canon`; None: the one the store was created with; for a new one the
    seen-key scheme's own, else ``web``; ``heritrix`` keys require ``heritrix``);
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
        self.assignment = get_assignment(assignment)
        self.seen_key = self._bind_seen_key(seen_key, fresh=PENDING not in names)
        self.lifo = self._bind_order(lifo, fresh=PENDING not in names)
        self.canonicalizer = self._bind_canonicalizer(canonicalizer, fresh=PENDING not in names)
        self.politeness = politeness or Politeness()
        self.clock = clock
        self.totals = collections.Counter()
        self._lock = threading.RLock()
        self._owns_env = self._owns_visited = False
        self.states = QueueStates(self.assignment, queue_budget, max_active_queues)
        table = PendingTable(env, self.pending, prefetch=max(1, prefetch), lifo=self.lifo)
        attempts, next_ordinal = self._load()
        self.handout = HandOut(self.states, table, retry_records=self.retry_records,
                               queue_records=self.queue_records, politeness=self.politeness, attempts=attempts,
                               totals=self.totals, lock=self._lock, clock=clock, commit_every=commit_every,
                               commit_interval=commit_interval, record_interval=record_interval)
        self.scheduler = Scheduler(self.states, table, visited=self.visited, canonicalizer=self.canonicalizer,
                                   seen_key=self.seen_key, completions=self.handout, next_ordinal=next_ordinal,
                                   totals=self.totals, lock=self._lock, clock=clock)
        if self.visited is not None and not isinstance(self.visited, SynchronousVisited):
            self.visited.set_receiver(self.scheduler.receive)

    @classmethod
    def open(cls, path: str | os.PathLike, visited: Visited | None = None, *, create: bool = False,
             read_only: bool = False, durability: str = "write_no_sync", cache_size: int | None = None,
             **options) -> WorkQueueFrontier:
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

    def _bind_canonicalizer(self, requested: str | Canonicalizer | None, fresh: bool) -> Canonicalizer:
        """The store's canonicaliser: recorded when the frontier is created, or first opened
        after the record came in (then the caller's, a crawl's from its crawl.json, else
        ``safe``, the default before); another than the recorded one is refused afterwards (its
        keys would call seen URLs new, or new ones seen)."""
        given = requested if isinstance(requested, Canonicalizer) else None
        name = given.name if given else requested
        stored = self.meta.get(_CANON) if self.meta is not None else None
        if stored is None:
            name = self.seen_key.canonicalizer_for(name or (None if fresh else "safe"))
            if self.meta is not None and not self.read_only:
                self.meta.put(_CANON, name.encode())
        else:
            stored_name = stored.decode()
            name = self.seen_key.canonicalizer_for(name or stored_name)
            if name != stored_name:
                raise BadInput(f"{self.env.path} holds a frontier keyed on the {stored_name!r} canonical form; "
                               f"opening it with canonicalizer {name!r} would key URLs as it never did")
        return given or get_canonicalizer(name)

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

    # -- restart --------------------------------------------------------------------------------
    def _load(self) -> tuple[dict[bytes, int], int]:
        """Read the queues into :attr:`states` (settled); returns the stored retry counts and
        the next ordinal."""
        now = self.clock()
        records = {}
        if self.queue_records is not None:
            records = {k.decode("utf-8", "surrogatepass"): QUEUE_RECORD.unpack(v) for k, v in self.queue_records.items()}
        clean = self.meta.get(_CLEAN) if self.meta is not None else None
        if clean is not None:
            (next_ordinal,) = _NEXT_ORDINAL.unpack(clean)
            counts = {key: record[5] for key, record in records.items()}
        else:
            counts, next_ordinal = self._census()
        attempts = {k: v[0] for k, v in self.retry_records.items()} if self.retry_records is not None else {}
        for class_key in sorted(counts.keys() | records.keys()):
            queue = self.states.queue(class_key)
            queue.count = counts.get(class_key, 0)
            if class_key in records:
                _, queue.fetched, queue.succeeded, queue.failed, queue.wake, _ = records[class_key]
        if clean is not None and not self.read_only:
            # From here on the records' counts go stale: a crash must rebuild them.
            self.meta.delete(_CLEAN)
        for queue in self.states.queues.values():
            self.states.settle(queue, now)
        return attempts, next_ordinal

    def _census(self) -> tuple[dict[str, int], int]:
        """URLs per queue, counted over the keys of ``pending``, and the next ordinal."""
        census = self.pending.queue_census()
        next_ordinal = (ORDINAL_LIMIT - census.min_ordinal if self.lifo and census.min_ordinal >= 0
                        else census.max_ordinal + 1)
        return {p[:-1].decode("utf-8", "surrogatepass"): c
                for p, c in zip(census.prefixes, census.counts) if p.endswith(b"\x00")}, next_ordinal

    # -- the schedule path (Scheduler) ------------------------------------------------------------------
    def schedule(self, urls: Iterable[str | CrawlUrl], **options) -> Scheduled:
        """Enqueue the URLs the Visited table calls new: :meth:`.Scheduler.schedule`."""
        return self.scheduler.schedule(urls, **options)

    def keys_of(self, urls: Sequence[str]) -> np.ndarray:
        """The Visited keys of ``urls``: :meth:`.Scheduler.keys_of`."""
        return self.scheduler.keys_of(urls)

    def mark_seen(self, keys) -> None:
        """Mark URLs seen without enqueueing them: :meth:`.Scheduler.mark_seen`."""
        self.scheduler.mark_seen(keys)

    def restore(self, entries: Sequence[tuple[str, int, int, int, bytes]]) -> int:
        """Put URLs back at exact places: :meth:`.Scheduler.restore`."""
        return self.scheduler.restore(entries)

    # -- the hand-out path (HandOut) --------------------------------------------------------------------
    def next_batch(self, n: int, now: float | None = None) -> list[CrawlUrl]:
        """Up to ``n`` URLs, one per ready queue: :meth:`.HandOut.next_batch`."""
        return self.handout.next_batch(n, now)

    def next(self, now: float | None = None) -> CrawlUrl | None:
        """One URL from a ready queue; None when no queue is ready (see :meth:`wait_time`)."""
        batch = self.handout.next_batch(1, now)
        return batch[0] if batch else None

    def poll(self, n: int, now: float | None = None) -> tuple[list[CrawlUrl], float | None]:
        """(:meth:`next_batch`, :meth:`wait_time`): what an event loop needs in one call."""
        return self.handout.next_batch(n, now), self.handout.wait_time(now)

    def wait_time(self, now: float | None = None) -> float | None:
        """Seconds until a queue can hand out a URL: :meth:`.QueueStates.wait_time`."""
        return self.handout.wait_time(now)

    def completed(self, url: str | CrawlUrl, outcome: Outcome | None = None, now: float | None = None) -> bool:
        """Finish a URL handed out, group-committed: :meth:`.HandOut.completed`."""
        return self.handout.completed(url, outcome, now)

    def completed_many(self, items: Iterable[tuple[str | CrawlUrl, Outcome]], now: float | None = None,
                       txn=None) -> int:
        """Finish a batch and commit it: :meth:`.HandOut.completed_many`."""
        return self.handout.completed_many(items, now, txn)

    def release(self, url: str | CrawlUrl, outcome: Outcome | None = None, now: float | None = None) -> None:
        """End a fetch without committing it: :meth:`.HandOut.release`."""
        self.handout.release(url, outcome, now)

    def flush(self) -> None:
        """Commit every completion recorded so far, and resolve an asynchronous Visited
        table's queued checks (DRUM), enqueueing the URLs it calls new."""
        with self._lock:
            if not self.read_only:
                self.scheduler.flush()
                self.handout.commit(records=True)

    def refill(self) -> None:
        """Commit every completion recorded so far, and have an asynchronous Visited table
        resolve its queued checks until it enqueues a URL or holds none
        (:meth:`.Scheduler.refill`): what a crawl with nothing left to hand out calls."""
        with self._lock:
            if not self.read_only:
                self.scheduler.refill()
                self.handout.commit(records=True)

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
            self.states.set_budget(budget, self.clock())

    # -- inspection -----------------------------------------------------------------------------
    @property
    def queues(self) -> dict[str, WorkQueue]:
        """Class key -> its queue (:attr:`.QueueStates.queues`)."""
        return self.states.queues

    def __len__(self) -> int:
        """URLs not finished (waiting or in process)."""
        return len(self.states)

    def in_process(self) -> int:
        return len(self.handout.out)

    def stats(self) -> dict:
        """Queues and URLs by state, and totals of this run."""
        with self._lock:
            by_state = self.states.by_state()
            return {"layout": self.layout, "assignment": self.assignment.name,
                    "canonicalizer": self.canonicalizer.name, "queues": len(self.states.queues),
                    "pending": sum(e["urls"] for e in by_state.values()), "in_process": len(self.handout.out),
                    "by_state": by_state, "totals": dict(self.totals)}

    def host_queue(self, host: str) -> WorkQueue | None:
        """The queue the URLs of ``host`` (``name[:port]``, as crawl.log writes it) join, when
        the queue policy gives a host one queue (every policy but the ``bkdr`` ones: under
        ``domain`` it is the queue of the host's domain); None otherwise or when it has none."""
        if self.assignment.spreads_hosts:
            return None
        return self.states.queues.get(self.assignment.class_key(f"http://{host}/"))

    def queue_table(self, limit: int | None = None) -> list[tuple[str, str, int, int, float]]:
        """(class key, state, URLs, fetched, wake) of the largest queues first: the operator's
        console's frontier report. ``wake``: the epoch second the queue's politeness wait ends
        (its group's, when the group's ends later), past for a queue with none to wait."""
        with self._lock:
            rows = sorted(self.states.queues.values(), key=lambda q: (-q.count, q.class_key))
            return [(q.class_key, q.state_name, q.count, q.fetched,
                     max(q.wake, q.group.wake) if q.group is not None else q.wake) for q in rows[:limit]]

    # -- life cycle ---------------------------------------------------------------------------------
    def close(self) -> None:
        """Commit, write every queue's record and the clean-close marker, release the store
        (the environment too when :meth:`open` made it). Idempotent."""
        with self._lock:
            if self.env.closed:
                return
            if not self.read_only:
                self.flush()
                queues = sorted(self.states.queues.values(), key=lambda q: q.prefix)
                with self.env.begin() as txn:
                    if queues:
                        self.queue_records.put_many(pack([q.prefix[:-1] for q in queues]),
                                                    pack([q.record() for q in queues]), txn=txn)
                    if not self.handout.released:
                        # A released URL not completed is still pending, though its queue no longer
                        # counts it: the next open counts the queues again (as after a crash).
                        self.meta.put(_CLEAN, _NEXT_ORDINAL.pack(self.scheduler.next_ordinal), txn=txn)
            if self.visited is not None and self._owns_visited:
                self.visited.close()
            if self._owns_env:
                self.env.close()

    def __enter__(self) -> WorkQueueFrontier:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<WorkQueueFrontier {self.assignment.name} in {str(self.env.path)!r}: "
                f"{len(self.states.queues)} queues>")


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
