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
from array import array
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import BadInput
from .journal import Pending, PendingURLs, Replay, replay_path
from .pending import is_cap_key, parse_key
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


class QueueNames:
    """Queue names numbered in the order first met, so that millions of URLs and keys carry a
    4-byte number rather than a string each."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._ids: dict[str, int] = {}

    def id(self, name: str) -> int:
        found = self._ids.get(name)
        if found is None:
            found = self._ids[name] = len(self.names)
            self.names.append(name)
        return found

    def __len__(self) -> int:
        return len(self.names)


@dataclasses.dataclass
class PendingKeys:
    """The pending keys of a state (caps left out) in key order, as arrays: the queue each key
    names, the queue it is matched under (:func:`matching_queue`), directive, precedence and
    ordinal."""

    queue: np.ndarray        # ids in ``names``
    matched: np.ndarray      # ids in the matching queues' ``QueueNames``
    directive: np.ndarray
    precedence: np.ndarray
    ordinal: np.ndarray
    names: QueueNames

    @classmethod
    def read(cls, state: HeritrixState, matching: QueueNames) -> "PendingKeys":
        names, matched_of = QueueNames(), array("I")   # matched_of: a queue's matching-queue id
        columns = queue, directive, precedence, ordinal = array("I"), array("B"), array("B"), array("Q")
        for key, _ in state.pending_records(keys_only=True, page_records=65536):
            if is_cap_key(key):
                continue
            fields = parse_key(key)
            name = names.id(fields.queue)
            if name == len(matched_of):
                matched_of.append(matching.id(matching_queue(fields.queue)))
            queue.append(name)
            directive.append(fields.directive)
            precedence.append(fields.precedence)
            ordinal.append(fields.ordinal)
        queue, directive, precedence, ordinal = (np.frombuffer(column, dtype=column.typecode) for column in columns)
        return cls(queue, np.frombuffer(matched_of, dtype=np.uint32)[queue], directive, precedence, ordinal, names)

    def __len__(self) -> int:
        return len(self.ordinal)


@dataclasses.dataclass
class Recovered:
    """The pending URLs of a state and its journal, as :func:`recover_pending` pairs them:
    arrays over the keys and the journal's pending URLs (which stay on disk), never a list of
    either."""

    journal: PendingURLs          # the journal's pending URLs, numbered in F+ order
    keys: PendingKeys
    url_of_key: np.ndarray        # per key: the number of its journal URL, -1 for none (a mismatch)
    unplaced: np.ndarray          # numbers of the URLs of mismatched queues, in journal order
    unplaced_queue: np.ndarray    # their matching queues (ids in ``queues``)
    queues: QueueNames            # the matching queues
    mismatches: list[Mismatch]
    policy: str

    def rows(self, batch: int = 65536) -> Iterator[dict[str, Any]]:
        """One export record per URL: the placed ones in queue order, then the others."""
        keys, names = self.keys, self.keys.names.names
        placed = np.flatnonzero(self.url_of_key >= 0)
        for first in range(0, len(placed), batch):
            at = placed[first:first + batch]
            columns = zip(keys.queue[at].tolist(), keys.directive[at].tolist(), keys.precedence[at].tolist(),
                          keys.ordinal[at].tolist(), self.journal.read(self.url_of_key[at]))
            for queue, directive, precedence, ordinal, url in columns:
                yield {"queue": names[queue], "directive": directive, "precedence": precedence, "ordinal": ordinal,
                       **_url_fields(url), "placed": True}
        for first in range(0, len(self.unplaced), batch):
            urls = self.journal.read(self.unplaced[first:first + batch])
            for queue, url in zip(self.unplaced_queue[first:first + batch].tolist(), urls):
                yield {"queue": self.queues.names[queue], "directive": None, "precedence": None, "ordinal": None,
                       **_url_fields(url), "placed": False}

    def summary(self) -> dict[str, Any]:
        return {"placed": int(np.count_nonzero(self.url_of_key >= 0)), "unplaced": len(self.unplaced),
                "policy": self.policy, "mismatched_queues": [dataclasses.asdict(m) for m in self.mismatches]}

    def close(self) -> None:
        """Free the journal's spill file."""
        self.journal.close()


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


def recover_pending(state: HeritrixState, journal: Replay) -> Recovered:
    """Pair ``journal``'s pending URLs with ``state``'s pending keys (module docstring).

    Both sides become arrays of matching-queue numbers; sorted by queue (keys by ordinal
    within it, URLs in journal order) over the queues whose counts agree, the two line up
    one to one."""
    from ..frontier.assignment import get_assignment
    from .migrate import detect_queue_policy

    queues = QueueNames()
    keys = PendingKeys.read(state, queues)
    policy_name = detect_queue_policy(list(queues.names))
    policy = get_assignment(policy_name)
    url_queue, matched_ids = array("I"), {}
    for batch in journal.pending.batches():
        for queue in heritrix_queues(batch, policy):
            found = matched_ids.get(queue)
            if found is None:
                found = matched_ids[queue] = queues.id(matching_queue(queue))
            url_queue.append(found)
    url_queue = np.frombuffer(url_queue, dtype=np.uint32)
    key_counts = np.bincount(keys.matched, minlength=len(queues))
    url_counts = np.bincount(url_queue, minlength=len(queues))
    agree = key_counts == url_counts
    paired_keys = np.flatnonzero(agree[keys.matched])
    paired_keys = paired_keys[np.lexsort((keys.ordinal[paired_keys], keys.matched[paired_keys]))]
    paired_urls = np.flatnonzero(agree[url_queue])
    paired_urls = paired_urls[np.argsort(url_queue[paired_urls], kind="stable")]
    url_of_key = np.full(len(keys), -1, dtype=np.int64)
    url_of_key[paired_keys] = paired_urls
    unplaced = np.flatnonzero(~agree[url_queue])
    mismatches = [Mismatch(queues.names[q], int(key_counts[q]), int(url_counts[q])) for q in np.flatnonzero(~agree)]
    return Recovered(journal.pending, keys, url_of_key, unplaced, url_queue[unplaced], queues, mismatches, policy_name)


def recover_from_log(state: HeritrixState, path, *, progress: bool | None = False) -> tuple[Replay, Recovered]:
    """Replay the journal at ``path`` (a file, or the job's ``logs/`` folder: read up to the
    state's checkpoint when it is one) and pair it with ``state``'s keys; ``progress``: count
    the journal's lines live on stderr (None: when it is a terminal)."""
    if PENDING not in state.database_names():
        raise BadInput(f"{state.path} has no {PENDING} database: no keys to place the journal's URLs by "
                       f"(its databases: {', '.join(state.database_names())})")
    journal = replay_path(path, checkpoint=state.checkpoint.name if state.checkpoint else None, progress=progress)
    return journal, recover_pending(state, journal)
