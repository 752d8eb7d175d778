"""Who is in the cluster: workers registered in Redis with leases, and which worker owns a host.

Every worker holds a lease, a score in the sorted set ``pycrawler:NAME:members`` (its expiry,
in Redis's own clock, so the workers' clocks need not agree), renewed by a heartbeat every
``heartbeat`` seconds; a worker that stops renewing (killed, cut off) drops out when its lease
runs out, ``lease`` seconds after its last heartbeat. Hosts are assigned to the live members by
the table of :mod:`.host_table`: rendezvous hashing (highest random weight) with a bound on each
worker's load, written in Redis on a host's first sight so that every worker reads the same
owner, and rebalanced by the first worker to see the members change (the hosts of those that
left, and about 1/n of the others for a joiner, move). Each worker remembers the owners it read
until the table's epoch changes. While Redis is away a host the table has not told this worker
about goes to its heaviest live member (:func:`weight`), as plain rendezvous hashing would.

The cluster record ``pycrawler:NAME:cluster`` binds the name to a fingerprint of the seed set:
a worker started with other seeds under the same name is refused, since it would mix two crawls.
Each worker's figures (pages, pending, traffic) sit in ``pycrawler:NAME:worker:ID`` for
``pycrawler cluster status``.

The end of the crawl: a worker with nothing to do sets ``idle`` to 1 in its hash once (any
new work clears it in the transaction that acknowledges the work), then asks whether the
cluster is done every 0.1 s. Only one worker, the first live member in order, answers that
from the flags and the queues, in one transaction that grows with the workers; it records a
"yes" in ``pycrawler:NAME:done`` for a lease, and the others read that key, one command each.
So an idle cluster of n workers costs about 3n commands a check round, not n squared.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import redis

from ..errors import BadInput, PycrawlerError
from .host_table import HostTable


class ClusterUnavailable(PycrawlerError):
    """Redis cannot be reached, or refuses this worker's credentials."""

    exit_code = 69  # sysexits' EX_UNAVAILABLE


DEFAULT_PORTS = {"http": 80, "https": 443}
SETTLE_POLL = 0.1
"""Seconds between two looks at the membership while settling (at most one heartbeat)."""


def connect(url: str) -> redis.Redis:
    """A Redis client for ``url`` (``redis://[:PASSWORD@]HOST:PORT/DB``), checked with a PING so
    an unreachable server or a wrong password is one clear line, not a trace."""
    try:
        client = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5, health_check_interval=0)
        client.ping()
    except ValueError as exc:
        raise BadInput(f"--redis must be a redis:// URL such as redis://127.0.0.1:6379/0, not {url!r} ({exc})") from None
    except redis.AuthenticationError:
        raise ClusterUnavailable(f"Redis at {_where(url)} refused the password (check the URL's password)") from None
    except redis.ResponseError as exc:
        if "NOAUTH" in str(exc) or "WRONGPASS" in str(exc):
            raise ClusterUnavailable(f"Redis at {_where(url)} refused the password (check the URL's password)") from None
        raise ClusterUnavailable(f"Redis at {_where(url)} answered: {exc}") from None
    except redis.ConnectionError as exc:
        raise ClusterUnavailable(f"cannot reach Redis at {_where(url)}: {exc}") from None
    return client


def _where(url: str) -> str:
    """The URL without its password, for messages."""
    host, _, rest = url.rpartition("@")
    return url if not host else url.split("//", 1)[0] + "//" + rest


def host_of(url: str) -> str:
    """The unit of ownership and politeness: ``host:port`` of an http(s) URL ('' for others)."""
    try:
        parts = urlsplit(url)
        return f"{parts.hostname}:{parts.port or DEFAULT_PORTS.get(parts.scheme, 0)}" if parts.hostname else ""
    except ValueError:  # a port that is not a number, a bad IPv6 literal
        return ""


def seeds_fingerprint(seeds: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(set(seeds))).encode()).hexdigest()[:32]


def _number(text: str) -> int | float | str:
    """A figure a worker published in its hash (Redis keeps them as text), as the number it was."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def weight(worker: str, host: str) -> int:
    """The rendezvous weight of a (worker, host) pair: SHA-1, since the host table's scripts
    rank workers with Redis's ``redis.sha1hex``, and a host placed while Redis is away should go
    where the table would put it first."""
    return int.from_bytes(hashlib.sha1(f"{worker}\x00{host}".encode()).digest(), "big")


class Membership:
    """This worker's place in cluster ``name``: :meth:`join`, :meth:`beat`, :meth:`owners`."""

    def __init__(self, client: redis.Redis, name: str, worker: str, *, lease: float = 10.0,
                 heartbeat: float = 2.0):
        if not name or any(c in name for c in " :\n"):
            raise BadInput(f"--cluster is a name without spaces or colons, not {name!r}")
        if heartbeat >= lease:
            raise BadInput("the heartbeat must be shorter than the lease")
        self.redis, self.name, self.worker = client, name, worker
        self.lease, self.heartbeat = lease, heartbeat
        self._view: tuple[list[str], dict[str, str]] = ([], {})  # live members, and owners found so far
        self.table = HostTable(client, self.key())
        self.epoch: int | None = None  # of the table, as this worker last read it
        self._idle_shown = False  # this worker's idle flag is 1 in Redis
        self._idle_lock = threading.Lock()  # a heartbeat thread's rejoin clears the flag meanwhile

    def key(self, *parts: str) -> str:
        return ":".join(("pycrawler", self.name, *parts))

    def use_table(self, table: HostTable) -> None:
        """Assign hosts with ``table`` (a mode that keeps its keys elsewhere), before joining."""
        self.table = table

    def bind_seeds(self, seeds: Iterable[str]) -> None:
        """Bind the cluster name to this seed set, or refuse a different one."""
        fingerprint = seeds_fingerprint(seeds)
        self.redis.hsetnx(self.key("cluster"), "seeds", fingerprint)
        bound = self.redis.hget(self.key("cluster"), "seeds").decode()
        if bound != fingerprint:
            raise BadInput(f"cluster {self.name!r} crawls another seed set; use the same seeds or another --cluster")

    def now(self) -> float:
        seconds, micros = self.redis.time()
        return seconds + micros / 1e6

    def join(self) -> None:
        """Register (again): not idle, and no longer done, since this worker may bring work."""
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(self.key("worker", self.worker), "idle", 0)
        pipe.delete(self.key("done"))
        with self._idle_lock:
            pipe.execute()
            self._idle_shown = False
        self.beat()

    def beat(self, figures: dict | None = None) -> bool:
        """Renew the lease with this worker's figures, refresh the live members and rebalance the
        host table if they are not those it is balanced for; True when the members or the
        owners changed."""
        now = self.now()
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(self.key("members"), {self.worker: now + self.lease})
        pipe.zremrangebyscore(self.key("members"), "-inf", now)
        if figures:
            pipe.hset(self.key("worker", self.worker), mapping=figures)
        pipe.zrange(self.key("members"), 0, -1)
        self.table.balanced_for(pipe)
        *_, listed, (balanced, epoch) = pipe.execute()
        members = sorted(m.decode() for m in listed)
        epoch = int(epoch or 0)
        if (balanced or b"").decode() != "\n".join(members):
            epoch, _ = self.table.rebalance(members)
        changed = members != self.members or epoch != self.epoch
        if changed:
            self.members, self.epoch = members, epoch
        return changed

    def settle(self, seconds: float) -> None:
        """Join, then wait until the membership has not changed for ``seconds``, so that workers
        started together agree on who is alive before the first host is assigned. It looks more
        often than it beats, so that workers started together all see the last join at once and
        start crawling together: at heartbeat pace each saw it up to a heartbeat late, and the
        workers' first fetches spread over that long (2 s by default)."""
        self.join()
        stable_since = time.monotonic()
        while time.monotonic() - stable_since < seconds:
            time.sleep(min(SETTLE_POLL, self.heartbeat))
            if self.beat():
                stable_since = time.monotonic()

    def busy(self, pipe: redis.client.Pipeline) -> None:
        """Clear this worker's idle flag in ``pipe``, the transaction that takes new work on."""
        pipe.hset(self.key("worker", self.worker), "idle", 0)
        self._idle_shown = False

    def cluster_done(self, queues: Callable[[redis.client.Pipeline], None]) -> bool:
        """Called by a worker with nothing left to do: True when every live member is idle and
        every queue length ``queues`` asks for (in the same transaction) is 0: nothing left to
        crawl, nothing in transit. The first live member checks; the others read its answer."""
        with self._idle_lock:
            if not self._idle_shown:
                self.redis.hset(self.key("worker", self.worker), "idle", 1)
                self._idle_shown = True
        members = self.members
        if self.worker not in members:  # dropped while Redis was away: the heartbeat rejoins it
            return False
        if self.worker != members[0]:
            return bool(self.redis.exists(self.key("done")))
        pipe = self.redis.pipeline(transaction=True)
        for member in members:
            pipe.hget(self.key("worker", member), "idle")
        queues(pipe)
        answers = pipe.execute()
        if not all(flag == b"1" for flag in answers[: len(members)]) or any(answers[len(members):]):
            return False
        self.redis.set(self.key("done"), 1, px=int(self.lease * 1000))
        return True

    @property
    def members(self) -> list[str]:
        return self._view[0]

    @members.setter
    def members(self, members: list[str]) -> None:
        self._view = (members, {})  # one assignment: a heartbeat thread may replace it any time

    def leave(self) -> None:
        self.redis.zrem(self.key("members"), self.worker)
        self.members = [m for m in self.members if m != self.worker]

    def owners(self, hosts: Iterable[str]) -> dict[str, str]:
        """The owners of ``hosts``: remembered, else read from the table (which places the new
        ones) in one script; while Redis is away, the heaviest live member of each unknown host,
        not remembered, so that the table decides once Redis answers."""
        members, known = self._view
        hosts = list(dict.fromkeys(hosts))
        unknown = [host for host in hosts if host not in known]
        if unknown:
            try:
                known.update(self.table.assign(unknown, members or [self.worker]))
            except (redis.ConnectionError, redis.TimeoutError):
                return {host: known.get(host) or max(members or [self.worker], key=lambda m: weight(m, host))
                        for host in hosts}
        return {host: known[host] for host in hosts}

    def view(self) -> list[dict]:
        """The live members as this worker last saw them, each with its figures as it last
        published them (numbers where they are), its lease left in seconds and the hosts the
        host table gives it: one round trip of a few commands a member, for a page that asks
        every few seconds (:meth:`status` scans every key of the cluster)."""
        members = self.members
        pipe = self.redis.pipeline(transaction=False)
        pipe.time()
        pipe.zrange(self.key("members"), 0, -1, withscores=True)
        pipe.hgetall(self.table.loads_key)
        for member in members:
            pipe.hgetall(self.key("worker", member))
        (seconds, micros), leases, loads, *figures = pipe.execute()
        now = seconds + micros / 1e6
        leases = {m.decode(): expiry for m, expiry in leases}
        loads = {m.decode(): int(n) for m, n in loads.items()}
        return [{"worker": member, "lease": round(leases.get(member, now) - now, 1), "hosts": loads.get(member, 0)}
                | {k.decode(): _number(v.decode()) for k, v in published.items()}
                for member, published in zip(members, figures)]

    def status(self) -> list[dict]:
        """Every registered worker's figures, live or not, with its lease left in seconds."""
        now = self.now()
        leases = {m.decode(): s for m, s in self.redis.zrange(self.key("members"), 0, -1, withscores=True)}
        rows = []
        for key in sorted(self.redis.scan_iter(match=self.key("worker", "*"))):
            worker = key.decode().rsplit(":", 1)[1]
            figures = {k.decode(): v.decode() for k, v in self.redis.hgetall(key).items()}
            expiry = leases.get(worker)
            live = expiry is not None and expiry > now  # a lapsed lease stays listed until a beat prunes it
            rows.append({"worker": worker, "live": live,
                         "lease": round(expiry - now, 1) if live else None} | figures)
        return rows
