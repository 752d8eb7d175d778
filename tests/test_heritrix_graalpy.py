"""Python in a running Heritrix: GraalPy as a JSR-223 engine (graalpy/, docs/heritrix.md "Python
in a running Heritrix") in the real Heritrix 3.13, driven through its REST script endpoint.

Heritrix runs as docs/heritrix.md installs the engine: its jar and GraalPy's jars after Heritrix's
own ``lib/`` (the build's target/graalpy/, which scripts/setup makes; ``PYCRAWLER_GRAALPY_DIR``
names another folder of that layout), pycrawler's checkout named by ``-Dpycrawler.home``. It
crawls :class:`HeldSite`, the loopback site of tests/real_heritrix.py whose answers stop once
``HELD_AT`` URIs are done: every toe thread then waits on a fetch, the crawl is RUNNING, not
paused, and its frontier holds still while the console is asked. Then:

- the docs' script (the page's python block as written, but for its ``LIMIT, EXPORT`` line)
  counts, lists and exports the pending URLs: its count is Heritrix's ``queuedUriCount``, its
  rows Heritrix's own view of its frontier (``forAllPendingDo`` in Groovy) field for field and
  in order, and the site agrees (the fetches in flight are pending, what it answered is not);
- its scan takes no JE lock, where a scan with JE's default lock mode takes one a record;
- the site answers again and the crawl ends by itself, every URL of the site fetched once;
- the console's bindings, outputs and failures are Python's.
"""

from __future__ import annotations

import json
import os
import time
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import HERITRIX_HOME, missing
from real_heritrix import Heritrix, HeritrixError, HeldSite, console_script

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("PYCRAWLER_GRAALPY_DIR") or ROOT / "target" / "graalpy")
ENGINE_SERVICE = "META-INF/services/javax.script.ScriptEngineFactory"
HOSTS, PAGES, THREADS = 4, 120, 3
HELD_AT = 100    # URIs done when the site stops answering
LIMIT = 10       # pending URLs the docs' script lists
HELD_FOR_MS = 600_000  # Heritrix's socket timeout, above the longest the site holds a fetch

FIRST_SCRIPT = """
import sys
import pycrawler
print(sys.implementation.name, pycrawler.__file__, file=rawOut)
htmlOut.print("<b>" + job.getShortName() + "</b>")
print("to the engine's own writer")
"""

# Appended to the docs' script, whose private(), pending(), frontier and JE names it uses: JE's
# lock requests during its scan, then during the same scan in JE's default lock mode.
LOCKS_SCRIPT = """
StatsConfig = java.type("com.sleepycat.je.StatsConfig")
database = private(private(frontier, "pendingUris"), "pendingUrisDB")


def lock_requests():
    return database.getEnvironment().getStats(StatsConfig()).getNRequests()


before = lock_requests()
unlocked = sum(1 for _ in pending(frontier))
between = lock_requests()
records, key, value = 0, DatabaseEntry(), DatabaseEntry()
cursor = database.openCursor(None, None)
try:
    while cursor.getNext(key, value, None) == SUCCESS:
        records += 1
finally:
    cursor.close()
rawOut.println(f"{unlocked} {between - before} {records} {lock_requests() - between}")
"""


@pytest.fixture(scope="module")
def build() -> Path:
    jar, lib = BUILD / "pycrawler-graalpy.jar", BUILD / "lib"
    if not jar.is_file() or not any(lib.glob("polyglot-*.jar")):
        missing(f"GraalPy's JSR-223 engine is not built: {jar} and GraalPy's jars in {lib} "
                "(scripts/setup builds them with graalpy/pom.xml)")
    with zipfile.ZipFile(jar) as archive:
        if ENGINE_SERVICE not in archive.namelist():
            missing(f"{jar} has no JSR-223 engine ({ENGINE_SERVICE}): built from sources older than "
                    "graalpy/src/main/java/org/pycrawler/graalpy/jsr223/ (scripts/setup rebuilds it)")
    return BUILD


@pytest.fixture(scope="module")
def live(tmp_path_factory, build):
    """Heritrix with the engine, its crawl held mid-way and read through the console, then let
    go to its end; Heritrix stays up for the module's tests."""
    if not (HERITRIX_HOME / "lib" / "heritrix-engine-3.13.0.jar").is_file():
        missing("Heritrix 3.13.0 is not in target/heritrix-3.13.0 (scripts/setup unpacks it)")
    folder = tmp_path_factory.mktemp("heritrix-graalpy")
    export = folder / "pending.jsonl"
    with HeldSite(HOSTS, PAGES) as site:
        heritrix = Heritrix(folder, heap_mb=1024,
                            classpath=[str(build / "pycrawler-graalpy.jar"), str(build / "lib") + "/*"],
                            java_options=[f"-Dpycrawler.home={ROOT}"])
        heritrix.start()
        try:
            heritrix.create_job("job", site.seeds, threads=THREADS,
                                overrides={"fetchHttp.soTimeoutMs": str(HELD_FOR_MS)})
            heritrix.launch("job", unpause=False)
            # GraalPy starts at the first script (tens of seconds, interpreted): before the crawl runs
            first = heritrix.script_result("job", FIRST_SCRIPT, engine="python")
            heritrix.action("job", "unpause")
            heritrix.wait_done("job", HELD_AT)
            site.gate.clear()
            deadline = time.monotonic() + 60
            while site.held_count() < THREADS:
                assert time.monotonic() < deadline, f"only {site.held_count()} of {THREADS} toe threads came to the site"
                time.sleep(0.1)
            answered = set(site.fetch_counts())
            before = heritrix.report("job")
            listing = heritrix.script("job", console_script(LIMIT, export), engine="python")
            locks = heritrix.script("job", console_script(0, None) + LOCKS_SCRIPT, engine="python")
            view = heritrix.frontier_view("job")
            held = list(site.held)
            site.gate.set()
            finished = heritrix.wait_finished("job", timeout=300)
            yield SimpleNamespace(heritrix=heritrix, site=site, first=first, answered=answered, held=held,
                                  before=before, listing=listing, locks=locks, view=view, finished=finished,
                                  exported=[json.loads(line) for line in export.read_text().splitlines()],
                                  output=folder / "heritrix.out")
        finally:
            site.gate.set()
            heritrix.stop()


def test_heritrix_runs_python_with_its_bindings_and_pycrawler_importable(live):
    engines = live.first["availableScriptEngines"]
    assert {"engine": "python", "language": "python"} in engines, engines
    assert not live.first.get("failure"), live.first.get("exception")
    assert live.first["rawOutput"] == f"graalpy {ROOT / 'pycrawler' / '__init__.py'}"  # as stripped
    assert live.first["htmlOutput"] == "<b>job</b>"
    assert "to the engine's own writer" in live.output.read_text()   # Heritrix's standard output


def test_the_docs_script_counts_lists_and_exports_the_pending_urls_of_the_running_crawl(live):
    """Read while Heritrix RUNS (before and after the reads): its count is the report's
    queuedUriCount and the length of Heritrix's own listing; its first lines and its export are
    that listing, field for field and in order."""
    pending = live.view.pending
    queued = live.before["uriTotalsReport"]["queuedUriCount"]
    assert live.before["crawlControllerState"] == live.view.report["crawlControllerState"] == "RUNNING"
    assert queued == live.view.report["uriTotalsReport"]["queuedUriCount"] == len(pending) > LIMIT
    *lines, summary = live.listing.splitlines()
    assert summary == f"{queued} pending; Heritrix counts {queued} queued"
    assert lines == [f"{p.queue}\t{p.uri}" for p in pending[:LIMIT]]
    assert [(r["queue"], r["directive"], r["precedence"], r["ordinal"], r["uri"], r["via"], r["pathFromSeed"])
            for r in live.exported] == [(p.queue, p.directive, p.precedence, p.ordinal, p.uri, p.via or None,
                                         p.path_from_seed) for p in pending]


def test_the_site_agrees_with_the_listing(live):
    """The fetches the site holds are pending (a URL leaves the frontier once finished), no URL
    it answered is, and every pending URL is one of its URLs (or a host's robots.txt)."""
    listed = {row["uri"] for row in live.exported}
    robots = {live.site.url(h, "/robots.txt") for h in range(HOSTS)}
    assert len(live.held) == THREADS and set(live.held) <= listed
    assert live.answered and not listed & live.answered
    assert listed <= live.site.expected() | robots


def test_the_scan_takes_no_lock(live):
    """JE's lock requests while the docs' scan reads every pending URL: none of its own (the
    frozen crawl makes next to none); the same scan with JE's default lock mode makes one a record."""
    unlocked, during_unlocked, records, during_locked = map(int, live.locks.splitlines()[-1].split())
    assert unlocked == len(live.view.pending)
    assert during_unlocked < unlocked / 10
    assert during_locked >= records > unlocked


def test_the_crawl_went_on_to_its_end_undisturbed(live):
    assert live.finished["crawlControllerState"] == "FINISHED"
    counts = live.site.fetch_counts()
    assert live.site.disallowed_requests() == []
    assert set(counts.values()) == {1}
    assert set(counts) == live.site.expected()


def test_a_failing_script_reports_pythons_error_and_the_next_starts_afresh(live):
    heritrix = live.heritrix
    failed = heritrix.script_result("job", "x = 1\n\nfrontier.queuedUriCount()", engine="python")
    assert failed.get("failure") is True
    assert "NameError: name 'frontier' is not defined" in failed["exception"]
    with pytest.raises(HeritrixError, match="NoSuchBeanDefinitionException"):
        heritrix.script("job", "appCtx.getBean('noSuchBean')", engine="python")
    with pytest.raises(HeritrixError, match="NameError: name 'x' is not defined"):
        heritrix.script("job", "print(x, file=rawOut)", engine="python")
    assert heritrix.script("job", "print('queued', appCtx.getBean('frontier').queuedUriCount(), file=rawOut)",
                           engine="python") == "queued 0"
