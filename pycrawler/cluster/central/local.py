"""Seed 003's local host: a crawl worker's side of the protocol.

The paper's three pools of a local host:

- ``URL_pool``: links found since the last flush. It lives in the worker's memory, which is safe
  because the crawl flushes the exchange before it commits its fetches to JE: a fetch is never
  acknowledged while the links it found exist only here.
- ``finish_URL``: the 64-bit fingerprints of the URLs this worker has committed to its JE
  frontier (a Redis set). It is what the worker checks its own new links against (local
  de-duplication) and what it answers other hosts' requests from.
- ``task_pool``: the URLs the central hosts allocated to this worker (a Redis stream read through
  a consumer group, acknowledged once committed to JE, so at least once).

Every step is batched: one frame per `frame_size` URLs, one pipeline per flush or per batch of
requests.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import redis

from pycrawler import failpoints
from pycrawler.keys.fingerprint import fingerprints64
from pycrawler.seen.cache import UrlCache

from ..membership import host_of
from ..protocol import Delivery, Link, decode_links, discovery_of, encode_links
from .frames import Flag, Frame, FrameError, decode
from .layout import WORKER_GROUP, Layout, ensure_group, send


def fingerprint_keys(urls: Sequence[str]) -> list[bytes]:
    """The URLs' 64-bit fingerprints as the 8-byte big-endian strings the Redis sets hold."""
    raw = fingerprints64(urls).astype(">u8").tobytes()
    return [raw[i : i + 8] for i in range(0, len(raw), 8)]


class LocalHost:
    def __init__(self, client: redis.Redis, layout: Layout, worker: str, network: str, frame_size: int = 500,
                 cache: UrlCache | None = None, busy: Callable[[redis.client.Pipeline], None] | None = None):
        """`cache`: drops links this worker already sent (after the finish_URL check); `busy`:
        adds to an acknowledgement's transaction what tells the cluster this worker has work
        (:meth:`~..membership.Membership.busy`)."""
        self.client, self.layout, self.worker, self.network = client, layout, worker, network
        self.frame_size, self.cache, self.busy = frame_size, cache, busy
        self.url_pool: dict[str, Link] = {}  # insertion-ordered, repeats dropped on arrival
        self.unsent: list[Link] = []  # de-duplicated locally, not yet in a frame in Redis
        self.finish_url = layout.finish_url(worker)
        self.task_pool = layout.task_pool(worker)
        last = client.xrevrange(layout.requests(network), count=1)
        self.requests_seen = last[0][0] if last else "0-0"  # requests made before this host joined are not its to answer
        self.pending_first = True  # redeliver what a previous life (or a read whose answer was lost) received but never acked
        self.stats = {"frames_sent": 0, "sent": 0, "bytes_sent": 0, "own_discarded": 0, "answered": 0,
                      "dropped_locally": 0, "dropped": 0, "received": 0, "forwarded": 0, "pooled_twice": 0}
        ensure_group(client, self.task_pool, WORKER_GROUP)
        pipe = client.pipeline(transaction=False)
        pipe.sadd(layout.networks, network)
        pipe.hset(layout.host_network, worker, network)
        pipe.execute()

    # -- submitting (flag 1) --------------------------------------------------------------------

    def add(self, links: Sequence[Link]) -> None:
        before = len(self.url_pool)
        for link in links:
            self.url_pool.setdefault(link.url, link)
        self.stats["pooled_twice"] += len(links) - (len(self.url_pool) - before)

    def flush(self) -> None:
        """Local de-duplication against finish_URL, then the rest as flag 1 frames to the central
        host. If Redis fails midway, what was not sent stays (past the cache) for the next flush."""
        if self.url_pool:
            links = list(self.url_pool.values())
            keys = fingerprint_keys([link.url for link in links])
            known = self.client.smismember(self.finish_url, keys)
            self.url_pool.clear()
            fresh = [(link, key) for link, key, seen in zip(links, keys, known) if not seen]
            self.stats["dropped_locally"] += len(links) - len(fresh)
            if self.cache is not None and fresh:  # links sent before: their frames are on the way
                hit = self.cache.access(np.frombuffer(b"".join(key for _, key in fresh), dtype=">u8").astype(np.uint64))
                self.stats["dropped"] += int(hit.sum())
                fresh = [pair for pair, h in zip(fresh, hit.tolist()) if not h]
            self.unsent += [link for link, _ in fresh]
        if not self.unsent:
            return
        batches = [self.unsent[i : i + self.frame_size] for i in range(0, len(self.unsent), self.frame_size)]
        last = self.client.incrby(self.layout.number, len(batches))
        pipe = self.client.pipeline(transaction=False)
        nbytes = 0
        for offset, batch in enumerate(batches):
            frame = Frame({link.url: 0 for link in batch}, self.worker, last - len(batches) + 1 + offset, Flag.DEDUPE,
                          {link.url: discovery_of(link) for link in batch})
            nbytes += send(pipe, self.layout.inbox(self.network), frame)
        pipe.execute()
        failpoints.hit("cluster.central.sent")
        self.stats["frames_sent"] += len(batches)
        self.stats["sent"] += len(self.unsent)
        self.stats["bytes_sent"] += nbytes
        self.unsent = []

    # -- answering requests (flag 2 -> flag 3) --------------------------------------------------

    def answer(self, block_ms: int = 0, count: int = 64) -> int:
        """Answer the network's new de-duplication requests from finish_URL; discard our own frames.

        Returns how many requests were read. A request whose answer is lost (this host dies, the
        answer is trimmed) costs only the central host's time-out."""
        reply = self.client.xread({self.layout.requests(self.network): self.requests_seen}, count=count, block=block_ms or None)
        if not reply:
            return 0
        entries = reply[0][1]
        self.requests_seen = entries[-1][0]
        requests = []
        for _, fields in entries:
            try:
                frame = decode(fields[b"f"])
            except FrameError:
                continue  # another program's entry: not ours to answer
            if frame.flag is not Flag.REQUEST:
                continue
            if frame.ip == self.worker:
                self.stats["own_discarded"] += 1  # the paper: a host drops its own request
                continue
            requests.append(frame)
        if requests:
            pipe = self.client.pipeline(transaction=False)
            for frame in requests:
                pipe.smismember(self.finish_url, fingerprint_keys(list(frame.url_set)))
            marks = pipe.execute()
            for frame, known in zip(requests, marks):
                url_set = {url: 1 if seen else mark for (url, mark), seen in zip(frame.url_set.items(), known)}
                send(pipe, self.layout.inbox(self.network), Frame(url_set, self.worker, frame.number, Flag.ANSWER))
            pipe.execute()
            self.stats["answered"] += len(requests)
        return len(entries)

    # -- the task pool ---------------------------------------------------------------------------

    def receive(self, max_urls: int, block_ms: int = 0) -> list[Delivery]:
        """Allocated URLs: first those a previous life of this worker received and never acked."""
        count = max(1, max_urls // self.frame_size)
        if self.pending_first:
            reply = self.client.xreadgroup(WORKER_GROUP, self.worker, {self.task_pool: "0"}, count=count)
            entries = reply[0][1] if reply else []
            if len(entries) < count:
                self.pending_first = False
            if entries:
                return self._deliveries(entries)
        reply = self.client.xreadgroup(WORKER_GROUP, self.worker, {self.task_pool: ">"}, count=count, block=block_ms or None)
        return self._deliveries(reply[0][1]) if reply else []

    def _deliveries(self, entries) -> list[Delivery]:
        gone = [entry_id for entry_id, fields in entries if not fields]
        if gone:  # re-routed by a central host while this worker was away: not ours any more
            self.client.xack(self.task_pool, WORKER_GROUP, *gone)
        deliveries = [Delivery(decode_links(fields[b"urls"].decode()), entry_id) for entry_id, fields in entries if fields]
        self.stats["received"] += sum(len(d.links) for d in deliveries)
        return deliveries

    def forward(self, links: Sequence[Link]) -> list[Link]:
        """Of links polled from this worker's frontier, those whose host it still owns. The rest
        (their host moved while this worker was gone) go to the owner's task_pool as they are:
        they were allocated once already, so they skip the protocol."""
        if not links:
            return []
        hosts = [host_of(link.url) for link in links]
        unique = list(dict.fromkeys(hosts))
        owner = {h: (o.decode() if o else self.worker) for h, o in zip(unique, self.client.hmget(self.layout.owners, unique))}
        moved: dict[str, list[Link]] = {}
        kept = []
        for link, host in zip(links, hosts):
            if owner[host] == self.worker:
                kept.append(link)
            else:
                moved.setdefault(owner[host], []).append(link)
        if moved:
            pipe = self.client.pipeline(transaction=False)
            for worker, batch in moved.items():
                pipe.xadd(self.layout.task_pool(worker), {"urls": encode_links(batch)})
            pipe.execute()
            failpoints.hit("cluster.central.forwarded")
            self.stats["forwarded"] += len(links) - len(kept)
        return kept

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        """The URLs are in this worker's JE frontier: record them in finish_URL and never redeliver."""
        if not deliveries:
            return
        urls = [link.url for delivery in deliveries for link in delivery.links]
        pipe = self.client.pipeline(transaction=True)
        pipe.sadd(self.finish_url, *fingerprint_keys(urls))
        tokens = [delivery.token for delivery in deliveries]
        pipe.xack(self.task_pool, WORKER_GROUP, *tokens)
        pipe.xdel(self.task_pool, *tokens)
        if self.busy:
            self.busy(pipe)  # new work: the cluster is not done while it is pending
        pipe.execute()
        failpoints.hit("cluster.central.acked")
