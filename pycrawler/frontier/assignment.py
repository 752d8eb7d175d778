"""Queue assignment: which work queue (Heritrix's *class key*) a URL waits in.

A work queue is the unit of politeness: the frontier hands out at most one URL of a queue at
a time and snoozes the queue after each fetch. So the policy decides both how URLs are
grouped on disk and how hard each web server is hit.

==================  ==============================  =================================================
policy              class key of                    notes
==================  ==============================  =================================================
``host``            ``http://www.Example.com:8080/``  ``www.example.com#8080``: Heritrix's
(default)                                           ``HostnameQueueAssignmentPolicy`` (default ports
                                                    dropped, ``:`` written ``#``)
``heritrix-host``   the same                        ``host`` as Heritrix spells it: also an https URL
                                                    on the default port gets ``#443``
                                                    (``https://example.com/`` -> ``example.com#443``),
                                                    so http and https of a host are two queues
``surt``            the same                        ``com,example,www,#8080``: the SURT form of the
                                                    authority (``SurtAuthorityQueueAssignmentPolicy``)
``domain``          the same                        ``example.com``: the registered domain, one queue
                                                    for every host of a site (``a.example.co.uk`` and
                                                    ``b.example.co.uk`` share ``example.co.uk``)
``bkdr:N``          any URL                         ``bkdr/17``: BKDRHash of the whole URL mod N
                                                    (seeds/004): one huge site spreads over N queues
``bkdr-host:N``     any URL                         ``www.example.com/17``: BKDRHash mod N *within*
                                                    the host; politeness stays per host
``parallel-host:N`` any URL                         ``www.example.com+3`` (``www.example.com`` for
                                                    slot 0): Heritrix 3's ``parallelQueues``, each
                                                    queue polite on its own
==================  ==============================  =================================================

Heritrix's policies, compared (read from Heritrix 1.14 and 3): ``HostnameQueueAssignmentPolicy``
keys a URL by its authority without userinfo, default ports dropped, ``:`` written ``#``, and
``#443`` added to an https URL without a port: that is ``heritrix-host`` (``host`` differs for
https only). ``SurtAuthorityQueueAssignmentPolicy`` keys by the SURT authority, which is
``surt`` (Heritrix keeps a URL's userinfo in the SURT, ``com,example,#8080@user``; pycrawler
drops it, as its canonical URLs do). Heritrix 3's ``parallelQueues`` (``+N`` suffixes) is
``parallel-host:N`` (the URLs of an imported crawl are assigned again by the frontier's own
policy: Heritrix's subqueue comes from its consistent hash, pycrawler's from BKDRHash); Heritrix
1's ``dns:`` queues (the via's host) have no counterpart (see ``pycrawler heritrix import``).

The trade-off of hashing (seeds/004). ``bkdr:N`` spreads the URLs of one big site over up to
N queues, so N fetching threads can work on it at once instead of one; but every one of those
queues is polite on its own, so the site receives up to N times the load a per-host queue
allows, and the queues mix hosts, so a slow host delays the unrelated URLs that hashed with
it. ``bkdr-host:N`` keeps the spreading within each host (the queues of a host are smaller and
scanned independently) and gives its queues one *politeness key*, the host: the frontier lets
one of them be in process at a time and applies the delay host-wide, so a server sees the
same load as with ``host``.

Registered domains come from the Public Suffix List shipped inside the ``publicsuffixlist``
package: no network at run time, the list is refreshed with each release of the package (it
tracks the list monthly, where ``publicsuffix2``'s bundled copy dates from 2019), and it
answers from a dict of suffixes without building a trie per call. An IP address, ``localhost``
or a bare public suffix is its own domain.
"""

from __future__ import annotations

import functools
import ipaddress
import re
from collections.abc import Sequence

import numpy as np

from ..errors import BadInput
from ..keys.canon import DEFAULT_PORTS, split_authority
from ..keys.urls import packed_utf8

BKDR_SEED = 131

COMPILED_BATCH = 1 << 14
"""Batches of at least this many strings are hashed by the numba kernel of
:mod:`.bkdr_kernel` (~0.25-0.45 us a URL, after loading numba: ~70 MB and ~0.3 s per
process); smaller ones by numpy (:func:`_bkdr_numpy`, ~0.8 us a URL; a loop over each byte
in Python took ~5.5). A crawl assigns only its new URLs, a few hundred a batch, so it never
loads numba for this; a bulk schedule of 20,000 URLs does."""


def bkdr_hashes(texts: Sequence[str]) -> np.ndarray:
    """BKDRHash (seed 131, 32-bit, top bit cleared, over UTF-8 bytes) of each string."""
    texts = texts if isinstance(texts, list) else list(texts)
    if not texts:
        return np.zeros(0, dtype=np.uint32)
    if len(texts) < COMPILED_BATCH:
        return _bkdr_numpy(*packed_utf8(texts))
    from .bkdr_kernel import bkdr_packed

    out = np.empty(len(texts), dtype=np.uint32)
    bkdr_packed(*packed_utf8(texts), BKDR_SEED, out)
    return out


def _bkdr_numpy(buf: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """BKDRHash of each string of a packed batch (none empty) without a loop over its bytes:
    the hash is the sum of byte i times 131 ** (bytes after it), mod 2 ** 32, and uint32
    arithmetic wraps mod 2 ** 32."""
    lengths = offsets[1:] - offsets[:-1]
    powers = np.empty(int(lengths.max()), dtype=np.uint32)
    powers[0] = 1
    np.cumprod(np.full(len(powers) - 1, BKDR_SEED, dtype=np.uint32), out=powers[1:])
    after = np.repeat(offsets[1:] - 1, lengths) - np.arange(len(buf))
    terms = buf.astype(np.uint32) * powers[after]
    return np.add.reduceat(terms, offsets[:-1], dtype=np.uint32) & np.uint32(0x7FFFFFFF)


def bkdr_hash(text: str) -> int:
    """The BKDRHash of one string, as the C original computes it over its bytes."""
    return _bkdr(text.encode("utf-8", "surrogatepass"))


def _bkdr(data: bytes) -> int:
    h = 0
    for byte in data:
        h = (h * BKDR_SEED + byte) & 0xFFFFFFFF
    return h & 0x7FFFFFFF


def authority_parts(url: str) -> tuple[str, str]:
    """(lowercase host, port or '' when default/absent) of an absolute URL."""
    scheme, _, rest = url.partition("://")
    end = len(rest)
    for stop in "/?#":
        at = rest.find(stop)
        if 0 <= at < end:
            end = at
    _, host, port = split_authority(rest[:end])
    if port == DEFAULT_PORTS.get(scheme.lower()):
        port = ""
    return host.lower(), port


# The host of an absolute URL with a lowercase host and no userinfo or port (a safe-canonical
# URL, mostly): one match instead of the general parse.
_PLAIN_HOST = re.compile(r"[a-z][a-z0-9+.\-]*://([a-z0-9\-.]+)(?=[/?#]|\Z)")


def host_key(url: str) -> str:
    plain = _PLAIN_HOST.match(url)
    if plain is not None:
        return plain.group(1)
    host, port = authority_parts(url)
    return f"{host}#{port}" if port else host


def heritrix_host_key(url: str) -> str:
    """Heritrix's ``HostnameQueueAssignmentPolicy`` class key: :func:`host_key`, and ``#443``
    for an https URL on the default port (Heritrix keeps it apart from http on port 80)."""
    key = host_key(url)
    if "#" not in key and url[:6].lower() == "https:":
        return f"{key}#{DEFAULT_PORTS['https']}"
    return key


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


def surt_authority(url: str) -> str:
    """``com,example,www,`` (``#port`` after it when not the default); IPs are not reversed."""
    host, port = authority_parts(url)
    surt = host if _is_ip(host) else ",".join(reversed(host.split("."))) + ","
    return f"{surt}#{port}" if port else surt


@functools.lru_cache(maxsize=1)
def _public_suffixes():
    from publicsuffixlist import PublicSuffixList

    return PublicSuffixList()


@functools.lru_cache(maxsize=1 << 16)
def registered_domain(host: str) -> str:
    """``example.co.uk`` for ``www.example.co.uk``; the host itself for IPs and suffixes."""
    if _is_ip(host):
        return host
    return _public_suffixes().privatesuffix(host.rstrip(".")) or host


class QueueAssignment:
    """A queue-assignment policy: ``class_keys(urls)`` names each URL's queue, and
    ``politeness_key(class_key)`` the group whose queues share one politeness timer (the
    class key itself unless the policy says otherwise)."""

    name = "host"
    #: True when several queues share a politeness key (the frontier then gates them together).
    grouped = False
    #: True when a host's URLs are spread over several queues (a queue is then no host's own).
    spreads_hosts = False

    def class_key(self, url: str) -> str:
        return host_key(url)

    def class_keys(self, urls: Sequence[str]) -> list[str]:
        return [self.class_key(u) for u in urls]

    def politeness_key(self, class_key: str) -> str:
        return class_key

    def __repr__(self) -> str:
        return f"<queue assignment {self.name}>"


class ByHost(QueueAssignment):
    name = "host"

    def class_keys(self, urls: Sequence[str]) -> list[str]:
        return list(map(host_key, urls))


class ByHeritrixHost(QueueAssignment):
    name = "heritrix-host"

    def class_keys(self, urls: Sequence[str]) -> list[str]:
        return list(map(heritrix_host_key, urls))


class BySurtAuthority(QueueAssignment):
    name = "surt"

    def class_key(self, url: str) -> str:
        return surt_authority(url)


class ByRegisteredDomain(QueueAssignment):
    name = "domain"

    def class_key(self, url: str) -> str:
        return registered_domain(authority_parts(url)[0])


class ByBkdrHash(QueueAssignment):
    """``bkdr:N``: queue ``bkdr/<hash mod N>`` of the whole URL (seeds/004)."""

    spreads_hosts = True

    def __init__(self, queues: int):
        self.queues = queues
        self.name = f"bkdr:{queues}"
        self._names = [f"bkdr/{i}" for i in range(queues)]

    def class_key(self, url: str) -> str:
        return self._names[bkdr_hash(url) % self.queues]

    def class_keys(self, urls: Sequence[str]) -> list[str]:
        names = self._names
        return [names[i] for i in (bkdr_hashes(urls) % np.uint32(self.queues)).tolist()]


class ByBkdrHashWithinHost(QueueAssignment):
    """``bkdr-host:N``: queue ``<host>/<hash mod N>``; the host is the politeness key."""

    grouped = spreads_hosts = True

    def __init__(self, queues: int):
        self.queues = queues
        self.name = f"bkdr-host:{queues}"

    def class_key(self, url: str) -> str:
        return f"{host_key(url)}/{bkdr_hash(url) % self.queues}"

    def class_keys(self, urls: Sequence[str]) -> list[str]:
        slots = (bkdr_hashes(urls) % np.uint32(self.queues)).tolist()
        return [f"{host_key(u)}/{slot}" for u, slot in zip(urls, slots)]

    def politeness_key(self, class_key: str) -> str:
        return class_key.rpartition("/")[0]


class ByHostInParallel(QueueAssignment):
    """``parallel-host:N``: Heritrix 3's ``parallelQueues``: a host's URLs over N queues, ``<host>``
    and ``<host>+1`` ... ``<host>+(N-1)``, each polite on its own, so the host serves up to N of
    them at once (and gets up to N times the load ``host`` allows). The queue is the whole URL's
    BKDRHash mod N, as Heritrix's ``parallelQueuesRandomAssignment`` hashes the whole URI (its
    default hashes the first path segment, which leaves a site under one folder in one queue)."""

    spreads_hosts = True

    def __init__(self, queues: int):
        self.queues = queues
        self.name = f"parallel-host:{queues}"
        self._suffixes = [""] + [f"+{i}" for i in range(1, queues)]

    def class_key(self, url: str) -> str:
        return host_key(url) + self._suffixes[bkdr_hash(url) % self.queues]

    def class_keys(self, urls: Sequence[str]) -> list[str]:
        suffixes = self._suffixes
        slots = (bkdr_hashes(urls) % np.uint32(self.queues)).tolist()
        return [host_key(u) + suffixes[slot] for u, slot in zip(urls, slots)]


POLICIES = ("host", "heritrix-host", "surt", "domain", "bkdr:N", "bkdr-host:N", "parallel-host:N")


def get_assignment(spec: str | QueueAssignment) -> QueueAssignment:
    """A policy by name: ``host``, ``heritrix-host``, ``surt``, ``domain``, ``bkdr:N``, ``bkdr-host:N``
    or ``parallel-host:N``."""
    if isinstance(spec, QueueAssignment):
        return spec
    name, _, count = str(spec).partition(":")
    simple = {"host": ByHost, "heritrix-host": ByHeritrixHost, "surt": BySurtAuthority,
              "domain": ByRegisteredDomain}
    if name in simple and not count:
        return simple[name]()
    hashed = {"bkdr": ByBkdrHash, "bkdr-host": ByBkdrHashWithinHost, "parallel-host": ByHostInParallel}
    if name in hashed and count.isdigit() and int(count) >= 1:
        return hashed[name](int(count))
    raise BadInput(f"queue assignment must be one of {', '.join(POLICIES)} (N >= 1), not {spec!r}")
