"""The work-queue frontier's queues: each queue's record and the states it moves through.

A :class:`WorkQueue` is one queue's state in RAM (a few counters, its wake time, the URL in
process and the records read ahead from its head); :meth:`WorkQueue.record` is the value the
``queues`` database keeps for it (:data:`QUEUE_RECORD`). :class:`QueueStates` is the state
machine over a frontier's queues, the one object its schedule path and hand-out path share.
"""

from __future__ import annotations

import collections
import heapq
import struct

from ..errors import BadInput
from .assignment import QueueAssignment
from .pending_records import queue_prefix

PENDING, QUEUES, RETRIES, META = "pending", "queues", "retries", "frontier_meta"

READY, IN_PROCESS, SNOOZED, INACTIVE, RETIRED, EMPTY = range(6)
STATE_NAMES = ("ready", "in_process", "snoozed", "inactive", "retired", "empty")

QUEUE_RECORD = struct.Struct(">BQQQdQ")   # version, fetched, succeeded, failed, wake (epoch s), count
QUEUE_RECORD_VERSION = 1


class QueueGroup:
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

    def __init__(self, class_key: str, prefix: bytes, group: QueueGroup | None):
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
        return QUEUE_RECORD.pack(QUEUE_RECORD_VERSION, self.fetched, self.succeeded, self.failed, self.wake, self.count)

    def __repr__(self) -> str:
        return f"<WorkQueue {self.class_key!r} {self.state_name} {self.count} URLs>"


class QueueStates:
    """The queues of one frontier and the states they move through: which are ready (in
    hand-out order), snoozed (a heap by wake time), inactive (waiting for one of
    ``max_active_queues`` active slots), retired (``queue_budget`` fetches spent) or empty, and
    the politeness groups several queues share (``bkdr-host``).

    What it guarantees: a queue with nothing in process is in exactly the state its counters
    and wake time call for (:meth:`settle`); :meth:`take_ready` hands out at most one queue of
    a group at a time; and at most ``max_active_queues`` queues hold an active slot. The
    schedule path (:class:`~.schedule_path.Scheduler`) puts queues here as URLs join them,
    the hand-out path (:class:`~.handout_path.HandOut`) takes them out and settles them again
    as fetches end; both share one instance, under the frontier's lock."""

    def __init__(self, assignment: QueueAssignment, queue_budget: int | None, max_active_queues: int | None):
        self.assignment = assignment
        self.queue_budget = queue_budget
        self.max_active_queues = max_active_queues
        self.queues: dict[str, WorkQueue] = {}
        self._groups: dict[str, QueueGroup] = {}
        self._ready: collections.deque[WorkQueue] = collections.deque()
        self._inactive: collections.deque[WorkQueue] = collections.deque()
        self._snoozed: list[tuple[float, int, WorkQueue]] = []
        self._snooze_seq = 0
        self._active = 0

    def queue(self, class_key: str) -> WorkQueue:
        """The queue of ``class_key``, made (empty) when it has none yet."""
        queue = self.queues.get(class_key)
        if queue is None:
            group = None
            if self.assignment.grouped:
                name = self.assignment.politeness_key(class_key)
                group = self._groups.get(name) or self._groups.setdefault(name, QueueGroup())
            queue = self.queues[class_key] = WorkQueue(class_key, queue_prefix(class_key), group)
        return queue

    def settle(self, queue: WorkQueue, now: float) -> None:
        """Put a queue that has nothing in process into the state its counters call for."""
        if queue.count == 0 or (self.queue_budget is not None and queue.fetched >= self.queue_budget):
            queue.state = EMPTY if queue.count == 0 else RETIRED
            self._deactivate(queue, now)
        elif not queue.active:
            if self.max_active_queues is None or self._active < self.max_active_queues:
                queue.active = True
                self._active += 1
                self.settle(queue, now)
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
                self.settle(waiting, now)

    def set_budget(self, budget: int | None, now: float) -> None:
        """Change the per-queue fetch budget; retired queues under the new budget come back."""
        self.queue_budget = budget
        for queue in list(self.queues.values()):
            if queue.in_process is None and queue.state in (RETIRED, READY, SNOOZED):
                self.settle(queue, now)

    def wake(self, now: float) -> None:
        """Settle the snoozed queues whose wake time has come."""
        heap = self._snoozed
        while heap and heap[0][0] <= now:
            wake, _, queue = heapq.heappop(heap)
            if queue.state == SNOOZED and queue.wake == wake:
                self.settle(queue, now)

    def take_ready(self, n: int, now: float) -> list[WorkQueue]:
        """Up to ``n`` ready queues, in hand-out order, each now in process (and its group
        busy); a queue whose group is busy or resting waits for the group instead."""
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
        return chosen

    def wait_time(self, now: float) -> float | None:
        """Seconds until a queue can hand out a URL: 0 when one is ready now; None when
        nothing will wake by itself (every queue is empty, retired, inactive or in process)."""
        while self._ready and self._ready[0].state != READY:
            self._ready.popleft()
        if self._ready:
            return 0.0
        heap = self._snoozed
        while heap and not (heap[0][2].state == SNOOZED and heap[0][2].wake == heap[0][0]):
            heapq.heappop(heap)
        return max(0.0, heap[0][0] - now) if heap else None

    def _hold_for_group(self, queue: WorkQueue, group: QueueGroup, now: float) -> None:
        if group.busy:
            queue.state = SNOOZED
            group.waiting.append(queue)
        else:
            queue.wake = group.wake
            self.settle(queue, now)

    def release_group(self, queue: WorkQueue, now: float, delay: float) -> None:
        """The fetch of ``queue`` is over: its group (if any) rests ``delay`` seconds from
        ``now``, and the queues that waited for it settle."""
        group = queue.group
        if group is None:
            return
        group.busy = False
        group.wake = now + delay
        waiting, group.waiting = group.waiting, []
        for other in waiting:
            if other.state == SNOOZED:
                other.wake = max(other.wake, group.wake)
                self.settle(other, now)

    def by_state(self) -> dict[str, dict[str, int]]:
        """Queues and URLs per state name."""
        by_state = {name: {"queues": 0, "urls": 0} for name in STATE_NAMES}
        for queue in self.queues.values():
            entry = by_state[STATE_NAMES[queue.state]]
            entry["queues"] += 1
            entry["urls"] += queue.count
        return by_state

    def __len__(self) -> int:
        """URLs not finished (waiting or in process), over every queue."""
        return sum(q.count for q in self.queues.values())

    def fewer_than(self, n: int) -> bool:
        """Whether fewer than ``n`` URLs are not finished: ``len(self) < n``, but stopping at the
        ``n``-th URL, for the schedule path to ask at every flush of a crawl of many queues."""
        total = 0
        for queue in self.queues.values():
            total += queue.count
            if total >= n:
                return False
        return True


def require_writable(env) -> None:
    """Refuse a change to a frontier whose environment is open read-only."""
    if env.read_only:
        raise BadInput(f"{env.path} is open read-only")
