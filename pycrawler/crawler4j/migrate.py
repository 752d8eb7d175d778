"""Move a crawler4j frontier into a pycrawler crawl state, so ``pycrawler crawl`` continues it.

``import_frontier(frontier, DIR)`` leaves in ``DIR`` what ``pycrawler crawl --state DIR``
resumes (:mod:`pycrawler.crawl.imported` writes it):

the work-queue frontier
    every pending http(s) URL, in process or not, in crawler4j's crawl order
    (:meth:`.Crawler4jFrontier.pending`): each is restored at the normal directive and
    precedence with its rank in that order as its ordinal, so every queue hands its URLs out
    in crawler4j's order. The record carries crawler4j's depth as its ``layer``, the parent URL
    as its via, and a hop path of one link (``L``) per level, since crawler4j counts link hops
    only (a redirect keeps its page's depth), as pycrawler's layers do.
the seen table (``--seen``: DRUM by default)
    the keys, in pycrawler's own scheme (``md5`` of the ``safe`` canonical form), of every
    ``DocIDs`` URL: what crawler4j scheduled, done or pending. A link to any of them is a
    repeat in the continuing crawl.
``DIR/crawl.json``, ``DIR/crawler4j-import.json``
    the settings (``seen``, ``queue_policy``, ``canon``, ``seen_key``) and the record of the
    import: source, counts, URLs skipped by scheme. ``canon`` is ``crawler4j``
    (:mod:`pycrawler.keys.crawler4j_canon`): links are folded as crawler4j folds them (``//``,
    ``jsessionid`` query parameters), so no page crawler4j fetched is fetched again under
    another spelling, and none it told apart is taken for another.
``DIR/crawl-defaults.json`` (:data:`pycrawler.crawl.settings.DEFAULTS_FILE`)
    crawler4j's settings that ``pycrawler crawl --state DIR`` takes as its defaults: its depth
    limit (``maxDepthOfCrawling``, -1 by default: none, where pycrawler's default is 20) and its
    politeness (``politenessDelay``, 200 ms by default, where pycrawler's default waits 3-30 s).
    The frontier does not hold crawler4j's configuration: the import records crawler4j's
    defaults unless told the crawl's own values (``max_depth``, ``politeness_ms``).

``DIR`` appears whole or not at all (:mod:`pycrawler.whole_folder`): a killed or failed import
leaves no state a crawl would resume, and the same command run again starts over.

**The JE that writes the state** (:func:`start_jvm`). A process runs on one JE, the one that
reads the frontier. For a crawler4j 3.x frontier (log version 7) that would be JE 4.0.92, the
one JE line without ``CacheMode.EVICT_LN``, which the work queues write every scheduled URL
with: the import (and every crawl on the state it left) would fail at the first URL it queues.
The import therefore runs on the oldest known JE that reads the frontier and has it (5.0.73:
it reads log version 7 read-only without changing a byte) and writes the state in its log
version (8), which ``pycrawler crawl`` then opens with the same JE by itself.

**Left out**: priorities (they only ordered the frontier, which the ordinals keep), crawler4j's
``Statistics`` counters, anchors (pycrawler's records have no field for them), URLs other than
http(s).
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Any

from ..crawl.imported import FETCHABLE_SCHEMES, build_import, require_empty_target
from ..errors import BadInput
from ..keys.schemes import DEFAULT_SEEN_KEY, get_seen_key_scheme
from ..records.crawl_url import encode_many
from .frontier import DOC_IDS, BATCH, Crawler4jFrontier

MANIFEST = "crawler4j-import.json"
LINK_HOP = "L"


CANON = "crawler4j"
CRAWLER4J_MAX_DEPTH = -1
"""crawler4j's default ``maxDepthOfCrawling``: no limit."""
CRAWLER4J_POLITENESS_MS = 200
"""crawler4j's default ``politenessDelay``, in milliseconds."""

EVICT_LN_MISSING = {(4, 0)}
"""JE release lines whose ``CacheMode`` has no ``EVICT_LN`` (3.3 and 4.1+ have it)."""


def state_writer(log_version: int):
    """The JE a crawl state made from a frontier of ``log_version`` is written with (see the
    module docstring): the JE that would read the frontier, unless its line lacks ``EVICT_LN``;
    then the oldest known release that reads the frontier and has it. SetupError, in one line,
    when none is known or the user named a JE without it."""
    from .. import jvm
    from ..errors import SetupError
    from ..jvm.je_releases import reader_of

    user = jvm.user_je()
    reader = reader_of(log_version, "the crawler4j frontier", jvm.TARGET, user)
    if reader.line not in EVICT_LN_MISSING:
        return reader
    if user is not None and user.line in EVICT_LN_MISSING:
        raise SetupError(f"{user} (named on PYCRAWLER_CLASSPATH) cannot write a crawl state: its CacheMode has no "
                         "EVICT_LN, which pycrawler's work queues write with; name JE 5.0.73 or later, or no JE")
    writer = next((r for r in jvm.known_jes() if r.reads(log_version) and r.line not in EVICT_LN_MISSING), None)
    if writer is None:
        raise SetupError(f"no JE here both reads log version {log_version} and writes a crawl state (JE 4.0 has no "
                         "CacheMode.EVICT_LN): run scripts/setup, which resolves JE 5.0.73 from Maven Central")
    return writer


def start_jvm(path: Path | str) -> None:
    """Start this process's JVM on :func:`state_writer`'s JE for the frontier at ``path`` (the
    frontier folder or the storage folder holding it), before the frontier is opened; nothing
    when the JVM runs already or ``path`` holds no JE log (opening it then says why)."""
    from .. import jvm
    from ..store import logfile
    from .frontier import FRONTIER_FOLDER

    path = Path(path)
    home = next((p for p in (path, path / FRONTIER_FOLDER) if p.is_dir() and logfile.jdb_files(p)), None)
    if jvm.started() or home is None:
        return
    jvm.start(state_writer(logfile.log_version(home)))


def import_frontier(frontier: Crawler4jFrontier, into: Path | str, *, seen_table: str = "drum",
                    queue_policy: str = "host", bloom_fpr: float = 0.001, bloom_capacity: int | None = None,
                    progress: bool | None = False, max_depth: int = CRAWLER4J_MAX_DEPTH,
                    politeness_ms: int = CRAWLER4J_POLITENESS_MS) -> dict[str, Any]:
    """Import ``frontier`` into the new or empty folder ``into`` (see the module docstring);
    returns the manifest. ``progress``: count URLs and keys live on stderr (None: on a terminal).
    ``max_depth``, ``politeness_ms``: the crawl's ``maxDepthOfCrawling`` (-1: no limit) and
    ``politenessDelay``, recorded as the continuing crawl's defaults."""
    from ..frontier.assignment import get_assignment

    from .. import jvm
    from ..errors import SetupError

    loaded = jvm.loaded_je()
    if loaded.line in EVICT_LN_MISSING:  # a caller's JVM on JE 4.0: refuse before building anything
        raise SetupError(f"this process runs {loaded}, whose CacheMode has no EVICT_LN, which pycrawler's work queues "
                         "write with: import in a process on JE 5.0.73 or later (start_jvm chooses it)")
    if max_depth < -1 or politeness_ms < 0:
        raise BadInput("crawler4j's maxDepthOfCrawling is -1 (no limit) or more, its politenessDelay 0 ms or more")
    into = require_empty_target(into, seen_table)
    policy = get_assignment(queue_policy)
    settings = {"seen": seen_table, "queue_policy": policy.name,
                "canon": get_seen_key_scheme(DEFAULT_SEEN_KEY).canonicalizer_for(CANON), "seen_key": DEFAULT_SEEN_KEY}
    return build_import(
        into, "import", manifest_name=MANIFEST, settings=settings, assignment=policy,
        restore=lambda target, advance: _restore_pending(frontier, target, advance),
        seen_batches=lambda target: (target.keys_of(urls) for urls, _ in frontier.doc_ids()),
        seen_total=lambda: frontier.count(DOC_IDS), bloom_fpr=bloom_fpr, bloom_capacity=bloom_capacity,
        progress=progress, canonicalizer=CANON,
        source={"source": str(frontier.path.resolve()), "log_version": frontier.log_version,
                "state_je": loaded.version, "databases": frontier.counts(), "statistics": frontier.statistics()},
        seen_facts={"from": DOC_IDS},
        defaults={"max_depth": None if max_depth == -1 else max_depth, "delay": f"{politeness_ms / 1000:g}"})


def _restore_pending(frontier: Crawler4jFrontier, target, advance) -> dict[str, Any]:
    """Put the pending URLs into ``target`` in crawl order; ``advance(n)`` after each batch."""
    from ..crawl.discovery import discovered
    from ..frontier.pending_records import DEFAULT_PRECEDENCE, NORMAL

    rows = frontier.pending()
    urls = in_process = rank = 0
    skipped: dict[str, int] = {}
    while chunk := list(islice(rows, BATCH)):
        kept = []
        for row in chunk:
            rank += 1
            if row["url"].lower().startswith(FETCHABLE_SCHEMES):
                kept.append((rank, row))
            else:
                scheme = row["url"].partition(":")[0].lower()
                skipped[scheme] = skipped.get(scheme, 0) + 1
        class_keys = target.assignment.class_keys([row["url"] for _, row in kept])
        values = encode_many([discovered(row["url"], max(row["depth"], 0), LINK_HOP * max(row["depth"], 0),
                                         row["parent_url"]) for _, row in kept])
        urls += target.restore([(class_key, NORMAL, DEFAULT_PRECEDENCE, ordinal, value)
                                for (ordinal, _), class_key, value in zip(kept, class_keys, values)])
        in_process += sum(row["in_process"] for _, row in kept)
        advance(len(chunk))
    return {"urls": urls, "in_process": in_process, "queues": len(target.queues),
            "queue_policy": target.assignment.name, "skipped": skipped}
