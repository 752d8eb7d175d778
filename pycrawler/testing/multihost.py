"""A generated site on many hosts of the loopback network, recording every request it answers.

On Linux the whole of 127.0.0.0/8 is loopback: 127.0.0.1 ... 127.0.0.N are distinct hosts
(distinct politeness queues, distinct owners in a cluster) with no DNS set-up. One threaded
HTTP server per address, all on the same port, serves that host its own part of a link graph
made of same-host links and cross-host links (some pages are reachable only from another
host). Every request is recorded with its arrival time and User-Agent, so a test or benchmark
can check from the server's side what a crawl did: which pages were fetched, how often, by which
crawler (several workers told apart by their contact URLs), and how close together one host's
requests came (politeness).

``latency`` makes every answer take that long to arrive, as a distant or slow server's would:
each connection has its own server thread, which sleeps before it writes, so answers on other
connections are not held up. A crawler's fetches in flight then bound its rate (about
concurrency / latency pages per second), not the server and not the crawler's CPU.
"""

from __future__ import annotations

import collections
import functools
import http.server
import random
import socket
import socketserver
import threading
import time

START_ATTEMPTS = 5


def host_address(i: int) -> str:
    """The i-th host (0-based): 127.0.0.(i+1)."""
    return f"127.0.0.{i + 1}"


def link_graph(hosts: int, pages: int, *, cross: int = 2, popular: float = 0.5,
               seed: int = 7) -> dict[tuple[int, str], list[tuple[int, str]]]:
    """(host, path) -> the (host, path) pages it links to. Each host has ``/`` and ``pages``
    pages ``/pI.html`` in a binary tree under ``/``, plus ``cross`` links per page to other
    hosts: to their root with probability ``popular`` (the few URLs most links point to, as
    on the web), else to a random page; the last page of every host is linked only from
    other hosts."""
    rng = random.Random(seed)
    graph: dict[tuple[int, str], list[tuple[int, str]]] = {}
    for h in range(hosts):
        graph[(h, "/")] = [(h, "/p0.html")]
        for i in range(pages):
            own = [(h, f"/p{c}.html") for c in (2 * i + 1, 2 * i + 2) if c < pages - 1]
            others = [(rng.randrange(hosts), "/" if rng.random() < popular else f"/p{rng.randrange(pages)}.html")
                      for _ in range(cross if hosts > 1 else 0)]
            graph[(h, f"/p{i}.html")] = own + [(o, p) for o, p in others if o != h] + [(h, "/")]
    for h in range(hosts):  # each host's last page: a link from another host's root
        graph[((h + 1) % hosts, "/")].append((h, f"/p{pages - 1}.html"))
    return graph


def reachable(graph, roots) -> set[tuple[int, str]]:
    seen, todo = set(roots), list(roots)
    while todo:
        for target in graph.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 5

    def __init__(self, *args, site, host: int, **kwargs):
        self.site, self.host = site, host
        super().__init__(*args, **kwargs)

    def do_GET(self):  # the base class's name
        self.site.record(self.host, self.path, self.headers.get("User-Agent", ""))
        if self.site.latency:
            time.sleep(self.site.latency)
        links = self.site.graph.get((self.host, self.path))
        if links is None:
            body, status = b"not here", 404
        else:
            anchors = "".join(f'<a href="{self.site.url(h, p)}">{h}{p}</a>\n' for h, p in links)
            body, status = f"<!DOCTYPE html><html><body>{anchors}</body></html>".encode(), 200
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # the base class's signature
        pass


class _HostServer(http.server.ThreadingHTTPServer):
    """One host's server: a thread per connection, without HTTPServer's reverse lookup of its
    address at bind time (``getfqdn``, ~75 ms per address here: 15 s for 200 hosts)."""

    daemon_threads = True

    def server_bind(self) -> None:
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]


class MultiHostSite:
    """``with MultiHostSite(hosts, pages) as site``: serves :func:`link_graph` on 127.0.0.1..N.

    ``site.seeds``: every host's root; ``site.reachable``: the pages those reach (as URLs);
    ``site.requests``: (host, path, arrival time, User-Agent) of every request answered;
    ``site.fetch_counts()`` and ``site.closest_gap()`` read them. ``latency``: seconds each
    answer waits before it is written (see the module docstring)."""

    def __init__(self, hosts: int, pages: int, *, cross: int = 2, popular: float = 0.5, seed: int = 7,
                 latency: float = 0.0):
        if not 1 <= hosts <= 254:
            raise ValueError("hosts must be in 1..254 (127.0.0.1 to 127.0.0.254)")
        if latency < 0:
            raise ValueError("latency cannot be negative")
        self.hosts, self.latency = hosts, latency
        self.graph = link_graph(hosts, pages, cross=cross, popular=popular, seed=seed)
        self.port = 0
        self.requests: list[tuple[int, str, float, str]] = []
        self._lock = threading.Lock()
        self._servers: list[_HostServer] = []

    handler_class = _Handler
    """The request handler each host's server uses (``site`` and ``host`` given); a subclass
    of :class:`_Handler` serves more than the link graph (robots.txt, redirects...)."""

    def url(self, host: int, path: str) -> str:
        return f"http://{host_address(host)}:{self.port}{path}"

    @property
    def seeds(self) -> list[str]:
        return [self.url(h, "/") for h in range(self.hosts)]

    @property
    def reachable(self) -> set[str]:
        return {self.url(h, p) for h, p in reachable(self.graph, [(h, "/") for h in range(self.hosts)])}

    def record(self, host: int, path: str, agent: str = "") -> None:
        with self._lock:
            self.requests.append((host, path, time.monotonic(), agent))

    def fetch_counts(self, agent: str = "") -> collections.Counter:
        """URL -> requests for it (robots.txt left out), by user agents containing ``agent``."""
        with self._lock:
            return collections.Counter(self.url(h, p) for h, p, _, a in self.requests
                                       if p != "/robots.txt" and agent in a)

    def page_span(self) -> float:
        """Seconds from the first page request to the last (0 with fewer than two)."""
        with self._lock:
            times = [at for _, path, at, _ in self.requests if path != "/robots.txt"]
        return max(times) - min(times) if len(times) > 1 else 0.0

    def closest_gap(self) -> float:
        """The shortest time between two page requests to the same host (inf with none);
        robots.txt is left out: a prerequisite, fetched right before the host's first page."""
        by_host: dict[int, list[float]] = collections.defaultdict(list)
        with self._lock:
            for host, path, at, _ in self.requests:
                if path != "/robots.txt":
                    by_host[host].append(at)
        gaps = [b - a for times in by_host.values() for a, b in zip(sorted(times), sorted(times)[1:])]
        return min(gaps, default=float("inf"))

    def start(self) -> MultiHostSite:
        for _attempt in range(START_ATTEMPTS):
            try:
                self._bind_all()
                break
            except OSError:  # the port was free on 127.0.0.1 but not on another address
                self._close_all()
        else:
            raise OSError("no port free on every address of the multi-host site")
        for server in self._servers:
            threading.Thread(target=server.serve_forever, name="multihost-site", daemon=True).start()
        return self

    def _bind_all(self) -> None:
        self.port = 0
        for h in range(self.hosts):
            handler = functools.partial(self.handler_class, site=self, host=h)
            server = _HostServer((host_address(h), self.port), handler, bind_and_activate=False)
            server.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self._servers.append(server)
            server.server_bind()
            server.server_activate()
            self.port = server.server_address[1]

    def _close_all(self) -> None:
        for server in self._servers:
            server.server_close()
        self._servers = []

    def stop(self) -> None:
        # All at once: each shutdown waits up to serve_forever's poll interval (0.5 s), which
        # one after the other is 100 s for 200 hosts.
        stoppers = [threading.Thread(target=server.shutdown) for server in self._servers]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join()
        self._close_all()

    def __enter__(self) -> MultiHostSite:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
