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
    import: source, counts, URLs skipped by scheme.

``DIR`` appears whole or not at all (:mod:`pycrawler.whole_folder`): a killed import leaves no
state a crawl would resume, and the same command run again starts over.

**Left out**: priorities (they only ordered the frontier, which the ordinals keep), crawler4j's
``Statistics`` counters, anchors (pycrawler's records have no field for them), URLs other than
http(s).
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Any

from ..crawl.imported import FETCHABLE_SCHEMES, build_state, require_empty_target, write_state_files
from ..keys.schemes import DEFAULT_SEEN_KEY, get_seen_key_scheme
from ..records.crawl_url import encode_many
from ..whole_folder import building
from .frontier import DOC_IDS, BATCH, Crawler4jFrontier

MANIFEST = "crawler4j-import.json"
LINK_HOP = "L"


def import_frontier(frontier: Crawler4jFrontier, into: Path | str, *, seen_table: str = "drum",
                    queue_policy: str = "host", bloom_fpr: float = 0.001, bloom_capacity: int | None = None,
                    progress: bool | None = False) -> dict[str, Any]:
    """Import ``frontier`` into the new or empty folder ``into`` (see the module docstring);
    returns the manifest. ``progress``: count URLs and keys live on stderr (None: on a terminal)."""
    from ..frontier.assignment import get_assignment
    from ..seen.tables import SEEN_TABLE_PATHS

    into = require_empty_target(into, seen_table)
    policy = get_assignment(queue_policy)
    with building(into, "import") as build:
        pending, seen = build_state(
            build.path, assignment=policy, seen_key=DEFAULT_SEEN_KEY, seen_table=seen_table,
            restore=lambda target, advance: _restore_pending(frontier, target, advance),
            seen_batches=lambda target: (target.keys_of(urls) for urls, _ in frontier.doc_ids()),
            seen_total=lambda: frontier.count(DOC_IDS), bloom_fpr=bloom_fpr, bloom_capacity=bloom_capacity,
            progress=progress)
        settings = {"seen": seen_table, "queue_policy": policy.name,
                    "canon": get_seen_key_scheme(DEFAULT_SEEN_KEY).canonicalizer_for(None),
                    "seen_key": DEFAULT_SEEN_KEY}
        manifest = {
            "source": str(frontier.path.resolve()),
            "log_version": frontier.log_version,
            "databases": frontier.counts(),
            "statistics": frontier.statistics(),
            "frontier": {"kind": "workqueues", "path": ".", **pending},
            "seen": {"path": SEEN_TABLE_PATHS[seen_table], "kind": seen_table, "keys": seen,
                     "key_scheme": DEFAULT_SEEN_KEY, "from": DOC_IDS},
            "crawl_settings": settings,
        }
        write_state_files(build.path, settings, MANIFEST, manifest)
    return manifest


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
