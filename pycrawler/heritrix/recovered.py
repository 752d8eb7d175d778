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
than the journal, a queue assignment the detected policy does not reproduce), or agree but the
URIs its Heritrix 3 values start with are not the journal's URLs for it, no URL of that
queue is guessed onto a key: its journal URLs are kept without a place (``placed`` false:
no directive, precedence or ordinal) and its keys without a URL are counted. The
:class:`Mismatch` list says so queue by queue; ``heritrix import`` queues those URLs behind
Heritrix's, in journal order, at the normal directive.

Two threads scheduling into one queue at the same instant may write their ``F+`` lines in
the other order than the ordinals they took (Heritrix 3.13 with 5 toe threads does so on a
few-hundred-URL loopback crawl), and then journal order is not key order. So Heritrix 3's
values are read too, for the one field that needs no Heritrix class: a ``CrawlURI``'s Kryo
record starts with its URI, written as Kryo writes an ASCII string (its bytes, the last one
with its top bit set). Within a queue whose keys all start so, and whose URIs are exactly the
journal's URLs for it, each key takes the journal URL of its own URI (:func:`kryo_uri`); a
queue where one key's URI is not among the journal's URLs for it is not paired (a journal cut
short may leave a queue as many URLs as it has keys, but others); otherwise the queue keeps the
order pairing. ``reordered`` counts the keys this moved.

Known limits: a URL Heritrix moved to another queue (its assignment changed under it) keeps
its old ordinal, and one a forced revisit queued again keeps its first ordinal; where the
values do not give the URIs (Heritrix 1's serialized values, a URI Kryo wrote as UTF-8), such
a URL may sit apart from where journal order puts it (the counts still agree).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from array import array
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import BadInput
from .journal import Pending, PendingURLs, Replay, replay_path
from .pending import is_cap_key, parse_key
from .queue_policy import detect_queue_policy
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
    other_urls: bool = False   # as many, but the URIs its values start with are not the journal's

    def describe(self, action: str) -> str:
        """One line on the queue and what was done with it (``action``: with its journal URLs)."""
        urls = f"its {self.journal} journal URLs {action}" if self.journal else "no journal URL"
        keys = f"its {self.keys} keys dropped (no URL)" if self.keys else "no key"
        other = " (its values name other URLs)" if self.other_urls else ""
        return (f"queue {self.queue}: {self.keys} pending keys, {self.journal} journal URLs{other}, not paired: "
                f"{urls}; {keys}")


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
    uri_hash: np.ndarray     # per key: :func:`uri_hash` of the URI its value starts with, 0 if none

    @classmethod
    def read(cls, state: HeritrixState, matching: QueueNames) -> PendingKeys:
        names, matched_of = QueueNames(), array("I")   # matched_of: a queue's matching-queue id
        columns = queue, directive, precedence, ordinal = array("I"), array("B"), array("B"), array("Q")
        hashes = array("Q")
        for key, value in state.pending_records(keys_only=False, page_records=16384):
            if is_cap_key(key):
                continue
            uri = kryo_uri(value)
            hashes.append(uri_hash(uri) if uri is not None else 0)
            fields = parse_key(key)
            name = names.id(fields.queue)
            if name == len(matched_of):
                matched_of.append(matching.id(matching_queue(fields.queue)))
            queue.append(name)
            directive.append(fields.directive)
            precedence.append(fields.precedence)
            ordinal.append(fields.ordinal)
        queue, directive, precedence, ordinal = (np.frombuffer(column, dtype=column.typecode) for column in columns)
        return cls(queue, np.frombuffer(matched_of, dtype=np.uint32)[queue], directive, precedence, ordinal, names,
                   np.frombuffer(hashes, dtype=np.uint64))

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
    reordered: int = 0            # keys paired by their value's URI with another URL than journal order gave

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
                "reordered": self.reordered, "policy": self.policy, "mismatched_queues": [dataclasses.asdict(m) for m in self.mismatches]}

    def close(self) -> None:
        """Free the journal's spill file."""
        self.journal.close()


# The schemes Heritrix 3 fetches (FetchHTTP, FetchDNS, FetchFTP, FetchSFTP, FetchWhois): a
# CrawlURI's URI has one of them. Those with an authority are followed by "//" and a host.
_CRAWL_URI = re.compile(rb"(?:(?:https?|s?ftp)://[^\x00-\x20\x7f/?#]|dns:|whois:)[!-~]*\Z", re.IGNORECASE)


def kryo_uri(value: bytes | None) -> bytes | None:
    """The URI a Heritrix 3 ``CrawlURI`` value starts with, when Kryo wrote it as an ASCII
    string (every byte below 0x80 but the last, which has its top bit set) and it is a URI of a
    scheme Heritrix fetches; None otherwise. Opaque values often start with a run of ASCII bytes
    holding a colon: taken for URIs, they would name URLs the journal does not hold and keep
    their queue from the order pairing."""
    if not value or value[0] & 0x80:
        return None
    for end, byte in enumerate(value):
        if byte & 0x80:
            uri = value[:end] + bytes((byte & 0x7F,))
            return uri if _CRAWL_URI.match(uri) else None
    return None


def uri_hash(uri: bytes) -> int:
    """A 64-bit hash of a URI's ASCII bytes, never 0 (0 stands for no URI)."""
    return int.from_bytes(hashlib.blake2b(uri, digest_size=8).digest(), "little") or 1


def _pair_by_uri(keys: PendingKeys, url_queue: np.ndarray, journal: PendingURLs, paired_keys: np.ndarray,
                 paired_urls: np.ndarray, batch: int = 65536) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """The order pairing (``paired_keys[i]`` with ``paired_urls[i]``, queue by queue) redone by
    URI in every queue whose keys all carry one and whose URIs are the journal's URLs for it;
    returns the pairs, how many keys took another URL, and the queues whose keys' URIs are not
    the journal's URLs (a journal of another moment than the state): those whose keys all carry
    a URI and differ, and those where one key's URI is not among the journal's URLs at all."""
    if not len(paired_keys) or not np.any(keys.uri_hash[paired_keys]):
        return paired_keys, paired_urls, 0, np.empty(0, dtype=np.uint32)
    url_hash = np.zeros(len(paired_urls), dtype=np.uint64)
    for first in range(0, len(paired_urls), batch):
        urls = journal.read(paired_urls[first:first + batch])
        url_hash[first:first + len(urls)] = [uri_hash(url.url.encode("ascii", "replace")) for url in urls]
    key_hash = keys.uri_hash[paired_keys]
    queue = keys.matched[paired_keys]            # the same queue sequence on both sides
    by_key = np.lexsort((key_hash, queue))
    by_url = np.lexsort((url_hash, queue))
    unknown = key_hash[by_key] == 0
    differs = (key_hash[by_key] != url_hash[by_url]) | unknown
    bad_queues = np.unique(queue[by_key][differs])
    # A key whose value names a URI the journal does not leave pending in its queue shows the
    # journal is of another moment, even where other keys of that queue carry no URI (and the
    # queue would otherwise keep the order pairing, putting other URLs on its keys).
    in_queue = np.uint64(0x9E3779B97F4A7C15) * queue.astype(np.uint64)   # one hash space a queue
    stray = (key_hash != 0) & ~np.isin(key_hash ^ in_queue, url_hash ^ in_queue)
    other_urls = np.union1d(np.setdiff1d(bad_queues, np.unique(queue[by_key][unknown])),  # every key with a URI
                            np.unique(queue[stray]))
    good = ~np.isin(queue[by_key], bad_queues)
    keys_out, urls_out = paired_keys.copy(), paired_urls.copy()
    keys_out[good], urls_out[good] = paired_keys[by_key][good], paired_urls[by_url][good]
    keep = ~np.isin(queue, bad_queues)
    keys_out[~good], urls_out[~good] = paired_keys[~keep], paired_urls[~keep]
    before, after = np.full(len(keys), -1, dtype=np.int64), np.full(len(keys), -1, dtype=np.int64)
    before[paired_keys], after[keys_out] = paired_urls, urls_out
    return keys_out, urls_out, int(np.count_nonzero(before != after)), other_urls


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
    other_urls = np.zeros(len(queues), dtype=bool)
    while True:
        paired_keys = np.flatnonzero(agree[keys.matched])
        paired_keys = paired_keys[np.lexsort((keys.ordinal[paired_keys], keys.matched[paired_keys]))]
        paired_urls = np.flatnonzero(agree[url_queue])
        paired_urls = paired_urls[np.argsort(url_queue[paired_urls], kind="stable")]
        paired_keys, paired_urls, reordered, differ = _pair_by_uri(keys, url_queue, journal.pending, paired_keys,
                                                                   paired_urls)
        if not len(differ):
            break
        agree[differ], other_urls[differ] = False, True   # counts agree, URLs do not: not paired either
    url_of_key = np.full(len(keys), -1, dtype=np.int64)
    url_of_key[paired_keys] = paired_urls
    unplaced = np.flatnonzero(~agree[url_queue])
    mismatches = [Mismatch(queues.names[q], int(key_counts[q]), int(url_counts[q]), bool(other_urls[q]))
                  for q in np.flatnonzero(~agree)]
    return Recovered(journal.pending, keys, url_of_key, unplaced, url_queue[unplaced], queues, mismatches, policy_name,
                     reordered)


def recover_from_log(state: HeritrixState, path, *, progress: bool | None = False) -> tuple[Replay, Recovered]:
    """Replay the journal at ``path`` (a file, or the job's ``logs/`` folder: read up to the
    state's checkpoint when it is one) and pair it with ``state``'s keys; ``progress``: count
    the journal's lines live on stderr (None: when it is a terminal)."""
    if PENDING not in state.database_names():
        raise BadInput(f"{state.path} has no {PENDING} database: no keys to place the journal's URLs by "
                       f"(its databases: {', '.join(state.database_names())})")
    journal = replay_path(path, checkpoint=state.checkpoint.name if state.checkpoint else None, progress=progress)
    return journal, recover_pending(state, journal)
