"""``pycrawler heritrix rescue``: a real Heritrix 3.13 crawl killed -9 is finished from what survives.

One Heritrix for the module (tests/real_heritrix.py drives it) runs two jobs at once, each on its
own :class:`HeritrixSite` (four hosts, robots.txt disallowing a folder, redirects, 404s, a deep
chain, alias spellings): job ``cold`` takes no checkpoint; job ``warm`` is checkpointed early.
Heritrix is killed with SIGKILL while both are mid-crawl. ``cold`` is then what issue 34 found:
its ``state/`` holds no database and its frontier journal nothing. Then, for each job:

- ``heritrix rescue JOB --into STATE --journal FILE`` rebuilds the frontier from crawl.log, the
  WARC files and (``warm``) the checkpoint and the journal's rotated part;
- ``pycrawler crawl SEEDS --state STATE`` finishes the site: with Heritrix's fetches, every URL of
  the site's ground truth, nothing robots.txt disallows, and no URL whose response the WARC
  files hold fetched again (the only URLs the server answered twice are ones Heritrix had in
  flight at the kill, which no WARC record holds);
- the journal goes to a fresh Heritrix (a job with the site's hosts in scope and no seeds) by its
  own ``importURIs``, and Heritrix finishes the site under the same checks.

Heritrix writes with its own JE 7.5.11 and pycrawler reads its checkpoint's log version 15 with
the JE it chooses, whatever the test leg, so the module runs in one leg (tests/conftest.py ANY_JE).
"""

from __future__ import annotations

import collections
import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from warcio.archiveiterator import ArchiveIterator

from conftest import HERITRIX_HOME, missing
from real_heritrix import DISALLOWED, Heritrix, HeritrixSite, _SiteHandler, delta

ROOT = Path(__file__).resolve().parent.parent
HOSTS, PAGES = 4, 60
THREADS = 5
CHECKPOINT_AT = 40     # URIs the warm job has done at its checkpoint
KILL_AT = 110          # URIs each job has done, at least, when Heritrix is killed
JOBS = ("cold", "warm")


# -- the site: HeritrixSite, its pages decorated with what extractors differ on ------------------------
DECORATIONS = (
    # (every how many pages, markup; {n}: the page's number, {h}: its host's)
    (3, '<img src="/x/img{n}.png">'),                                        # an embed both parsers find
    (4, '<link rel="stylesheet" href="/x/style{h}.css">'),                   # the CSS file holds url(/x/bg{h}.png)
    (5, '<script>var next = "/x/js{n}.html";</script>'),                     # a URL in script text
    (6, '<a href="javascript:void(0)" onclick="window.open(\'/x/pop{n}.html\')">pop</a>'),  # in an event handler
    (7, '<iframe src="/x/frame{n}.html"></iframe>'),
    (8, '<object data="/x/obj{n}.swf"></object>'),
    (9, '<form action="/x/form{n}.html"><input name="q"></form>'),
    (10, '<a href="mailto:webmaster@example.com">mail</a>'),
)
EXTRA_TYPES = {".png": "image/png", ".css": "text/css", ".swf": "application/x-shockwave-flash",
               ".html": "text/html"}


class _DecoratedHandler(_SiteHandler):
    """HeritrixSite's pages with :data:`DECORATIONS` added, and every ``/x/`` URL answered (200,
    no links; a stylesheet's one ``url()``)."""

    def do_GET(self):  # the base class's name
        site, host, path = self.site, self.host, self.path
        if path.startswith("/x/") or ((host, path) in site.graph and (host, path) not in site.redirects):
            site.record(host, path, self.headers.get("User-Agent", ""))
            if path.startswith("/x/"):
                kind = EXTRA_TYPES.get(path[path.rfind("."):], "text/html")
                body = (f"body {{ background: url(/x/bg{host}.png) }}" if kind == "text/css" else "extra").encode()
            else:
                kind = "text/html"
                anchors = "".join(f'<a href="{site.href(host, target, i)}">link {i}</a>\n'
                                  for i, target in enumerate(site.graph[(host, path)]))
                body = f"<!DOCTYPE html><html><body>{site.decoration(host, path)}{anchors}</body></html>".encode()
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        super().do_GET()


class DecoratedSite(HeritrixSite):
    """:class:`HeritrixSite` whose pages also carry images, stylesheets, scripts, frames, objects,
    forms and mailto: links (:data:`DECORATIONS`), whose targets are the ``/x/`` URLs."""

    handler_class = _DecoratedHandler

    def decoration(self, host: int, path: str) -> str:
        number = sum(map(ord, path)) + 7 * host
        return "".join(markup.format(n=number, h=host) for every, markup in DECORATIONS if number % every == 0)

    def extras(self) -> set[str]:
        """Every ``/x/`` URL some page of the site names (in markup or its stylesheet)."""
        import re

        found = set()
        for (host, path) in self.graph:
            if not path.startswith(DISALLOWED):
                for target in re.findall(r"/x/[\w.]+", self.decoration(host, path)):
                    found.add(self.url(host, target))
                    if target.endswith(".css"):
                        found.add(self.url(host, f"/x/bg{host}.png"))
        return found


def archived(warcs: Path) -> set[str]:
    """URLs whose response the job's WARC files hold (robots.txt left out, as the site's counts do)."""
    urls = set()
    for path in sorted(warcs.iterdir()):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                url = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type == "response" and url.startswith("http") and not url.endswith("/robots.txt"):
                    urls.add(url)
    return urls


def journal_tags(path: Path) -> dict[str, list[str]]:
    with gzip.open(path, "rt") as lines:
        tags = collections.defaultdict(list)
        for line in lines:
            tags[line[:2]].append(line.split()[1])
    return tags


def finished(process: subprocess.Popen, command: list) -> str:
    out, err = process.communicate(timeout=180)
    assert process.returncode == 0, f"{' '.join(map(str, command))}: exit {process.returncode}\n{err}"
    assert "Traceback" not in err
    return out


@pytest.fixture(scope="module")
def crash(tmp_path_factory):
    """Both jobs crawled part of the way (``warm`` checkpointed on the way), Heritrix killed -9,
    each job rescued (the two at once) into a pycrawler state and a journal."""
    if not (HERITRIX_HOME / "lib" / "heritrix-engine-3.13.0.jar").is_file():
        missing("Heritrix 3.13.0 is not in target/heritrix-3.13.0 (scripts/setup unpacks it)")
    folder = tmp_path_factory.mktemp("rescue")
    with DecoratedSite(HOSTS, PAGES) as cold_site, DecoratedSite(HOSTS, PAGES) as warm_site:
        sites = {"cold": cold_site, "warm": warm_site}
        (folder / "run1").mkdir()
        heritrix = Heritrix(folder / "run1").start()
        try:
            for name in JOBS:
                heritrix.create_job(name, sites[name].seeds, threads=THREADS)
                heritrix.launch(name)
            heritrix.wait_done("warm", CHECKPOINT_AT)
            heritrix.pause("warm")
            checkpoint = heritrix.checkpoint("warm")
            heritrix.action("warm", "unpause")
            live = subprocess.run([sys.executable, "-m", "pycrawler", "heritrix", "rescue",
                                   heritrix.job_paths("cold")["job"], "--journal", folder / "live.recover.gz"],
                                  cwd=ROOT, capture_output=True, text=True, timeout=180)
            reports = {name: heritrix.wait_done(name, KILL_AT) for name in JOBS}
            paths = {name: heritrix.job_paths(name) for name in JOBS}
        finally:
            heritrix.kill()
        jobs = {name: SimpleNamespace(name=name, site=sites[name], run1=sites[name].fetch_counts(),
                                      report=reports[name], archived=archived(paths[name]["warcs"]),
                                      rescued_into=folder / f"{name}-state", journal=folder / f"{name}.recover.gz",
                                      **paths[name])
                for name in JOBS}
        commands = {name: [sys.executable, "-m", "pycrawler", "heritrix", "rescue", job.job, "--into",
                           job.rescued_into, "--journal", job.journal] for name, job in jobs.items()}
        running = {name: subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True) for name, command in commands.items()}
        for name, job in jobs.items():
            job.output = finished(running[name], commands[name])
            job.manifest = json.loads((job.rescued_into / "heritrix-rescue.json").read_text())
            job.tags = journal_tags(job.journal)
        yield SimpleNamespace(folder=folder, checkpoint=checkpoint, jobs=jobs, live=live,
                              live_journal=(folder / "live.recover.gz").exists())


@pytest.fixture(scope="module")
def continued(crash):
    """Each rescued crawl finished twice at once: by ``pycrawler crawl`` from the rescued state,
    and by a fresh Heritrix from the rescued journal (a job with the site's hosts in scope and
    no seeds, fed by its own ``importURIs``). The site tells the two apart by user agent."""
    commands = {name: [sys.executable, "-m", "pycrawler", "crawl", *job.site.seeds, "--state", job.rescued_into,
                       "--delay", "0", "--no-progress"] for name, job in crash.jobs.items()}
    crawls = {name: subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
              for name, command in commands.items()}
    try:
        (crash.folder / "run2").mkdir()
        heritrix = Heritrix(crash.folder / "run2").start()
        try:
            for name, job in crash.jobs.items():
                heritrix.create_job(name, [], threads=THREADS, scope_urls=job.site.seeds)
                heritrix.launch(name, unpause=False)
                heritrix.import_uris(name, job.journal)
                heritrix.action(name, "unpause")
            for name in JOBS:
                heritrix.wait_finished(name)
        finally:
            heritrix.stop()
        for name in JOBS:
            finished(crawls[name], commands[name])
    finally:
        for process in crawls.values():
            if process.poll() is None:
                process.kill()
                process.wait()
    return {name: {"pycrawler": job.site.fetch_counts("pycrawler"),
                   "heritrix": delta(job.site.fetch_counts("heritrix"), job.run1)}
            for name, job in crash.jobs.items()}


def test_the_cold_job_died_with_nothing_of_its_frontier_on_disk(crash):
    """The premise: killed before any checkpoint, Heritrix leaves one log file with no database
    in its state folder and no byte of its journal; both jobs were killed mid-crawl."""
    cold = crash.jobs["cold"]
    assert [p.name for p in cold.state.glob("*.jdb")] == ["00000000.jdb"]
    assert not list(cold.state.glob("cp*"))
    assert (cold.logs / "frontier.recover.gz").stat().st_size == 0
    for job in crash.jobs.values():
        assert job.report["crawlControllerState"] not in ("FINISHED", "STOPPING"), job.name
        assert set(job.run1) < job.site.expected() | job.site.extras(), job.name
        assert job.site.disallowed_requests() == []


def test_a_job_heritrix_still_runs_is_refused_and_nothing_written(crash):
    """Heritrix holds its state's JE write lock while it runs: a rescue then would crawl beside
    it, so it is refused in one line that names the process, and writes nothing."""
    live = crash.live
    assert live.returncode == 2 and "in use: process" in live.stderr and "write lock" in live.stderr, live.stderr
    assert len(live.stderr.strip().splitlines()) == 1 and "Traceback" not in live.stderr
    assert not crash.live_journal and "continue with" not in live.stdout


def test_rescue_takes_every_fetched_url_as_seen_and_the_undiscovered_rest_as_pending(crash):
    """What the rescue found, against what Heritrix did: every URL of crawl.log finished (``Fs``
    or ``Ff`` in the journal), every archived response among them, and pending only URLs
    Heritrix had not fetched; the warm job's checkpoint gave its seen keys and its journal's
    rotated part the URLs queued before it."""
    for name, job in crash.jobs.items():
        manifest, tags = job.manifest, job.tags
        logged = [line.split()[3] for path in manifest["crawl_logs"] for line in Path(path).read_text().splitlines()]
        assert manifest["crawl_log_urls"] == len(set(logged)) > 0, name
        done = set(tags["Fs"]) | set(tags["Ff"])
        assert set(logged) <= done and job.archived <= done, name
        assert len(tags["F+"]) == manifest["pending"] == manifest["frontier"]["urls"] > 0, name
        assert not set(tags["F+"]) & job.archived, name
        assert manifest["seen"]["keys"] >= len(done) + len(tags["F+"]) - manifest["refetch"], name
        links = manifest["links"]
        assert links["links_parsed"] > 0 and links["only_heritrix"] > 0 and links["only_parsed"] >= 0, name
    warm = crash.jobs["warm"].manifest
    assert warm["checkpoint"] == crash.checkpoint and warm["checkpoint_seen_keys"] > 0
    assert warm["journal"]["pending"] > 0
    cold = crash.jobs["cold"].manifest
    assert cold["checkpoint"] is None and cold["journal"] is None


def check_finished(job, continued: dict, who: str) -> None:
    """Heritrix's fetches and those of ``who``'s continuation together: every page of the site's
    ground truth and nothing outside it but the ``/x/`` URLs its pages name, robots.txt obeyed,
    nothing the WARC files hold fetched again, nothing fetched twice by the continuation, a URL
    the server answered twice only one Heritrix had in flight at the kill (at most one per toe
    thread, and no response in the WARC files), and every rescued pending URL robots.txt allows
    fetched by the continuation."""
    run2 = continued[job.name][who]
    total = job.run1 + run2
    assert job.site.expected() <= set(total) <= job.site.expected() | job.site.extras(), (job.name, who)
    assert job.site.disallowed_requests() == []
    assert not set(run2) & job.archived, (job.name, who, sorted(set(run2) & job.archived))
    assert set(run2.values()) == {1}, (job.name, who, {u: n for u, n in run2.items() if n > 1})
    twice = {url for url, n in total.items() if n > 1}
    assert twice <= set(job.run1) - job.archived and len(twice) <= THREADS, (job.name, who, twice)
    assert fetchable(job.tags["F+"]) <= set(run2), (job.name, who)


def fetchable(pending: list[str]) -> set[str]:
    """The rescued pending URLs robots.txt allows (the rescue queues a link to the disallowed
    folder that Heritrix had not reached; either crawler then refuses it as Heritrix would have)."""
    return {url for url in pending if DISALLOWED not in url}


@pytest.mark.parametrize("name", JOBS)
def test_pycrawler_finishes_the_rescued_crawl(crash, continued, name):
    check_finished(crash.jobs[name], continued, "pycrawler")


@pytest.mark.parametrize("name", JOBS)
def test_heritrix_finishes_the_rescued_crawl_from_the_journal(crash, continued, name):
    check_finished(crash.jobs[name], continued, "heritrix")


# -- the rescue's rules, on a dead crawl written here (no Heritrix needed) ---------------------------

SEED = "http://127.0.0.1:9/"
HEADER_CUTS = (1, 10, 60, 150, 200)   # bytes of a record's gzip member written when the kill came
BEANS_PROFILE = """<?xml version="1.0" encoding="UTF-8"?>
<beans xmlns="http://www.springframework.org/schema/beans">
 <bean id="longerOverrides" class="org.springframework.beans.factory.config.PropertyOverrideConfigurer">
  <property name="properties"><props><prop key="seeds.textSource.value">

# URLS HERE
{seeds}

  </prop></props></property>
 </bean>
 <bean id="seeds" class="org.archive.modules.seeds.TextSeedModule">
  <property name="textSource">{source}</property>
 </bean>
</beans>
"""
BEANS = BEANS_PROFILE.format(seeds=f"{SEED}\n127.0.0.2:9", source=(
    '<bean class="org.archive.spring.ConfigString"><property name="value"><value>\n# [see override above]\n'
    '</value></property></bean>'))
BEANS_FILE = BEANS_PROFILE.format(seeds="", source=(
    '<bean class="org.archive.spring.ConfigFile"><property name="path" value="seeds.txt" /></bean>'))


def page_html(*hrefs: str) -> bytes:
    return ("<html><body>" + "".join(f'<a href="{h}">x</a>' for h in hrefs) + "</body></html>").encode()


def write_dead_crawl(job: Path, *, cut_last_record: bool = False, journal: str = "", cut_in_header: int = 0,
                     beans: str | None = None, logged: bool = True) -> Path:
    """A Heritrix job folder as a kill leaves it: an empty state/, a launch with crawl.log and one
    ``.open`` WARC file (response and metadata records as Heritrix writes them), no journal
    bytes. ``/lost.html`` is in crawl.log with no WARC record; ``/private/p.html`` was refused by
    robots.txt (-9998); ``cut_last_record`` cuts the WARC file inside its last record;
    ``journal``: lines of a journal part rotated at a checkpoint; ``cut_in_header``: that many
    bytes of one more record follow the last whole one (the kill came as its WARC header was
    written); ``beans``: the job's crawler-beans.cxml; ``logged`` False: crawl.log is empty (a
    job killed before its first line)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    launch = job / "20260101000000"
    (job / "state").mkdir(parents=True)
    for folder in ("logs", "warcs"):
        (launch / folder).mkdir(parents=True)
    (launch / "logs" / "frontier.recover.gz").write_bytes(b"")
    if journal:
        (launch / "logs" / "frontier.recover.gz.cp00001-20260101000001").write_bytes(gzip.compress(journal.encode()))
    fetched = [  # url, status, hops, via, body or Location, Heritrix's extra outlinks
        (SEED, 200, "", None, page_html("a.html", "r.html", "http://elsewhere.example/", "deep/1.html"), []),
        (SEED + "a.html", 200, "L", SEED, page_html("/c.html", "/", "lost.html#top"), [(SEED + "js.html", "X")]),
        (SEED + "r.html", 301, "L", SEED, "/target.html", []),
        (SEED + "deep/1.html", 200, "L", SEED, page_html("2.html"), []),
        (SEED + "deep/2.html", 200, "LL", SEED + "deep/1.html", page_html("3.html", "/a/a/a/a/a/x.html"), []),
    ]
    log = [f"2026-01-01T00:00:00.000Z   200  10 {SEED}robots.txt P {SEED} text/plain #1 - - - -"]
    with open(launch / "warcs" / "WEB-20260101000000000-00000-1~h~1.warc.gz.open", "wb") as stream:
        writer = WARCWriter(stream, gzip=True)
        for url, status, hops, via, body, extra in fetched:
            if status == 301:
                headers = StatusAndHeaders("301 Moved", [("Location", body)], protocol="HTTP/1.1")
                body = b""
            else:
                headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html")], protocol="HTTP/1.1")
            writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body),
                                                          http_headers=headers))
            outlinks = "".join(f"outlink: {u} {h} a/@href\n" for u, h in extra)
            fields = (f"via: {via}\nhopsFromSeed: {hops}\n" if via else "seed:\n") + outlinks
            log.append(f"2026-01-01T00:00:01.000Z   {status}  {len(body)} {url} {hops or '-'} {via or '-'} "
                       "text/html #1 - - - -")
            if cut_last_record and url == fetched[-1][0]:
                break   # the kill came while the last response was written
            writer.write_record(writer.create_warc_record(url, "metadata", warc_content_type="application/warc-fields",
                                                          payload=io.BytesIO(fields.encode())))
    log.append(f"2026-01-01T00:00:02.000Z   200  10 {SEED}lost.html L {SEED}a.html text/html #1 - - - -")
    log.append(f"2026-01-01T00:00:02.000Z -9998  - {SEED}private/p.html L {SEED} unknown #1 - - - -")
    log.append("2026-01-01T00:00:03.000Z   200  10 http://127.0.0.1:9/tor")   # torn by the kill
    (launch / "logs" / "crawl.log").write_text("\n".join(log) if logged else "")
    if beans is not None:
        (job / "crawler-beans.cxml").write_text(beans)
    if cut_in_header:
        record = io.BytesIO()
        writer = WARCWriter(record, gzip=True)
        writer.write_record(writer.create_warc_record(SEED + "next.html", "response", payload=io.BytesIO(b"x"),
                                                      http_headers=StatusAndHeaders("200 OK", [], protocol="HTTP/1.1")))
        warc = next((launch / "warcs").iterdir())
        warc.write_bytes(warc.read_bytes() + record.getvalue()[:cut_in_header])
    if cut_last_record:
        warc = next((launch / "warcs").iterdir())
        data = warc.read_bytes()
        warc.write_bytes(data[:len(data) - 60])
    return job


class Results(dict):
    def __init__(self, **facts):
        super().__init__()
        self.__dict__.update(facts)


@pytest.fixture(scope="module")
def dead(tmp_path_factory):
    """``heritrix rescue`` of a dead crawl (whole, and with its last WARC record cut) and of bad
    input, every command in one process (tests/cli_runs.py): command name -> exit, stdout,
    stderr, and the journal's lines. Before them, a rescue ``--into`` killed at the
    ``folder.build.written`` failpoint (``killed``); the batch then runs the same command."""
    folder = tmp_path_factory.mktemp("dead")
    whole, cut = write_dead_crawl(folder / "job"), write_dead_crawl(folder / "cut", cut_last_record=True)
    other = "http://127.0.0.2:9/"   # a second seed, its robots.txt queued before it
    journaled = write_dead_crawl(folder / "journaled", journal=(
        f"F+ {SEED} \nF+ {other} \nF+ {other}robots.txt P {other}\nFs {SEED} \nF+ {SEED}a.html L {SEED}\n"
        f"F+ {SEED}queued.html L {SEED}\n"))
    (folder / "full").mkdir()
    (folder / "full" / "x").write_text("x")
    header_cuts = {n: write_dead_crawl(folder / f"header-{n}", cut_in_header=n) for n in HEADER_CUTS}
    unlogged = write_dead_crawl(folder / "unlogged", logged=False, beans=BEANS)
    unlogged_file = write_dead_crawl(folder / "unlogged-file", logged=False, beans=BEANS_FILE)
    (unlogged_file / "seeds.txt").write_text(f"# the seeds\n{SEED}\n127.0.0.2:9\n")
    no_warcs = write_dead_crawl(folder / "no-warcs")
    for warc in (no_warcs / "20260101000000" / "warcs").iterdir():
        warc.unlink()
    (no_warcs / "20260101000000" / "warcs").rmdir()
    (folder / "exists.gz").write_bytes(b"a journal of the user's")
    commands = {
        "default": [whole],
        "parsed, 2 hops": [whole, "--links", "parsed", "--max-hops", "2"],
        "cut": [cut],
        "journal part": [journaled],
        "not a crawl": [folder / "full"],
        "nothing to write": [whole, "--journal"],
        "target not empty": [whole, "--into", folder / "full"],
        "after the kill": [whole, "--into", folder / "state"],   # the same command as the killed one
        **{f"header cut {n}": [job] for n, job in header_cuts.items()},
        "seeds of the configuration": [unlogged],
        "seeds of the configuration's file": [unlogged_file],
        "no seed anywhere": [write_dead_crawl(folder / "seedless", logged=False)],
        "no warcs": [no_warcs],
        "no warcs, said": [no_warcs, "--no-warcs"],
        "journal exists": [whole, "--journal", folder / "exists.gz"],
    }
    killed = subprocess.run([sys.executable, "-m", "pycrawler", "heritrix", "rescue", str(whole), "--into",
                             str(folder / "state")], cwd=ROOT, capture_output=True, text=True, timeout=180,
                            env=os.environ | {"PYCRAWLER_FAILPOINT": "folder.build.written"})
    killed_left = (folder / "state").exists()   # nothing a crawl would resume
    argv = []
    for n, args in enumerate(commands.values()):
        args = [str(a) for a in args]
        if args[-1] == "--journal":
            args = args[:-1]
        elif "--into" not in args and "--journal" not in args:
            args += ["--journal", str(folder / f"{n}.gz")]
        argv.append(["heritrix", "rescue", *args])
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "cli_runs.py")], cwd=ROOT, capture_output=True,
                          text=True, timeout=180, input=json.dumps(argv))
    assert done.returncode == 0, done.stderr
    results = Results(killed=killed, killed_left=killed_left, into=folder / "state",
                      user_journal=(folder / "exists.gz").read_bytes())
    for n, (name, result) in enumerate(zip(commands, json.loads(done.stdout))):
        journal = folder / f"{n}.gz"
        lines = []
        if journal.exists():
            with gzip.open(journal, "rt") as text:
                lines = [tuple(line.split()) for line in text]
        results[name] = SimpleNamespace(exit=result["exit"], stdout=result["stdout"], stderr=result["stderr"],
                                        lines=lines)
    return results


def test_pending_is_what_was_found_and_never_fetched_with_its_via_and_hop_path(dead):
    done = dead["default"]
    assert done.exit == 0, done.stderr
    assert [line for line in done.lines if line[0] == "F+"] == [
        ("F+", SEED + "lost.html", "L", SEED + "a.html"),   # in crawl.log, no WARC record: fetched again
        ("F+", SEED + "c.html", "LL", SEED + "a.html"),
        ("F+", SEED + "js.html", "LX", SEED + "a.html"),      # only in Heritrix's metadata record
        ("F+", SEED + "target.html", "LR", SEED + "r.html"),  # a redirect's Location
        ("F+", SEED + "deep/3.html", "LLL", SEED + "deep/2.html"),
    ]
    finished = {line[1]: line[0] for line in done.lines if line[0] != "F+"}
    assert finished == {SEED + "robots.txt": "Fs", SEED: "Fs", SEED + "a.html": "Fs", SEED + "r.html": "Fs",
                        SEED + "deep/1.html": "Fs", SEED + "deep/2.html": "Fs", SEED + "private/p.html": "Ff"}
    assert "1 out of scope" in done.stdout and "1 traps" in done.stdout      # elsewhere.example, /a/a/a/a/a/
    assert "crawl.log" in done.stdout and "torn" in done.stdout             # the torn line named, skipped
    parsed_only = dead["parsed, 2 hops"]
    assert [line[1] for line in parsed_only.lines if line[0] == "F+"] == [SEED + "lost.html", SEED + "c.html",
                                                                           SEED + "target.html"]


def test_the_urls_a_surviving_journal_part_leaves_queued_come_first_and_prerequisites_never(dead):
    """A journal part rotated at a checkpoint: its URLs still queued and never fetched lead the
    pending URLs; one fetched since is not pending; robots.txt queued as a prerequisite is not
    a page to fetch; a seed it names is a seed of the scope."""
    done = dead["journal part"]
    pending = [line[1] for line in done.lines if line[0] == "F+"]
    assert pending[:2] == ["http://127.0.0.2:9/", SEED + "queued.html"] and SEED + "a.html" not in pending
    assert "http://127.0.0.2:9/robots.txt" not in pending and "1 prerequisites" in done.stdout
    assert f"seeds (seed-hosts scope): {SEED} http://127.0.0.2:9/" in done.stdout   # its links are in scope
    assert pending[2:] == [line[1] for line in dead["default"].lines if line[0] == "F+"]


def test_a_warc_file_cut_by_the_kill_is_read_to_its_last_whole_record_and_the_cut_page_fetched_again(dead):
    done = dead["cut"]
    pending = [line[1] for line in done.lines if line[0] == "F+"]
    assert pending[:2] == [SEED + "deep/2.html", SEED + "lost.html"] and SEED + "deep/3.html" not in pending
    assert f"its last record (response of {SEED}deep/2.html) is cut short: left out" in done.stdout


@pytest.mark.parametrize("cut", HEADER_CUTS)
def test_a_record_cut_within_its_header_is_noted(dead, cut):
    """The kill may come as a record's first bytes are written: warcio then stops at the last
    whole record without a word; the bytes after it say a record was cut, at any offset."""
    done = dead[f"header cut {cut}"]
    assert done.exit == 0, done.stderr
    notes = [line for line in done.stdout.splitlines() if line.startswith("note: ") and ".warc.gz.open: " in line]
    assert len(notes) == 1 and (f"{cut} bytes after its last whole record (10 records) are a record cut within its "
                                "header" in notes[0] or "unreadable after record 10" in notes[0]), done.stdout
    assert [line for line in done.lines if line[0] == "F+"] == [line for line in dead["default"].lines
                                                               if line[0] == "F+"]


@pytest.mark.parametrize("case", ["seeds of the configuration", "seeds of the configuration's file"])
def test_a_job_killed_before_its_first_crawl_log_line_takes_its_seeds_from_crawler_beans(dead, case):
    """No crawl.log line names a seed: the job's crawler-beans.cxml does (the profile's seeds
    override, or the seeds.txt its ConfigFile names; a bare host as Heritrix takes it)."""
    done = dead[case]
    assert done.exit == 0, done.stderr
    assert f"seeds (seed-hosts scope): {SEED} http://127.0.0.2:9/ (from the job's crawler-beans.cxml" in done.stdout
    assert dead["no seed anywhere"].exit == 2 and "--seed URL" in dead["no seed anywhere"].stderr


def test_a_launch_with_no_warcs_folder_is_refused_unless_the_user_says_no_warcs(dead):
    refused, said = dead["no warcs"], dead["no warcs, said"]
    assert refused.exit == 2 and "--no-warcs" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert refused.lines == []
    assert said.exit == 0, said.stderr
    pending = {line[1] for line in said.lines if line[0] == "F+"}
    assert {SEED + "a.html", SEED + "deep/1.html"} <= pending    # fetched, but no response kept: fetched again


def test_an_existing_journal_is_never_replaced(dead):
    done = dead["journal exists"]
    assert done.exit == 2 and "exists" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert dead.user_journal == b"a journal of the user's"


@pytest.mark.parametrize("case", ["not a crawl", "nothing to write", "target not empty"])
def test_bad_input_is_one_line_and_exit_2(dead, case):
    done = dead[case]
    assert done.exit == 2 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_a_killed_rescue_leaves_no_state_and_the_same_command_then_builds_it(dead):
    assert dead.killed.returncode == -9 and dead.killed_left is False
    done = dead["after the kill"]
    assert done.exit == 0, done.stderr
    manifest = json.loads((dead.into / "heritrix-rescue.json").read_text())
    assert manifest["frontier"]["urls"] == manifest["pending"] == 5
    assert not dead.into.with_name(dead.into.name + ".part").exists()


def test_latest_is_a_checkpoint_taken_during_the_launch_read(tmp_path):
    """A checkpoint left in state/ by an earlier crawl of the job holds another crawl's seen
    keys: ``latest`` passes it over (it is read only when named)."""
    from pycrawler.heritrix.rescue import survivors

    job = write_dead_crawl(tmp_path / "job")    # its launch: 20260101000000
    for name in ("cp00001-20251231235959", "cp00002-20260101000500"):
        (job / "state" / name).mkdir()
        (job / "state" / name / "jdbfiles.manifest").write_text("00000000.jdb,10\n")
    assert survivors(job).checkpoint == "cp00002-20260101000500"
    (job / "state" / "cp00002-20260101000500" / "jdbfiles.manifest").unlink()
    assert survivors(job).checkpoint is None
    assert survivors(job, checkpoint="cp00001-20251231235959").checkpoint == "cp00001-20251231235959"
    assert survivors(job, checkpoint=None).checkpoint is None
