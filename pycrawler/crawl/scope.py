"""Crawl scope: which discovered URLs the crawl follows, decided from the seeds.

=============  ==============================================================================
scope          a URL is in scope when
=============  ==============================================================================
``seed-hosts`` its host and port are a seed's (``http://example.com/`` and
(default)      ``http://example.com:80/x`` agree; ``https://example.com/`` is another server)
``domain``     its host's registered domain is a seed's (``docs.example.co.uk`` is in a crawl
               seeded with ``www.example.co.uk``), whatever the port or scheme
``prefix``     it starts with a seed's URL cut after its last ``/`` (Heritrix's SURT-prefix
               idea on plain URLs: a seed ``http://example.com/docs/index.html`` admits
               everything under ``http://example.com/docs/``)
``any``        it is an http(s) URL
=============  ==============================================================================

Scope objects are small and picklable: the page workers (:mod:`.pages`) apply them where the
links are extracted, so out-of-scope links never travel back to the crawling process. They
import nothing heavy (the public suffix list only for ``domain``), since every worker
process imports this module.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from urllib.parse import urlsplit

from ..errors import BadInput
from ..keys.canon import safe, split_authority

SCOPES = ("seed-hosts", "domain", "prefix", "any")
_DEFAULT_PORTS = {"http": 80, "https": 443}


# A URL's scheme and authority, as urlsplit delimits them: the server depends on nothing else.
_ORIGIN = re.compile(r"[^:/?#]*://[^/?#]*")


def server(url: str) -> tuple[str, int] | None:
    """(lowercase host, effective port) of an http(s) URL; None for anything else.

    Answered per origin from a cache: a page's links name a few servers, and splitting each
    link took a twentieth of a fetcher's CPU on the 1M-page synthetic web."""
    origin = _ORIGIN.match(url)
    return _server(url) if origin is None else _origin_server(origin.group())


@functools.lru_cache(maxsize=1024)
def _origin_server(origin: str) -> tuple[str, int] | None:
    return _server(origin)


def _server(url: str) -> tuple[str, int] | None:
    try:
        parts = urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError:  # a port that is not a number, a bad IPv6 literal
        return None
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return host, port if port is not None else _DEFAULT_PORTS[scheme]


def seed_problem(url: str) -> str | None:
    """Why ``url`` cannot be a seed, in a few words (None: it can): each kind of bad URL its
    own reason, so a typo is named as one and not taken for a server the crawl may not visit.
    Port 0 is refused too: no server listens there, and every fetch of it would fail."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        return "not an http(s) URL (a seed starts with http:// or https://)"
    if scheme.lower() not in _DEFAULT_PORTS:
        return f"scheme {scheme!r} is not crawled (only http and https)"
    _, host, port = split_authority(re.split(r"[/?#]", rest, maxsplit=1)[0])
    if not host.strip("[]"):
        return "no host"
    if port and not port.isdigit():
        return f"port {port!r} is not a number"
    if port and not 0 < int(port) <= 65535:
        return f"port {int(port)} is not a port (1 to 65535)"
    if server(url) is None or safe(url) is None:
        return f"host {host!r} is not a host name or address"
    return None


def check_seeds(seeds: list[str]) -> None:
    """Refuse the first seed :func:`seed_problem` finds fault with, in one line (BadInput)."""
    if not seeds:
        raise BadInput("a crawl needs at least one seed URL")
    for seed in seeds:
        if (problem := seed_problem(seed)) is not None:
            raise BadInput(f"seed {seed!r}: {problem}")


def _registered_domain(host: str) -> str:
    from ..frontier.assignment import registered_domain

    return registered_domain(host)


@dataclasses.dataclass(frozen=True)
class Scope:
    """``Scope.of(kind, seeds)``; ``scope.allows(url)``."""

    kind: str
    servers: frozenset = frozenset()    # seed-hosts: (host, port) pairs
    domains: frozenset = frozenset()    # domain: registered domains
    prefixes: tuple = ()                # prefix: URL prefixes

    @classmethod
    def of(cls, kind: str, seeds: list[str]) -> Scope:
        if kind not in SCOPES:
            raise BadInput(f"scope must be one of {', '.join(SCOPES)}, not {kind!r}")
        found = [s for s in map(server, seeds) if s is not None]
        if kind == "seed-hosts":
            return cls(kind, servers=frozenset(found))
        if kind == "domain":
            return cls(kind, domains=frozenset(_registered_domain(host) for host, _ in found))
        if kind == "prefix":
            return cls(kind, prefixes=tuple(sorted({seed[:seed.rfind("/") + 1] for seed in seeds
                                                    if server(seed) is not None})))
        return cls(kind)

    def allows(self, url: str) -> bool:
        kind = self.kind
        if kind == "prefix":
            return url.startswith(self.prefixes)
        where = server(url)
        if where is None:
            return False
        if kind == "seed-hosts":
            return where in self.servers
        if kind == "domain":
            return _registered_domain(where[0]) in self.domains
        return True
