"""Host splitting (Mercator's host splitter, Heydon and Najork 1999, sections 4.1 and 5.2).

Each live worker owns the hosts the cluster's host table gives it (:mod:`.host_table`: rendezvous
hashing with bounded loads, through :mod:`.membership`) and keeps
frontier and seen table for them alone. A discovered link to an own host stays local (``add``
returns it); a link to another worker's host goes, in batches, to that owner's Redis stream
``pycrawler:NAME:links:OWNER`` (one ``XADD`` per owner and flush, all in one pipeline), where
the owner reads it through its consumer group (``XREADGROUP``) and acknowledges it (``XACK``,
then ``XDEL``: an acknowledged entry is never needed again) only once the URLs are committed
in its JE frontier. An entry's links carry their depth, hop path and via
(:func:`~.protocol.encode_links`), so the owner schedules them as the finder would have and
``--max-depth`` holds across workers. A CLOCK URL cache in front of the sending drops links
already sent: Mercator's observation is that most cross-host links are repeats of a few
popular URLs.

Faults:

- **a worker dies**: its lease runs out and its hosts move to the survivors. Its stream (the
  entries it had not read, and those it read but never acknowledged) is then re-routed by one
  survivor (a lock per dead worker) to the URLs' new owners, in one MULTI, so nothing that was
  sent is lost. The dead worker's own JE frontier (links to its own hosts, and what it had
  acknowledged) is recovered when it rejoins from its state folder; until then survivors reach
  those pages only through links other hosts send them.
- **hosts change owner** (a worker joins, leaves, dies or comes back, and the host table is
  rebalanced): a URL a worker polls
  from its frontier for a host it no longer owns is forwarded to the owner instead of fetched
  (``forward``); should it come back (the worker it went to died before committing it, and its
  stream was re-routed to the host's owner, this one again), the crawl schedules it past its
  seen table (:mod:`pycrawler.crawl.forwarded`). What a host's earlier owners fetched is in Redis:
  every worker appends the 8-byte Visited keys of the URLs it fetched to the host's string
  ``pycrawler:NAME:fetched:HOST`` (``APPEND``, in a flush right after the fetches are
  committed in JE: a key names a page whose links are safe), and a worker that gained a host reads that
  string (``GET``) before it fetches the host's first URL (``earlier_fetches``): it learns the
  keys as seen and does not fetch them, whether they come as links or already wait in its own
  frontier (a worker back from the dead). That covers a dead owner as well as a live one.
  After a change a worker reads its stream only ``settle`` seconds later, so that the
  previous owners' fetches in flight are recorded before links to the moved hosts are acted on.
- **Redis is unreachable**: ``flush`` keeps the outgoing batches in memory, returns the links
  it could not send for the crawl to commit in its JE outbox with the pages that found them
  (a kill -9 during the outage loses none: the next run adds them again), and ``receive``
  returns nothing; the worker goes on crawling its own hosts and sends the batches when Redis
  answers again.

Termination: the crawl is over when every live member reports itself idle (frontier empty,
nothing in process, nothing to send) and every stream is empty (nothing in transit).
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from collections.abc import Sequence

import numpy as np
import redis

from .. import failpoints
from ..seen.cache import UrlCache
from .membership import Membership, host_of
from .protocol import Delivery, Link, decode_links, encode_links

GROUP = "workers"
ENTRIES_PER_READ = 32
NETWORK_ERRORS = (redis.ConnectionError, redis.TimeoutError)

log = logging.getLogger(__name__)


def _links(fields: dict) -> list[Link]:
    body = fields.get(b"u")
    return decode_links(body.decode()) if body else []


def url_keys(urls: Sequence[str]) -> np.ndarray:
    """64-bit keys of URLs for the sending cache."""
    return np.array([int.from_bytes(hashlib.blake2b(u.encode(), digest_size=8).digest(), "little") for u in urls],
                    dtype=np.uint64)


class HostSplitExchange:
    """The :class:`~.protocol.LinkExchange` of host splitting for one worker."""

    def __init__(self, membership: Membership, cache: UrlCache | None = None, *, settle: float | None = None):
        """``settle``: seconds of unchanged membership a joining worker waits for, and that a
        worker waits after a change before it reads its stream (the previous owners' fetches
        in flight are recorded first); default two heartbeats."""
        self.membership, self.cache = membership, cache
        self.settle = 2 * membership.heartbeat if settle is None else settle
        self.me = membership.worker
        self.outbox: dict[str, list[Link]] = {}
        self.fresh: list[Link] = []  # queued since the last flush: what a failed flush returns
        self.fetched_outbox: dict[str, list[bytes]] = {}  # host -> keys of its URLs fetched since the last flush
        self._loaded: set[str] = set()  # own hosts whose earlier fetches this worker has read
        self._loaded_lock = threading.Lock()  # the heartbeat thread drops the hosts that moved away
        self._settled_at = 0.0  # deliveries wait until then after a membership change
        self.figures: dict = {}
        self._unreachable = False
        self._closed = threading.Event()
        self._heartbeat_thread: threading.Thread | None = None
        self.unacked: list[Delivery] = []
        self.traffic = {"sent": 0, "dropped": 0, "received": 0, "bytes_sent": 0, "forwarded": 0,
                        "learned": 0}
        # The next read takes this worker's own unacknowledged entries first: at the start (a
        # previous life's) and after a failed read, since Redis may have handed out entries whose
        # answer never arrived, and a read of new entries never returns them again.
        self._read_pending = True

    def stream(self, worker: str) -> str:
        return self.membership.key("links", worker)

    # -- joining ------------------------------------------------------------------------------------
    def start(self) -> None:
        """Create this worker's stream and group, join, and wait until the membership has not
        changed for ``settle`` seconds, so that workers started together agree on the owners
        before the first URL is routed (hosts moving later cost handovers). The group reads its
        stream from the start, so links others send before it exists are not missed."""
        self._ensure_group()
        self.membership.settle(self.settle)
        self._heartbeat_thread = threading.Thread(target=self._heartbeats, name="cluster-heartbeat", daemon=True)
        self._heartbeat_thread.start()

    def _heartbeats(self) -> None:
        """Renew the lease every heartbeat from a thread of its own, so a worker busy elsewhere
        (starting its JVM, a long JE scan, a GC pause) keeps its hosts; re-route the streams of
        workers that left."""
        while not self._closed.wait(self.membership.heartbeat):
            try:
                self._beat()
                self._reclaim()
            except NETWORK_ERRORS:
                pass  # Redis away: the lease lapses, and this worker rejoins when it answers

    def _beat(self) -> None:
        if self.membership.beat(self.figures):  # hosts moved: one lost now is read again if it comes back
            with self._loaded_lock:
                owners = self.membership.owners(self._loaded)
                self._loaded = {host for host in self._loaded if owners[host] == self.me}
            self._settled_at = time.monotonic() + self.settle
        if self.me not in self.membership.members:  # dropped while Redis was away
            self.membership.join()
            self._ensure_group()

    def _ensure_group(self) -> None:
        pipe = self.membership.redis.pipeline(transaction=False)
        pipe.xgroup_create(self.stream(self.me), GROUP, id="0", mkstream=True)
        pipe.sadd(self.membership.key("streams"), self.me)
        try:
            pipe.execute()
        except redis.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise

    # -- sending ------------------------------------------------------------------------------------
    def add(self, links: Sequence[Link]) -> list[Link]:
        own, foreign = [], []
        owners = self.membership.owners(host_of(link.url) for link in links)
        for link in links:
            (own if owners[host_of(link.url)] == self.me else foreign).append(link)
        if foreign and self.cache is not None:
            hit = self.cache.access(url_keys([link.url for link in foreign]))
            self.traffic["dropped"] += int(hit.sum())
            foreign = [link for link, h in zip(foreign, hit.tolist()) if not h]
        for link in foreign:
            self.outbox.setdefault(owners[host_of(link.url)], []).append(link)
        self.fresh += foreign
        return own

    def forward(self, links: Sequence[Link]) -> list[Link]:
        keep = []
        owners = self.membership.owners(host_of(link.url) for link in links)
        for link in links:
            owner = owners[host_of(link.url)]
            if owner == self.me:
                keep.append(link)
            else:
                self.outbox.setdefault(owner, []).append(link)
                self.fresh.append(link)
                self.traffic["forwarded"] += 1
        return keep

    def fetched(self, urls: Sequence[str], keys: np.ndarray) -> None:
        raw = np.asarray(keys, dtype="<u8").tobytes()
        for i, url in enumerate(urls):
            self.fetched_outbox.setdefault(host_of(url), []).append(raw[8 * i:8 * i + 8])

    def duplicates(self) -> int:
        return self.traffic["dropped"]  # the sending cache's hits: links sent before

    def earlier_fetches(self, urls: Sequence[str]) -> np.ndarray:
        with self._loaded_lock:
            hosts = sorted({host_of(url) for url in urls} - self._loaded)
        if not hosts:
            return np.empty(0, dtype=np.uint64)
        pipe = self.membership.redis.pipeline(transaction=False)
        for host in hosts:
            pipe.get(self.membership.key("fetched", host))
        try:
            bodies = pipe.execute()
        except NETWORK_ERRORS:
            return np.empty(0, dtype=np.uint64)  # read at the host's next URL; fetched meanwhile
        owners = self.membership.owners(hosts)
        with self._loaded_lock:
            self._loaded |= {host for host in hosts if owners[host] == self.me}
        keys = np.frombuffer(b"".join(body or b"" for body in bodies), dtype="<u8").astype(np.uint64)
        self.traffic["learned"] += len(keys)
        return keys

    def flush(self) -> list[Link] | None:
        if self._send():
            return None
        unsent, self.fresh = self.fresh, []
        return unsent

    def _send(self) -> bool:
        """Send what waits (links, fetched keys) in one pipeline; False when Redis did
        not answer: it all waits for the next try, and ``fresh`` for the crawl's next flush,
        which commits it to the outbox with the pages it finishes."""
        if self.unacked:
            self.ack([])
        if not self.outbox and not self.fetched_outbox:
            return True
        pipe = self.membership.redis.pipeline(transaction=False)
        for host, keys in self.fetched_outbox.items():
            pipe.append(self.membership.key("fetched", host), b"".join(keys))
        sent = nbytes = 0
        for owner, links in self.outbox.items():
            body = encode_links(links)
            pipe.xadd(self.stream(owner), {"u": body})
            pipe.sadd(self.membership.key("streams"), owner)
            sent, nbytes = sent + len(links), nbytes + len(body)
        try:
            pipe.execute()
        except NETWORK_ERRORS as exc:
            if not self._unreachable:  # once per outage, not once per flush
                log.warning("Redis unreachable, links wait to be sent: %s", exc)
            self._unreachable = True
            return False
        failpoints.hit("cluster.split.sent")
        if self._unreachable:
            log.warning("Redis answers again: the waiting links are sent")
        self._unreachable = False
        self.outbox, self.fetched_outbox, self.fresh = {}, {}, []
        self.traffic["sent"] += sent
        self.traffic["bytes_sent"] += nbytes
        return True

    # -- receiving ----------------------------------------------------------------------------------
    def receive(self, max_urls: int, block_ms: int = 0) -> list[Delivery]:
        if time.monotonic() < self._settled_at:
            return []  # the hosts' previous owners may still be recording their fetches in flight
        start = "0" if self._read_pending else ">"
        try:
            answer = self.membership.redis.xreadgroup(
                GROUP, self.me, {self.stream(self.me): start}, count=ENTRIES_PER_READ,
                block=block_ms or None)
        except NETWORK_ERRORS:
            self._read_pending = True
            return []
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._ensure_group()  # a stream deleted while this worker was away
            return []
        entries = answer[0][1] if answer else []
        if self._read_pending and not entries:
            self._read_pending = False
        gone = [entry_id for entry_id, fields in entries if not fields]  # re-routed while this worker was away
        if gone:  # nothing to commit: acknowledged now, for the pending read to move past them
            self.unacked += [Delivery([], entry_id) for entry_id in gone]
            self.ack([])
        deliveries = [Delivery(_links(fields), entry_id) for entry_id, fields in entries if fields]
        self.traffic["received"] += sum(len(d.links) for d in deliveries)
        return deliveries

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        pending = self.unacked + list(deliveries)
        if not pending:
            return
        ids = [d.token for d in pending]
        pipe = self.membership.redis.pipeline(transaction=True)
        pipe.xack(self.stream(self.me), GROUP, *ids)
        pipe.xdel(self.stream(self.me), *ids)
        self.membership.busy(pipe)
        try:
            pipe.execute()
        except NETWORK_ERRORS:
            self.unacked = pending  # redelivered to this worker only: acknowledging later is safe
            return
        failpoints.hit("cluster.split.acked")
        self.unacked = []

    # -- the cluster's state ------------------------------------------------------------------------
    def report(self, fetched: int, pending: int, idle: bool) -> bool:
        if self.outbox:  # added outside a crawl flush (the seeds of a worker with no host yet)
            self._send()  # what fails stays in `fresh`: the crawl's next flush returns it for the outbox
        if self.unacked:  # acknowledgements Redis did not take: a worker with no page left to flush retries here
            self.ack([])
        idle = idle and not self.outbox and not self.unacked
        self.figures = {"pages": fetched, "pending": pending, **self.traffic}
        if not idle:
            return False
        try:
            return self.membership.cluster_done(self._stream_lengths)
        except NETWORK_ERRORS:
            return False

    def _stream_lengths(self, pipe: redis.client.Pipeline) -> None:
        """Nothing is in transit when every stream, read or not, is empty."""
        for worker in [s.decode() for s in self.membership.redis.smembers(self.membership.key("streams"))]:
            pipe.xlen(self.stream(worker))

    def _reclaim(self) -> None:
        """Re-route the streams of workers that are no longer members to the URLs' owners now."""
        client, live = self.membership.redis, set(self.membership.members)
        for worker in [s.decode() for s in client.smembers(self.membership.key("streams"))]:
            if worker in live:
                continue
            lock = self.membership.key("reclaim", worker)
            if not client.set(lock, self.me, nx=True, px=int(self.membership.lease * 1000)):
                continue
            try:
                moved = self._reroute(worker)
            except redis.WatchError:  # the members changed meanwhile: look again at the next beat
                moved = None
            finally:
                client.delete(lock)
            if moved is not None:
                log.info("re-routed %d entries of departed worker %s", moved, worker)

    def _reroute(self, worker: str) -> int | None:
        """Move ``worker``'s stream to the URLs' owners in one MULTI, unless it is a member again
        (this worker's view lags a heartbeat): the stream of a worker back from the dead is its
        own to read, and must stay listed for the end-of-crawl check. The WATCH makes the check
        and the move one step (None: it is back)."""
        members = self.membership.key("members")
        with self.membership.redis.pipeline(transaction=True) as pipe:
            pipe.watch(members)
            if pipe.zscore(members, worker) is not None:  # pruned at this worker's last beat: it rejoined
                return None
            entries = pipe.xrange(self.stream(worker), count=10_000)
            links = [link for _, fields in entries for link in _links(fields or {})]
            owners = self.membership.owners(host_of(link.url) for link in links)
            by_owner: dict[str, list[Link]] = {}
            for link in links:
                by_owner.setdefault(owners[host_of(link.url)], []).append(link)
            pipe.multi()
            for owner, links in sorted(by_owner.items()):
                pipe.xadd(self.stream(owner), {"u": encode_links(links)})
                pipe.sadd(self.membership.key("streams"), owner)
            if entries:
                pipe.xdel(self.stream(worker), *[entry_id for entry_id, _ in entries])
            else:
                pipe.srem(self.membership.key("streams"), worker)
            pipe.execute()
        failpoints.hit("cluster.split.rerouted")
        return len(entries)

    def close(self) -> None:
        self._closed.set()
        if self._heartbeat_thread is not None:
            # A beat still under way after leave() would put this worker back in the members.
            self._heartbeat_thread.join(timeout=2 * self.membership.lease)
        self._send()
        try:
            self.membership.beat(self.figures | self.traffic | {"idle": 1})
            self.membership.leave()
        except NETWORK_ERRORS:
            pass


def open_exchange(membership: Membership, cache: UrlCache | None, settle: float | None = None) -> HostSplitExchange:
    exchange = HostSplitExchange(membership, cache, settle=settle)
    exchange.start()
    return exchange
