"""Outlinks: what a fetched document points at, how it was found, and which links are refused.

Hop types are Heritrix's one-letter alphabet, so a hop path ("the discovery path", e.g.
``LLER``: seed, two links, an embed, a redirect) reads the same in pycrawler's crawl.log as
in Heritrix's:

- ``L`` a navigational link (``<a href>``, ``<area>``, most ``<link>``);
- ``E`` an embed, fetched to render the page (``<img>``, ``<script>``, ``<iframe>``,
  ``<frame>``, a stylesheet or icon ``<link>``);
- ``R`` a redirect or referral: an HTTP 3xx ``Location`` or a ``<meta http-equiv=refresh>``;
- ``X`` a speculative link, a URL-looking string in script text (Heritrix's ExtractorJS);
- ``M`` a manifest: a sitemap named by robots.txt's ``Sitemap:`` or by a sitemap index
  (Heritrix's ``Hop.MANIFEST``); the pages a sitemap lists are its ``L`` links.

Refused here, as every extractor should: schemes a crawler cannot fetch (``javascript:``,
``data:``, ``mailto:`` and anything but http/https), links longer than Heritrix's
2083-character URI limit, and URLs whose path repeats the same segments back to back
(calendar-style traps, :class:`PathRepetitionRule`). Crawl depth is the engine's business.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from urllib.parse import urljoin, urlsplit

from ..keys.canon import remove_dot_segments

MAX_URL_LENGTH = 2083
"""Longest URL kept (Heritrix's ``UURI.MAX_URL_LENGTH``, Internet Explorer's historic limit)."""

FETCHABLE_SCHEMES = frozenset({"http", "https"})
_SCHEME_PREFIX = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
# An absolute link that urljoin gives back as it is, whatever the base: a lowercase http(s)
# scheme, a plain host (no userinfo, no IPv6 literal), a port of digits, no ';' parameters
# in the path (urlparse splits them off, urlunparse drops them when empty) and no empty query.
_PLAIN_ABSOLUTE = re.compile(r"https?://[A-Za-z0-9.\-]+(?::([0-9]{1,5}))?(?:/[^?#;]*)?(?:\?[^#]+)?(?:#.*)?\Z",
                             re.ASCII | re.DOTALL)
MAX_PORT = 65535


class Hop(str, enum.Enum):
    """How a URL was discovered from its parent (one letter of a hop path)."""

    LINK = "L"
    EMBED = "E"
    REDIRECT = "R"
    SPECULATIVE = "X"
    MANIFEST = "M"


SAME_LAYER_HOPS = frozenset({Hop.REDIRECT.value, Hop.MANIFEST.value})
"""Hops that do not take a URL a level further from its seed: a redirect's target is the page
asked for, and a sitemap an index names is a part of the index."""


@dataclasses.dataclass(frozen=True, slots=True)
class Outlink:
    """One discovered URL: absolute, fragment-free, with its hop type and where it was found.

    ``context`` is Heritrix's link context: ``tag/@attribute`` (``a/@href``, ``img/@src``,
    ``meta/@content`` for a refresh), or ``location:`` for an HTTP redirect.
    """

    url: str
    hop: Hop
    context: str


def _clean(raw: str) -> str | None:
    """The link as a browser reads it: outer whitespace stripped, tabs and newlines inside removed
    (the WHATWG URL parser ignores them: ``java\\nscript:`` is still javascript); None for none."""
    raw = raw.strip()
    if not raw or len(raw) > MAX_URL_LENGTH or raw.startswith("#"):
        return None
    if "\t" in raw or "\n" in raw or "\r" in raw:
        raw = raw.replace("\t", "").replace("\n", "").replace("\r", "")
    return raw


def _join(base: str, raw: str) -> str | None:
    """The general case: ``urljoin``, then checks that the result is a fetchable URL."""
    try:
        url = urljoin(base, raw)
        parts = urlsplit(url)
        parts.port  # noqa: B018 -- raises ValueError for a port that is not a number in range
    except ValueError:  # e.g. an invalid IPv6 literal, or port 99999
        return None
    if parts.scheme not in FETCHABLE_SCHEMES or not parts.hostname or len(url) > MAX_URL_LENGTH:
        return None
    return url.partition("#")[0] if parts.fragment or url.endswith("#") else url


def absolute_url(base: str, raw: str) -> str | None:
    """``raw`` resolved against ``base``, fragment dropped; None for a link a crawler must not follow."""
    raw = _clean(raw)
    return None if raw is None else _join(base, raw)


class LinkResolver:
    """:func:`absolute_url` for many links of one page: ``resolver(raw)``, same answers, faster.

    ``urljoin`` re-parses the base for every link; a page's links are mostly paths relative
    to one base (``../../java/lang/String.html``), so those are joined here from the base's
    parts, split once. A plain absolute http(s) link, which ``urljoin`` would give back as it
    is, is checked by one pattern instead of three parses (on the 1M-page synthetic web the
    general path was a fifth of a fetcher's CPU). Other links with a scheme or a network path
    (``//host``) and bases that are not plain http(s) URLs take :func:`absolute_url`'s general
    path.
    """

    __slots__ = ("base", "_origin", "_directory", "_path_and_query", "_fast", "_ancestors")

    def __init__(self, base: str):
        self.base = base
        parts = urlsplit(base)
        self._fast = (parts.scheme in FETCHABLE_SCHEMES and bool(parts.netloc) and not parts.fragment
                      and "/." not in parts.path)  # a base with dot segments: rare, left to urljoin
        self._origin = f"{parts.scheme}://{parts.netloc}"
        path = parts.path or "/"
        self._directory = self._origin + path[:path.rindex("/") + 1]
        self._path_and_query = self._origin + parts.path
        self._ancestors = {0: path[:path.rindex("/") + 1]}  # k -> the base directory's k-th parent

    def __call__(self, raw: str) -> str | None:
        raw = _clean(raw)
        if raw is None:
            return None
        plain = _PLAIN_ABSOLUTE.match(raw)
        if plain is not None:  # _clean bounded its length; a port past 65535 makes urlsplit's port raise
            port = plain[1]
            return raw.partition("#")[0] if port is None or int(port) <= MAX_PORT else None
        if not self._fast or raw.startswith("//") or raw == "?" or _SCHEME_PREFIX.match(raw):
            return _join(self.base, raw)
        raw = raw.partition("#")[0]
        if raw.startswith("/"):
            url = self._origin + (remove_dot_segments(raw) if "." in raw.partition("?")[0] else raw)
        elif raw.startswith("?"):
            url = self._path_and_query + raw
        else:
            path, question, query = raw.partition("?")
            if "." in path:
                ups = 0  # the usual '../../x.html': k parents up, then no dot segment left
                while path.startswith("../", 3 * ups):
                    ups += 1
                rest = path[3 * ups:]
                if "/." in "/" + rest:
                    joined = self._origin + remove_dot_segments(self._ancestors[0] + path)
                else:
                    joined = self._origin + self._ancestor(ups) + rest
            else:
                joined = self._directory + path
            url = joined + question + query
        return url if len(url) <= MAX_URL_LENGTH else None

    def _ancestor(self, ups: int) -> str:
        ancestor = self._ancestors.get(ups)
        if ancestor is None:
            ancestor = self._ancestors[ups] = remove_dot_segments(self._ancestors[0] + "../" * ups)
        return ancestor


def extend_hop_path(parent_path: str, hop: Hop) -> str:
    """The hop path of a URL found on a page whose own hop path is ``parent_path`` ('' for a seed)."""
    return parent_path + hop.value


def trailing_redirects(hop_path: str) -> int:
    """How many redirects in a row led to the URL whose hop path this is."""
    return len(hop_path) - len(hop_path.rstrip(Hop.REDIRECT.value))


def sitemap_hops(hop_path: str) -> int:
    """How many sitemaps in a row (redirects aside) led to the URL whose hop path this is: 1 for
    a sitemap robots.txt named, 2 for one its index named; 0 for a URL that is no sitemap."""
    path = hop_path.rstrip(Hop.REDIRECT.value)
    return len(path) - len(path.rstrip(Hop.MANIFEST.value))


@dataclasses.dataclass(frozen=True, slots=True)
class PathRepetitionRule:
    """Rejects URLs whose path repeats a run of segments more than ``max_repetitions`` times in a row.

    Heritrix's ``PathologicalPathDecideRule`` (default 2): ``/a/a/a/page.html`` repeats
    ``a/`` three times, so it is rejected; ``/2024/01/2024/01/2024/01/`` repeats the run
    ``2024/01/`` three times, rejected too. As in Heritrix only segments followed by a slash
    count (the last, the page's own name, never does), and the query is not looked at.
    Done by comparing segment runs rather than by Heritrix's backtracking regular
    expression, whose cost explodes on long paths.
    """

    max_repetitions: int = 2

    def rejects(self, url: str) -> bool:
        limit = self.max_repetitions
        if limit <= 0:  # Heritrix: 0 switches the rule off
            return False
        segments = urlsplit(url).path.split("/")[1:-1]  # directories: each was followed by '/'
        count = len(segments)
        # A run of `width` segments repeated limit+1 times in a row is exactly a stretch of
        # width*limit positions i with segments[i] == segments[i + width]: one linear scan per width.
        for width in range(1, count // (limit + 1) + 1):
            needed, stretch = width * limit, 0
            for i in range(count - width):
                stretch = stretch + 1 if segments[i] == segments[i + width] else 0
                if stretch >= needed:
                    return True
        return False
