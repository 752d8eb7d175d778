"""Move a Heritrix crawl into a pycrawler crawl state, so ``pycrawler crawl`` continues it.

``import_state(state, DIR)`` leaves in ``DIR`` what ``pycrawler crawl --state DIR`` resumes:

``DIR/*.jdb`` (one JE environment)
    the work-queue frontier (:mod:`pycrawler.frontier.workqueues`): every pending http(s) URL
    of Heritrix, restored with its scheduling directive, precedence (Heritrix 1: the holder
    cost) and Heritrix's ordinal, so each queue hands its URLs out in Heritrix's order; the
    frontier's ordinals continue above Heritrix's. A URL's record carries its hop count
    (``layer`` = length of ``pathFromSeed``) and ``pathFromSeed`` + via, as the crawl's own
    discovered URLs do. Its seen-key scheme is ``heritrix``.
``DIR/drum/`` (DRUM, the default), ``DIR/visited.bloom`` (Bloom) or the ``visited`` database (exact)
    Heritrix's ``alreadySeenUrl`` keys, unchanged: ``createKey`` of Heritrix's canonical
    URL. The continuing crawl keys its new links the same way (:func:`heritrix_keys`), so
    nothing Heritrix saw is fetched again.
``DIR/crawl.json``
    the settings the state is bound to: ``seen``, ``queue_policy``, ``canon`` = heritrix,
    ``seen_key`` = heritrix (a resume with other values is refused).
``DIR/heritrix-import.json``
    where it came from, what was imported where, what was left out.

**Queues.** Politeness needs one site in one queue, imported URLs and new links alike. So
every imported URL is assigned by the policy the crawl continues with; by default that is the
policy Heritrix used, detected from its class keys (:mod:`.queue_policy`), whose keys
pycrawler reproduces (``heritrix-host``, ``surt``): the queues come over unchanged. URLs whose
Heritrix key the policy does not reproduce (Heritrix 3's ``+N`` parallel queues, another
``--queue-policy``) join the queue the continuing policy gives them, still in Heritrix's order
(its ordinals are one sequence over the whole crawl); the manifest counts them (``rekeyed``).

**Left out**: URLs other than http(s) (Heritrix's ``dns:`` lookups, ``whois:``...; pycrawler
resolves hosts itself), Heritrix's per-queue and per-host state (budgets, politeness
snoozes, robots.txt, cookies), and its fetch history (the crawl log stays Heritrix's).

The target must be a new or empty folder: an import never mixes with other data. It appears
whole or not at all (:mod:`pycrawler.whole_folder`): a killed import leaves no state a crawl
would resume, and the same command run again starts over.
"""

from __future__ import annotations

from itertools import islice
from pathlib import Path
from typing import Any

import numpy as np

from ..crawl.imported import FETCHABLE_SCHEMES, build_import, require_empty_target
from ..errors import SetupError
from ..keys.heritrix_canon import canonicalize_many
from ..keys.heritrix_fp import create_keys
from ..records.crawl_url import encode_many
from .export import DECODE_BATCH, pending_urls, value_decoder
from .pending import KRYO_NEEDS
from .queue_policy import detect_queue_policy, heritrix_class_keys
from .recovered import recover_from_log
from .state import HeritrixState

SEEN_KEY = "heritrix"
MANIFEST = "heritrix-import.json"


def heritrix_keys(urls: list[str], *, canonical: bool = True) -> np.ndarray:
    """The keys Heritrix (and an imported seen table) holds for these URLs."""
    return create_keys(canonicalize_many(urls) if canonical else urls)


def import_state(state: HeritrixState, into: Path, *, seen_table: str = "drum", queue_policy: str | None = None,
                 bloom_fpr: float = 0.001, bloom_capacity: int | None = None, recover_log=None,
                 batch: int = DECODE_BATCH, progress: bool | None = False) -> dict[str, Any]:
    """Import ``state`` into the folder ``into`` (see the module docstring); returns the manifest.
    With ``recover_log`` (the journal file or the job's ``logs/`` folder) the pending URLs are
    read from the journal and placed by the keys (:mod:`.recovered`) instead of decoded.
    ``progress``: count the URLs and keys live on stderr (None: when it is a terminal)."""
    from ..frontier.assignment import get_assignment

    into = require_empty_target(into, seen_table)
    recovered = journal_summary = None
    if recover_log is not None:
        journal, recovered = recover_from_log(state, recover_log, progress=progress)
        journal_summary = {**journal.summary(), **recovered.summary()}
        detected = recovered.policy
    else:
        detected = detect_queue_policy(heritrix_class_keys(state))
    policy = get_assignment(queue_policy or detected)
    settings = {"seen": seen_table, "queue_policy": policy.name, "canon": "heritrix", "seen_key": SEEN_KEY}
    try:
        return build_import(
            into, "import", manifest_name=MANIFEST, settings=settings, assignment=policy,
            restore=lambda target, advance: _import_pending(state, target, batch, recovered, advance),
            seen_batches=lambda _: state.seen_keys(), seen_total=state.seen_count,
            bloom_fpr=bloom_fpr, bloom_capacity=bloom_capacity, progress=progress,
            source={"source": state.source, "checkpoint": state.checkpoint.name if state.checkpoint else None,
                    "heritrix": state.heritrix, "log_version": state.log_version},
            frontier_facts={"detected_policy": detected},
            after={"recover_log": journal_summary} if journal_summary is not None else None)
    finally:
        if recovered is not None:
            recovered.close()   # the journal's pending URLs, spilled to TMPDIR


def _import_pending(state: HeritrixState, frontier, batch: int, recovered, advance) -> dict[str, Any]:
    """Restore the pending URLs, each at its Heritrix place; URLs the journal could not place
    (``recovered``'s mismatched queues) queue behind them at the normal directive.
    ``advance(n)`` after each batch of ``n`` URLs read."""
    from ..crawl.discovery import discovered
    from ..frontier.pending_records import DEFAULT_PRECEDENCE, NORMAL

    rows = pending_urls(state, value_decoder(state)) if recovered is None else recovered.rows()
    chunk = list(islice(rows, batch))
    if chunk and "uri" not in chunk[0]:  # Kryo values, and no Heritrix classes to decode them
        raise SetupError(f"cannot import {state.path}'s pending URLs: {KRYO_NEEDS}, or give its frontier journal "
                         "(--recover-log logs/); the seen keys need no decoding: they can be exported with --seen")
    urls = rekeyed = last_ordinal = 0
    skipped: dict[str, int] = {}
    while chunk:
        kept = []
        for row in chunk:
            if row["uri"].lower().startswith(FETCHABLE_SCHEMES):
                kept.append(row)
            else:
                scheme = row["uri"].partition(":")[0].lower()
                skipped[scheme] = skipped.get(scheme, 0) + 1
        class_keys = frontier.assignment.class_keys([row["uri"] for row in kept])
        paths = [row.get("pathFromSeed") or "" for row in kept]
        values = encode_many([discovered(row["uri"], len(path), path, row.get("via"))
                              for row, path in zip(kept, paths)])
        entries = []
        for row, class_key, value in zip(kept, class_keys, values):
            if row["ordinal"] is None:  # not placed: behind Heritrix's URLs, in journal order
                row.update(directive=NORMAL, precedence=DEFAULT_PRECEDENCE, ordinal=last_ordinal + 1)
            entries.append((class_key, row["directive"], row["precedence"], row["ordinal"], value))
            rekeyed += class_key != row["queue"]
            last_ordinal = max(last_ordinal, row["ordinal"])
        urls += frontier.restore(entries)
        advance(len(chunk))
        chunk = list(islice(rows, batch))
    return {"urls": urls, "queues": len(frontier.queues), "queue_policy": frontier.assignment.name,
            "rekeyed": rekeyed, "skipped": skipped, "last_heritrix_ordinal": last_ordinal}
