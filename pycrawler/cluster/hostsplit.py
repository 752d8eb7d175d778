"""Host splitting (Mercator's host splitter, Heydon and Najork 1999, sections 4.1 and 5.2).

Each live worker owns the hosts rendezvous hashing gives it (:mod:`.membership`) and keeps
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
- **membership changes** (a worker joins, leaves, or comes back): a URL a worker polls from
  its frontier for a host it no longer owns is forwarded to the owner instead of fetched
  (``forward``), and the URLs it fetched on such hosts are sent as *seen* entries (field
  ``s``) that the owner learns without fetching; the owner reads its stream only ``settle``
  seconds after it saw the change, so those come before the links they guard against.
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

from ..seen.cache import UrlCache
from .membership import Membership, host_of
from .protocol import Delivery, Link, decode_links, encode_links

GROUP = "workers"
ENTRIES_PER_READ = 32
NETWORK_ERRORS = (redis.ConnectionError, redis.TimeoutError)

log = logging.getLogger(__name__)


def _urls(fields: dict, field: bytes) -> list[str]:
    body = fields.get(field)
    return body.decode().split("\n") if body else []


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
        worker waits after a change before it reads its stream (the previous owners' seen
        URLs come first); default two heartbeats."""
        self.membership, self.cache = membership, cache
        self.settle = 2 * membership.heartbeat if settle is None else settle
        self.me = membership.worker
        self.outbox: dict[str, list[Link]] = {}
        self.fresh: list[Link] = []  # queued since the last flush: what a failed flush returns
        self.seen_outbox: dict[str, list[str]] = {}  # fetched URLs of hosts that moved away
        self._moved = False
        self._settled_at = 0.0  # deliveries wait until then after a membership change
        self.figures: dict = {}
        self._unreachable = False
        self._closed = threading.Event()
        self._heartbeat_thread: threading.Thread | None = None
        self.hosts: set[str] = set()      # hosts seen in links, published for `cluster status`
        self.new_hosts: list[str] = []
        self.unacked: list[Delivery] = []
        self.traffic = {"sent": 0, "dropped": 0, "received": 0, "bytes_sent": 0, "forwarded": 0,
                        "handed_seen": 0}
        self._fresh_start = True  # the first read takes this worker's own unacknowledged entries

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
        self._moved = False  # nothing fetched yet: nothing to hand over
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
        if self.membership.beat(self.figures):  # hosts moved: the engine hands its fetched URLs over
            self._moved = True
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
        for link in links:
            host = host_of(link.url)
            if host not in self.hosts:
                self.hosts.add(host)
                self.new_hosts.append(host)
            (own if self.membership.owner(host) == self.me else foreign).append(link)
        if foreign and self.cache is not None:
            hit = self.cache.access(url_keys([link.url for link in foreign]))
            self.traffic["dropped"] += int(hit.sum())
            foreign = [link for link, h in zip(foreign, hit.tolist()) if not h]
        for link in foreign:
            self.outbox.setdefault(self.membership.owner(host_of(link.url)), []).append(link)
        self.fresh += foreign
        return own

    def forward(self, links: Sequence[Link], seen: bool = False) -> list[Link]:
        keep = []
        for link in links:
            owner = self.membership.owner(host_of(link.url))
            if owner == self.me:
                keep.append(link)
            elif seen:
                self.seen_outbox.setdefault(owner, []).append(link.url)
                self.traffic["handed_seen"] += 1
            else:
                self.outbox.setdefault(owner, []).append(link)
                self.fresh.append(link)
                self.traffic["forwarded"] += 1
        return keep

    def moved(self) -> bool:
        moved, self._moved = self._moved, False
        return moved

    def flush(self) -> list[Link] | None:
        if self.unacked:
            self.ack([])
        if not self.outbox and not self.seen_outbox and not self.new_hosts:
            return None
        pipe = self.membership.redis.pipeline(transaction=False)
        if self.new_hosts:
            pipe.sadd(self.membership.key("hosts"), *self.new_hosts)
        sent = nbytes = 0
        bodies = [("s", owner, "\n".join(urls), len(urls)) for owner, urls in self.seen_outbox.items()]
        bodies += [("u", owner, encode_links(links), len(links)) for owner, links in self.outbox.items()]
        for field, owner, body, count in bodies:  # seen first: it must not trail
            pipe.xadd(self.stream(owner), {field: body})
            pipe.sadd(self.membership.key("streams"), owner)
            sent, nbytes = sent + count, nbytes + len(body)
        try:
            pipe.execute()
        except NETWORK_ERRORS as exc:
            if not self._unreachable:  # once per outage, not once per flush
                log.warning("Redis unreachable, links wait to be sent: %s", exc)
            self._unreachable = True
            unsent, self.fresh = self.fresh, []
            return unsent
        if self._unreachable:
            log.warning("Redis answers again: the waiting links are sent")
        self._unreachable = False
        self.outbox, self.seen_outbox, self.new_hosts, self.fresh = {}, {}, [], []
        self.traffic["sent"] += sent
        self.traffic["bytes_sent"] += nbytes
        return None

    # -- receiving ----------------------------------------------------------------------------------
    def receive(self, max_urls: int, block_ms: int = 0) -> list[Delivery]:
        if time.monotonic() < self._settled_at:
            return []  # the hosts' previous owners may still be handing their seen URLs over
        start = "0" if self._fresh_start else ">"
        try:
            answer = self.membership.redis.xreadgroup(
                GROUP, self.me, {self.stream(self.me): start}, count=ENTRIES_PER_READ,
                block=block_ms or None)
        except NETWORK_ERRORS:
            return []
        except redis.ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
            self._ensure_group()  # a stream deleted while this worker was away
            return []
        entries = answer[0][1] if answer else []
        if self._fresh_start and not entries:
            self._fresh_start = False
        gone = [entry_id for entry_id, fields in entries if not fields]  # re-routed while this worker was away
        if gone:
            self.unacked += [Delivery([], entry_id) for entry_id in gone]
        deliveries = [Delivery(_links(fields), entry_id, _urls(fields, b"s")) for entry_id, fields in entries
                      if fields]
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
        pipe.hset(self.membership.key("worker", self.me), "idle", 0)
        try:
            pipe.execute()
        except NETWORK_ERRORS:
            self.unacked = pending  # redelivered to this worker only: acknowledging later is safe
            return
        self.unacked = []

    # -- the cluster's state ------------------------------------------------------------------------
    def report(self, fetched: int, pending: int, idle: bool) -> bool:
        idle = idle and not self.outbox and not self.unacked
        self.figures = {"pages": fetched, "pending": pending, "idle": int(idle), **self.traffic}
        if not idle:
            return False
        try:
            self._beat()  # the idle flag, now: the others' end of crawl depends on it
            return self._all_done()
        except NETWORK_ERRORS:
            return False

    def _all_done(self) -> bool:
        client, members = self.membership.redis, self.membership.members
        streams = [s.decode() for s in client.smembers(self.membership.key("streams"))]
        pipe = client.pipeline(transaction=True)
        for member in members:
            pipe.hget(self.membership.key("worker", member), "idle")
        for worker in streams:
            pipe.xlen(self.stream(worker))
        answers = pipe.execute()
        flags, lengths = answers[:len(members)], answers[len(members):]
        return all(flag == b"1" for flag in flags) and not any(lengths)

    def _reclaim(self) -> None:
        """Re-route the streams of workers that are no longer members to the URLs' owners now."""
        client, live = self.membership.redis, set(self.membership.members)
        for worker in [s.decode() for s in client.smembers(self.membership.key("streams"))]:
            if worker in live:
                continue
            lock = self.membership.key("reclaim", worker)
            if not client.set(lock, self.me, nx=True, px=int(self.membership.lease * 1000)):
                continue
            entries = client.xrange(self.stream(worker), count=10_000)
            seen: dict[str, list[str]] = {}
            links: dict[str, list[Link]] = {}
            for _, fields in entries:
                for url in _urls(fields or {}, b"s"):
                    seen.setdefault(self.membership.owner(host_of(url)), []).append(url)
                for link in _links(fields or {}):
                    links.setdefault(self.membership.owner(host_of(link.url)), []).append(link)
            bodies = [(owner, "s", "\n".join(urls)) for owner, urls in sorted(seen.items())]
            bodies += [(owner, "u", encode_links(owned)) for owner, owned in sorted(links.items())]
            pipe = client.pipeline(transaction=True)
            for owner, field, body in sorted(bodies):  # per owner, seen before links
                pipe.xadd(self.stream(owner), {field: body})
                pipe.sadd(self.membership.key("streams"), owner)
            if entries:
                pipe.xdel(self.stream(worker), *[entry_id for entry_id, _ in entries])
            else:
                pipe.srem(self.membership.key("streams"), worker)
            pipe.delete(lock)
            pipe.execute()
            log.info("re-routed %d entries of departed worker %s", len(entries), worker)

    def close(self) -> None:
        self._closed.set()
        if self._heartbeat_thread is not None:
            # A beat still under way after leave() would put this worker back in the members.
            self._heartbeat_thread.join(timeout=2 * self.membership.lease)
        self.flush()
        try:
            self.membership.beat(self.figures | self.traffic | {"idle": 1})
            self.membership.leave()
        except NETWORK_ERRORS:
            pass


def open_exchange(membership: Membership, cache: UrlCache | None, settle: float | None = None) -> HostSplitExchange:
    exchange = HostSplitExchange(membership, cache, settle=settle)
    exchange.start()
    return exchange
