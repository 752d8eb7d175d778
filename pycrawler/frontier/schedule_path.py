"""The work-queue frontier's schedule path: URLs in, through the Visited table, to the tails
of their queues (:class:`Scheduler`).

:meth:`Scheduler.schedule` canonicalises a batch, asks the Visited table which URLs are new (a
synchronous table at once; an asynchronous one, DRUM, later through :meth:`Scheduler.receive`)
and enqueues those in one transaction and one Java call; :meth:`Scheduler.restore` puts URLs at
exact places without the check (a Heritrix crawl's pending URLs).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import threading
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..errors import BadInput
from ..keys.canon import Canonicalizer
from ..keys.schemes import SeenKeyScheme
from ..records.crawl_url import CrawlUrl, _read_string, encode
from ..seen.protocol import Visited, as_keys
from ..seen.synchronous import SynchronousVisited
from ..store.packing import pack, unpack
from .handout_path import HandOut
from .pending_records import (DEFAULT_PRECEDENCE, MAX_PRECEDENCE, NORMAL, ORDINAL_LIMIT, encode_entries, encode_found,
                              pending_key, pending_keys, queue_prefix)
from .pending_table import PendingTable
from .queue_records import EMPTY, QueueStates, WorkQueue, require_writable


@dataclasses.dataclass
class Scheduled:
    """What one :meth:`WorkQueueFrontier.schedule` call did."""

    enqueued: int = 0      # new URLs put in queues (for an asynchronous Visited table: so far)
    duplicates: int = 0    # already seen (dropped)
    rejected: int = 0      # not absolute URLs
    unique: np.ndarray | None = None   # per URL given, True where the Visited table called it new
                                       # (synchronous tables only: an asynchronous one answers later)


class Scheduler:
    """Turns the URLs it is given into pending records at the tails of their queues.

    What it guarantees: a URL is enqueued only when the Visited table calls it new (unless
    forced), and the table's mark commits in the same transaction as the enqueue (the table
    is bound to the frontier's environment), so a crash leaves neither a URL seen but never
    queued nor one queued twice; within a queue, key order is the hand-out order (directive,
    precedence, then the ordinal this object counts: up, or down under ``lifo``).

    Dependencies: ``states`` and ``table``, shared with the hand-out path; ``visited`` (bound
    to ``table.env``), the ``canonicalizer`` and ``seen_key`` scheme that name a URL in it;
    ``assignment``, the queue of each URL; ``completions``, the hand-out path whose recorded
    completions ``schedule(with_completions=True)`` commits; ``next_ordinal``, as the store
    holds it; ``totals``; ``lock``, the frontier's; ``clock``."""

    def __init__(self, states: QueueStates, table: PendingTable, *, visited: Visited | None,
                 canonicalizer: Canonicalizer, seen_key: SeenKeyScheme, completions: HandOut, next_ordinal: int,
                 totals: collections.Counter, lock: threading.RLock, clock: Callable[[], float]):
        self.states = states
        self.table = table
        self.env = table.env
        self.visited = visited
        self.canonicalizer = canonicalizer
        self.seen_key = seen_key
        self.assignment = states.assignment
        self.completions = completions
        self.next_ordinal = next_ordinal
        self.totals = totals
        self.lock = lock
        self.clock = clock
        self._delivery = None   # the transaction an asynchronous table's results are enqueued in
        # Fewer URLs waiting than this, and an asynchronous table is asked to resolve its queued
        # checks soon (Visited.request_flush): at 500 pages/s, 8 s of fetching while DRUM merges.
        self.refill_below = 4096

    def schedule(self, urls: Iterable[str | CrawlUrl], *, layer: int = 0, directive: int = NORMAL,
                 precedence: int = DEFAULT_PRECEDENCE, force: bool = False, seen_keys=None,
                 with_completions: bool = False, layers: Sequence[int] | None = None,
                 abstract_texts: Sequence[str] | None = None) -> Scheduled:
        """Canonicalise ``urls`` (strings, or CrawlUrl records whose ``ori_url`` is the URL),
        pass them through the Visited table and enqueue the new ones, in one transaction.

        ``force`` enqueues every valid URL even when seen before (a force-fetch). Strings
        become records with ``layer``. The enqueued record's ``ori_url`` is the URL the
        canonicaliser requests (:meth:`.Canonicalizer.forms`: the URL's normal form, so each
        key has one request and the HTTP client sends it as it is). ``seen_keys``: the
        Visited keys of ``urls``, one per URL, when the caller keys them by something else than
        the canonical URL (a Scrapy request's fingerprint); None: the seen-key scheme's keys.
        ``with_completions``: commit the completions :meth:`.HandOut.completed` recorded so far
        in the same transaction (a synchronous Visited table; with an asynchronous one the URLs
        are enqueued at :meth:`flush`, after which the frontier's
        :meth:`~.WorkQueueFrontier.flush` commits the completions): one commit where
        a caller finishing a page and scheduling its links would otherwise make two.
        ``layers`` and ``abstract_texts``: per URL (strings), its record's layer and
        ``abstract_text`` (a crawl's links: depth, hop path and via), in place of a record per
        URL: the pending values are then built for the URLs the Visited table calls new only
        (an asynchronous table holds a value per URL until it answers), in one pass."""
        require_writable(self.env)
        if not 0 <= directive <= MAX_PRECEDENCE or not 0 <= precedence:
            raise BadInput(f"directive must be in 0..{MAX_PRECEDENCE} and precedence >= 0")
        if self.visited is None:
            raise BadInput("this frontier was opened without a Visited table: it cannot schedule")
        encode(CrawlUrl(ori_url="x", layer=layer))  # refuses a layer a record cannot hold
        items = list(urls)
        found = layers is not None or abstract_texts is not None
        if found and not (layers is not None and abstract_texts is not None
                          and len(layers) == len(abstract_texts) == len(items)):
            raise BadInput(f"layers and abstract_texts go together, one per URL ({len(items)})")
        originals = [item.ori_url if isinstance(item, CrawlUrl) else item for item in items]
        requested, canonical = self.canonicalizer.forms(originals)
        valid = [i for i, c in enumerate(canonical) if c is not None]
        result = Scheduled(rejected=len(items) - len(valid))
        if not valid:
            if with_completions:
                with self.lock:
                    self.completions.commit()
            return result
        if seen_keys is None:
            seen_keys = self.seen_key.keys([canonical[i] for i in valid])
        else:
            seen_keys = as_keys(seen_keys)
            if len(seen_keys) != len(items):
                raise BadInput(f"{len(seen_keys)} seen keys for {len(items)} URLs")
            seen_keys = seen_keys[valid]
        fetch_urls = [requested[i] for i in valid]

        def entries(rows: list[int]) -> tuple[list[str], tuple[bytes, np.ndarray]]:
            """(URLs, packed pending values) of the valid URLs at ``rows``: values are built
            for these alone."""
            chosen_urls = [fetch_urls[row] for row in rows]
            at = [valid[row] for row in rows]
            if found:
                return chosen_urls, encode_found(chosen_urls, [layers[i] for i in at], [abstract_texts[i] for i in at])
            return chosen_urls, encode_entries([items[i] for i in at], chosen_urls, layer)

        with self.lock:
            if isinstance(self.visited, SynchronousVisited):
                # The table's marks commit with the enqueue (it is bound to this environment).
                with self.env.begin() as txn:
                    unique = self.visited.add_many(seen_keys, txn=txn)
                    chosen = np.arange(len(valid)) if force else np.flatnonzero(unique)
                    chosen_urls, values = entries(chosen.tolist())
                    result.enqueued = self._enqueue(chosen_urls, values, directive, precedence, txn)
                    if with_completions:
                        self.completions.commit(txn=txn)
                result.duplicates = len(valid) - int(unique.sum()) if not force else 0
                result.unique = np.zeros(len(items), dtype=bool)
                result.unique[valid] = unique
            else:
                _, values = entries(list(range(len(valid))))
                with self._delivering() as txn:
                    if force:
                        result.enqueued = self._enqueue(fetch_urls, values, directive, precedence, txn)
                        self.visited.add_batch(seen_keys, txn=txn)
                    else:
                        head = bytes((directive, min(precedence, MAX_PRECEDENCE)))
                        before = self.totals["enqueued"]
                        self.visited.add_batch(seen_keys, [head + v for v in unpack(*values)], txn=txn)
                        result.enqueued = self.totals["enqueued"] - before
                if self.states.fewer_than(self.refill_below):
                    self.visited.request_flush()
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
        require_writable(self.env)
        keys = as_keys(keys)
        if not len(keys):
            return
        with self.lock, self._delivering() as txn:
            if isinstance(self.visited, SynchronousVisited):
                self.visited.add_many(keys, txn=txn)
            else:  # payload-less keys: learnt, never enqueued
                self.visited.add_batch(keys, txn=txn)

    def flush(self) -> None:
        """Make an asynchronous Visited table resolve its queued checks; what it calls new is
        enqueued (:meth:`receive`) in the transaction that writes the table's state."""
        if self.visited is not None:
            with self.lock, self._delivering() as txn:
                self.visited.flush(txn=txn)

    def refill(self) -> None:
        """Make an asynchronous Visited table resolve its queued checks a part at a time
        (:meth:`.Visited.flush_some`) until one URL is enqueued or none is left queued, in one
        transaction as :meth:`flush`: what a frontier with nothing to hand out needs, in a
        fraction of a whole flush's time."""
        if self.visited is not None:
            with self.lock, self._delivering() as txn:
                enqueued = self.totals["enqueued"]
                while self.visited.flush_some(txn=txn) and self.totals["enqueued"] == enqueued:
                    pass

    @contextlib.contextmanager
    def _delivering(self):
        """A transaction for a call to the Visited table: what the table writes, and the URLs
        it delivers as new meanwhile (enqueued by :meth:`receive`), commit together in it."""
        with self.env.begin() as txn:
            self._delivery = txn
            try:
                yield txn
            finally:
                self._delivery = None

    def receive(self, keys, aux: Sequence, unique) -> None:
        """Receiver of an asynchronous Visited table: enqueue what it calls new."""
        flags = np.asarray(unique).tolist()
        fresh = [a for a, new in zip(aux, flags) if new and a is not None]
        # Payload-less keys are forced URLs, already enqueued: neither new nor duplicates here.
        self.totals["duplicates"] += sum(1 for a, new in zip(aux, flags) if not new and a is not None)
        by_order: dict[bytes, list[bytes]] = {}
        for entry in fresh:
            by_order.setdefault(entry[:2], []).append(entry[2:])
        with self.lock:
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
        first = self.next_ordinal
        if first + len(urls) >= ORDINAL_LIMIT:
            raise BadInput("the frontier's 48-bit ordinals are spent")
        batch_queues, slots, caps = self._queues_of(self.assignment.class_keys(urls))
        lifo = self.table.lifo
        keys = pending_keys([q.prefix for q in batch_queues], slots, directive, precedence, key_ordinal(first, lifo),
                            -1 if lifo else 1)
        if txn is not None:
            self.table.insert(keys, values, caps, txn)
        else:
            with self.env.begin() as own:
                self.table.insert(keys, values, caps, own)
        self.next_ordinal = first + len(urls)
        order = bytes((directive, min(precedence, MAX_PRECEDENCE)))

        def early(queue: WorkQueue, slot: int) -> list[int]:
            # Keys that sort before what was read ahead join the buffer: those of a more urgent
            # order, and for lifo those of the same order too (a new ordinal is smaller than any
            # read). First in, first out, a new ordinal is larger than any read: this is rare.
            head = queue.read_through[len(queue.prefix):len(queue.prefix) + 2]
            before = order <= head if lifo else order < head
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
        queues = self.states.queues
        for class_key in slot_of:
            queue = queues.get(class_key)
            if queue is None:
                queue = self.states.queue(class_key)
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
                self.table.buffer_early(queue, keys, values, early(queue, slot))
            if was_empty and queue.state == EMPTY:
                self.states.settle(queue, now)

    def restore(self, entries: Sequence[tuple[str, int, int, int, bytes]]) -> int:
        """Put URLs back at exact places: each entry is (class key, directive, precedence,
        ordinal, pending value), as another frontier held it (a Heritrix crawl's ``pending``,
        see :mod:`pycrawler.heritrix.migrate`). Returns how many were written.

        No Visited check: the URLs are already in the seen set they came with. The batch is
        written in one transaction and one Java call; later ordinals of this frontier start
        above the largest restored one, so new URLs queue behind them. A key the frontier
        holds already is refused (the batch is then not written)."""
        require_writable(self.env)
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
        with self.lock:
            if len(set(key_list)) < len(key_list):
                raise BadInput("restore was given two URLs for one place (same queue, directive, precedence, ordinal)")
            keys, values = pack(key_list), pack([e[4] for e in entries])
            with self.env.begin() as txn:
                held = np.flatnonzero(self.table.database.contains_many(keys, txn=txn))
                if len(held):
                    queue, _, _, ordinal, _ = entries[held[0]]
                    raise BadInput(f"restore would overwrite {len(held)} pending URLs of {self.env.path} (the first: "
                                   f"queue {queue!r}, ordinal {ordinal})")
                batch_queues, slots, caps = self._queues_of([e[0] for e in entries])
                self.table.insert(keys, values, caps, txn)
            self.next_ordinal = max(self.next_ordinal, max(e[3] for e in entries) + 1)

            def early(queue: WorkQueue, slot: int) -> list[int]:
                data, offsets = keys
                return [i for i in np.flatnonzero(slots == slot).tolist()
                        if data[offsets[i]:offsets[i + 1]] < queue.read_through]

            self._admit(batch_queues, slots, keys, values, early)
            self.totals["restored"] += len(entries)
            return len(entries)


def key_ordinal(n: int, lifo: bool) -> int:
    """The ordinal the key of the n-th URL holds: n, or counted down for ``lifo``."""
    return ORDINAL_LIMIT - 1 - n if lifo else n
