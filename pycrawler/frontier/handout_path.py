"""The work-queue frontier's hand-out path: URLs out of ready queues, and their completions
back in (:class:`HandOut`).

A crawl that makes its completions durable later, in its own flush (after the page's outputs
and links), calls :meth:`HandOut.release` as each fetch ends: the queue snoozes and hands out
its next URL then, not a flush later, while the finished URL stays in ``pending`` until its
completion is committed (one host at ``--delay 0`` waited a flush per page: ~40 pages/s).
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import threading
from collections.abc import Callable, Iterable

from ..errors import BadInput
from ..records.crawl_url import CrawlUrl
from ..store.packing import pack
from .pending_records import decode_entry
from .pending_table import PendingTable
from .politeness import FAILURE, RETRY, SUCCESS, Outcome, Politeness
from .queue_records import SNOOZED, QueueStates, WorkQueue, require_writable


class HandOut:
    """Hands out URLs of ready queues, takes their completions back and commits them.

    What it guarantees: at most one URL of a queue (of a politeness group) is out at a time;
    a URL handed out stays in ``pending`` while in process, and after :meth:`release` until
    its completion is committed, so a kill -9 loses none (it is handed out again after the
    restart); within the run, a URL whose outcome was final is not handed out again, its
    deletion committed or not; finished URLs are deleted in group commits (:meth:`completed`).

    Dependencies: ``states`` and ``table``, shared with the schedule path; the ``retries``
    and ``queues`` databases the commit writes; ``politeness``; ``attempts`` (pending key ->
    transient failures so far, as stored); ``totals``; ``lock``, the frontier's; ``clock``;
    the group-commit settings of
    :class:`~pycrawler.frontier.workqueues.WorkQueueFrontier`."""

    def __init__(self, states: QueueStates, table: PendingTable, *, retry_records, queue_records,
                 politeness: Politeness, attempts: dict[bytes, int], totals: collections.Counter,
                 lock: threading.RLock, clock: Callable[[], float], commit_every: int, commit_interval: float,
                 record_interval: float):
        self.states = states
        self.table = table
        self.env = table.env
        self.retry_records = retry_records
        self.queue_records = queue_records
        self.politeness = politeness
        self.totals = totals
        self.lock = lock
        self.clock = clock
        self.commit_every = commit_every
        self.commit_interval = commit_interval
        self.record_interval = record_interval
        self.out: dict[str, WorkQueue] = {}           # URL handed out -> its queue
        self._attempts = attempts
        self._finished_keys: list[bytes] = []         # completions not yet committed
        self._retry_writes: dict[bytes, int | None] = {}
        # URL -> (pending key, final, attempts) per fetch released and not completed yet
        self.released: dict[str, collections.deque[tuple[bytes, bool, int]]] = {}
        self._released_keys: set[bytes] = set()       # their pending keys, when final
        self._dirty: set[WorkQueue] = set()
        self._first_uncommitted = 0.0
        self._records_written = clock()

    def next_batch(self, n: int, now: float | None = None) -> list[CrawlUrl]:
        """Up to ``n`` URLs, each from a different ready queue; fewer (or none) when fewer
        queues are ready. Each stays in process until :meth:`completed` (or :meth:`release`)."""
        require_writable(self.env)
        with self.lock:
            now = self.clock() if now is None else now
            if self._finished_keys and now - self._first_uncommitted >= self.commit_interval:
                self.commit()
            self.states.wake(now)
            chosen = self.states.take_ready(n, now)
            reads = [q for q in chosen if not q.buffer and q.unread() > 0]
            if reads and self.table.lifo and self._finished_keys:
                # A trimmed read-ahead can sit before finished URLs whose deletion is not
                # committed yet: commit it, so the read does not hand them out again.
                self.commit()
            # A lifo read-ahead trimmed back can read again a released URL whose completion is
            # not committed yet: it is finished, not to hand out.
            self.table.read_heads(reads, self._released_keys)
            out = []
            for queue in chosen:
                if not queue.buffer:  # the counters promised URLs the store does not hold
                    queue.count = 0
                    self.states.release_group(queue, now, 0.0)
                    self.states.settle(queue, now)
                    continue
                key, value = queue.in_process = queue.buffer.pop(0)
                record = decode_entry(value)
                self.out[record.ori_url] = queue
                out.append(record)
            self.totals["handed_out"] += len(out)
            return out

    def wait_time(self, now: float | None = None) -> float | None:
        """Seconds until a queue can hand out a URL (:meth:`.QueueStates.wait_time`)."""
        with self.lock:
            return self.states.wait_time(self.clock() if now is None else now)

    def completed(self, url: str | CrawlUrl, outcome: Outcome | None = None, now: float | None = None) -> bool:
        """Finish a URL that :meth:`next_batch` handed out; True when its outcome is final.

        A transient failure (``Outcome.retry``) leaves the URL at the head of its queue and
        snoozes the queue for the backoff; after ``politeness.max_retries`` it becomes a final
        failure. Finished URLs are deleted in group commits: after ``commit_every``
        completions, at the first :meth:`next_batch` ``commit_interval`` seconds later, or at
        the frontier's :meth:`~.WorkQueueFrontier.flush` / ``close``. A URL finished but not
        yet committed when the process dies is handed out again after the restart (it counts as
        in process); :meth:`completed_many` commits before it returns."""
        with self.lock:
            final = self._complete(url, outcome or Outcome(), self.clock() if now is None else now)
            if len(self._finished_keys) + len(self._retry_writes) >= self.commit_every:
                self.commit()
            return final

    def completed_many(self, items: Iterable[tuple[str | CrawlUrl, Outcome]], now: float | None = None,
                       txn=None) -> int:
        """:meth:`completed` for a batch, committed (durable) when it returns, or written in
        ``txn``, which then commits it with the caller's own writes; returns how many
        outcomes were final."""
        with self.lock:
            now = self.clock() if now is None else now
            finals = sum(self._complete(url, outcome, now) for url, outcome in items)
            self.commit(txn=txn)
            return finals

    def release(self, url: str | CrawlUrl, outcome: Outcome | None = None, now: float | None = None) -> None:
        """The fetch of a URL :meth:`next_batch` handed out is over: its queue snoozes for the
        politeness delay (or the retry backoff) from now and then hands out its next URL, as
        :meth:`completed` would; but nothing is written: the URL stays in ``pending`` (a kill
        hands it out again after the restart) until :meth:`completed` or :meth:`completed_many`
        names it with the same outcome and commits its completion."""
        with self.lock:
            require_writable(self.env)
            name = url.ori_url if isinstance(url, CrawlUrl) else url
            key, final, attempts = self._end_fetch(name, outcome or Outcome(), self.clock() if now is None else now)
            self.released.setdefault(name, collections.deque()).append((key, final, attempts))
            if final:
                self._released_keys.add(key)

    def _complete(self, url: str | CrawlUrl, outcome: Outcome, now: float) -> bool:
        require_writable(self.env)
        name = url.ori_url if isinstance(url, CrawlUrl) else url
        released = self.released.get(name)
        if released:
            key, final, attempts = released.popleft()
            if not released:
                del self.released[name]
            self._released_keys.discard(key)
        else:
            key, final, attempts = self._end_fetch(name, outcome, now)
        if not self._finished_keys and not self._retry_writes:
            self._first_uncommitted = now
        if final:
            if attempts:  # it had failed before: its retry count goes with it
                self._retry_writes[key] = None
            self._finished_keys.append(key)
        else:
            self._retry_writes[key] = attempts
        return final

    def _end_fetch(self, name: str, outcome: Outcome, now: float) -> tuple[bytes, bool, int]:
        """Take the URL ``name`` out of process and snooze its queue; returns (its pending key,
        whether the outcome is final, its transient failures so far) for the commit."""
        queue = self.out.pop(name, None)
        if queue is None or queue.in_process is None:
            raise BadInput(f"{name!r} is not in process (handed out by next() and not completed)")
        key, value = queue.in_process
        queue.in_process = None
        kind = outcome.kind
        delay = self.politeness.delay(outcome.fetch_seconds, outcome.crawl_delay) if outcome.requested else 0.0
        if kind == RETRY:
            attempts = self._attempts.get(key, 0) + 1
            if attempts <= self.politeness.max_retries:
                self._attempts[key] = attempts
                bisect.insort(queue.buffer, (key, value))
                self.totals["retried"] += 1
                self._after_fetch(queue, now, max(delay, self.politeness.backoff(attempts, outcome.retry_after)))
                return key, False, attempts
            kind = FAILURE
        attempts = self._attempts.pop(key, 0)
        queue.count -= 1
        queue.fetched += 1
        if kind == SUCCESS:
            queue.succeeded += 1
        else:
            queue.failed += 1
        self.totals[kind] += 1
        self._dirty.add(queue)
        self._after_fetch(queue, now, delay)
        return key, True, attempts

    def _after_fetch(self, queue: WorkQueue, now: float, delay: float) -> None:
        queue.wake = now + delay if delay > 0 else 0.0
        self.states.release_group(queue, now, delay)
        queue.state = SNOOZED  # not READY: settle decides from the counters and the wake time
        self.states.settle(queue, now)

    def commit(self, records: bool = False, txn=None) -> None:
        """Write the finished URLs' deletions and retry counts in one transaction (``txn``, or
        one of its own), with the touched queues' records when ``records`` or
        ``record_interval`` has passed, or at every commit under a queue budget. Called under
        the lock.

        Why the records wait: one record per finished URL would double the writes of the hot
        path; what a crash can lose is a few seconds of the fetch counters, never a URL. Under
        a budget the counters are what retires a queue, so they are committed with the
        completions they count: a kill -9 neither forgets a fetch nor counts one twice."""
        now = self.clock()
        records = (records or self.states.queue_budget is not None
                   or now - self._records_written >= self.record_interval)
        if not (self._finished_keys or self._retry_writes or (records and self._dirty)):
            return
        retry_put = [(k, bytes((a,))) for k, a in self._retry_writes.items() if a is not None]
        retry_drop = [k for k, a in self._retry_writes.items() if a is None]
        dirty = sorted(self._dirty, key=lambda q: q.prefix) if records else []
        with contextlib.nullcontext(txn) if txn is not None else self.env.begin() as txn:
            if self._finished_keys:
                self.table.database.delete_many(pack(self._finished_keys), txn=txn)
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
