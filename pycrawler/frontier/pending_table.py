"""The ``pending`` database as the work queues use it: batches written and queue heads read
in one Java call each (``org.pycrawler.bridge.WorkQueues``), and each queue's read-ahead
buffer kept in key order and bounded.

Both paths of the frontier share one :class:`PendingTable`: the schedule path
(:mod:`.schedule_path`) writes through it, the hand-out path (:mod:`.handout_path`) reads
through it; deletions are ordinary batch writes of the hand-out path's commit.
"""

from __future__ import annotations

import bisect
import functools

import numpy as np

from .. import jvm
from ..store.java_errors import je_errors
from ..store.packing import pack, unpack_java
from .queue_records import PENDING, WorkQueue


class PendingTable:
    """Writes and head reads of the ``pending`` database, and the read-ahead they fill.

    What it guarantees: a queue's ``buffer`` holds records of its head in key order, none
    past ``read_through`` unread in between; what joins the queue and sorts before
    ``read_through`` is put into the buffer (:meth:`buffer_early`), so the hand-out path never
    skips it; under ``lifo`` a buffer is cut back to ``prefetch`` records once it holds twice
    as many (:meth:`buffer_early`), the rest staying in ``pending`` to be read again."""

    def __init__(self, env, database, *, prefetch: int, lifo: bool):
        self.env = env
        self.database = database
        self.prefetch = prefetch
        self.lifo = lifo

    @functools.cached_property
    def _java(self):
        """The bridge's ``WorkQueues`` and the Java array makers, for the calls that write and
        read ahead beside JE (a frontier read through a gateway makes none)."""
        return jvm.jclass("org.pycrawler.bridge.WorkQueues"), jvm.byte_array, jvm.int_array

    def insert(self, keys: tuple[bytes, np.ndarray], values: tuple[bytes, np.ndarray], caps: list[bytes],
               txn) -> None:
        """Write the packed pending records, and an empty cap record per new queue, in ``txn``."""
        if caps:
            cap_data, cap_offsets = pack(caps)
            keys = keys[0] + cap_data, np.concatenate([keys[1], cap_offsets[1:] + keys[1][-1]])
            values = values[0], np.concatenate([values[1], np.full(len(caps), values[1][-1], dtype=np.int32)])
        work_queues, jbytes, jints = self._java
        with je_errors(f"{self.env.path} database {PENDING!r}"):
            work_queues.enqueue(self.database.java, txn.java, jbytes(keys[0]), jints(keys[1]), jbytes(values[0]),
                                jints(values[1]))

    def read_heads(self, queues: list[WorkQueue], skip: set[bytes]) -> None:
        """Fill the read-ahead buffers of ``queues`` in one Java call, leaving out the keys in
        ``skip`` (finished, their deletion not committed yet); a queue that read only such
        keys reads on past them."""
        if not queues:
            return
        queues.sort(key=lambda q: q.prefix)
        prefixes = pack([q.prefix for q in queues])
        after = pack([q.read_through or b"" for q in queues])
        work_queues, jbytes, jints = self._java
        counts = jints(len(queues))
        with je_errors(f"{self.env.path} database {PENDING!r}"):
            page = work_queues.heads(self.database.java, jbytes(prefixes[0]), jints(prefixes[1]), jbytes(after[0]),
                                     jints(after[1]), self.prefetch, counts)
        keys = unpack_java(page[0])
        values = unpack_java(page[1])
        at, again = 0, []
        for queue, got in zip(queues, np.asarray(counts).tolist()):
            if got:
                rows = zip(keys[at:at + got], values[at:at + got])
                if skip:
                    rows = [row for row in rows if row[0] not in skip]
                    if not rows:
                        again.append(queue)
                queue.buffer.extend(rows)
                queue.read_through = keys[at + got - 1]
                at += got
        self.read_heads(again, skip)

    def buffer_early(self, queue: WorkQueue, keys: tuple[bytes, np.ndarray], values: tuple[bytes, np.ndarray],
                     rows: list[int]) -> None:
        """Put the written ``rows`` of the packed ``keys`` / ``values`` that sort before what
        ``queue`` has read ahead into its buffer, then keep the buffer within bounds."""
        (key_data, key_offsets), (value_data, value_offsets) = keys, values
        for i in rows:
            bisect.insort(queue.buffer, (key_data[key_offsets[i]:key_offsets[i + 1]],
                                         value_data[value_offsets[i]:value_offsets[i + 1]]))
        # Under lifo every new URL of the head's order joins the buffer, which would otherwise
        # hold the queue's growth in RAM. What is cut off is read again later (the hand-out
        # path commits finished URLs before such a read, so none of those is read back).
        if self.lifo and len(queue.buffer) > 2 * self.prefetch:
            del queue.buffer[self.prefetch:]
            queue.read_through = queue.buffer[-1][0]
