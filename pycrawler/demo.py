"""The interim demo: the JDK 17 API documentation's link graph, stored in JE.

Until the crawler exists, ``pycrawler demo`` exercises the store layer on a real workload:
it reads every HTML page of the documentation Debian's ``openjdk-17-doc`` installs, pulls
out the title and every ``href`` with a regular expression (the crawler will bring a real
HTML parser), and stores the graph in a fresh JE environment, writing in batches:

``pages``  key: the page's URL; value: its title. Both StringBinding (JE's UTF,
           zero-terminated), so Java's ``StringBinding`` and
           ``pycrawler store dump --key string --value string`` read them.
``links``  key: the page's URL then the target's URL, two StringBinding fields (what a Java
           ``TupleBinding`` writing two strings writes); empty value. The zero terminator
           of the first field makes ``items(prefix=StringBinding(page))`` exactly that
           page's out-links, in order.

URLs are ``http://127.0.0.1/`` plus the file's path under the documentation root (where the
crawl demo's loopback server will serve it); a link's fragment is dropped, links within a
page (``#...``) and to other schemes than http(s) are skipped.
"""

from __future__ import annotations

import html
import os
import posixpath
import re
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import BadInput, SetupError
from .store import Environment
from .store.tuple import java_utf, java_utf_decode

DOCS_ROOT = Path("/usr/share/doc/openjdk-17-doc/api")
DEFAULT_STATE = Path("demo-state")
BASE_URL = "http://127.0.0.1/"
STATE_MARKER = ".pycrawler-demo"
WRITE_BATCH = 100_000
SAMPLE_PAGE = "java.base/java/lang/String.html"

_HREF = re.compile(rb"""href\s*=\s*(?:"([^"]*)"|'([^']*)')""", re.IGNORECASE)
_TITLE = re.compile(rb"<title>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")


def string_key(text: str) -> bytes:
    """``text`` as JE's ``StringBinding`` writes it."""
    return java_utf(text) + b"\x00"


@lru_cache(maxsize=1 << 18)
def resolve(page_dir: str, href: str) -> str | None:
    """The absolute URL ``href`` points to from a page in ``page_dir`` (a path under the
    documentation root, '/'-separated), without fragment; None for links this demo skips.
    Cached: the same relative links recur on every page of a folder."""
    href = html.unescape(href.strip()).split("#", 1)[0]
    if not href:
        return None
    if scheme := _SCHEME.match(href):
        return href if scheme.group(1).lower() in ("http", "https") else None
    path, _, query = href.partition("?")
    # normpath on an absolute path clamps ".." at the root, as a browser does.
    resolved = posixpath.normpath(posixpath.join("/" + page_dir, path))
    return BASE_URL + resolved.lstrip("/") + ("?" + query if query else "")


@dataclass
class Page:
    url: str
    title: str
    targets: list[str]


def read_page(root: Path, path: Path) -> Page:
    relative = path.relative_to(root).as_posix()
    data = path.read_bytes()
    title = _TITLE.search(data)
    page_dir = posixpath.dirname(relative)
    targets = []
    for match in _HREF.finditer(data):
        href = (match.group(1) if match.group(1) is not None else match.group(2)).decode("utf-8", "replace")
        if (target := resolve(page_dir, href)) is not None:
            targets.append(target)
    return Page(BASE_URL + relative, html.unescape(title.group(1).decode("utf-8", "replace")).strip() if title else "",
                targets)


def documentation_files(root: Path) -> list[Path]:
    """Every file under ``root`` (the documentation's folders may be symbolic links)."""
    return sorted(Path(folder) / name for folder, _, names in os.walk(root, followlinks=True) for name in names)


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


@dataclass
class Summary:
    pages: int
    links: int
    targets: int
    internal_targets: int
    external_targets: int
    dangling_targets: int
    dangling_links: int
    read_seconds: float
    write_seconds: float
    total_seconds: float
    records: int
    store_bytes: int
    sample_page: str
    sample_links: list[str]
    sample_count: int


def run(docs: Path = DOCS_ROOT, state: Path = DEFAULT_STATE, sample_size: int = 8) -> Summary:
    """Read the documentation under ``docs`` and store its link graph in ``state``."""
    if not docs.is_dir() or not any(docs.glob("*.html")):
        raise SetupError(f"the JDK API documentation is not at {docs}: run scripts/setup "
                         "(it installs Debian's openjdk-17-doc), or point --docs at another copy")
    started = time.perf_counter()
    files = documentation_files(docs)
    existing = {BASE_URL + f.relative_to(docs).as_posix() for f in files}
    fresh_state(state)
    with Environment(state, create=True) as env:
        pages_db = env.open_database("pages", create=True)
        links_db = env.open_database("links", create=True)
        write = Stopwatch()
        read = Stopwatch()
        page_keys: list[bytes] = []
        titles: list[bytes] = []
        links: list[bytes] = []
        link_count_by_target: dict[str, int] = {}
        for path in (f for f in files if f.suffix == ".html"):
            with read:
                page = read_page(docs, path)
                key = string_key(page.url)
                page_keys.append(key)
                titles.append(string_key(page.title))
                for target in dict.fromkeys(page.targets):  # a page linking twice: one link
                    links.append(key + string_key(target))
                    link_count_by_target[target] = link_count_by_target.get(target, 0) + 1
            if len(links) >= WRITE_BATCH:
                with write:
                    links_db.put_many(links, [b""] * len(links))
                links.clear()
        with write:
            links_db.put_many(links, [b""] * len(links))
            pages_db.put_many(page_keys, titles)
            internal = [t for t in link_count_by_target if t.startswith(BASE_URL)]
            is_page = pages_db.contains_many([string_key(t) for t in internal])
        dangling = [t for t, hit in zip(internal, is_page) if not hit and t.partition("?")[0] not in existing]

        sample = BASE_URL + SAMPLE_PAGE if BASE_URL + SAMPLE_PAGE in existing else java_utf_decode(page_keys[0][:-1])
        prefix = string_key(sample)
        sample_links = [java_utf_decode(k[len(prefix):-1]) for k in links_db.keys(prefix=prefix)]
        pages, link_records = pages_db.count(), links_db.count()
    return Summary(
        pages=pages, links=link_records, targets=len(link_count_by_target), internal_targets=len(internal),
        external_targets=len(link_count_by_target) - len(internal), dangling_targets=len(dangling),
        dangling_links=sum(link_count_by_target[t] for t in dangling),
        read_seconds=read.seconds, write_seconds=write.seconds, total_seconds=time.perf_counter() - started,
        records=pages + link_records, store_bytes=sum(f.stat().st_size for f in state.glob("*.jdb")),
        sample_page=sample, sample_links=sample_links[:sample_size], sample_count=len(sample_links))


class Stopwatch:
    """Adds up the time spent inside ``with`` blocks."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __enter__(self) -> None:
        self._start = time.perf_counter()

    def __exit__(self, *exc) -> None:
        self.seconds += time.perf_counter() - self._start


def report(summary: Summary, state: Path) -> Iterator[str]:
    """The summary as printed lines."""
    s = summary
    yield f"pages:                 {s.pages:,}"
    yield f"links:                 {s.links:,} (distinct page -> target pairs)"
    yield (f"distinct link targets: {s.targets:,} ({s.internal_targets:,} under {BASE_URL}, "
           f"{s.external_targets:,} elsewhere)")
    yield f"dangling links:        {s.dangling_links:,} (to {s.dangling_targets:,} targets with no file in the docs)"
    yield (f"time:                  {s.total_seconds:.1f} s (reading and extracting {s.read_seconds:.1f} s, "
           f"store writes and lookups {s.write_seconds:.1f} s)")
    yield f"records/s:             {s.records / s.write_seconds:,.0f} written ({s.records:,} records)"
    yield f"store size on disk:    {s.store_bytes / 2**20:.1f} MB in {state}"
    yield f"prefix scan of links for {s.sample_page}: {s.sample_count:,} out-links, first {len(s.sample_links)}:"
    yield from (f"  {target}" for target in s.sample_links)
