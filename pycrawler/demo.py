"""The demo: crawl the JDK 17 API documentation over HTTP on loopback, on the embedded default (JE).

``pycrawler demo`` serves the documentation Debian's ``openjdk-17-doc`` installs (about
10,140 HTML pages) on 127.0.0.1 (:class:`~pycrawler.static_site.server.StaticSite`: nginx when
installed), crawls it from ``index.html`` with the crawl engine into a fresh JE state folder,
then checks the crawl against the ground truth computed from the files
(:func:`~pycrawler.static_site.ground_truth.reachable_pages`) and prints a summary: pages, links,
duplicates avoided, pages/s, store size, coverage.

The crawl is the one ``pycrawler crawl`` runs, with the settings of a crawl of one's own
server: no politeness delay, the one host spread over BKDR-hashed queues, robots.txt obeyed
(the docs have none: one 404). The state folder is emptied at each run; a folder the demo did
not make (no :data:`STATE_MARKER` in it) is never deleted.
"""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from .crawl.settings import CrawlConfig, CrawlSummary
from .errors import BadInput, SetupError
from .frontier.politeness import Politeness
from .static_site.ground_truth import coverage, reachable_pages

DOCS_ROOT = Path("/usr/share/doc/openjdk-17-doc/api")
DEFAULT_STATE = Path("demo-state")
SEED_PAGE = "index.html"
STATE_MARKER = ".pycrawler-demo"


def fresh_state(state: Path) -> Path:
    """Empty ``state`` for a new run; refuse to delete a folder the demo did not make."""
    if state.exists():
        if not state.is_dir() or (any(state.iterdir()) and not (state / STATE_MARKER).exists()):
            raise BadInput(f"{state} exists and is not a demo state folder (no {STATE_MARKER}); "
                           "choose another --state")
        shutil.rmtree(state)
    state.mkdir(parents=True)
    (state / STATE_MARKER).write_text("pycrawler demo state; deleted and rebuilt by each run of `pycrawler demo`\n")
    return state


@dataclasses.dataclass
class Summary:
    crawl: CrawlSummary
    site: str                  # what served the docs (nginx or python)
    base_url: str
    reachable: int             # HTML pages reachable from the seed (from the files)
    covered: int               # of those, fetched with status 200
    truth_seconds: float

    @property
    def coverage(self) -> float:
        return self.covered / self.reachable if self.reachable else 1.0


def ok_urls(state: Path) -> list[str]:
    """The URLs the crawl's record holds with status 200."""
    from .crawl.engine import FETCHED
    from .records.crawl_url import decode
    from .store import Environment

    with Environment(state, read_only=True) as env:
        return [record.ori_url for record in map(decode, env.open_database(FETCHED).values())
                if record.status_code == 200]


def run(docs: Path = DOCS_ROOT, state: Path = DEFAULT_STATE, *, concurrency: int = CrawlConfig.concurrency,
        progress: bool | None = None, console: str | None = None, console_public: bool = False) -> Summary:
    """Serve ``docs``, crawl it into ``state`` (emptied first), measure coverage; ``console``:
    serve the crawl's console there (``[HOST:]PORT``, as ``crawl --console``; off loopback only
    with ``console_public``, as ``--console-public``)."""
    if not docs.is_dir() or not (docs / SEED_PAGE).is_file():
        raise SetupError(f"the JDK API documentation is not at {docs}: run scripts/setup "
                         "(it installs Debian's openjdk-17-doc), or point --docs at another copy")
    from .static_site.server import StaticSite  # the server's modules (grp, pwd): only a demo that runs needs them

    fresh_state(state)
    site = StaticSite(docs)
    with site as base_url:
        config = CrawlConfig(seeds=[base_url + SEED_PAGE], state=state, politeness=Politeness.none(),
                             queue_policy="bkdr", concurrency=concurrency, progress=progress)
        served = None
        if console:  # its web server (aiohttp.web, prometheus_client) is loaded for it alone
            from .console.server import CrawlConsole

            served = CrawlConsole(console, console_public)
        from .crawl.engine import Crawler  # numpy and numba: loaded for a run, not by the command line's help

        crawl = Crawler(config, console=served).run()
    started = time.perf_counter()
    truth = reachable_pages(docs, SEED_PAGE, base_url=base_url)
    _, covered = coverage(ok_urls(state), truth, docs, base_url)
    return Summary(crawl, site.kind, base_url, len(truth), covered, time.perf_counter() - started)


def report(summary: Summary, state: Path) -> Iterator[str]:
    """The summary as printed lines."""
    c = summary.crawl
    yield f"site:           {summary.base_url} (served by {summary.site})"
    yield f"pages:          {c.fetched:,} fetched ({c.statuses.get(200, 0):,} with status 200), {c.failed:,} failed"
    yield f"links:          {c.links:,} extracted, {c.enqueued:,} distinct URLs scheduled"
    yield f"dupes avoided:  {c.dupes_avoided:,} links already seen, never queued twice"
    yield f"speed:          {c.pages_per_second:,.1f} pages/s ({c.seconds:,.1f} s, start-up included)"
    yield f"store:          {c.store_bytes / 2**20:,.1f} MB of JE logs in {state} ({c.records:,} fetched records)"
    yield (f"coverage:       {summary.covered:,} of {summary.reachable:,} reachable pages "
           f"({100 * summary.coverage:.2f}%; ground truth from the files in {summary.truth_seconds:.1f} s)")
