"""A real crawler4j 4.4 crawl killed with -9, continued by crawler4j itself and by pycrawler.

tests/crawler4j_crawl/Crawler4jCrawl.java is a crawl as crawler4j's README sets one up (a
WebCrawler subclass and a CrawlController, resumable crawling on, 2 threads), compiled here
against target/crawler4j-4.4.0/ (crawler4j 4.4.0 and its dependencies, JE 5.0.73 in place of its
5.0.84). It crawls a loopback site: a few hundred pages, a chain of links far deeper than
pycrawler's default depth limit, ``//`` and ``jsessionid`` spellings of its pages, a robots.txt
that disallows a folder the pages link to, a dangling link.

The crawl is killed with -9 at several points, each time resumed by crawler4j in its folder,
and a byte copy of the storage folder is taken at each kill. From each copy, at the same time
against the same server (told apart by their User-Agent):

- crawler4j resumes a copy of it, to its end;
- ``pycrawler crawler4j import`` and ``pycrawler crawl``, exactly the commands docs/crawler4j.md
  gives, continue it, to its end.

Held: pycrawler fetches every page crawler4j's resume fetches (nothing lost), repeats (pages
fetched before the kill, or twice, under any spelling crawler4j folds) at most the crawl's
threads, obeys robots.txt, and neither inspect nor import changes a byte of the frontier.
``crawler4j inspect``'s count of URLs crawler4j dropped is held to what the crawl printed.

The outcome does not depend on the leg's JE: every pycrawler command here runs with no JE named
and loads the frontier's own (5.0.73), as crawler4j does (tests/conftest.py ANY_JE).
"""

from __future__ import annotations

import collections
import functools
import hashlib
import http.server
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import ROOT, missing, with_je
from crawl_sites import CountingServer, _Handler, page, write_site

CRAWLER4J_HOME = ROOT / "target" / "crawler4j-4.4.0"
PROGRAM = ROOT / "tests" / "crawler4j_crawl" / "Crawler4jCrawl.java"
THREADS = 2
POLITENESS_MS = 20
PAGES = 200          # write_site's pages
CHAIN = 45           # pages in the deep chain: its end is 46 links from the seed
HUB = 150            # new pages the hub links to
KILLS = (("hub.html", 0, 3000), (120, 0.011, 0), (220, 0.023, 0))
"""When to kill -9, each after the last (resumed by crawler4j in its folder): once crawler4j has
fetched a URL ending so, or made its Nth fetch in all its runs so far, ``pause`` seconds on and
once its JE log grew by ``log_bytes``. The hub's kill lands while crawler4j gives the hub's 150
new links their docids, one committed transaction each (about 100 bytes of log), before it
queues any: those URLs are dropped."""
CRAWLER4J_AGENT = "crawler4j"


# -- the site ----------------------------------------------------------------------------------
def write_the_site(root: Path) -> set[str]:
    """write_site's pages, and a deep chain whose pages link to other spellings of the site's
    pages and to a folder robots.txt disallows. Returns the reachable pages' paths."""
    reachable = write_site(root, PAGES, seed=11)
    chain = [f"chain/c{i}.html" for i in range(CHAIN)]
    (root / "chain").mkdir()
    (root / "private").mkdir()
    for i, name in enumerate(chain):
        target = f"d{i % 10}/p{i * 7 % PAGES}.html"
        folder, file = target.split("/")
        links = [f"/chain/c{i + 1}.html"] if i + 1 < CHAIN else []
        links += [f"/{folder}//{file}",                   # crawler4j folds '//'
                  f"..//{folder}/{file}?jsessionid=S{i}",   # and drops a jsessionid parameter,
                  f"/{target};jsessionid=P{i}",            # but keeps a ;jsessionid= path parameter
                  f"/private/c{i}.html"]                   # robots.txt disallows it
        (root / name).write_text(page(name, links))
        (root / "private" / f"c{i}.html").write_text(page("private", []))
    hub = [f"hub/h{i}.html" for i in range(HUB)]
    (root / "hub").mkdir()
    for name in hub:
        (root / name).write_text(page(name, ["/index.html"]))
    (root / "hub.html").write_text(page("hub", ["/" + name for name in hub]))
    index = root / "index.html"
    index.write_text(index.read_text().replace("<body>", '<body><a href="hub.html">hub</a>'
                                                         '<a href="chain/c0.html">chain</a>'
                                                         '<a href="/private/index.html">private</a>'))
    (root / "private" / "index.html").write_text(page("private", []))
    (root / "robots.txt").write_text("User-agent: *\nDisallow: /private/\n")
    return reachable | set(chain) | set(hub) | {"hub.html"}


def page_of(request_path: str) -> str:
    """The page a request asked for, whatever its spelling crawler4j folds: '//' made '/', a
    jsessionid query parameter dropped (a ;jsessionid= path parameter is another page: 404)."""
    path, _, query = request_path.partition("?")
    path = re.sub("/+", "/", path)
    kept = [p for p in query.split("&") if p and p.split("=")[0].lower() != "jsessionid"]
    return path.lstrip("/") + ("?" + "&".join(kept) if kept else "")


def site_page(url: str) -> str:
    """A frontier URL's page, as the server counts it."""
    return page_of(url.split("/", 3)[3])


class _AgentHandler(_Handler):
    disable_nagle_algorithm = True   # no 40 ms wait for a delayed ACK between headers and body

    def do_GET(self):  # the base class's name
        agent = "crawler4j" if CRAWLER4J_AGENT in self.headers.get("User-Agent", "") else "pycrawler"
        with self.state.lock:
            self.state.counts[(agent, self.path)] += 1
        return http.server.SimpleHTTPRequestHandler.do_GET(self)


class AgentServer(CountingServer):
    """Serves the site and counts GETs per (crawler, path): crawler4j's runs and pycrawler's
    can go on at once against one server (the frontier's URLs name its port)."""

    def __enter__(self) -> str:
        handler = functools.partial(_AgentHandler, directory=str(self.root), server_state=self)
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        self._server.handle_error = lambda request, address: None   # connections a kill -9 broke
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def pages(self, agent: str) -> collections.Counter:
        """GETs of each page (:func:`page_of`) by ``agent`` so far, robots.txt left out."""
        with self.lock:
            counts = collections.Counter()
            for (who, path), n in self.counts.items():
                if who == agent and path != "/robots.txt":
                    counts[page_of(path)] += n
            return counts


# -- the programs --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def program(tmp_path_factory) -> list[str]:
    """The java command line of the compiled crawl program."""
    jars = sorted(CRAWLER4J_HOME.glob("*.jar"))
    if not any(jar.name == "crawler4j-4.4.0.jar" for jar in jars):
        missing(f"{CRAWLER4J_HOME.relative_to(ROOT)} holds no crawler4j-4.4.0.jar (scripts/setup resolves it)")
    classes = tmp_path_factory.mktemp("crawler4j-program")
    classpath = os.pathsep.join([str(classes), *map(str, jars)])
    done = subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(classes), str(PROGRAM)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ["java", "-Xmx256m", "-cp", classpath, "Crawler4jCrawl"]


def pycrawler(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """A pycrawler command as a user runs it: no JE named, so it loads the frontier's."""
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, env=with_je(None), timeout=timeout)


def log_size(storage: Path) -> int:
    return sum(p.stat().st_size for p in (storage / "frontier").glob("*.jdb"))


def crawler4j(program, storage: Path, seed: str, *, kill_after: int | str | None = None,
              pause: float = 0.0, log_bytes: int = 0) -> list[str]:
    """Run (or resume) the crawl in ``storage``; kill it -9 after its ``kill_after``th fetch, or
    its fetch of a URL ending in ``kill_after`` (None: let it end), ``pause`` seconds on and once
    its log grew by ``log_bytes`` (or 5 s passed). Returns its output lines."""
    process = subprocess.Popen([*program, str(storage), str(POLITENESS_MS), str(THREADS), seed],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lines, fetched = [], 0
    deadline = time.monotonic() + 180
    try:
        for line in process.stdout:
            lines.append(line.rstrip("\n"))
            fetched += line.startswith("status\t")
            if (isinstance(kill_after, int) and fetched >= kill_after or isinstance(kill_after, str)
                    and line.startswith("status\t") and line.rstrip("\n").endswith("/" + kill_after)):
                time.sleep(pause)
                grown, until = log_size(storage) + log_bytes, time.monotonic() + 5
                while log_bytes and log_size(storage) < grown and time.monotonic() < until:
                    time.sleep(0.001)
                process.send_signal(signal.SIGKILL)
                lines += process.stdout.read().splitlines()
                break
            assert time.monotonic() < deadline, "crawler4j ran for 3 minutes"
        process.wait(60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if kill_after is None:
        assert lines[-1:] == ["done"], lines[-5:]
    else:
        assert process.returncode == -signal.SIGKILL
    return lines


def file_hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# -- the crawls ----------------------------------------------------------------------------------
class Kill:
    """One kill -9 of the crawl and what came of continuing from it both ways."""

    def __init__(self, at: int | str, snapshot: Path, before: collections.Counter, printed: set[str]):
        self.at, self.snapshot, self.before, self.printed = at, snapshot, before, printed
        self.inspect = self.import_out = ""
        self.by_crawler4j = self.by_pycrawler = collections.Counter()
        self.unchanged = False
        self.seconds = {}

    def repeats(self, fetched: collections.Counter) -> int:
        """Pages fetched again: before the kill, or more than once after it."""
        return sum(n - (0 if self.before[p] else 1) for p, n in fetched.items())


@pytest.fixture(scope="module")
def crawl(program, tmp_path_factory):
    """The crawl killed at each of :data:`KILLS`, and each kill's copy continued by crawler4j
    and by pycrawler (with the docs' commands) at once. Returns (kills, reachable pages)."""
    scratch = tmp_path_factory.mktemp("crawler4j-real")
    reachable = write_the_site(scratch / "site")
    server = AgentServer(scratch / "site")
    kills = []
    with server as base:
        seed = base + "index.html"
        storage = scratch / "storage"
        printed: set[str] = set()
        for n, (at, pause, log_bytes) in enumerate(KILLS):
            lines = crawler4j(program, storage, seed, kill_after=at - len(printed) if isinstance(at, int) else at,
                              pause=pause, log_bytes=log_bytes)
            printed |= {line.split("\t")[2] for line in lines if line.startswith("status\t")}
            snapshot = scratch / f"kill{n}"
            shutil.copytree(storage, snapshot)
            (snapshot / "frontier" / "je.lck").unlink(missing_ok=True)   # as a copied frontier
            kills.append(Kill(at, snapshot, server.pages("crawler4j"), set(printed)))
        for kill in kills:
            kill_dir = kill.snapshot
            before = file_hashes(kill_dir)
            resume = kill_dir.with_name(kill_dir.name + "-crawler4j")
            shutil.copytree(kill_dir, resume)
            c4j_before, py_before = server.pages("crawler4j"), server.pages("pycrawler")
            started = time.monotonic()
            outcome: list = []

            def resume_crawl(folder=resume, outcome=outcome):
                try:
                    outcome.append(crawler4j(program, folder, seed))
                except BaseException as exc:  # handed to the test's thread
                    outcome.append(exc)

            resumed = threading.Thread(target=resume_crawl, daemon=True)
            resumed.start()
            # The docs' commands (docs/crawler4j.md, "Continuing a crawler4j crawl").
            kill.inspect = pycrawler("crawler4j", "inspect", kill_dir / "frontier")
            state = kill_dir.with_name(kill_dir.name + "-pycrawler")
            kill.import_out = pycrawler("crawler4j", "import", kill_dir / "frontier", "--into", state,
                                        "--politeness-ms", POLITENESS_MS)
            assert kill.import_out.returncode == 0, kill.import_out.stderr
            continued = pycrawler("crawl", seed, "--state", state)
            assert continued.returncode == 0, continued.stderr
            kill.seconds["pycrawler"] = time.monotonic() - started
            resumed.join(200)
            assert outcome and isinstance(outcome[0], list), f"crawler4j's resume: {outcome or 'still running'}"
            kill.seconds["both"] = time.monotonic() - started
            kill.by_crawler4j = server.pages("crawler4j") - c4j_before
            kill.by_pycrawler = server.pages("pycrawler") - py_before
            kill.unchanged = file_hashes(kill_dir) == before
            kill.export = pycrawler("crawler4j", "export", kill_dir / "frontier", "--pending", state / "p.jsonl",
                                    "--done", state / "d.jsonl")
            kill.pending = [json.loads(line)["url"] for line in (state / "p.jsonl").read_text().splitlines()]
            kill.done = [json.loads(line)["url"] for line in (state / "d.jsonl").read_text().splitlines()]
    return kills, reachable


def test_pycrawler_loses_nothing_crawler4j_fetches_and_repeats_at_most_its_threads(crawl):
    kills, reachable = crawl
    for kill in kills:
        lost = set(kill.by_crawler4j) - set(kill.by_pycrawler)
        assert not lost, (kill.at, sorted(lost)[:10])
        # crawler4j's own repeats are shown beside pycrawler's, to tell whose a repeat is
        repeated = {who: {p: n for p, n in fetched.items() if n > 1 or kill.before[p]}
                    for who, fetched in (("pycrawler", kill.by_pycrawler), ("crawler4j", kill.by_crawler4j))}
        assert kill.repeats(kill.by_pycrawler) <= THREADS, (kill.at, repeated)
        unfetched = {who: len(reachable - set(kill.before) - set(fetched))
                     for who, fetched in (("crawler4j", kill.by_crawler4j), ("pycrawler", kill.by_pycrawler))}
        print(f"kill at {kill.at}: site pages never fetched {unfetched}; "
              f"before {len(kill.before)} pages; crawler4j's resume {len(kill.by_crawler4j)} "
              f"pages, {kill.repeats(kill.by_crawler4j)} repeats; pycrawler {len(kill.by_pycrawler)} pages, "
              f"{kill.repeats(kill.by_pycrawler)} repeats, {len(lost)} lost; "
              f"{kill.seconds['pycrawler']:.1f} s import+crawl, {kill.seconds['both']:.1f} s both")
    # crawler4j can itself cut the chain: a kill that lands while it moves a batch of URLs from
    # pending to in process drops them, and a URL with a docid is never queued again. Then
    # neither continuation goes down the chain, and what follows cannot be shown by this crawl.
    cut = sorted(page for k in kills for page in map(site_page, set(k.done) - k.printed)
                 if page.startswith("chain/"))
    if cut:
        print(f"crawler4j cut the chain at {cut[:3]}: the depth and ;jsessionid= points not shown")
        return
    # The chain went on past pycrawler's own default depth limit (20), as crawler4j has none.
    assert any(k.by_pycrawler[f"chain/c{i}.html"] for k in kills for i in range(21, CHAIN))
    # A spelling crawler4j keeps apart is fetched as a page of its own (;jsessionid=: a 404).
    assert any(";jsessionid=" in p for k in kills for p in k.by_pycrawler)


def test_robots_txt_is_obeyed_by_both(crawl):
    kills, _ = crawl
    for kill in kills:
        for fetched in (kill.before, kill.by_crawler4j, kill.by_pycrawler):
            assert not [p for p in fetched if p.startswith("private/")]


def test_inspect_and_import_change_no_byte_and_import_records_crawler4j_settings(crawl):
    kills, _ = crawl
    for kill in kills:
        assert kill.unchanged, kill.at
        state = kill.snapshot.with_name(kill.snapshot.name + "-pycrawler")
        settings = json.loads((state / "crawl.json").read_text())
        assert settings["canon"] == "crawler4j"
        assert json.loads((state / "crawl-defaults.json").read_text()) == {
            "max_depth": None, "delay": f"{POLITENESS_MS / 1000:g}"}


def test_inspect_names_the_urls_crawler4j_dropped_at_the_kill(crawl):
    """crawler4j gives a URL a docid before it queues it, and deletes a batch from PendingURLsDB
    before InProcessPagesDB holds it: a kill between leaves URLs with a docid, neither pending
    nor fetched. inspect counts them from Processed-Pages, which can run ahead of
    InProcessPagesDB by a URL per thread (counted, then removed)."""
    kills, _ = crawl
    for kill in kills:
        assert kill.inspect.returncode == 0, kill.inspect.stderr
        line = next(text for text in kill.inspect.stdout.splitlines() if "dropped by crawler4j" in text)
        processed, dropped = map(int, re.match(r"\s+(\d+) processed \(Processed-Pages\), (\d+) dropped", line).groups())
        truly_dropped = set(kill.done) - kill.printed   # a docid, not pending, never fetched
        assert dropped <= len(truly_dropped) <= dropped + THREADS, (kill.at, line, sorted(truly_dropped)[:5])
        print(f"kill at {kill.at}: {len(kill.pending)} pending, {processed} processed, {dropped} dropped "
              f"({len(truly_dropped)} URLs with a docid, neither pending nor fetched)")


def test_pycrawler_folds_urls_exactly_as_crawler4j(program):
    """pycrawler's crawler4j canonical form equals crawler4j's URLCanonicalizer on spellings of
    every rule it has (and the ones it lacks: ;jsessionid= path parameters stay)."""
    from pycrawler.keys.crawler4j_canon import canonical

    rng = random.Random(3)
    parts = ["a", "b", ".", "..", "", "x y", "%7E", "%7e", "~u", "c;jsessionid=1", "d%2Fe", "é", "%C3%A9", "f|g",
             "h%zz", "i\\j", "q\u3000r"]
    queries = ["", "?", "?a=1", "?b=2&a=1", "?jsessionid=X", "?JSESSIONID=X&y=2", "?x=1&&y", "?x=a+b", "?x=%41",
               "?x=%zz", "?x=1&x=2&y=3&x=4", "?=v", "?k=", "?k", "?PHPSESSID=1&z=%E4%B8%AD", "?a=b=c", "?x=é",
               "?x=*~", "?x=1;jsessionid=2", "?aspsessionid=1"]
    hosts = ["http://127.0.0.1:8080", "HTTP://Example.COM:80", "https://h.example:443", "http://u:p@h.example",
             "http://h.example", "https://h.example:8443"]
    urls = sorted({rng.choice(hosts) + "/" + "/".join(rng.choice(parts) for _ in range(rng.randrange(0, 5)))
                   + ("/" if rng.random() < 0.2 else "") + rng.choice(queries) + ("#f" if rng.random() < 0.2 else "")
                   for _ in range(1500)})
    done = subprocess.run([*program, "canonicalize"], input="\n".join(urls) + "\n", capture_output=True,
                          encoding="utf-8", timeout=120)
    assert done.returncode == 0, done.stderr
    theirs = dict(line.split("\t") for line in done.stdout.splitlines())
    assert len(theirs) == len(urls)
    differ = {url: (theirs[url], canonical(url)) for url in urls if theirs[url] != (canonical(url) or "null")}
    assert not differ, list(differ.items())[:5]
