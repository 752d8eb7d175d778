"""Rebuild the frontier of a Heritrix 3 crawl that died without a usable state, from what survives.

A Heritrix crawl killed with ``kill -9`` (or a crash, or a power cut) before its first
checkpoint keeps nothing of its frontier: its ``state/`` folder holds one ``.jdb`` file with no
database (the ``pending`` and ``alreadySeenUrl`` databases are deferred-write and never
reached the disk), and its journal ``logs/frontier.recover.gz`` is 0 bytes (gzip had not
flushed). What survives is what Heritrix wrote record by record:

``logs/crawl.log`` (and its parts rotated at checkpoints, ``crawl.log.cpNNNNN-TIMESTAMP``)
    one line per URL Heritrix finished, whatever the outcome (200, 404, -9998 for robots.txt,
    ...), with its hop path and via. A line is written after the URL's WARC records.
the WARC files (``warcs/*.warc.gz``, the last one ``.open``, perhaps cut by the kill)
    per fetched URL a ``response`` record (the page as served) and a ``metadata`` record
    (``via``, ``hopsFromSeed`` and every ``outlink:`` Heritrix's extractors found);
the last checkpoint, if one was taken (``state/cpNNNNN-TIMESTAMP``)
    its ``alreadySeenUrl`` keys, and its pending URLs (from the journal parts rotated up to it,
    or decoded by Heritrix's classes);
the journal's rotated parts (``frontier.recover.gz.cpNNNNN-...``), and whatever the current
    file holds before its cut.

:func:`survivors` finds them in a job folder (``jobs/NAME``, its launch under ``latest``) or a
launch folder (``jobs/NAME/TIMESTAMP``). :func:`rescue` rebuilds the frontier:

- **fetched**: every URL of ``crawl.log`` (any status: Heritrix finished it) and every URL
  whose response the WARC files hold;
- **discovered**: every link of every archived response, in archive order, each keeping the
  first page it was found on as its ``via`` and that page's hop path plus the link's hop type
  (``L``, ``E``, ``R``...) as its hop path. Links come from pycrawler's own parser
  (:func:`pycrawler.parse.extract`) over the response bodies, an HTTP redirect's ``Location``,
  and (unless ``links="parsed"``) the ``outlink:`` lines of Heritrix's metadata records, so a
  link only Heritrix's extractors see (CSS ``url()``, strings in scripts, inferred
  ``favicon.ico``...) is not lost;
- **pending**: in this order, the URLs the journal leaves queued (Heritrix scheduled them:
  its scope decided), the URLs ``crawl.log`` says were fetched with an HTTP answer whose
  response the WARC files do not hold (cut by the kill: their links are unknown, so they are
  fetched again), then the discovered links that were never fetched, are in ``scope`` (a
  :class:`pycrawler.crawl.scope.Scope` of the crawl's seeds), within ``max_hops`` and not
  caught by the path-repetition rule, and are not in the checkpoint's seen keys (Heritrix had
  them already). A prerequisite (robots.txt, hop ``P``) is never pending: a crawler fetches
  its own;
- **seen**: the checkpoint's keys, and the keys of every URL fetched or pending.

URLs are canonicalised and keyed as Heritrix does (``createKey(canonicalize(url))``,
:func:`pycrawler.heritrix.migrate.heritrix_keys`): one key is one URL, whatever its spelling;
pending URLs go to Heritrix's queues (the ``heritrix-host`` policy by default, or the one
detected from the checkpoint's queues) in discovery order.

The result is written as a pycrawler crawl state (:func:`write_state`, what ``heritrix
import`` leaves: ``pycrawler crawl SEED --state DIR`` continues it) and/or as a frontier
journal for Heritrix's own ``importURIs`` (:func:`write_rescue_journal`: ``Fs``/``Ff`` for
what was finished, ``F+`` for what is pending; the checkpoint's seen keys name no URL, so a
journal cannot carry them).

Not recovered: what only the dead frontier knew: links of pages whose response the WARC files
lost are found again when those pages are fetched again; per-queue politeness, budgets and
retry counts start afresh. Every discovered link is held in memory while the frontier is
rebuilt (about 200 bytes a link).
"""

from __future__ import annotations

import dataclasses
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import BadInput

if TYPE_CHECKING:
    import numpy as np

CRAWL_LOG = "crawl.log"
ROTATED_CRAWL_LOG = re.compile(r"^crawl\.log\.cp\d{5}-\d{14}$")
LAUNCH_NAME = re.compile(r"^\d{14}$")
WARC_NAME = re.compile(r"\.warc(\.gz)?(\.open)?$")
MANIFEST = "heritrix-rescue.json"
LINK_SOURCES = ("all", "parsed")
HTTP_SCHEMES = ("http://", "https://")
DEFAULT_MAX_HOPS = 20   # Heritrix's TooManyHopsDecideRule default, and pycrawler crawl's --max-depth


# -- what survives ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Survivors:
    """The files a dead crawl left, found by :func:`survivors`."""

    launch: Path                    # the launch folder (its logs/ and warcs/)
    state: Path | None              # the job's state/ folder, when there is a job folder
    crawl_logs: list[Path]          # rotated parts oldest first, then crawl.log
    warcs: list[Path]               # in name order (Heritrix names them by time and serial)
    journal: list[Path]             # journal files that hold bytes, oldest first
    checkpoint: str | None          # the checkpoint to read (its name), None for none
    config_seeds: list[str] = dataclasses.field(default_factory=list)   # crawler-beans.cxml's seeds


def survivors(path: str | Path, *, warcs: str | Path | None = None, checkpoint: str | None = "latest",
              no_warcs: bool = False) -> Survivors:
    """What the crawl at ``path`` (a Heritrix job folder or one of its launch folders) left.
    ``warcs``: where its WARC files are (default: the launch's ``warcs/``); ``no_warcs``: the
    crawl kept none (without it, a launch with no ``warcs/`` folder is refused: every page
    Heritrix fetched would be fetched again); ``checkpoint``: ``latest`` (the default: the
    newest taken during the launch, if there is one: see :func:`latest_checkpoint`), a name,
    or None for none.

    A job whose ``state/`` a live process writes (a Heritrix still running: it holds the JE
    write lock) is refused: a rescue beside it would crawl what it crawls."""
    from .checkpoints import resolve
    from .journal import journal_files

    path = Path(path)
    if not path.is_dir():
        raise BadInput(f"{path} is not a Heritrix job or launch folder: "
                       + ("it does not exist" if not path.exists() else "not a directory"))
    if (path / "logs").is_dir():
        launch = path
        state = path.parent / "state" if (path.parent / "state").is_dir() else None
    elif (path / "state").is_dir():
        state = path / "state"
        launches = sorted(p for p in path.iterdir()
                          if p.is_dir() and LAUNCH_NAME.match(p.name) and (p / "logs").is_dir())
        latest = path / "latest"
        launch = latest.resolve() if (latest / "logs").is_dir() else (launches[-1] if launches else None)
        if launch is None:
            raise BadInput(f"{path} is a Heritrix job folder with no launch folder (TIMESTAMP/logs/): the crawl "
                           "never started, there is nothing to rescue")
    else:
        raise BadInput(f"{path} is not a Heritrix job folder (with state/ and a launch folder) nor a launch "
                       "folder (with logs/crawl.log)")
    if state is not None:
        _refuse_live_heritrix(state)
    logs = launch / "logs"
    crawl_logs = sorted(p for p in logs.iterdir() if ROTATED_CRAWL_LOG.match(p.name))
    if (logs / CRAWL_LOG).is_file():
        crawl_logs.append(logs / CRAWL_LOG)
    if not crawl_logs:
        raise BadInput(f"{logs} holds no {CRAWL_LOG}: give the launch folder of the crawl to rescue")
    warc_folder = Path(warcs) if warcs is not None else launch / "warcs"
    if warcs is not None and not warc_folder.is_dir():
        raise BadInput(f"--warcs {warc_folder} is not a folder")
    if no_warcs:
        if warcs is not None:
            raise BadInput("--warcs and --no-warcs contradict each other: give one")
        warc_files = []
    elif not warc_folder.is_dir():
        raise BadInput(f"{warc_folder} does not exist: without the crawl's WARC files every page it fetched is "
                       "fetched again and the links they held are lost; name where they are with --warcs DIR, "
                       "or say --no-warcs if the crawl kept none")
    else:
        warc_files = sorted(p for p in warc_folder.iterdir() if p.is_file() and WARC_NAME.search(p.name))
    try:
        journal = [p for p in journal_files(logs)[0] if p.stat().st_size > 0]
    except BadInput:   # no journal file at all
        journal = []
    chosen = None
    if checkpoint is not None:
        if state is None:
            if checkpoint != "latest":
                raise BadInput(f"--checkpoint {checkpoint}: {launch} is not inside a job folder with a state/ folder")
        elif checkpoint == "latest":
            chosen = latest_checkpoint(state, launch)
        else:
            chosen = resolve(state, checkpoint).name
    return Survivors(launch, state, crawl_logs, warc_files, journal, chosen,
                     config_seeds(launch, launch.parent if state is not None else None))


def _refuse_live_heritrix(state: Path) -> None:
    from .writer_lock import writer_pid

    if (pid := writer_pid(state)) is not None:
        raise BadInput(f"{state} is in use: process {pid} holds its JE write lock (a running Heritrix?). A rescue "
                       "beside it would crawl what it crawls: stop the crawl first (or read a checkpoint of it with "
                       "pycrawler heritrix export). Its lock is left alone")


# -- the job's configuration -------------------------------------------------------------------------

CRAWLER_BEANS = "crawler-beans.cxml"
_SEED_PROPERTY = "seeds.textSource.value"


def config_seeds(launch: Path, job: Path | None) -> list[str]:
    """The seeds the crawl's ``crawler-beans.cxml`` names (the launch's copy, else the job's):
    the seeds override (``seeds.textSource.value``, as Heritrix's profile has it), the ``seeds``
    bean's inline text, or the file its ``ConfigFile`` names (``seeds.txt``, relative to the job
    folder); [] when there is none or it cannot be read. Read as text, no Spring bean loaded."""
    for folder in (launch, job):
        if folder is not None and (folder / CRAWLER_BEANS).is_file():
            return _seeds_of(folder / CRAWLER_BEANS)
    return []


def _seeds_of(config: Path) -> list[str]:
    import xml.etree.ElementTree as ElementTree

    from ..keys.canon import canonicalize_many

    try:
        root = ElementTree.parse(config).getroot()   # expat: no external entity is fetched
    except (ElementTree.ParseError, OSError):
        return []
    texts = []
    for element in root.iter():
        tag = element.tag.rpartition("}")[2]
        if tag == "prop" and element.get("key") == _SEED_PROPERTY:
            texts.append(element.text or "")
        elif tag == "value" and element.text and f"{_SEED_PROPERTY}=" in element.text:   # a properties list
            texts += [line.partition("=")[2] for line in element.text.splitlines()
                      if line.strip().startswith(f"{_SEED_PROPERTY}=")]
        elif tag == "bean" and element.get("id") == "seeds":
            for inner in element.iter():
                inner_tag = inner.tag.rpartition("}")[2]
                if inner_tag == "value" and inner.text:
                    texts.append(inner.text)
                elif inner_tag == "property" and inner.get("name") == "path" and inner.get("value"):
                    try:
                        texts.append((config.parent / inner.get("value")).read_text(errors="replace"))
                    except OSError:
                        pass
    seeds = []
    for text in texts:
        for line in text.splitlines():
            token = line.strip().split(maxsplit=1)[0] if line.strip() else ""
            if not token or token.startswith(("#", "+", "-", "[see")):
                continue   # comments, SURT prefix directives, the profile's placeholder
            seeds.append(token if "://" in token else f"http://{token}")   # as Heritrix's seeds take a bare host
    normal = canonicalize_many([s for s in seeds if s.lower().startswith(HTTP_SCHEMES)], "safe")
    return list(dict.fromkeys(s for s in normal if s is not None))


def latest_checkpoint(state: Path, launch: Path) -> str | None:
    """The newest checkpoint of ``state`` taken during ``launch`` (its name's timestamp not
    before the launch folder's): one left by an earlier crawl of the job would hold another
    crawl's seen keys. An older one is taken only when named (``--checkpoint NAME``)."""
    from .checkpoints import find_checkpoints

    started = launch.name if LAUNCH_NAME.match(launch.name) else ""
    during = [c.name for c in find_checkpoints(state) if c.name.partition("-")[2] >= started]
    return during[-1] if during else None


# -- crawl.log ---------------------------------------------------------------------------------------

@dataclasses.dataclass(slots=True)
class HeritrixOutcome:
    """What Heritrix did with a URL it finished: a crawl.log line, or a response the WARC files hold
    that crawl.log does not name."""

    url: str
    status: int
    hops: str
    via: str | None


def crawl_log_lines(paths: list[Path], cut: dict[str, str]) -> Iterator[HeritrixOutcome]:
    """The entries of crawl.log files, in order; a line that is not one (the torn last line of
    a killed crawl) is skipped and noted in ``cut``."""
    for path in paths:
        with open(path, "rb") as lines:
            for number, raw in enumerate(lines, 1):
                fields = raw.decode("utf-8", "replace").split()
                if len(fields) < 6 or not re.fullmatch(r"-?\d+", fields[1]):
                    if raw.strip():
                        cut[str(path)] = f"line {number} is not a crawl.log entry (torn by the kill?): skipped"
                    continue
                hops = "" if fields[4] == "-" else fields[4]
                via = None if fields[5] == "-" else fields[5]
                yield HeritrixOutcome(fields[3], int(fields[1]), hops, via)


# -- WARC files ---------------------------------------------------------------------------------------

@dataclasses.dataclass(slots=True)
class Page:
    """A fetched URL the WARC files hold, and the links found in it."""

    url: str
    status: int
    parsed: list[tuple[str, str]]          # (url, hop) by pycrawler's parser and the Location header
    heritrix: list[tuple[str, str]] | None = None   # (url, hop) of Heritrix's metadata record
    hops: str | None = None                 # from the metadata record
    via: str | None = None


def read_warcs(paths: list[Path], cut: dict[str, str], *, progress: bool | None = False) -> dict[str, Page]:
    """Every http(s) URL with a response (or revisit) record, in archive order, with its links;
    a file cut by the kill is read up to its last whole record and noted in ``cut``."""
    from warcio.archiveiterator import ArchiveIterator

    from ..progress import meter

    pages: dict[str, Page] = {}
    with meter("warc", unit="records", enabled=progress) as bar:
        for path in paths:
            records, last = 0, None
            try:
                with open(path, "rb") as stream:
                    iterator = ArchiveIterator(stream)
                    for record in iterator:
                        records += 1
                        bar.update()
                        last = (record.rec_type, record.rec_headers.get_header("WARC-Target-URI"), iterator.offset)
                        _take(record, pages)
            except Exception as exc:   # warcio raises what zlib or its parser raise on a cut file
                cut[str(path)] = f"unreadable after record {records} ({type(exc).__name__}: {exc}): the rest skipped"
                continue
            whole_end = 0 if last is None else _member_end(path, last[2])
            if whole_end is None:
                # warcio reads a gzip member cut short as a shorter record: the kill's half-written last one
                kind, url, _ = last
                if kind in ("response", "revisit"):
                    pages.pop(url, None)
                elif kind == "metadata" and url in pages:
                    pages[url].heritrix = None
                cut[str(path)] = f"its last record ({kind} of {url}) is cut short: left out"
            elif whole_end < path.stat().st_size:
                # a member cut within its first bytes (the WARC header) is no record to warcio: it stops
                # there without a word, so the bytes left over say it
                tail = path.stat().st_size - whole_end
                cut[str(path)] = (f"{tail} bytes after its last whole record ({records} records) are a record cut "
                                  "within its header: left out")
    return pages


def _member_end(path: Path, offset: int) -> int | None:
    """Where the gzip member at ``offset`` of ``path`` (the file's last record) ends, or None
    when it is cut short; an uncompressed WARC file is taken as whole to its end."""
    size = path.stat().st_size
    with open(path, "rb") as stream:
        stream.seek(offset)
        data = stream.read()
    if not data.startswith(b"\x1f\x8b"):
        return size
    inflater = zlib.decompressobj(wbits=31)
    try:
        while data and not inflater.eof:
            inflater.decompress(data, 1 << 20)
            data = inflater.unconsumed_tail
    except zlib.error:
        return None
    return size - len(inflater.unused_data) - len(data) if inflater.eof else None


def _take(record, pages: dict[str, Page]) -> None:
    from ..parse.html import HTML_TYPES, extract, looks_like_html, mime_type
    from ..parse.links import absolute_url

    kind = record.rec_type
    url = record.rec_headers.get_header("WARC-Target-URI") or ""
    if not url.lower().startswith(HTTP_SCHEMES) or kind not in ("response", "revisit", "metadata"):
        return
    if kind == "metadata":
        page = pages.get(url)
        if page is not None:
            page.hops, page.via, page.heritrix = _metadata(record.content_stream().read())
        return
    status = 0
    parsed: list[tuple[str, str]] = []
    if record.http_headers is not None:
        status = int(record.http_headers.get_statuscode() or 0)
        if kind == "response":
            headers = {name.lower(): value for name, value in record.http_headers.headers}
            if 300 <= status < 400 and headers.get("location"):
                target = absolute_url(url, headers["location"])
                if target:
                    parsed.append((target, "R"))
            elif 200 <= status < 300:
                body = record.content_stream().read()
                media = mime_type(headers)
                if media in HTML_TYPES if media else looks_like_html(body):
                    parsed.extend((link.url, link.hop.value) for link in extract(body, url, headers).outlinks)
    pages[url] = Page(url, status, parsed)


def _metadata(content: bytes) -> tuple[str | None, str | None, list[tuple[str, str]]]:
    """(hopsFromSeed, via, outlinks as (url, hop)) of a Heritrix metadata record's body."""
    hops = via = None
    outlinks = []
    for line in content.decode("utf-8", "replace").splitlines():
        name, _, value = line.partition(": ")
        if name == "outlink":
            fields = value.split()
            if len(fields) >= 2:
                outlinks.append((fields[0], fields[1][:1]))
        elif name == "hopsFromSeed":
            hops = value.strip()
        elif name == "via":
            via = value.strip() or None
        elif line.strip() == "seed:":
            hops = ""
    return hops, via, outlinks


# -- the rebuilt frontier ----------------------------------------------------------------------------

@dataclasses.dataclass(slots=True)
class PendingURL:
    url: str
    hops: str
    via: str | None
    source: str      # journal | checkpoint | refetch | parsed | heritrix


@dataclasses.dataclass
class Rescued:
    """The rebuilt frontier (:func:`rescue`)."""

    pending: list[PendingURL]
    finished: list[HeritrixOutcome]               # crawl.log entries (last per URL) and WARC-only pages
    seen: np.ndarray                       # uint64 keys, unique
    seeds: list[str]
    policy: str
    summary: dict[str, Any]


def rescue(found: Survivors, *, scope: str = "seed-hosts", seeds: list[str] = (), links: str = "all",
           max_hops: int = DEFAULT_MAX_HOPS, queue_policy: str | None = None,
           progress: bool | None = False) -> Rescued:
    """Rebuild the frontier from ``found`` (see the module docstring)."""
    import numpy as np

    from ..crawl.scope import Scope
    from ..parse.links import PathRepetitionRule
    from .journal import replay
    from .migrate import heritrix_keys

    if links not in LINK_SOURCES:
        raise BadInput(f"links must be one of {', '.join(LINK_SOURCES)}, not {links!r}")
    cut: dict[str, str] = {}
    logged: dict[str, HeritrixOutcome] = {}
    for entry in crawl_log_lines(found.crawl_logs, cut):
        logged[entry.url] = entry
    pages = read_warcs(found.warcs, cut, progress=progress)

    # What the checkpoint and the journal say.
    checkpoint_keys = np.zeros(0, dtype=np.uint64)
    earlier: list[PendingURL] = []
    journal_summary = None
    detected = None
    if found.journal:
        done = replay(found.journal, progress=progress)
        try:
            journal_summary = done.summary()
            for batch in done.pending.batches():
                earlier += [PendingURL(p.url, p.hops, p.via, "journal") for p in batch]
        finally:
            done.close()
    if found.checkpoint is not None:
        checkpoint_keys, from_checkpoint, detected = _checkpoint(found, covered=bool(found.journal))
        earlier += from_checkpoint

    # Seeds (crawl.log's and the journal's lines with no hop path, and --seed) give the scope.
    crawl_seeds = list(dict.fromkeys([*seeds, *(e.url for e in [*logged.values(), *earlier]
                                                 if not e.hops and e.via is None
                                                 and e.url.lower().startswith(HTTP_SCHEMES))]))
    seeds_from = "crawl.log"
    if not crawl_seeds and found.config_seeds:   # killed before its first crawl.log line
        crawl_seeds, seeds_from = list(found.config_seeds), CRAWLER_BEANS
    if not crawl_seeds:
        raise BadInput(f"no seed found in {', '.join(map(str, found.crawl_logs))} (a line with hop path '-') nor in "
                       f"the job's {CRAWLER_BEANS}: name the crawl's seeds with --seed URL")
    in_scope = Scope.of(scope, crawl_seeds).allows
    traps = PathRepetitionRule()

    # Everything finished: crawl.log, and pages the WARC files hold that crawl.log does not name.
    finished = list(logged.values())
    for url, page in pages.items():
        if url not in logged:
            finished.append(HeritrixOutcome(url, page.status, page.hops or "", page.via))
    finished_keys = heritrix_keys([f.url for f in finished])
    done_keys = set(finished_keys.tolist())
    refetch = [PendingURL(e.url, e.hops, e.via, "refetch") for e in logged.values()   # robots.txt (P) is not
               if 200 <= e.status < 400 and e.url not in pages and e.url.lower().startswith(HTTP_SCHEMES)
               and not e.hops.endswith("P")]                                      # a page: a crawler fetches its own
    refetch_keys = set(heritrix_keys([p.url for p in refetch]).tolist())
    known_before = set(checkpoint_keys.tolist())

    # Discovered links, in archive order, each under its first finder.
    counts = dict.fromkeys(("links_parsed", "links_heritrix", "only_parsed", "only_heritrix"), 0)
    candidates: list[PendingURL] = []
    for page in pages.values():
        entry = logged.get(page.url)
        page_hops = entry.hops if entry is not None else (page.hops or "")
        parsed = dict(page.parsed)
        counts["links_parsed"] += len(parsed)
        found_links = list(parsed.items())
        if page.heritrix is not None:
            theirs = dict(page.heritrix)
            counts["links_heritrix"] += len(theirs)
            counts["only_parsed"] += len(parsed.keys() - theirs.keys())
            counts["only_heritrix"] += len(theirs.keys() - parsed.keys())
            if links == "all":
                found_links += [(url, hop) for url, hop in theirs.items() if url not in parsed]
        for url, hop in found_links:
            candidates.append(PendingURL(url, page_hops + hop, page.url, "parsed" if url in parsed else "heritrix"))

    pending: list[PendingURL] = []
    left_out = dict.fromkeys(("out_of_scope", "beyond_max_hops", "traps", "seen_at_checkpoint", "not_http",
                              "prerequisites"), 0)
    queued: set[int] = set()
    groups = (earlier, refetch, candidates)
    for group in groups:
        keys = heritrix_keys([p.url for p in group]).tolist() if group else []
        for item, key in zip(group, keys):
            if key in queued:
                continue
            if not item.url.lower().startswith(HTTP_SCHEMES):
                left_out["not_http"] += item.source not in ("parsed", "heritrix")
                continue
            if item.source in ("parsed", "heritrix"):
                if key in done_keys:
                    continue
                if key in known_before:   # Heritrix had it (queued and handled before the checkpoint)
                    left_out["seen_at_checkpoint"] += 1
                    queued.add(key)
                    continue
                if not in_scope(item.url):
                    left_out["out_of_scope"] += 1
                    queued.add(key)   # counted once
                    continue
                if len(item.hops) > max_hops:
                    left_out["beyond_max_hops"] += 1
                    queued.add(key)
                    continue
                if traps.rejects(item.url):
                    left_out["traps"] += 1
                    queued.add(key)
                    continue
            elif item.source != "refetch" and key in done_keys and key not in refetch_keys:
                continue   # the journal's or checkpoint's pending URL was fetched after
            elif item.hops.endswith("P"):   # robots.txt queued as a prerequisite: a crawler fetches its own
                left_out["prerequisites"] += 1
                continue
            queued.add(key)
            pending.append(item)
    pending_keys = heritrix_keys([p.url for p in pending])
    seen = np.unique(np.concatenate([checkpoint_keys, finished_keys, pending_keys]).astype(np.uint64))

    from ..frontier.assignment import get_assignment

    policy = get_assignment(queue_policy or detected or "heritrix-host").name
    by_source: dict[str, int] = {}
    for item in pending:
        by_source[item.source] = by_source.get(item.source, 0) + 1
    summary = {
        "launch": str(found.launch.resolve()),
        "crawl_logs": [str(p) for p in found.crawl_logs],
        "warcs": [str(p) for p in found.warcs],
        "checkpoint": found.checkpoint,
        "journal": journal_summary,
        "cut": cut,
        "crawl_log_urls": len(logged),
        "warc_pages": len(pages),
        "warc_only_pages": len(finished) - len(logged),
        "finished": len(finished),
        "refetch": len(refetch),
        "checkpoint_seen_keys": int(len(checkpoint_keys)),
        "links": {**counts, "source": links},
        "pending": len(pending),
        "pending_by_source": by_source,
        "left_out": left_out,
        "seen_keys": int(len(seen)),
        "seeds": crawl_seeds,
        "seeds_from": seeds_from,
        "scope": scope,
        "max_hops": max_hops,
        "queue_policy": policy,
    }
    return Rescued(pending, finished, seen, crawl_seeds, policy, summary)


def _checkpoint(found: Survivors, *, covered: bool) -> tuple[np.ndarray, list[PendingURL], str | None]:
    """(seen keys, pending URLs not covered by the journal, detected queue policy) of the
    checkpoint. Its pending URLs come from the journal when parts of it survive (``covered``);
    else they are decoded with Heritrix's classes (:mod:`.pending`), which must then be on
    the class path."""
    import numpy as np

    from .export import pending_urls, value_decoder
    from .pending import KRYO_NEEDS
    from .queue_policy import detect_queue_policy, heritrix_class_keys
    from .state import HeritrixState

    with HeritrixState.open(found.state, checkpoint=found.checkpoint) as state:
        keys = [batch for batch in state.seen_keys()]
        class_keys = heritrix_class_keys(state)
        pending: list[PendingURL] = []
        if class_keys and not covered:
            decode_many = value_decoder(state)
            if decode_many is None:
                raise BadInput(f"checkpoint {found.checkpoint} holds pending URLs and no journal part survives to "
                               f"name them: {KRYO_NEEDS}")
            for row in pending_urls(state, decode_many):
                pending.append(PendingURL(row["uri"], row.get("pathFromSeed") or "", row.get("via"), "checkpoint"))
    seen = np.concatenate(keys) if keys else np.zeros(0, dtype=np.uint64)
    return seen, pending, detect_queue_policy(class_keys) if class_keys else None


# -- output --------------------------------------------------------------------------------------------

def write_state(rescued: Rescued, into: Path, *, seen_table: str = "drum", bloom_fpr: float = 0.001,
                bloom_capacity: int | None = None, progress: bool | None = False) -> dict[str, Any]:
    """A pycrawler crawl state in the new folder ``into`` that continues the crawl (what
    ``heritrix import`` leaves: :mod:`pycrawler.crawl.imported`); returns its manifest."""
    from ..crawl.discovery import discovered
    from ..crawl.imported import build_import, require_empty_target
    from ..frontier.assignment import get_assignment
    from ..frontier.pending_records import DEFAULT_PRECEDENCE, NORMAL
    from ..records.crawl_url import encode_many
    from .migrate import SEEN_KEY

    into = require_empty_target(into, seen_table, "rescue")
    policy = get_assignment(rescued.policy)
    batch = 4096

    def restore(frontier, advance) -> dict[str, Any]:
        restored = 0
        for start in range(0, len(rescued.pending), batch):
            chunk = rescued.pending[start:start + batch]
            class_keys = frontier.assignment.class_keys([p.url for p in chunk])
            values = encode_many([discovered(p.url, len(p.hops), p.hops, p.via) for p in chunk])
            restored += frontier.restore([(class_key, NORMAL, DEFAULT_PRECEDENCE, start + n + 1, value)
                                          for n, (class_key, value) in enumerate(zip(class_keys, values))])
            advance(len(chunk))
        return {"urls": restored, "queues": len(frontier.queues), "queue_policy": frontier.assignment.name}

    def seen_batches(_frontier) -> Iterator[np.ndarray]:
        for start in range(0, len(rescued.seen), 1 << 16):
            yield rescued.seen[start:start + (1 << 16)]

    return build_import(into, "rescue", manifest_name=MANIFEST, assignment=policy,
                        settings={"seen": seen_table, "queue_policy": policy.name, "canon": "heritrix",
                                  "seen_key": SEEN_KEY},
                        restore=restore, seen_batches=seen_batches, seen_total=lambda: len(rescued.seen),
                        bloom_fpr=bloom_fpr, bloom_capacity=bloom_capacity, progress=progress,
                        source=rescued.summary)


def rescue_journal_lines(rescued: Rescued, counts: dict[str, int]) -> Iterator[str]:
    """The rescued frontier as journal lines: ``Fs``/``Ff`` for every finished URL (a status
    > 0 is Heritrix's success), then ``F+`` for every pending URL in order; a URL to fetch
    again has its ``F+`` line only. ``counts`` receives lines per tag."""
    from .journal import ADDED, FAILURE, SUCCESS, journal_line

    counts.update(dict.fromkeys((SUCCESS, FAILURE, ADDED), 0))
    again = {p.url for p in rescued.pending if p.source == "refetch"}
    for entry in rescued.finished:
        if entry.url in again or not entry.url.lower().startswith(HTTP_SCHEMES):
            continue
        tag = SUCCESS if entry.status > 0 else FAILURE
        counts[tag] += 1
        yield journal_line(tag, entry.url, entry.hops, entry.via)
    for item in rescued.pending:
        counts[ADDED] += 1
        yield journal_line(ADDED, item.url, item.hops, item.via)


def write_rescue_journal(rescued: Rescued, out: BinaryIO) -> dict[str, int]:
    """Write the rescued frontier as a gzipped journal to ``out``; returns lines per tag."""
    from .journal import write_journal

    counts: dict[str, int] = {}
    write_journal(out, rescue_journal_lines(rescued, counts))
    return counts


def describe(summary: dict[str, Any]) -> list[str]:
    """What was found and rebuilt, a few lines for the terminal."""
    links, left = summary["links"], summary["left_out"]
    lines = [f"read {len(summary['crawl_logs'])} crawl.log files ({summary['crawl_log_urls']} URLs) and "
             f"{len(summary['warcs'])} WARC files ({summary['warc_pages']} responses, {summary['warc_only_pages']} "
             f"not in crawl.log)" + (f"; checkpoint {summary['checkpoint']}: {summary['checkpoint_seen_keys']} "
                                     "seen keys" if summary["checkpoint"] else "; no checkpoint"),
             f"links: {links['links_parsed']} parsed by pycrawler, {links['links_heritrix']} in Heritrix's metadata "
             f"records ({links['only_parsed']} only parsed, {links['only_heritrix']} only Heritrix's)",
             f"pending: {summary['pending']} URLs ("
             + ", ".join(f"{n} {source}" for source, n in sorted(summary["pending_by_source"].items()))
             + f"); {summary['refetch']} URLs fetched by Heritrix whose response the WARC files lack are fetched "
             "again"]
    left = ", ".join(f"{n} {why.replace('_', ' ')}" for why, n in left.items() if n)
    lines.append(f"left out: {left or 'nothing'}")
    lines.append(f"seeds ({summary['scope']} scope): {' '.join(summary['seeds'])}"
                 + (f" (from the job's {CRAWLER_BEANS}: crawl.log names none)"
                    if summary.get("seeds_from") == CRAWLER_BEANS else ""))
    if summary["journal"]:
        lines.append(f"journal: {summary['journal']['lines']} lines in {len(summary['journal']['files'])} files, "
                     f"{summary['journal']['pending']} URLs left pending by it")
    for path, why in summary["cut"].items():
        lines.append(f"note: {path}: {why}")
    return lines
