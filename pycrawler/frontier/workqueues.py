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

The class is split by concept: each queue's record and the state machine over the queues
(:mod:`.queue_records`), the schedule path (:mod:`.schedule_path`: URLs in, through the
Visited table) and the hand-out path (:mod:`.handout_path`: URLs out, completions back);
this module opens, restarts, inspects and closes the whole.
"""

from __future__ import annotations

import collections
import os
import struct
import threading
import time
from collections.abc import Iterable

from ..errors import BadInput
from ..keys.canon import Canonicalizer, get_canonicalizer
from ..keys.schemes import DEFAULT_SEEN_KEY, SeenKeyScheme, get_seen_key_scheme
from ..records.crawl_url import CrawlUrl
from ..seen.protocol import SynchronousVisited, Visited
from ..store import Environment
from ..store.packing import pack
from .assignment import QueueAssignment, get_assignment
from .handout_path import HandOutPath
from .pending_records import ORDINAL_LIMIT
from .politeness import Outcome, Politeness
from .protocol import TodoFrontier
from .queue_records import (META, PENDING, QUEUE_RECORD, QUEUES, READY, RETIRED, RETRIES, SNOOZED, STATE_NAMES,
                            QueueGroup, WorkQueue)
from .schedule_path import SchedulePath
from .todo import JE_CONFIG

_CLEAN = b"clean"
_SEEN_KEY = b"seen_key"
_ORDER = b"order"      # b"lifo" in a frontier created last-in-first-out; absent: first-in-first-out
_NEXT_ORDINAL = struct.Struct(">Q")  # the value of _CLEAN


class WorkQueueFrontier(SchedulePath, HandOutPath, TodoFrontier):
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
        self._groups: dict[str, QueueGroup] = {}
        self._ready: collections.deque[WorkQueue] = collections.deque()
        self._inactive: collections.deque[WorkQueue] = collections.deque()
        self._snoozed: list[tuple[float, int, WorkQueue]] = []
        self._snooze_seq = 0
        self._active = 0
        self._out: dict[str, WorkQueue] = {}          # URL handed out -> its queue
        self._attempts: dict[bytes, int] = {}         # pending key -> transient failures so far
        self._finished_keys: list[bytes] = []         # completions not yet committed
        # URL -> (pending key, final, attempts) per fetch released (release()) and not completed yet
        self._released: dict[str, collections.deque[tuple[bytes, bool, int]]] = {}
        self._released_keys: set[bytes] = set()       # their pending keys, when final
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
            records = {k.decode("utf-8", "surrogatepass"): QUEUE_RECORD.unpack(v) for k, v in self.queue_records.items()}
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
                    if not self._released:
                        # A released URL not completed is still pending, though its queue no longer
                        # counts it: the next open counts the queues again (as after a crash).
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
