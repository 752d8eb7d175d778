"""Move a Heritrix crawl into pycrawler: pending URLs into a frontier, seen keys into a
Visited table, so the crawl can be continued, or deduplicated against, from Python.

Layout of the target folder ``DIR``:

``DIR/frontier/``
    pycrawler's TODO frontier (:class:`~pycrawler.frontier.todo.JeTodoFrontier`) in ``fifo``
    order, filled in Heritrix's queue order (queue by queue; within a queue, as Heritrix would
    have handed the URLs out). Each URL becomes a ``CrawlUrl`` with ``ori_url`` = the URI and
    ``layer`` = the length of its ``pathFromSeed`` (its hop count); the other fields Heritrix
    kept are in ``pycrawler heritrix export --pending``.
``DIR/seen/`` (DRUM, the default) or ``DIR/seen.bloom`` (a Bloom filter)
    Heritrix's ``alreadySeenUrl`` keys, unchanged: Heritrix's ``createKey`` of the canonical
    URL. Check a URL against it with :func:`heritrix_keys` (not the Visited URL forms, which
    key URLs by MD5).
``DIR/heritrix-import.json``
    Where it came from, how many of each were imported, and the key scheme.

The target must not hold a frontier or seen table yet: an import never mixes with other data.
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import BadInput, SetupError
from ..records.crawl_url import CrawlUrl
from .canon import canonicalize_many
from .export import DECODE_BATCH, pending_urls, value_decoder
from .fingerprint import create_keys
from .pending import KRYO_NEEDS
from .state import HeritrixState

SEEN_TABLES = ("drum", "bloom")
KEY_SCHEME = "heritrix-createKey(canonical url)"
MANIFEST = "heritrix-import.json"


def heritrix_keys(urls: list[str], *, canonical: bool = True) -> np.ndarray:
    """The keys Heritrix (and an imported seen table) holds for these URLs."""
    return create_keys(canonicalize_many(urls) if canonical else urls)


def import_state(state: HeritrixState, into: Path, *, seen_table: str = "drum", bloom_fpr: float = 0.001,
                 batch: int = DECODE_BATCH) -> dict[str, Any]:
    """Import ``state`` into the folder ``into``; returns what the manifest records."""
    if seen_table not in SEEN_TABLES:
        raise BadInput(f"the seen table must be one of {', '.join(SEEN_TABLES)}, not {seen_table!r}")
    into = Path(into)
    for existing in ("frontier", "seen", "seen.bloom", MANIFEST):
        if (into / existing).exists():
            raise BadInput(f"{into / existing} exists: import into a new or empty folder")
    into.mkdir(parents=True, exist_ok=True)
    pending = _import_pending(state, into / "frontier", batch)
    seen = _import_seen(state, into, seen_table, bloom_fpr)
    manifest = {
        "source": str(state.path.resolve()),
        "checkpoint": state.checkpoint.name if state.checkpoint else None,
        "heritrix": state.heritrix,
        "log_version": state.log_version,
        "frontier": {"path": "frontier", "kind": "todo", "order": "fifo", "urls": pending},
        "seen": {"path": "seen" if seen_table == "drum" else "seen.bloom", "kind": seen_table,
                 "keys": seen, "key_scheme": KEY_SCHEME},
    }
    (into / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _import_pending(state: HeritrixState, path: Path, batch: int) -> int:
    from ..frontier.todo import JeTodoFrontier

    decode_many = value_decoder(state)
    rows = pending_urls(state, decode_many)
    first = list(islice(rows, batch))
    if first and decode_many is None:
        raise SetupError(f"cannot import {state.path}'s pending URLs: {KRYO_NEEDS} (the seen keys need no "
                         "decoding: they can be exported with --seen)")
    count = 0
    with JeTodoFrontier.open(path, "fifo", create=True) as frontier:
        chunk = first
        while chunk:
            frontier.put_urls([CrawlUrl(ori_url=row["uri"], layer=len(row.get("pathFromSeed") or ""))
                               for row in chunk])
            count += len(chunk)
            chunk = list(islice(rows, batch))
    return count


def _import_seen(state: HeritrixState, into: Path, seen_table: str, bloom_fpr: float) -> int:
    if seen_table == "bloom":
        from ..seen.bloom import BloomFilter

        table = BloomFilter.create(into / "seen.bloom", max(state.seen_count(), 1), bloom_fpr)
    else:
        from ..seen.drum import DrumVisited

        table = DrumVisited(into / "seen")
    count = 0
    with table:
        for keys in state.seen_keys():
            table.add_batch(keys)
            count += len(keys)
    return count
