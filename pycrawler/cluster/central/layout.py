"""Where seed 003's pools live in Redis, and which hosts of a network are alive.

The paper gives every local host its own Redis (finish_URL, task_pool, URL_pool) and the central
host another (task_URL, local_reduce_pool, dist_reduce_pool). Here one Redis holds them all under
the cluster's prefix; the names keep the paper's words so the design can be read against it. The
hash tag ``{cluster}`` keeps every key of a cluster in one slot, so the multi-key allocation script
stays valid on a Redis Cluster too.

A network is a named group of workers (the paper's local network; ``host_network`` says whose is
whose); its central host is the worker holding the network's lease. Which workers are alive is the
cluster's membership (`pycrawler.cluster.membership`): the central host waits for answers from
live hosts only.
"""

from __future__ import annotations

import redis

from .frames import Frame, encode

WORKER_GROUP = "worker"  # consumer group of each task_pool stream
CENTRAL_GROUP = "central"  # consumer group of each network's inbox: a new central host resumes it


def central_address(network: str) -> str:
    """The address a central host signs its frames with: never a worker id (those carry no '@')."""
    return f"central@{network}"


class Layout:
    """The key names of one cluster."""

    def __init__(self, cluster: str):
        self.prefix = f"pycrawler:{{{cluster}}}:central"
        self.number = f"{self.prefix}:number"  # INCRBY: the cluster-unique frame numbers
        self.networks = f"{self.prefix}:networks"  # set of network names
        self.host_network = f"{self.prefix}:host_network"  # hash worker -> its network
        self.owners = f"{self.prefix}:owners"  # hash URL host -> the worker that crawls it
        self.task_pool_prefix = f"{self.prefix}:host:"
        self.duplicates = f"{self.prefix}:duplicates"  # hash worker -> links of its frames the central hosts struck

    # A local host's pools.
    def finish_url(self, worker: str) -> str:
        return f"{self.prefix}:host:{worker}:finish_URL"

    def task_pool(self, worker: str) -> str:
        return f"{self.task_pool_prefix}{worker}:task_pool"

    # A network's central host's pools and channels.
    def _net(self, network: str, name: str) -> str:
        return f"{self.prefix}:net:{network}:{name}"

    def task_url(self, network: str) -> str:
        return self._net(network, "task_URL")

    def local_reduce_pool(self, network: str) -> str:
        return self._net(network, "local_reduce_pool")

    def dist_reduce_pool(self, network: str) -> str:
        return self._net(network, "dist_reduce_pool")

    def inbox(self, network: str) -> str:
        return self._net(network, "inbox")  # frames to the central host: flags 1, 2 (other networks), 3

    def requests(self, network: str) -> str:
        return self._net(network, "requests")  # the broadcast of flag 2 frames to the network's hosts

    def lease(self, network: str) -> str:
        return self._net(network, "lease")


def networks_of(client: redis.Redis, layout: Layout, workers: list[str]) -> dict[str, list[str]]:
    """The given (live) workers by network."""
    grouped: dict[str, list[str]] = {}
    names = client.hmget(layout.host_network, workers) if workers else []
    for worker, network in zip(workers, names):
        if network is not None:
            grouped.setdefault(network.decode(), []).append(worker)
    return grouped


def ensure_group(client: redis.Redis, stream: str, group: str) -> None:
    """Create the consumer group (and the stream) unless it exists: every start may call this."""
    try:
        client.xgroup_create(stream, group, id="0", mkstream=True)
    except redis.ResponseError as err:
        if "BUSYGROUP" not in str(err):
            raise


REQUESTS_KEPT = 10_000  # a host further behind than this many broadcasts misses some: time-outs cover it


def send(pipe, stream: str, frame: Frame) -> int:
    """Queue `frame` on `stream` in a pipeline; returns its size. The broadcast of requests has no
    consumer group (every host reads all of it), so it is trimmed; inboxes are emptied by their
    reader instead."""
    trim = {"maxlen": REQUESTS_KEPT, "approximate": True} if stream.endswith(":requests") else {}
    data = encode(frame)
    pipe.xadd(stream, {"f": data}, **trim)
    return len(data)
