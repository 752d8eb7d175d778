"""A Heritrix state's pending URLs read from its recover journal, placed by its ``pending`` keys.

Heritrix 3 keeps its pending ``CrawlURI``s Kryo-encoded, which only its own classes decode.
The keys of ``pending`` need no decoding (queue, directive, precedence, ordinal: see
:mod:`.pending`), and the frontier journal (:mod:`.journal`) names every URL still queued,
with its hop path and via. Put together, they give every pending URL at its place without a
Heritrix class:

1. the journal is replayed: the URLs added and not finished, in the order of their ``F+``
   lines;
2. each goes to the queue Heritrix gave it, by the policy Heritrix used (detected from the
   class keys: ``heritrix-host`` or ``surt``) applied to its policy basis (a prerequisite's
   via, as ``CrawlURI.getPolicyBasisUURI`` does: a ``dns:`` lookup waits in the queue of the
   URL that needed it);
3. queue by queue, the journal's URLs in journal order are paired with the queue's keys in
   ordinal order. Heritrix numbers a URL when it schedules it (``prepForFrontier``) and writes
   its ``F+`` line as it enqueues it, in one thread per URL, so within a queue the two orders
   are one; a retry (``Fr``) keeps its key. Heritrix 3's parallel queues (``host+1``...) are
   matched together under their host and each URL takes its key's sub-queue.

Where a queue's counts disagree (a journal cut short by a kill, a state from another moment
than the journal, a queue assignment the detected policy does not reproduce), no URL of that
queue is guessed onto a key: its journal URLs are kept without a place (``placed`` false:
no directive, precedence or ordinal) and its keys without a URL are counted. The
:class:`Mismatch` list says so queue by queue; ``heritrix import`` queues those URLs behind
Heritrix's, in journal order, at the normal directive.

Known limits: a URL Heritrix moved to another queue (its assignment changed under it) keeps
its old ordinal, and one a forced revisit queued again keeps its first ordinal, so such a URL
may sit apart from where journal order puts it (the counts still agree); two threads
scheduling into one queue at the same instant may write their lines in the other order.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from typing import Any

from ..errors import BadInput
from .journal import Pending, Replay, replay_path
from .pending import PendingKey, is_cap_key, parse_key
from .state import PENDING, HeritrixState

PARALLEL_SUFFIX = re.compile(r"\+\d+$")
PREREQUISITE_HOP = "P"
WHOIS_QUEUE = "whois..."   # URIAuthorityBasedQueueAssignmentPolicy: every whois: URL in one queue


@dataclasses.dataclass(frozen=True)
class Mismatch:
    """A queue whose pending keys and journal URLs do not pair up."""

    queue: str
    keys: int       # pending keys Heritrix's state holds for it
    journal: int    # URLs the journal leaves pending in it

    def describe(self, action: str) -> str:
        """One line on the queue and what was done with it (``action``: with its journal URLs)."""
        urls = f"its {self.journal} journal URLs {action}" if self.journal else "no journal URL"
        keys = f"its {self.keys} keys dropped (no URL)" if self.keys else "no key"
        return f"queue {self.queue}: {self.keys} pending keys, {self.journal} journal URLs, not paired: {urls}; {keys}"


@dataclasses.dataclass
class Recovered:
    """The pending URLs of a state and its journal, as :func:`recover_pending` pairs them."""

    placed: list[tuple[PendingKey, Pending]]    # in queue order (the order of the keys)
    unplaced: list[tuple[str, Pending]]         # (queue, URL) of mismatched queues, journal order
    mismatches: list[Mismatch]
    policy: str

    def rows(self) -> Iterator[dict[str, Any]]:
        """One export record per URL: the placed ones in queue order, then the others."""
        for key, url in self.placed:
            yield {"queue": key.queue, "directive": key.directive, "precedence": key.precedence,
                   "ordinal": key.ordinal, **_url_fields(url), "placed": True}
        for queue, url in self.unplaced:
            yield {"queue": queue, "directive": None, "precedence": None, "ordinal": None, **_url_fields(url),
                   "placed": False}

    def summary(self) -> dict[str, Any]:
        return {"placed": len(self.placed), "unplaced": len(self.unplaced), "policy": self.policy,
                "mismatched_queues": [dataclasses.asdict(m) for m in self.mismatches]}


def _url_fields(url: Pending) -> dict[str, Any]:
    return {"uri": url.url, "pathFromSeed": url.hops, "via": url.via, "from": "recover-log"}


def policy_basis(url: Pending) -> str:
    """The URL a queue is chosen by: a prerequisite's via, else the URL itself."""
    return url.via if url.hops.endswith(PREREQUISITE_HOP) and url.via else url.url


def matching_queue(class_key: str) -> str:
    """The queue a key is matched under: a parallel sub-queue (``host+2``) under its host."""
    return PARALLEL_SUFFIX.sub("", class_key)


def heritrix_queues(urls: list[Pending], policy) -> list[str]:
    """The class key Heritrix gave each URL under ``policy`` (a pycrawler queue assignment)."""
    keys = [WHOIS_QUEUE] * len(urls)
    assigned = [i for i, url in enumerate(urls) if url.url[:6].lower() != "whois:"]
    for i, key in zip(assigned, policy.class_keys([policy_basis(urls[i]) for i in assigned])):
        keys[i] = key
    return keys


def pending_keys_by_queue(state: HeritrixState) -> dict[str, list[PendingKey]]:
    """The state's pending keys (caps left out), grouped by :func:`matching_queue`, each group
    in ordinal order; the groups in key order."""
    queues: dict[str, list[PendingKey]] = {}
    names: dict[str, str] = {}   # one string per queue name, not one per key
    for key, _ in state.pending_records(keys_only=True, page_records=65536):
        if not is_cap_key(key):
            fields = parse_key(key)
            fields = dataclasses.replace(fields, queue=names.setdefault(fields.queue, fields.queue))
            queues.setdefault(matching_queue(fields.queue), []).append(fields)
    for keys in queues.values():
        keys.sort(key=lambda k: k.ordinal)
    return queues


def recover_pending(state: HeritrixState, journal: Replay) -> Recovered:
    """Pair ``journal``'s pending URLs with ``state``'s pending keys (module docstring)."""
    from ..frontier.assignment import get_assignment
    from .migrate import detect_queue_policy

    keys_by_queue = pending_keys_by_queue(state)
    policy_name = detect_queue_policy(list(keys_by_queue))
    urls = list(journal.pending.values())
    by_queue: dict[str, list[Pending]] = {}
    for url, queue in zip(urls, heritrix_queues(urls, get_assignment(policy_name))):
        by_queue.setdefault(matching_queue(queue), []).append(url)
    placed: list[tuple[PendingKey, Pending]] = []
    unplaced: list[tuple[str, Pending]] = []
    mismatches: list[Mismatch] = []
    for queue in [*keys_by_queue, *(q for q in by_queue if q not in keys_by_queue)]:
        keys, queued = keys_by_queue.get(queue, []), by_queue.get(queue, [])
        if len(keys) == len(queued):
            placed.extend(zip(keys, queued))
        else:
            mismatches.append(Mismatch(queue, len(keys), len(queued)))
            unplaced.extend((queue, url) for url in queued)
    placed.sort(key=lambda pair: _key_order(pair[0]))
    return Recovered(placed, unplaced, mismatches, policy_name)


def _key_order(key: PendingKey) -> tuple:
    """The order of ``pending``'s keys: queue bytes, directive, precedence, ordinal."""
    return key.queue.encode("utf-8"), key.directive, key.precedence, key.ordinal


def recover_from_log(state: HeritrixState, path, *, progress: bool | None = False) -> tuple[Replay, Recovered]:
    """Replay the journal at ``path`` (a file, or the job's ``logs/`` folder: read up to the
    state's checkpoint when it is one) and pair it with ``state``'s keys; ``progress``: count
    the journal's lines live on stderr (None: when it is a terminal)."""
    if PENDING not in state.database_names():
        raise BadInput(f"{state.path} has no {PENDING} database: no keys to place the journal's URLs by "
                       f"(its databases: {', '.join(state.database_names())})")
    journal = replay_path(path, checkpoint=state.checkpoint.name if state.checkpoint else None, progress=progress)
    return journal, recover_pending(state, journal)
