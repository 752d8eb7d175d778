"""A crawl state made from another crawler's frontier and seen set, for ``pycrawler crawl`` to continue.

Each importer of foreign state (:mod:`pycrawler.heritrix.migrate`, :mod:`pycrawler.heritrix.rescue`,
:mod:`pycrawler.crawler4j.migrate`) reads its crawler's store and hands over two streams and the
facts of its source; :func:`build_import` writes what every import leaves in the folder the same way:

``DIR/*.jdb`` (one JE environment)
    the work-queue frontier (:mod:`pycrawler.frontier.workqueues`), bound to a seen-key
    scheme; the importer puts the pending URLs back at their places
    (:meth:`~pycrawler.frontier.workqueues.WorkQueueFrontier.restore`).
``DIR/drum/``, ``DIR/visited.bloom`` or the ``visited`` database
    the seen table (:mod:`pycrawler.seen.tables`), filled with the importer's key batches.
``DIR/crawl.json`` and the importer's manifest
    the settings ``pycrawler crawl --state DIR`` resumes with, and the record of the import.
``DIR/crawl-defaults.json`` (:data:`pycrawler.crawl.settings.DEFAULTS_FILE`), when the importer gives them
    the other crawler's own settings (crawler4j's depth limit and delay), which the crawl's
    command line overrides.

The target must be a new or empty folder (:func:`require_empty_target`): an import never mixes
with other data. The importer builds it whole or not at all (:func:`pycrawler.whole_folder.building`):
a killed import leaves no state a crawl would resume, and the same command run again starts over.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from .. import failpoints
from ..atomic_write import write_atomically
from ..errors import BadInput
from ..progress import meter
from ..whole_folder import building, require_new_folder

SEEN_TABLES = ("drum", "bloom", "exact")
FETCHABLE_SCHEMES = ("http://", "https://")
"""What a crawl fetches: URLs of other schemes are left out of an import (and counted)."""


def require_empty_target(into: Path | str, seen_table: str, verb: str = "import") -> Path:
    """``into`` as a Path, when it is a new or empty folder and ``seen_table`` a known table
    (``verb``: the command, for the refusal's words)."""
    if seen_table not in SEEN_TABLES:
        raise BadInput(f"the seen table must be one of {', '.join(SEEN_TABLES)}, not {seen_table!r}")
    return require_new_folder(into, verb)


def build_import(into: Path, verb: str, *, manifest_name: str, settings: dict[str, Any], assignment,
                 restore: Callable[[Any, Callable[[int], None]], dict[str, Any]],
                 seen_batches: Callable[[Any], Iterable[np.ndarray]], seen_total: Callable[[], int],
                 bloom_fpr: float, bloom_capacity: int | None, progress: bool | None,
                 canonicalizer: str | None = None, source: dict[str, Any], frontier_facts: dict[str, Any] | None = None,
                 seen_facts: dict[str, Any] | None = None, after: dict[str, Any] | None = None,
                 defaults: dict[str, Any] | None = None) -> dict[str, Any]:
    """Build a whole crawl state in the new folder ``into`` (``verb``: the command, for the
    messages of :func:`pycrawler.whole_folder.building`) and return its manifest.

    ``settings``: what the crawl resumes with (its ``seen`` table and ``seen_key`` scheme are the
    ones built). The frontier and seen table come from :func:`build_state` (``assignment`` to
    ``canonicalizer``). The manifest, written as ``manifest_name``: the ``source`` facts, then the
    ``frontier`` (the restore's summary after ``frontier_facts``), the ``seen`` table (with
    ``seen_facts``), the ``crawl_settings``, then ``after``. ``defaults``, when given, are written
    to :data:`~pycrawler.crawl.settings.DEFAULTS_FILE` and recorded as ``crawl_defaults``."""
    from ..seen.tables import SEEN_TABLE_PATHS
    from .settings import DEFAULTS_FILE, SETTINGS_FILE

    seen_table, seen_key = settings["seen"], settings["seen_key"]
    with building(into, verb) as build:
        pending, seen = build_state(build.path, assignment=assignment, seen_key=seen_key, seen_table=seen_table,
                                    restore=restore, seen_batches=seen_batches, seen_total=seen_total,
                                    bloom_fpr=bloom_fpr, bloom_capacity=bloom_capacity, progress=progress,
                                    canonicalizer=canonicalizer)
        manifest = {
            **source,
            "frontier": {"kind": "workqueues", "path": ".", **(frontier_facts or {}), **pending},
            "seen": {"path": SEEN_TABLE_PATHS[seen_table], "kind": seen_table, "keys": seen, "key_scheme": seen_key,
                     **(seen_facts or {})},
            "crawl_settings": settings,
            **({"crawl_defaults": defaults} if defaults is not None else {}),
            **(after or {}),
        }
        write_atomically(build.path / SETTINGS_FILE, json.dumps(settings, indent=1) + "\n")
        write_atomically(build.path / manifest_name, json.dumps(manifest, indent=2) + "\n")
        if defaults is not None:
            write_atomically(build.path / DEFAULTS_FILE, json.dumps(defaults, indent=1) + "\n")
    return manifest


def build_state(into: Path, *, assignment, seen_key: str, seen_table: str,
                restore: Callable[[Any, Callable[[int], None]], dict[str, Any]],
                seen_batches: Callable[[Any], Iterable[np.ndarray]], seen_total: Callable[[], int],
                bloom_fpr: float, bloom_capacity: int | None, progress: bool | None,
                canonicalizer: str | None = None) -> tuple[dict[str, Any], int]:
    """Make the frontier and seen table of a crawl state in the empty folder ``into`` (the
    importer's build of its target).

    ``restore(frontier, advance)`` puts the pending URLs into the new
    :class:`~pycrawler.frontier.workqueues.WorkQueueFrontier` (queue ``assignment``, keys of
    ``seen_key``), calling ``advance(n)`` as it goes, and returns its summary;
    ``seen_batches(frontier)`` yields the seen keys (uint64 arrays of the frontier's scheme);
    ``seen_total()`` counts them (for the progress bar and the Bloom filter's size: twice the
    count, at least a crawl's default, unless ``bloom_capacity`` is given).
    ``canonicalizer``: the canonical form the frontier keys URLs on (None: the seen key's default).
    Returns (the restore's summary, the number of seen keys added)."""
    from ..frontier.todo import JE_CONFIG
    from ..frontier.workqueues import WorkQueueFrontier
    from ..seen.tables import open_visited
    from ..store import Environment
    from .settings import CrawlConfig

    with Environment(into, create=True, durability="write_no_sync", config=JE_CONFIG) as env:
        frontier = WorkQueueFrontier(env, None, create=True, assignment=assignment, seen_key=seen_key,
                                     canonicalizer=canonicalizer)
        try:
            with meter("pending", unit="URLs", enabled=progress) as bar:
                def restored(urls: int) -> None:  # a batch is committed
                    bar.update(urls)
                    failpoints.hit("import.pending.restored")

                pending = restore(frontier, restored)
            if seen_table == "bloom" and bloom_capacity is None:
                # Room for the crawl that continues, not just for what the other crawler saw.
                bloom_capacity = max(2 * seen_total(), CrawlConfig.bloom_capacity)
            table = open_visited(seen_table, env, into, bloom_capacity=bloom_capacity or CrawlConfig.bloom_capacity,
                                 bloom_fpr=bloom_fpr)
            seen = 0
            with table, meter("seen", total=seen_total, unit="keys", enabled=progress) as bar:
                for keys in seen_batches(frontier):
                    table.add_batch(keys)
                    failpoints.hit("import.seen.added")
                    seen += len(keys)
                    bar.update(len(keys))
        finally:
            frontier.close()
    return pending, seen
