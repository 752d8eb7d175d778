"""Failpoints: named places at the durable steps, where a crash test kills the process.

A durable step (a commit, a rename, a file removed after a commit) is only proven safe by
dying on each side of it. Each such place calls :func:`hit` with its name; a test names one
point, and the hit at which to die, in the environment of the process it starts::

    PYCRAWLER_FAILPOINT=drum.merge.committed:2   # SIGKILL at the second pass through that point

The process then sends itself SIGKILL, which is what ``kill -9`` from outside does, at exactly
that instant, with no handler, ``finally`` or ``atexit`` run. ``PYCRAWLER_FAILPOINT_TRACE=FILE``
appends the name of every point passed, one a line, so a harness learns which points a run
crosses and how often (the points of one mode differ from another's).

Off, a point costs one call of a function that returns at once: the variables are read once,
at import, and :func:`hit` is bound to a no-op. Points sit at per-flush or per-batch steps,
never per record.

:data:`POINTS` names every point; a test holds the code and this list to each other.
"""

from __future__ import annotations

import os
import signal

POINTS: dict[str, str] = {
    # filled in as the points are placed: name -> the durable step it sits at
    "bloom.create.written": "a new Bloom file written and reserved under its temporary name, before the rename",
    "bloom.create.renamed": "a new Bloom file renamed into place and its folder synced",
    "crawl.settings_written": "start-up: crawl.json written (atomically), the JE environment not yet opened",
    "je.recovered": "a writable JE environment opened: JE's recovery done, nothing written by its caller yet",
    "je.closing": "a writable JE environment's databases closed, JE's own close (its checkpoint) not yet run",
    "je.closed": "a writable JE environment closed, its checkpoint written",
    "durable.torn_line_cut": "start-up repair: a torn last line cut off crawl.log or the trace, and synced",
    "warc.repair.cut": "start-up repair: a .open WARC file cut back to its last complete record and synced",
    "warc.repair.renamed": "start-up repair: a repaired .open WARC file renamed (deleted if it kept no record)",
    "warc.file.finished": "a WARC file complete: renamed from .open to its final name",
    "outputs.log_flushed": "a flush: crawl.log handed to the OS, the WARC file and the trace not yet",
    "flush.outputs_written": "a flush: crawl.log, WARC and trace handed to the OS (--fsync: the disk), nothing committed",
    "flush.links_enqueued": "a flush: its pages' links through the seen table and committed in the frontier, "
                            "the pages not yet done",
    "flush.links_sent": "a cluster worker's flush: links to others' hosts in Redis (or held for the outbox)",
    "flush.fetched_written": "a flush: the pages' records committed in 'fetched', their completions not yet",
    "flush.completions_committed": "a flush: the pages' completions committed (done)",
    "flush.outbox_committed": "a cluster worker's flush: completions committed with the outbox and forwarded URLs",
    "flush.fetched_announced": "a cluster worker's flush: its committed pages named to the cluster as fetched",
    "crawl.close.outputs_closed": "close: crawl.log, trace and WARC closed (no .open file left), the stores still open",
    "crawl.close.frontier_closed": "close: the frontier's queue records and clean-close marker committed",
    "marklog.logged": "a bound Bloom table: the batch's new keys logged in the enqueue's transaction, uncommitted",
    "marklog.committed": "the enqueue and its mark-log record committed, the keys not yet marked in the table",
    "marklog.marked": "the keys marked in the table, their log record not yet deleted (the next commit does)",
    "marklog.replaying": "opening: a mark-log record left by a crash replayed into the table, others may follow",
    "marklog.replayed": "opening: every mark-log record left replayed, and their deletion committed",
    "drum.bucket.aux_appended": "DRUM: a chunk's aux part appended to its bucket file, its key part not yet",
    "drum.buffers.persisted": "DRUM: every RAM buffer appended to its bucket files (a bound table: in the enqueue's "
                              "transaction, uncommitted)",
    "drum.merge.written": "DRUM: a bucket's merge written in the caller's transaction (unbound: committed on its "
                          "own), its outcomes not yet dispatched",
    "drum.round.merged": "DRUM: every bucket of a round merged and its new URLs enqueued, the transaction uncommitted",
    "drum.merge.committed": "DRUM: a merge committed, its bucket files not yet removed",
    "drum.merge.kv_removed": "DRUM: a merged bucket's key file removed, its aux file not yet",
    "cluster.split.sent": "host splitting: the waiting links and fetched keys are in Redis, their pages not yet completed",
    "cluster.split.acked": "host splitting: deliveries acknowledged and deleted from this worker's stream",
    "cluster.split.rerouted": "host splitting: a departed worker's stream moved to the URLs' owners",
    "cluster.central.sent": "central: a flush's links are frames in the network's inbox, the pages not yet completed",
    "cluster.central.forwarded": "central: polled URLs of moved hosts are in their owner's task pool",
    "cluster.central.acked": "central: deliveries recorded in finish_URL, acknowledged and deleted",
    "cluster.central.committed": "central host: pool changes, frames sent and inbox acknowledgement committed",
    "cluster.arrivals.committed": "links from other workers committed in the frontier, not yet acknowledged",
    "cluster.forwarded.rescheduled": "forwarded URLs that came back scheduled, not yet removed from 'forwarded'",
    "cluster.outbox.committed": "a flush outside the crawl's flush: what Redis did not take committed to the outbox",
    "import.pending.restored": "heritrix/crawler4j import, heritrix rescue: a batch of pending URLs committed in "
                               "the new frontier",
    "import.seen.added": "heritrix/crawler4j import, heritrix rescue: a batch of seen keys added to the new seen "
                         "table",
    "folder.build.written": "import, rescue or store migrate: the new folder whole and synced as DIR.part, before the "
                            "rename",
    "folder.build.renamed": "import, rescue or store migrate: DIR.part renamed to DIR, its parent folder not yet "
                            "synced",
    "store.migrate.committed": "store migrate's writer: a batch of records committed in DST.part",
    "store.load.committed": "store load: a batch of records committed",
}
"""Every failpoint's name and the step it guards."""

ARM_VARIABLE = "PYCRAWLER_FAILPOINT"
TRACE_VARIABLE = "PYCRAWLER_FAILPOINT_TRACE"


_dies_with: list[int] = []


def kill_with(pid: int) -> None:
    """In a process that works for ``pid`` (a crawl's fetcher): an armed point it passes kills
    ``pid`` first, as a kill -9 of the crawl takes the crawl and its fetchers at that instant."""
    _dies_with.append(pid)


def _off(name: str) -> None:
    """A point when no failpoint is armed and no trace is asked for."""


def _armed(point: str | None, at: int, trace: str | None):
    passes = 0

    def hit(name: str) -> None:
        nonlocal passes
        if trace is not None:
            with open(trace, "a", encoding="utf-8") as out:
                out.write(name + "\n")
        if name == point:
            passes += 1
            if passes == at:
                for pid in _dies_with:
                    os.kill(pid, signal.SIGKILL)
                os.kill(os.getpid(), signal.SIGKILL)

    return hit


def _from_environment():
    spec, trace = os.environ.get(ARM_VARIABLE), os.environ.get(TRACE_VARIABLE)
    if not spec and not trace:
        return _off
    point, at = None, 1
    if spec:
        point, _, count = spec.partition(":")
        at = int(count) if count else 1
    return _armed(point, at, trace or None)


hit = _from_environment()
"""``hit(name)``: pass the failpoint ``name`` (module docstring)."""
