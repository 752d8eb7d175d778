"""Seed 003's central host: a network's de-duplication across its hosts, then across networks.

The paper's three pools of a central host, here Redis keys of the network:

- ``local_reduce_pool``: frames of the network's own hosts (flag 1) while their flag 2 request is
  broadcast to the network and the hosts' answers (flag 3) come back; every URL some host marks
  known is deleted from the frame.
- ``dist_reduce_pool``: the same frames once the network is done with them, sent as flag 2 to the
  other networks' central hosts and waiting for their answers; and the other networks' requests
  this central host is answering for its own hosts.
- ``task_URL``: the fingerprints of every URL this network allocated. A frame that survives all
  answers is allocated by one Redis script that checks every network's task_URL and adds to its
  own, so a URL is allocated once cluster-wide even when two frames race past each other's
  answers (the paper's broadcasts alone cannot promise that: a URL in flight is in no finish_URL).

Where the paper is silent, what this module chose:

- Lost answers: a frame waits for the hosts alive when it was broadcast, until its time-out; then
  it goes on with the answers it has. A late answer is dropped. Safe because of task_URL above.
- Who runs the central host: the network's worker holding the network's lease in Redis (renewed
  while it works). Its state is in Redis and its inbox is a consumer group, so the worker that
  takes the lease after a crash claims the unacknowledged frames and goes on; an inbox entry is
  acknowledged in the same transaction that writes its effect on the pools.
- Which worker crawls a URL: the owner of its host in the cluster's host table
  (:mod:`pycrawler.cluster.host_table`, under this layout's prefix: rendezvous hashing with
  bounded loads), placed on the host's first allocation, moved when its owner is no longer alive
  or when the table is rebalanced for a change of members. One worker per host is what keeps
  per-host politeness across the cluster.
"""

from __future__ import annotations

import collections
import json
import time
from collections.abc import Callable

import redis

from ... import failpoints
from ..host_table import LUA_COMMON, HostTable
from ..membership import host_of
from ..protocol import decode_links, encode_link
from .frames import Flag, Frame, FrameError, decode
from .layout import CENTRAL_GROUP, Layout, central_address, ensure_group, networks_of, send
from .local import fingerprint_keys

# Places URLs with their hosts' owners in the host table, appending one task_pool entry per owner;
# a host with no owner is placed (bounded) among the workers the table is balanced for (the live
# ones, before its first balance). An owner that died keeps its hosts until the rebalance its
# lease's end brings: what it is sent meanwhile is re-routed with its task_pool.
# Returns how many URLs it placed.
# KEYS: the host table's owners, loads and assignment, a stream to delete entries from, then
# task_URL sets (this network's first).
# ARGV: task_pool key prefix and suffix, the live workers (count first), entry ids to delete
# (count first), then per URL (fingerprint, host, its task_pool line).
# Allocating: with task_URL sets, a URL any of them holds is skipped, the others are added to the
# first, all in one script, so a URL is allocated once cluster-wide. Re-routing a departed
# worker's task_pool: no task_URL sets, and its entries are deleted in the same script.
PLACE = LUA_COMMON + """
local prefix, suffix, at = ARGV[1], ARGV[2], 3
local members, member = balanced({unpack(ARGV, at + 1, at + tonumber(ARGV[at]))})
at = at + tonumber(ARGV[at]) + 1
local ids = {}
for i = 1, tonumber(ARGV[at]) do ids[i] = ARGV[at + i] end
at = at + #ids + 1
local batches, order, placed = {}, {}, 0
for i = at, #ARGV, 3 do
  local fp, host, line = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local known = false
  for k = 5, #KEYS do
    if redis.call('SISMEMBER', KEYS[k], fp) == 1 then known = true break end
  end
  if not known then
    if #KEYS >= 5 then redis.call('SADD', KEYS[5], fp) end
    local owner = owner_of(host, members, member)
    if not batches[owner] then batches[owner] = {} order[#order + 1] = owner end
    local batch = batches[owner]
    batch[#batch + 1] = line
    placed = placed + 1
  end
end
for _, owner in ipairs(order) do
  redis.call('XADD', prefix .. owner .. suffix, '*', 'urls', table.concat(batches[owner], '\\n'))
end
if #ids > 0 then redis.call('XDEL', KEYS[4], unpack(ids)) end
return placed
"""

RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


def now_ms() -> int:
    """Wall-clock milliseconds: deadlines are kept in Redis and read by the next central host."""
    return int(time.time() * 1000)


class CentralHost:
    def __init__(self, client: redis.Redis, layout: Layout, worker: str, network: str, members: Callable[[], list[str]],
                 lease_ms: int = 3000, answer_timeout_ms: int = 1000, batch: int = 64):
        """`members`: the cluster's live workers, as the membership last saw them."""
        self.client, self.layout, self.worker, self.network = client, layout, worker, network
        self.members = members
        self.address = central_address(network)
        self.lease_ms, self.answer_timeout_ms, self.batch = lease_ms, answer_timeout_ms, batch
        self.inbox = layout.inbox(network)
        self.pools = {"local": layout.local_reduce_pool(network), "dist": layout.dist_reduce_pool(network)}
        self.holding = False
        self.renewed_at = 0
        self.records: dict[str, dict[int, dict]] = {"local": {}, "dist": {}}
        self._place = client.register_script(PLACE)
        self.host_table_keys = HostTable(client, layout.prefix).keys  # PLACE's first KEYS
        self.rerouted_at = 0
        self._renew = client.register_script(RENEW)
        self._release = client.register_script(RELEASE)
        self.live: dict[str, list[str]] | None = None  # live workers by network, read once a step
        self.out: list[tuple[str, Frame]] = []  # frames to send at the step's commit
        self.dirty: set[tuple[str, int]] = set()  # pool records to write (or delete) at the commit
        self.struck: collections.Counter = collections.Counter()  # origin -> URLs of its frames found known, this step
        self.read_pending = False  # after a take-over: the claimed entries come first
        self.stats = {"frames": 0, "timeouts": 0, "late_answers": 0, "allocated": 0, "takeovers": 0, "rerouted": 0}
        ensure_group(client, self.inbox, CENTRAL_GROUP)

    # -- the role ---------------------------------------------------------------------------------

    def hold_lease(self) -> bool:
        """Take the network's central host role if free, renew it if ours; False if another has it."""
        now = now_ms()
        if self.holding and now - self.renewed_at < self.lease_ms // 3:
            return True
        if self.holding and self._renew(keys=[self.layout.lease(self.network)], args=[self.worker, self.lease_ms]):
            self.renewed_at = now
            return True
        lease = self.layout.lease(self.network)
        # Ours still after a failed step (see `step`): take over from our own state in Redis.
        self.holding = bool(self.client.set(lease, self.worker, nx=True, px=self.lease_ms)) or (
            self._renew(keys=[lease], args=[self.worker, self.lease_ms]) == 1)
        if self.holding:
            self.renewed_at = now
            self._take_over()
        return self.holding

    def resign(self) -> None:
        if self.holding:
            self._release(keys=[self.layout.lease(self.network)], args=[self.worker])
            self.holding = False

    def _take_over(self) -> None:
        """Load the pools a previous central host left in Redis and claim its unacknowledged frames."""
        self.stats["takeovers"] += 1
        for name, key in self.pools.items():
            self.records[name] = {int(number): json.loads(raw) for number, raw in self.client.hgetall(key).items()}
        cursor = "0-0"
        while True:
            cursor = self.client.xautoclaim(self.inbox, CENTRAL_GROUP, self.worker, 0, cursor, count=1000)[0]
            if cursor in ("0-0", b"0-0"):
                break
        self.read_pending = True

    # -- one step -----------------------------------------------------------------------------------

    def step(self, block_ms: int = 0) -> int:
        """Process the inbox's frames and the time-outs; returns how many frames were processed."""
        if not self.hold_lease():
            return 0
        try:
            return self._step(block_ms)
        except redis.RedisError:
            # Redis went away mid-step: what reached it and what is in memory may differ, so the
            # next step starts over from Redis, as a new central host would.
            self.holding = False
            raise

    def _step(self, block_ms: int) -> int:
        block_ms = min(block_ms, max(1, self._next_deadline() - now_ms()))
        entries = self._read(block_ms)
        self.out, self.dirty, self.live, self.struck = [], set(), None, collections.Counter()
        for _, fields in entries:
            try:
                frame = decode(fields[b"f"])
            except (FrameError, KeyError):
                continue
            self.stats["frames"] += 1
            self._dispatch(frame)
        self._expire()
        self._commit([entry_id for entry_id, _ in entries])
        self._reroute_departed()
        return len(entries)

    def _read(self, block_ms: int):
        if self.read_pending:
            reply = self.client.xreadgroup(CENTRAL_GROUP, self.worker, {self.inbox: "0"}, count=self.batch)
            entries = reply[0][1] if reply else []
            if len(entries) < self.batch:
                self.read_pending = False
            if entries:
                return entries
        reply = self.client.xreadgroup(CENTRAL_GROUP, self.worker, {self.inbox: ">"}, count=self.batch, block=block_ms or None)
        return reply[0][1] if reply else []

    def _next_deadline(self) -> int:
        deadlines = [rec["deadline"] for pool in self.records.values() for rec in pool.values()]
        return min(deadlines, default=now_ms() + self.lease_ms // 3)

    def _live(self, network: str) -> list[str]:
        if self.live is None:
            self.live = networks_of(self.client, self.layout, self._workers())
        return self.live.get(network, [])

    def _workers(self) -> list[str]:
        return sorted(set(self.members()) | {self.worker})

    def _other_networks(self) -> list[str]:
        self._live(self.network)
        return sorted(n for n in self.live if n != self.network)

    # -- the protocol ---------------------------------------------------------------------------------

    def _dispatch(self, frame: Frame) -> None:
        if frame.flag is Flag.DEDUPE:
            expected = [h for h in self._live(self.network) if h != frame.ip]
            if expected:  # the broadcast goes to every host; the sender discards its own
                self._send(self.layout.requests(self.network), Frame(frame.url_set, frame.ip, frame.number, Flag.REQUEST))
            self._open("local", frame.number, frame.url_set, origin=frame.ip, reply_to=None, expected=expected,
                       found=frame.found)
        elif frame.flag is Flag.REQUEST:  # another network's central host asks for our hosts' answers
            if frame.ip == self.address:
                return  # our own request come back: the paper discards it
            expected = list(self._live(self.network))
            if expected:
                self._send(self.layout.requests(self.network), Frame(frame.url_set, frame.ip, frame.number, Flag.REQUEST))
            self._open("dist", frame.number, frame.url_set, origin=frame.ip, reply_to=frame.ip, expected=expected)
        elif frame.flag is Flag.ANSWER:
            self._answer(frame)

    def _open(self, pool: str, number: int, url_set: dict[str, int], origin: str, reply_to: str | None,
              expected: list[str], wait_ms: int | None = None, found: dict[str, str] | None = None) -> None:
        """``found``: the URLs' depth, hop path and via of an own host's set, kept to allocation."""
        record = {"urls": dict(url_set), "origin": origin, "reply_to": reply_to, "expected": expected,
                  "answered": [], "deadline": now_ms() + (wait_ms or self.answer_timeout_ms), "found": found or {}}
        self.records[pool][number] = record
        self.dirty.add((pool, number))
        if not expected:
            self._complete(pool, number)

    def _answer(self, frame: Frame) -> None:
        pool = next((p for p in ("local", "dist") if frame.number in self.records[p]), None)
        if pool is None:
            self.stats["late_answers"] += 1  # its frame finished (all answered, or timed out)
            return
        record = self.records[pool][frame.number]
        if frame.ip not in record["expected"] or frame.ip in record["answered"]:
            return
        record["answered"].append(frame.ip)
        known = frame.known()
        if record["reply_to"] is None:  # our frame: drop what another host or network has
            kept = {url: 0 for url in record["urls"] if url not in known}
            self.struck[record["origin"]] += len(record["urls"]) - len(kept)
            record["urls"] = kept
        else:  # another network's request: mark what our hosts have
            record["urls"] = {url: 1 if url in known else mark for url, mark in record["urls"].items()}
        self.dirty.add((pool, frame.number))
        if len(record["answered"]) == len(record["expected"]):
            self._complete(pool, frame.number)

    def _expire(self) -> None:
        now = now_ms()
        for pool in ("local", "dist"):
            for number in [n for n, rec in self.records[pool].items() if rec["deadline"] <= now]:
                self.stats["timeouts"] += 1
                self._complete(pool, number)

    def _complete(self, pool: str, number: int) -> None:
        record = self.records[pool].pop(number)
        self.dirty.add((pool, number))
        if pool == "local":  # the network is done: now the other networks
            others = self._other_networks()
            if not record["urls"] or not others:
                self._allocate_urls(list(record["urls"]), record.get("found"), record["origin"])
                return
            self._open("dist", number, record["urls"], origin=record["origin"], reply_to=None,
                       expected=[central_address(n) for n in others], wait_ms=2 * self.answer_timeout_ms,
                       found=record.get("found"))
            for network in others:
                self._send(self.layout.inbox(network), Frame(record["urls"], self.address, number, Flag.REQUEST))
        elif record["reply_to"] is None:  # every network answered (or timed out): allocate
            self._allocate_urls(list(record["urls"]), record.get("found"), record["origin"])
        else:  # answer the other network, adding what this network already allocated
            urls = list(record["urls"])
            allocated = self.client.smismember(self.layout.task_url(self.network), fingerprint_keys(urls)) if urls else []
            marks = {url: 1 if (mark or here) else 0 for (url, mark), here in zip(record["urls"].items(), allocated)}
            network = record["reply_to"].partition("@")[2]
            self._send(self.layout.inbox(network), Frame(marks, self.address, number, Flag.ANSWER))

    def _allocate_urls(self, urls: list[str], found: dict[str, str] | None, origin: str) -> None:
        """Allocate what survived de-duplication; each task_pool line carries the URL's depth,
        hop path and via from ``found`` (a URL alone when a set came without them). What a
        task_URL already holds is not allocated: struck, for ``origin``'s count of duplicates."""
        if urls:
            # Every network that ever allocated, alive or not: what it allocated stays allocated.
            networks = sorted(n.decode() for n in self.client.smembers(self.layout.networks))
            task_urls = [self.layout.task_url(self.network)]
            task_urls += [self.layout.task_url(n) for n in networks if n != self.network]
            found = found or {}
            lines = [f"{url}\t{found[url]}" if url in found else url for url in urls]
            placed = self._place_urls(urls, lines, fingerprint_keys(urls), self.inbox, [], task_urls)
            self.stats["allocated"] += placed
            self.struck[origin] += len(urls) - placed

    def _place_urls(self, urls: list[str], lines: list[str], fps: list, stream: str, ids: list,
                    task_urls: list[str]) -> int:
        """``lines``: what the owner's task_pool entry holds for each URL (lines that stand alone)."""
        workers = self._workers()
        args = [self.layout.task_pool_prefix, ":task_pool", len(workers), *workers, len(ids), *ids]
        for url, line, fp in zip(urls, lines, fps):
            args += [fp, host_of(url), line]
        return self._place(keys=[*self.host_table_keys, stream, *task_urls], args=args)

    def _reroute_departed(self) -> None:
        """Move what is waiting in the task_pool of this network's departed workers to the owners
        their hosts have now (a worker that comes back finds its task_pool empty, and its own JE
        frontier as it left it). One central host per worker does it, so nothing moves twice."""
        if now_ms() - self.rerouted_at < self.lease_ms:
            return
        self.rerouted_at = now_ms()
        self._live(self.network)
        live = set(self._workers())
        # A network with no live worker left has no central host: the first live network's takes it on.
        orphans = self.network == min(self.live, default=self.network)
        departed = [w.decode() for w, n in self.client.hgetall(self.layout.host_network).items()
                    if w.decode() not in live and (n.decode() == self.network or (orphans and n.decode() not in self.live))]
        for worker in departed:
            stream = self.layout.task_pool(worker)
            entries = [(entry_id, fields) for entry_id, fields in self.client.xrange(stream, count=1000) if fields]
            if entries:
                links = [link for _, fields in entries for link in decode_links(fields[b"urls"].decode())]
                ids = [entry_id for entry_id, _ in entries]
                self.stats["rerouted"] += self._place_urls([link.url for link in links],
                                                           [encode_link(link) for link in links],
                                                           [b""] * len(links), stream, ids, [])

    def _send(self, stream: str, frame: Frame) -> None:
        self.out.append((stream, frame))

    def _commit(self, entry_ids: list) -> None:
        """Pool changes, outgoing frames, the origins' counts of struck URLs and the inbox
        acknowledgement, in one transaction."""
        if not entry_ids and not self.dirty and not self.out and not self.struck:
            return
        pipe = self.client.pipeline(transaction=True)
        for origin, count in self.struck.items():
            if count:
                pipe.hincrby(self.layout.duplicates, origin, count)
        for pool, number in self.dirty:
            record = self.records[pool].get(number)
            if record is None:
                pipe.hdel(self.pools[pool], number)
            else:
                pipe.hset(self.pools[pool], number, json.dumps(record, separators=(",", ":")))
        for stream, frame in self.out:
            send(pipe, stream, frame)
        if entry_ids:  # done with: acknowledged and gone, so the inbox holds only work
            pipe.xack(self.inbox, CENTRAL_GROUP, *entry_ids)
            pipe.xdel(self.inbox, *entry_ids)
        pipe.execute()
        failpoints.hit("cluster.central.committed")
