"""Sites the crawl tests generate and serve on 127.0.0.1 themselves.

:func:`write_site` writes a static site of HTML pages whose link graph is known;
:class:`CountingServer` serves a folder over HTTP/1.1 keep-alive from a thread of the test
process and counts every request by path, so tests see what a crawler fetched from the
server's side; ``routes`` add dynamic answers (traps) by path prefix.
"""

from __future__ import annotations

import collections
import functools
import http.server
import random
import subprocess
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def page(title: str, links: list[str], body: str = "") -> str:
    anchors = "".join(f'<a href="{href}">{href}</a>\n' for href in links)
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body>{body}{anchors}</body></html>")


def write_pages(root: Path, site: dict[str, list[str]]) -> Path:
    """A small site at ``root``: each page (a file name) with its links (file names)."""
    root.mkdir()
    for name, links in site.items():
        (root / name).write_text(page(name, links))
    return root


def write_site(root: Path, pages: int = 300, *, seed: int = 7, orphans: int = 5, one_path: int = 0) -> set[str]:
    """``pages`` HTML pages in ten folders, each reachable from ``index.html`` (a random tree
    plus random cross links, relative and absolute-path forms, fragments, a dangling link),
    and ``orphans`` pages nothing links to. With ``one_path``, that many pages more in a folder
    ``t/``, a random tree under ``index.html`` whose pages link only to their children,
    ``index.html`` and the dangling link: each has exactly one in-link, so a crawl that loses
    one never finds it, nor anything below it, again. Returns the reachable pages' paths."""
    rng = random.Random(seed)
    names = [f"d{i % 10}/p{i}.html" for i in range(pages)]
    links: dict[str, list[str]] = {"index.html": []}
    for i, name in enumerate(names):
        parent = "index.html" if i < 5 else names[rng.randrange(i)]
        links.setdefault(parent, []).append(name)
        links.setdefault(name, [])
    for name in names:
        links[name] += [rng.choice(names) for _ in range(4)] + ["index.html", "d0/missing.html"]
    tree_rng, tree = random.Random(f"{seed}/one_path"), [f"t/q{i}.html" for i in range(one_path)]
    for i, name in enumerate(tree):
        links.setdefault("index.html" if i < 3 else tree[tree_rng.randrange(i)], []).append(name)
        links.setdefault(name, [])
    for name in tree:
        links[name] += ["index.html", "d0/missing.html"]
    for name, targets in links.items():
        depth = name.count("/")
        hrefs = []
        for n, target in enumerate(targets):
            if n % 3 == 0:
                hrefs.append("/" + target)                   # absolute path
            elif n % 3 == 1:
                hrefs.append("../" * depth + target + "#s")  # relative, with a fragment
            else:
                hrefs.append("../" * depth + target)
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(page(f"Page {name}", hrefs))
    for i in range(orphans):
        (root / f"orphan{i}.html").write_text(page("orphan", ["index.html"]))
    return {"index.html", *names, *tree}


class _Handler(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10

    def __init__(self, *args, server_state, **kwargs):
        self.state = server_state
        super().__init__(*args, **kwargs)

    def do_GET(self):  # the base class's name
        with self.state.lock:
            self.state.counts[self.path] += 1
        for prefix, route in self.state.routes.items():
            if self.path.startswith(prefix):
                return route(self)
        return super().do_GET()

    def log_message(self, format, *args):
        pass


def answer(handler, status: int, body: bytes = b"", content_type: str = "text/html", headers=()) -> None:
    """Send a whole response from a route."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    for name, value in headers:
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


DANGLING = "d0/missing.html"   # the link every page of write_site makes to a page that is not there


def assert_each_page_fetched_once(counts: dict[str, int], reachable: set[str]) -> None:
    """A crawl of a :func:`write_site` site fetched every reachable page and the dangling link,
    and nothing twice (``counts``: :meth:`CountingServer.page_counts`)."""
    assert {path for path in counts if path.endswith(".html")} == reachable | {DANGLING}
    assert set(counts.values()) == {1}, {p: n for p, n in counts.items() if n != 1}


class CountingServer:
    """``with CountingServer(root) as base_url``: serves ``root``; ``counts[path]`` = GETs of it."""

    def __init__(self, root: Path, routes: dict | None = None):
        self.root, self.routes = root, routes or {}
        self.counts: collections.Counter = collections.Counter()
        self.lock = threading.Lock()
        self._server = None

    def __enter__(self) -> str:
        handler = functools.partial(_Handler, directory=str(self.root), server_state=self)
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def quiet(self) -> None:
        """Print nothing for a connection a client broke (a crawl killed -9 resets its own)."""
        self._server.handle_error = lambda request, address: None

    def page_counts(self) -> dict[str, int]:
        """GETs per served path (query kept), robots.txt left out."""
        with self.lock:
            return {path.lstrip("/"): n for path, n in self.counts.items() if path != "/robots.txt"}


def crawl_command(seed: str, state: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "pycrawler", "crawl", seed, "--state", str(state), "--no-progress", *options]


def run_crawl(seed: str, state: Path, *options: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(crawl_command(seed, state, *options), cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def fetched_records(state: Path) -> dict:
    """URL -> CrawlUrl of the crawl's ``fetched`` database."""
    from pycrawler.crawl.engine import FETCHED
    from pycrawler.records.crawl_url import decode
    from pycrawler.store import Environment
    from pycrawler.store.tuple import java_utf_decode

    with Environment(state, read_only=True) as env:
        return {java_utf_decode(k[:-1]): decode(v) for k, v in env.open_database(FETCHED).items()}
