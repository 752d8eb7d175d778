"""The work-queue frontier's hand-out path: URLs out of ready queues, and their completions
back in.

:meth:`HandOutPath.next_batch` takes one URL from each of up to ``n`` ready queues, reading
the heads of those whose read-ahead is empty in one Java call
(``org.pycrawler.bridge.WorkQueues.heads``); a URL stays in ``pending`` while in process, so
a kill -9 loses none. :meth:`HandOutPath.completed` finishes it: the queue snoozes for its
politeness delay (or its retry backoff), and the deletion is group-committed
(:meth:`HandOutPath._commit`).

A crawl that makes its completions durable later, in its own flush (after the page's outputs
and links), calls :meth:`HandOutPath.release` as each fetch ends: the queue snoozes and hands
out its next URL then, not a flush later, while the finished URL stays in ``pending`` until
its completion is committed (one host at ``--delay 0`` waited a flush per page: ~40 pages/s).
"""

from __future__ import annotations

import bisect
import collections
import contextlib
import heapq
from collections.abc import Iterable

import numpy as np

from ..errors import BadInput
from ..records.crawl_url import CrawlUrl
from ..store.java_errors import je_errors
from ..store.packing import pack, unpack
from .pending_records import decode_entry
from .politeness import FAILURE, RETRY, SUCCESS, Outcome
from .queue_records import IN_PROCESS, PENDING, READY, SNOOZED, QueueStates, WorkQueue


class HandOutPath(QueueStates):
    """Hand-out and completion for :class:`~pycrawler.frontier.workqueues.WorkQueueFrontier`."""

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
        at, again = 0, []
        for queue, got in zip(queues, np.asarray(counts).tolist()):
            if got:
                rows = zip(keys[at:at + got], values[at:at + got])
                if self._released_keys:
                    # A lifo read-ahead trimmed back can read again a released URL whose
                    # completion is not committed yet: it is finished, not to hand out.
                    rows = [row for row in rows if row[0] not in self._released_keys]
                    if not rows:
                        again.append(queue)  # all it read was released: read on past it
                queue.buffer.extend(rows)
                queue.read_through = keys[at + got - 1]
                at += got
        self._read_heads(again)

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

    def release(self, url: str | CrawlUrl, outcome: Outcome | None = None, now: float | None = None) -> None:
        """The fetch of a URL :meth:`next` handed out is over: its queue snoozes for the
        politeness delay (or the retry backoff) from now and then hands out its next URL, as
        :meth:`completed` would; but nothing is written: the URL stays in ``pending`` (a kill
        hands it out again after the restart) until :meth:`completed` or :meth:`completed_many`
        names it with the same outcome and commits its completion."""
        with self._lock:
            self._require_writable()
            name = url.ori_url if isinstance(url, CrawlUrl) else url
            key, final, attempts = self._end_fetch(name, outcome or Outcome(), self.clock() if now is None else now)
            self._released.setdefault(name, collections.deque()).append((key, final, attempts))
            if final:
                self._released_keys.add(key)

    def _complete(self, url: str | CrawlUrl, outcome: Outcome, now: float) -> bool:
        self._require_writable()
        name = url.ori_url if isinstance(url, CrawlUrl) else url
        released = self._released.get(name)
        if released:
            key, final, attempts = released.popleft()
            if not released:
                del self._released[name]
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
        queue = self._out.pop(name, None)
        if queue is None or queue.in_process is None:
            raise BadInput(f"{name!r} is not in process (handed out by next() and not completed)")
        key, value = queue.in_process
        queue.in_process = None
        kind = outcome.kind
        delay = self.politeness.delay(outcome.fetch_seconds, outcome.crawl_delay)
        if kind == RETRY:
            attempts = self._attempts.get(key, 0) + 1
            if attempts <= self.politeness.max_retries:
                self._attempts[key] = attempts
                bisect.insort(queue.buffer, (key, value))
                self.totals["retried"] += 1
                self._after_fetch(queue, now, max(delay, self.politeness.backoff(attempts)))
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
