"""``pycrawler cluster status --redis URL --cluster NAME``, and how ``pycrawler crawl`` joins a cluster."""

from __future__ import annotations

import argparse
import json
import socket
import uuid
from pathlib import Path

from ..atomic_write import write_atomically
from ..cluster import require_redis
from ..errors import BadInput
from .plain import first_line

"""In a worker's state folder: its worker id, so a restarted worker rejoins as itself."""


def add_worker_options(p: argparse.ArgumentParser) -> None:
    from ..cluster.exchanges import DEFAULT, EXCHANGES

    group = p.add_argument_group("cluster (several workers over Redis; see docs/distributed.md)")
    group.add_argument("--redis", metavar="URL", help="redis://[:PASSWORD@]HOST:PORT/DB of the cluster's Redis")
    group.add_argument("--cluster", metavar="NAME", help="the cluster's name: workers with the same name crawl together")
    group.add_argument("--dedupe", default=DEFAULT, metavar="MODE",
                       help=f"how workers share links: {' or '.join(EXCHANGES)} (default {DEFAULT}: host splitting)")
    group.add_argument("--worker", metavar="ID", help="this worker's id (default: kept in the state folder)")
    group.add_argument("--send-cache", default="clock:65536", metavar="POLICY:SIZE",
                       help="a URL cache dropping links already sent to other workers (default %(default)s; none)")
    group.add_argument("--lease", type=float, default=10.0, metavar="S",
                       help="seconds after its last heartbeat a silent worker's hosts move (default %(default)g)")
    group.add_argument("--heartbeat", type=float, default=2.0, metavar="S",
                       help="seconds between heartbeats (default %(default)g)")
    group.add_argument("--settle", type=float, metavar="S",
                       help="at the start, wait until the membership has not changed for S seconds, so that "
                            "workers started together agree on who owns which host (default 2 heartbeats)")
    group.add_argument("--network", metavar="NAME",
                       help="--dedupe central: this worker's network, the group its central host de-duplicates "
                            "first before asking the other networks (default net0)")


def worker_id(state: Path, given: str | None) -> str:
    from ..crawl.state_check import WORKER_FILE, require_crawl_folder  # the crawl's modules: only a crawl needs them

    require_crawl_folder(state)  # the worker's id is the first thing written into its state
    path = state / WORKER_FILE
    stored = json.loads(path.read_text()).get("worker") if path.is_file() else None
    if given and stored and given != stored:
        raise BadInput(f"{state} belongs to worker {stored!r}; rejoin with that --worker or use another --state")
    chosen = given or stored or f"{socket.gethostname()}-{uuid.uuid4().hex[:8]}"
    state.mkdir(parents=True, exist_ok=True)
    write_atomically(path, json.dumps({"worker": chosen}) + "\n")
    return chosen


def join(args: argparse.Namespace, seeds: list[str]):
    """The started link exchange of this worker, or None when no cluster is asked for."""
    if not args.redis and not args.cluster:
        return None
    if not (args.redis and args.cluster):
        raise BadInput("a cluster worker needs both --redis URL and --cluster NAME")
    if args.network and args.dedupe != "central":
        raise BadInput("--network groups the workers of --dedupe central; host splitting has no networks")
    require_redis()
    from ..cluster.exchanges import exchange_factory
    from ..cluster.membership import Membership, connect
    from ..seen.cache import cache_from_spec

    open_exchange = exchange_factory(args.dedupe)
    cache = None if args.send_cache == "none" else cache_from_spec(args.send_cache)
    membership = Membership(connect(args.redis), args.cluster, worker_id(args.state, args.worker),
                            lease=args.lease, heartbeat=args.heartbeat)
    membership.bind_seeds(seeds)
    options = {"network": args.network} if args.network else {}  # a mode's own settings
    return open_exchange(membership, cache, args.settle, **options)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cluster", help="the state of a cluster of crawl workers", description=first_line(__doc__))
    commands = p.add_subparsers(dest="cluster_command", required=True, metavar="COMMAND")
    status = commands.add_parser("status", help="members, their hosts, pages, pending and traffic")
    status.add_argument("--redis", required=True, metavar="URL")
    status.add_argument("--cluster", required=True, metavar="NAME")
    status.add_argument("--hosts", type=int, default=5, metavar="N", help="hosts shown per member (default %(default)s)")
    status.set_defaults(run=run_status)


def host_owners(membership) -> dict[str, str]:
    """Host -> owner, as the host table of --dedupe central or of host splitting holds it."""
    from ..cluster.host_table import HostTable
    from ..cluster.central.layout import Layout

    return HostTable(membership.redis, Layout(membership.name).prefix).table() or membership.table.table()


def run_status(args: argparse.Namespace) -> int:
    require_redis()
    from ..cluster.membership import Membership, connect

    membership = Membership(connect(args.redis), args.cluster, "status")
    if not membership.redis.exists(membership.key("cluster")):
        raise BadInput(f"no cluster {args.cluster!r} in Redis at that URL")
    rows = membership.status()
    members = [row["worker"] for row in rows if row["live"]]
    owned: dict[str, list[str]] = {}
    for host, owner in sorted(host_owners(membership).items()):
        owned.setdefault(owner, []).append(host)
    print(f"cluster {args.cluster}: {len(members)} live of {len(rows)} workers seen")
    for row in rows:
        mine = owned.get(row["worker"], []) if row["live"] else []
        shown = ", ".join(mine[:args.hosts]) + (f" (+{len(mine) - args.hosts})" if len(mine) > args.hosts else "")
        state = f"lease {row['lease']} s" if row["live"] else "gone"
        print(f"{row['worker']}: {state}, {'idle' if row.get('idle') == '1' else 'busy'}, pages {row.get('pages', 0)},"
              f" pending {row.get('pending', 0)}, sent {row.get('sent', 0)} ({row.get('bytes_sent', 0)} B),"
              f" dropped by cache {row.get('dropped', 0)}, received {row.get('received', 0)},"
              f" forwarded {row.get('forwarded', 0)}; hosts {len(mine)}: {shown or '-'}")
    return 0
