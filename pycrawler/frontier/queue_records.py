"""The work-queue frontier's queues: each queue's record and the states it moves through.

A :class:`WorkQueue` is one queue's state in RAM (a few counters, its wake time, the URL in
process and the records read ahead from its head); :meth:`WorkQueue.record` is the value the
``queues`` database keeps for it (:data:`QUEUE_RECORD`). :class:`QueueStates` owns every queue of
a frontier and moves them between the states (``ready``, ``in_process``, ``snoozed``,
``inactive``, ``retired``, ``empty``): the schedule path (:mod:`.schedule_path`) and the
hand-out path (:mod:`.handout_path`) both build on it, and
:class:`~pycrawler.frontier.workqueues.WorkQueueFrontier` joins the two on a JE environment.
"""

from __future__ import annotations

import collections
import functools
import heapq
import struct

from ..errors import BadInput
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
    """The queues of one frontier and their states: which are ready (in hand-out order),
    snoozed (a heap by wake time), inactive (waiting for an active slot), and the politeness
    groups several queues share. The frontier's ``__init__`` sets the fields this uses."""

    queues: dict[str, WorkQueue]
    _groups: dict[str, QueueGroup]
    _ready: collections.deque[WorkQueue]
    _inactive: collections.deque[WorkQueue]
    _snoozed: list[tuple[float, int, WorkQueue]]

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
                group = self._groups.get(name) or self._groups.setdefault(name, QueueGroup())
            queue = self.queues[class_key] = WorkQueue(class_key, queue_prefix(class_key), group)
        return queue

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

    def _hold_for_group(self, queue: WorkQueue, group: QueueGroup, now: float) -> None:
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

    def _require_writable(self) -> None:
        if self.read_only:
            raise BadInput(f"{self.env.path} is open read-only")
