"""The real Heritrix 3.13.0 for tests, and a loopback site made to be crawled by it.

:class:`Heritrix` starts the distribution ``scripts/setup`` unpacks into target/heritrix-3.13.0
as its own JVM on 127.0.0.1 (a free port, a random password, its jobs folder a scratch folder
of the test), and drives it through its REST API (digest authentication, its ad-hoc HTTPS
certificate): create a job from the distribution's own profile, build, launch, unpause, wait
for N URIs done, pause, checkpoint, read its report, and run scripts in its scripting console.
:meth:`Heritrix.frontier_view` prints Heritrix's own view of its frontier there: every pending
CrawlURI (queue, directive, precedence, ordinal, URI, via, hop path) in the order its
``pending`` database holds them, and every ``alreadySeenUrl`` key. :meth:`Heritrix.kill` ends
the JVM with SIGKILL; :meth:`Heritrix.stop` ends it with SIGTERM (SIGKILL after a timeout).
Only the process this object started is ever signalled.

:class:`HeritrixSite` is :class:`pycrawler.testing.multihost.MultiHostSite` (several hosts,
127.0.0.1..N on one port, a binary tree of pages per host and cross-host links, every request
recorded) with what a real crawler has to handle on top: a robots.txt that disallows
``/private/`` (linked from every root), redirects (one to another host), links to missing pages
(404), a deep chain of pages, and links spelt in alias forms (``HTTP://`` in capitals, a
``#fragment``, a relative path) that Heritrix and pycrawler both fold into one URL.
:meth:`HeritrixSite.expected` is the ground truth: every URL a crawl from the roots that obeys
robots.txt fetches, once each. :class:`HeldSite` is that site holding its answers while its gate
is closed, so that a running crawl's frontier holds still.

:func:`console_script` is the Python script docs/heritrix.md gives for Heritrix's scripting
console (GraalPy's JSR-223 engine): it counts, lists and exports a running crawl's pending URLs.
"""

from __future__ import annotations

import collections
import json
import os
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import httpx

from pycrawler.local_servers import free_port
from pycrawler.testing.multihost import MultiHostSite, _Handler

ROOT = Path(__file__).resolve().parent.parent
HERITRIX_HOME = ROOT / "target" / "heritrix-3.13.0"
PROFILE = "org/archive/crawler/restlet/profile-crawler-beans.cxml"
START_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
CONTACT = "http://127.0.0.1/contact"
DISALLOWED = "/private/"


# -- the site ------------------------------------------------------------------------------------
class _SiteHandler(_Handler):
    def do_GET(self):  # the base class's name
        site, host, path = self.site, self.host, self.path
        site.record(host, path, self.headers.get("User-Agent", ""))
        headers = [("Content-Type", "text/html")]
        if path == "/robots.txt":
            status, body = 200, f"User-agent: *\nDisallow: {DISALLOWED}\n".encode()
            headers = [("Content-Type", "text/plain")]
        elif (host, path) in site.redirects:
            status, body = 301, b""
            headers.append(("Location", site.url(*site.redirects[(host, path)])))
        elif (host, path) in site.graph:
            anchors = "".join(f'<a href="{site.href(host, target, i)}">link {i}</a>\n'
                              for i, target in enumerate(site.graph[(host, path)]))
            status, body = 200, f"<!DOCTYPE html><html><body>{anchors}</body></html>".encode()
        else:
            status, body = 404, b"not here"
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class HeritrixSite(MultiHostSite):
    """``with HeritrixSite(hosts, pages) as site``: the multi-host site with robots.txt,
    redirects, 404s, a deep chain and alias spellings (see the module docstring).

    ``site.redirects``: (host, path) -> the (host, path) it answers 301 to; ``site.expected()``:
    the URLs a crawl that obeys robots.txt fetches; ``site.fetch_counts()``: requests per URL."""

    handler_class = _SiteHandler

    def __init__(self, hosts: int = 4, pages: int = 120, *, chain: int = 12, seed: int = 7):
        super().__init__(hosts, pages, seed=seed)
        self.redirects: dict[tuple[int, str], tuple[int, str]] = {}
        graph = self.graph
        for h in range(hosts):
            root = graph[(h, "/")]
            # robots.txt keeps crawlers out of this folder: linked from the root and a deep page
            graph[(h, "/private/a.html")] = [(h, "/private/b.html"), (h, "/p3.html")]
            graph[(h, "/private/b.html")] = [(h, "/")]
            root.append((h, "/private/a.html"))
            graph[(h, f"/p{pages // 2}.html")].append((h, "/private/b.html"))
            # redirects to pages of the tree, one to another host's page
            for k in range(3):
                self.redirects[(h, f"/r{k}.html")] = (h, f"/p{(7 * k + 5 + h) % (pages - 1)}.html")
                graph[(h, f"/p{9 * k + 1}.html")].append((h, f"/r{k}.html"))
            self.redirects[(h, "/r9.html")] = ((h + 1) % hosts, "/p2.html")
            root.append((h, "/r9.html"))
            # pages that are not there
            graph[(h, "/p4.html")] += [(h, "/m0.html"), (h, "/m1.html")]
            graph[(h, f"/p{pages - 2}.html")].append((h, "/m0.html"))
            # a deep chain from the root
            root.append((h, "/c1.html"))
            for i in range(1, chain):
                graph[(h, f"/c{i}.html")] = [(h, f"/c{i + 1}.html")]
            graph[(h, f"/c{chain}.html")] = [(h, "/"), (h, "/p1.html")]

    def href(self, host: int, target: tuple[int, str], i: int) -> str:
        """The ``i``-th link of a page of ``host`` to ``target``, in one of its spellings."""
        url = self.url(*target)
        spelling = (i + host + len(target[1])) % 5
        if spelling == 0:
            return "HTTP" + url[4:]
        if spelling == 1:
            return url + "#top"
        if spelling == 2 and target[0] == host:
            return target[1]
        return url

    def expected(self) -> set[str]:
        """Every URL a crawl from the roots fetches when it obeys robots.txt: pages, redirects
        and missing pages, each once (robots.txt itself left out); and every host's
        ``/favicon.ico`` (404 here), which Heritrix infers for every HTTP URI it fetches
        (``ExtractorHTTP``) though no page links it."""
        roots = [(h, "/") for h in range(self.hosts)]
        seen, todo = set(roots), list(roots)
        while todo:
            node = todo.pop()
            targets = [self.redirects[node]] if node in self.redirects else self.graph.get(node, ())
            for target in targets:
                if target not in seen and not target[1].startswith(DISALLOWED):
                    seen.add(target)
                    todo.append(target)
        return {self.url(h, p) for h, p in seen} | {self.url(h, "/favicon.ico") for h in range(self.hosts)}

    def disallowed_requests(self) -> list[str]:
        """URLs under the folder robots.txt disallows that were requested (none, for a crawler
        that obeys it)."""
        with self._lock:
            return [self.url(h, p) for h, p, _, _ in self.requests if p.startswith(DISALLOWED)]


class _HeldHandler(_SiteHandler):
    def do_GET(self):  # the base class's name
        if self.path != "/robots.txt" and not self.site.gate.is_set():
            self.site.hold(self.host, self.path)
        super().do_GET()


class HeldSite(HeritrixSite):
    """:class:`HeritrixSite` whose page requests, while ``gate`` is clear, wait until it is set
    (robots.txt is answered); ``held`` lists them. A held request is recorded as a request when
    it is let through."""

    handler_class = _HeldHandler

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.gate = threading.Event()
        self.gate.set()
        self.held: list[str] = []

    def hold(self, host: int, path: str) -> None:
        with self._lock:
            self.held.append(self.url(host, path))
        self.gate.wait()

    def held_count(self) -> int:
        with self._lock:
            return len(self.held)


# -- the console's Python script ---------------------------------------------------------------
def console_script(limit: int, export: Path | None) -> str:
    """The python block of docs/heritrix.md's "Python in a running Heritrix", with its
    ``LIMIT, EXPORT`` line set to these."""
    text = (ROOT / "docs" / "heritrix.md").read_text()
    section = text[text.index("\n## Python in a running Heritrix\n"):]
    script = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    setting = re.compile(r"^LIMIT, EXPORT = .*$", re.M)
    assert setting.search(script), "the docs' script no longer sets LIMIT, EXPORT on a line of its own"
    return setting.sub(f"LIMIT, EXPORT = {limit}, {repr(str(export)) if export else None}", script, count=1)


# -- Heritrix ------------------------------------------------------------------------------------
def profile() -> str:
    """The crawler-beans.cxml of a new job, as the distribution ships it."""
    with zipfile.ZipFile(HERITRIX_HOME / "lib" / "heritrix-engine-3.13.0.jar") as jar:
        return jar.read(PROFILE).decode()


def job_config(seeds: list[str], *, threads: int = 3, scope_urls: list[str] | None = None,
               forget_all_but_latest: bool = False, overrides: dict[str, str] | None = None,
               parallel_queues: int | None = None) -> str:
    """The profile, with: the seeds; no politeness delay (loopback); ``threads`` toe threads;
    a contact URL; checkpoints kept (``forget_all_but_latest`` False) so every one and the
    journal's rotated parts stay; robots.txt obeyed and WARC files written, as the profile has
    them. ``scope_urls``: URLs whose hosts are in scope besides the seeds' (a job with no seeds,
    continuing another crawl from a journal, gets its scope that way). ``parallel_queues``: each
    host's URLs spread at random over that many queues (the profile's queue assignment bean,
    commented out as shipped, put in with ``parallelQueues`` and ``parallelQueuesRandomAssignment``)."""
    settings = {
        "metadata.operatorContactUrl": CONTACT,
        "metadata.jobName": "loopback",
        "metadata.description": "a crawl of a loopback test site",
        "metadata.robotsPolicyName": "obey",
        "crawlController.maxToeThreads": str(threads),
        "disposition.delayFactor": "0.0",
        "disposition.minDelayMs": "0",
        "disposition.maxDelayMs": "0",
        "disposition.respectCrawlDelayUpToSeconds": "0",
        "checkpointService.forgetAllButLatest": "true" if forget_all_but_latest else "false",
        **(overrides or {}),
    }
    text = profile()
    start = text.index("metadata.operatorContactUrl=")
    end = text.index("##..more?..##")
    text = text[:start] + "".join(f"{k}={v}\n" for k, v in settings.items()) + text[end:]
    text = text.replace("http://example.example/example", "\n".join(seeds))
    if parallel_queues:
        bean = text.index('<bean id="queueAssignmentPolicy"')
        opening, closing = text.rindex("<!--", 0, bean), text.index("-->", bean)
        text = (text[:opening] + text[bean:text.index("</bean>", bean)]
                + '<property name="parallelQueuesRandomAssignment" value="true" />\n'
                + text[text.index("</bean>", bean):closing] + text[closing + 3:])
        text = text.replace('<property name="parallelQueues" value="1" />',
                            f'<property name="parallelQueues" value="{parallel_queues}" />', 1)
    if scope_urls:
        surts = "\n".join(scope_urls)
        text = text.replace(
            '<bean id="acceptSurts" class="org.archive.modules.deciderules.surt.SurtPrefixedDecideRule">',
            '<bean id="acceptSurts" class="org.archive.modules.deciderules.surt.SurtPrefixedDecideRule">\n'
            '  <property name="surtsSource"><bean class="org.archive.spring.ConfigString">'
            f'<property name="value"><value>\n{surts}\n</value></property></bean></property>', 1)
    return text


_VIEW_SCRIPT = r"""
import com.sleepycat.je.*
import com.sleepycat.bind.tuple.LongBinding
def frontier = appCtx.getBean('frontier')
def out = new StringBuilder()
frontier.forAllPendingDo({ curi ->
    out.append('P\t').append(curi.getClassKey()).append('\t').append(curi.getSchedulingDirective())
       .append('\t').append(curi.getPrecedence()).append('\t').append(curi.getOrdinal())
       .append('\t').append(curi.getURI()).append('\t').append(curi.getVia() == null ? '' : curi.getVia().toString())
       .append('\t').append(curi.getPathFromSeed()).append('\n')
} as org.apache.commons.collections.Closure)
def seen = appCtx.getBean('uriUniqFilter').alreadySeen
def cursor = seen.openCursor(null, null)
def key = new DatabaseEntry(), value = new DatabaseEntry()
while (cursor.getNext(key, value, null) == OperationStatus.SUCCESS) {
    out.append('S\t').append(Long.toUnsignedString(LongBinding.entryToLong(key), 16)).append('\n')
}
cursor.close()
rawOut.print(out.toString())
"""

Pending = collections.namedtuple("Pending", "queue directive precedence ordinal uri via path_from_seed")


class FrontierView:
    """Heritrix's own view of its frontier: ``pending`` (:data:`Pending` rows in the order of
    its ``pending`` database: queue by queue, each in the order Heritrix hands them out) and
    ``seen`` (the ``alreadySeenUrl`` keys, unsigned). ``report``: the job's REST report."""

    def __init__(self, pending: list[Pending], seen: list[int], report: dict):
        self.pending, self.seen, self.report = pending, seen, report

    def per_queue(self) -> dict[str, int]:
        return dict(collections.Counter(row.queue for row in self.pending))


class HeritrixError(RuntimeError):
    pass


def _from_xml(element):
    """Heritrix's XML report as Python values: an element with children is a dict (a list when
    its children are all ``value``), a number is an int, ``true``/``false`` a bool."""
    children = list(element)
    if not children:
        text = (element.text or "").strip()
        if text.lstrip("-").isdigit():
            return int(text)
        return {"true": True, "false": False}.get(text, text)
    if all(child.tag == "value" for child in children):
        return [_from_xml(child) for child in children]
    return {child.tag: _from_xml(child) for child in children}


class Heritrix:
    """``with Heritrix(folder) as heritrix``: Heritrix 3.13.0 running with its jobs in
    ``folder/jobs`` (its console output in ``folder/heritrix.out``). ``classpath``: jars (or
    ``folder/*``) put after the distribution's ``lib/*``, as an operator adds to its ``lib/``;
    ``java_options``: more options for its JVM."""

    def __init__(self, folder: Path, *, heap_mb: int = 512, home: Path = HERITRIX_HOME,
                 classpath: list[str] | None = None, java_options: list[str] | None = None):
        self.folder, self.heap_mb, self.home = Path(folder), heap_mb, home
        self.classpath, self.java_options = list(classpath or []), list(java_options or [])
        self.jobs = self.folder / "jobs"
        self.process: subprocess.Popen | None = None
        self.client: httpx.Client | None = None
        self.port = 0

    # -- the process ---------------------------------------------------------------------------
    def start(self, attempts: int = 3) -> Heritrix:
        if not (self.home / "lib" / "heritrix-engine-3.13.0.jar").is_file():
            raise HeritrixError(f"Heritrix 3.13.0 is not at {self.home} (scripts/setup unpacks it)")
        self.jobs.mkdir(parents=True, exist_ok=True)
        user, password = "test", secrets.token_hex(8)
        for _attempt in range(attempts):
            self.port = free_port()
            log = open(self.folder / "heritrix.out", "ab")
            # cwd: Heritrix writes its ad-hoc keystore and heritrix_dmesg.log into its home (.)
            self.process = subprocess.Popen(
                ["java", f"-Xmx{self.heap_mb}m", *self.java_options,
                 "-cp", os.pathsep.join([str(self.home / "lib") + "/*", *self.classpath]), "org.archive.crawler.Heritrix", "-a", f"{user}:{password}", "-b", "127.0.0.1",
                 "-p", str(self.port), "-j", str(self.jobs), "-l", str(self.home / "conf" / "logging.properties")],
                cwd=self.folder, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            log.close()
            self.client = httpx.Client(base_url=f"https://127.0.0.1:{self.port}", verify=False, timeout=120,
                                       auth=httpx.DigestAuth(user, password),
                                       headers={"Accept": "application/xml"})
            deadline = time.monotonic() + START_TIMEOUT
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    if self.client.get("/engine").status_code == 200:
                        return self
                except httpx.TransportError:
                    pass
                time.sleep(0.3)
            self.stop()
        raise HeritrixError(f"Heritrix did not start: {self.output_tail()}")

    def output_tail(self, lines: int = 20) -> str:
        path = self.folder / "heritrix.out"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL to the JVM (as a crash or ``kill -9`` would), then reaped."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self._close_client()

    def stop(self) -> None:
        """SIGTERM to the JVM (Heritrix's shutdown hook closes its jobs), SIGKILL after a timeout."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._close_client()

    def _close_client(self) -> None:
        if self.client is not None:
            self.client.close()
            self.client = None

    def __enter__(self) -> Heritrix:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- jobs ----------------------------------------------------------------------------------
    def create_job(self, name: str, seeds: list[str], **config) -> Path:
        """A job folder ``jobs/NAME`` with its crawler-beans.cxml (:func:`job_config`), known to
        the engine."""
        job = self.jobs / name
        job.mkdir(parents=True)
        (job / "crawler-beans.cxml").write_text(job_config(seeds, **config))
        self._post("/engine", action="rescan")
        return job

    def action(self, name: str, action: str) -> None:
        self._post(f"/engine/job/{name}", action=action)

    def _post(self, path: str, **form) -> httpx.Response:
        response = self.client.post(path, data=form)  # Heritrix answers an action with 303 See Other
        if response.status_code >= 400:
            raise HeritrixError(f"POST {path} {form}: HTTP {response.status_code}: {response.text[:500]}")
        return response

    def report(self, name: str) -> dict:
        """The job's REST report (``GET /engine/job/NAME``, JSON)."""
        response = self.client.get(f"/engine/job/{name}")
        response.raise_for_status()
        return _from_xml(ElementTree.fromstring(response.content))

    def state(self, name: str) -> str | None:
        return self.report(name).get("crawlControllerState")

    def wait(self, name: str, predicate, what: str, timeout: float = 120.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            report = self.report(name)
            if predicate(report):
                return report
            if time.monotonic() > deadline:
                raise HeritrixError(f"job {name}: waited {timeout:.0f} s for {what}; state "
                                    f"{report.get('crawlControllerState')}, {report.get('uriTotalsReport')}")
            time.sleep(0.2)

    def wait_state(self, name: str, *states: str, timeout: float = 120.0) -> dict:
        return self.wait(name, lambda r: r.get("crawlControllerState") in states, f"state {states}", timeout)

    def launch(self, name: str, *, unpause: bool = True) -> None:
        """Build and launch the job, and unpause it (the profile launches paused) unless told not to."""
        self.action(name, "build")
        self.action(name, "launch")
        self.wait_state(name, "PAUSED", "RUNNING", "FINISHED")
        if unpause:
            self.action(name, "unpause")

    def wait_done(self, name: str, uris: int, timeout: float = 120.0) -> dict:
        """Until at least ``uris`` URIs are done (downloaded, failed or disregarded) or the crawl ends."""
        def done(report):
            totals = report.get("uriTotalsReport") or {}
            return (report.get("crawlControllerState") in ("FINISHED", "STOPPING")
                    or totals.get("downloadedUriCount", 0) >= uris)
        return self.wait(name, done, f"{uris} URIs done", timeout)

    def wait_finished(self, name: str, timeout: float = 180.0) -> dict:
        return self.wait_state(name, "FINISHED", timeout=timeout)

    def pause(self, name: str) -> dict:
        self.action(name, "pause")
        return self.wait_state(name, "PAUSED")

    def checkpoint(self, name: str) -> str:
        """A checkpoint of the (paused) job; returns its name (``cpNNNNN-TIMESTAMP``)."""
        folder = self.jobs / name / "checkpoints"
        before = set(p.name for p in folder.iterdir()) if folder.is_dir() else set()
        self.action(name, "checkpoint")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            names = set(p.name for p in folder.iterdir()) if folder.is_dir() else set()
            made = [n for n in names - before if (folder / n / "valid").exists()]  # written last
            if made:
                return sorted(made)[-1]
            time.sleep(0.2)
        raise HeritrixError(f"job {name}: no checkpoint written in 60 s")

    def script(self, name: str, script: str, engine: str = "groovy") -> str:
        """Runs ``script`` in the job's scripting console; returns what it printed to ``rawOut``
        (an exception in the script raises, with Heritrix's message)."""
        data = self.script_result(name, script, engine)
        if data.get("failure"):
            raise HeritrixError(f"script failed: {data.get('exception') or data.get('stackTrace')}")
        return data.get("rawOutput") or ""

    def script_result(self, name: str, script: str, engine: str = "groovy") -> dict:
        """The console's whole answer to ``script``: ``rawOutput``, ``htmlOutput``, ``failure``,
        ``exception``, ``availableScriptEngines``..."""
        response = self._post(f"/engine/job/{name}/script", engine=engine, script=script)
        return _from_xml(ElementTree.fromstring(response.content))

    def frontier_view(self, name: str) -> FrontierView:
        """Heritrix's own view of the paused job's frontier (see :class:`FrontierView`)."""
        pending, seen = [], []
        for line in self.script(name, _VIEW_SCRIPT).splitlines():
            fields = line.split("\t")
            if fields[0] == "P":
                queue, directive, precedence, ordinal, uri, via, path = fields[1:]
                pending.append(Pending(queue, int(directive), int(precedence), int(ordinal), uri, via, path))
            elif fields[0] == "S":
                seen.append(int(fields[1], 16))
        return FrontierView(pending, seen, self.report(name))

    def import_uris(self, name: str, journal: Path, *, schedule: bool = True) -> None:
        """Heritrix's own ``Frontier.importURIs`` of a frontier journal (recovery-log format:
        successes and failures marked seen and, with ``schedule``, the ``F+`` URLs not finished
        scheduled), from the scripting console. Heritrix takes an option by its presence (any
        value turns it on), so an option off is left out. The queues are filled by a thread of
        Heritrix's that may still run when this returns."""
        params = {"path": str(Path(journal).resolve()), "format": "recoveryLog", "includeSuccesses": True,
                  "includeFailures": True}
        if schedule:
            params["scheduleScheduleds"] = True
        self.script(name, "appCtx.getBean('frontier').importURIs('" + json.dumps(params) + "')")

    def job_paths(self, name: str) -> dict[str, Path]:
        """The job's folders: ``job``, ``launch`` (the newest launch), ``state``, ``logs``,
        ``checkpoints``, ``warcs``."""
        job = self.jobs / name
        launches = sorted(p for p in job.iterdir() if p.is_dir() and p.name[:1].isdigit())
        launch = launches[-1] if launches else job
        return {"job": job, "launch": launch, "state": job / "state", "logs": launch / "logs",
                "checkpoints": job / "checkpoints", "warcs": launch / "warcs"}


def pycrawler(*args, env=None, timeout=180, stdin=None) -> subprocess.CompletedProcess:
    """``pycrawler ARGS`` in a process of its own, as a user runs it beside Heritrix."""
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, env=env, input=stdin)


def ok(*args, **kwargs) -> subprocess.CompletedProcess:
    """:func:`pycrawler` that must succeed, with no trace on stderr."""
    done = pycrawler(*args, **kwargs)
    assert done.returncode == 0, f"pycrawler {' '.join(map(str, args))}: exit {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stderr
    return done


def delta(after: collections.Counter, before: collections.Counter) -> collections.Counter:
    """What a site's per-URL request counts gained between two readings."""
    return collections.Counter({url: n - before[url] for url, n in after.items() if n > before[url]})
