"""Sitemaps (sitemaps.org's protocol 0.9): the URLs a site lists for crawlers, read safely.

A sitemap is an XML ``<urlset>`` of ``<url><loc>`` pages, an XML ``<sitemapindex>`` of
``<sitemap><loc>`` sitemaps, or a text file of one URL a line; any of them may be gzipped.
:func:`read_sitemap` reads one body into a :class:`Sitemap`, bounded as the protocol bounds a
sitemap and as the web's lies call for:

- **50,000 URLs and 50 MB** (52,428,800 bytes, uncompressed) at most: the rest is left, and
  the sitemap called ``truncated``; a gzip body is inflated only up to the limit, so a gzip
  bomb costs 50 MB of inflating, never its size;
- **no entity expansion, no DTD, no network**: lxml's ``iterparse`` with
  ``resolve_entities=False``, ``load_dtd=False``, ``no_network=True`` and ``huge_tree`` off
  (libxml2's own limits on depth and text size stay on), so a billion-laughs document or an
  external entity reads as nothing; each ``<loc>`` is taken as it ends and the tree cleared
  behind it, so memory does not grow with the sitemap;
- **a body that is not a sitemap** (HTML, an XML root that is neither, bytes) lists nothing;
  a text sitemap's lines that are not absolute http(s) URLs are skipped; XML cut short (a
  body cut at the fetch's cap) keeps what it listed before the cut;
- **URLs off the sitemap's place are refused**, as the protocol says: a sitemap at
  ``http://example.com/catalog/sitemap.xml`` may list ``http://example.com/catalog/...``
  only (same scheme, host and port, under its folder), unless the robots.txt of the host
  named it, which allows that whole host. The caller says which prefixes apply
  (``allowed``); :func:`place_of` makes one. A URL is judged in its canonical form (the one
  the crawl requests: ``/catalog/../admin`` is ``/admin``), and userinfo makes it another
  host's.
"""

from __future__ import annotations

import dataclasses
import io
import zlib
from urllib.parse import urlsplit

from lxml import etree

from ..keys.canon import canonicalize, canonicalize_many
from .links import MAX_URL_LENGTH

MAX_URLS = 50_000
"""URLs a sitemap or index may list (sitemaps.org)."""

MAX_BYTES = 50 * 1024 * 1024
"""Uncompressed bytes a sitemap may hold (sitemaps.org: 52,428,800)."""

GZIP_MAGIC = b"\x1f\x8b"
URLSET, INDEX, TEXT = "urlset", "sitemapindex", "text"


@dataclasses.dataclass(slots=True)
class Sitemap:
    """What one sitemap body listed: ``kind`` (:data:`URLSET`, :data:`INDEX`, :data:`TEXT`,
    or None for a body that is no sitemap); ``urls``, the pages (or, for an index, the
    sitemaps) it lists at an allowed place, in order; ``refused``, those it lists elsewhere;
    ``truncated``, whether it went past :data:`MAX_URLS` or :data:`MAX_BYTES` (or was cut)."""

    kind: str | None
    urls: list[str] = dataclasses.field(default_factory=list)
    refused: int = 0
    truncated: bool = False


def place_of(url: str, whole_host: bool = False) -> str:
    """The prefix of the URLs a sitemap at ``url`` may list, in the crawl's canonical form: its
    scheme, host and port, and the folder it is in (``whole_host``: the host's root, for a
    sitemap robots.txt named)."""
    parts = urlsplit(canonicalize(url))
    folder = "/" if whole_host else parts.path[: parts.path.rfind("/") + 1] or "/"
    return f"{parts.scheme}://{parts.netloc}{folder}"


def _escaped_dot_segment(url: str) -> bool:
    """Whether a canonical URL's path still holds a ``.`` or ``..`` segment: one written with
    escaped dots (``%2e%2e``), which a server may resolve, and so leave the sitemap's folder."""
    path = url.partition("?")[0] + "/"  # a canonical URL has no fragment; plain string work: urlsplit costs 3 us
    return "/../" in path or "/./" in path


def inflate(body: bytes) -> tuple[bytes, bool]:
    """``body`` gunzipped when it is gzip (else as is), cut at :data:`MAX_BYTES`; and whether
    it was cut (a gzip stream that is corrupt or cut short counts as cut where it breaks).
    Every member of a gzip file of several is inflated, as gzip does, within the one limit."""
    if not body.startswith(GZIP_MAGIC):
        return body[:MAX_BYTES], len(body) > MAX_BYTES
    parts, size, rest = [], 0, body
    while rest.startswith(GZIP_MAGIC):
        inflater = zlib.decompressobj(wbits=31)
        try:
            part = inflater.decompress(rest, MAX_BYTES + 1 - size)
        except zlib.error:
            return b"".join(parts), True
        parts.append(part)
        size += len(part)
        if not inflater.eof:  # past the limit, or the stream ends early
            break
        rest = inflater.unused_data
    data = b"".join(parts)
    return data[:MAX_BYTES], size > MAX_BYTES or not inflater.eof


def read_sitemap(body: bytes, allowed: tuple[str, ...]) -> Sitemap:
    """The URLs the sitemap ``body`` lists under one of the ``allowed`` prefixes (module docstring)."""
    data, cut = inflate(body)
    start = data[:512].lstrip(b"\xef\xbb\xbf \t\r\n")
    sitemap = _read_xml(data) if start.startswith(b"<") else _read_text(data)
    sitemap.truncated = sitemap.truncated or cut
    # Judged in the form the crawl requests (case of scheme and host, default port, dot
    # segments resolved), so no spelling of a URL elsewhere passes for one at the place.
    kept = [url for url, canonical in zip(sitemap.urls, canonicalize_many(sitemap.urls))
            if canonical is not None and canonical.startswith(allowed) and not _escaped_dot_segment(canonical)]
    sitemap.refused, sitemap.urls = len(sitemap.urls) - len(kept), kept
    return sitemap


def _usable(url: str) -> bool:
    return url.startswith(("http://", "https://")) and len(url) <= MAX_URL_LENGTH


def _read_text(data: bytes) -> Sitemap:
    """A text sitemap: one absolute URL a line (UTF-8); other lines are skipped."""
    sitemap = Sitemap(TEXT)
    for line in io.BytesIO(data):
        url = line.strip().decode("utf-8", errors="replace")
        if _usable(url):
            if len(sitemap.urls) == MAX_URLS:
                sitemap.truncated = True
                break
            sitemap.urls.append(url)
    if not sitemap.urls:
        sitemap.kind = None
    return sitemap


def _root(data: bytes) -> str | None:
    """The tag of the document's root element, ``{namespace}name``; None when it has none."""
    try:
        for _, element in etree.iterparse(io.BytesIO(data), events=("start",), resolve_entities=False,
                                          load_dtd=False, no_network=True, huge_tree=False):
            return element.tag
    except etree.XMLSyntaxError:
        pass
    return None


def _read_xml(data: bytes) -> Sitemap:
    """An XML ``urlset`` or ``sitemapindex``: the ``<loc>`` of each of its entries, in the
    root's namespace (whatever it is: sitemaps in the wild use several, or none), so the
    ``<image:loc>`` and the like of the protocol's extensions are not taken for pages."""
    root = _root(data)
    namespace, _, kind = (root or "").rpartition("}")
    sitemap = Sitemap(kind if kind in (URLSET, INDEX) else None)
    if sitemap.kind is None:
        return sitemap
    entry, namespace = ("url" if kind == URLSET else "sitemap"), namespace + "}" if namespace else ""
    # Only the entries' <loc> elements come up to Python: lxml passes over the rest in C.
    parser = etree.iterparse(io.BytesIO(data), events=("end",), tag=namespace + "loc", resolve_entities=False,
                             load_dtd=False, no_network=True, huge_tree=False)
    try:
        for _, loc in parser:
            parent = loc.getparent()
            if parent.tag != namespace + entry or parent.getparent().getparent() is not None:
                continue
            url = (loc.text or "").strip()
            if _usable(url):
                if len(sitemap.urls) == MAX_URLS:
                    sitemap.truncated = True
                    break
                sitemap.urls.append(url)
            while parent.getprevious() is not None:  # the entries read before: freed
                del parent.getparent()[0]
    except etree.XMLSyntaxError:  # cut short or broken: what came before stands
        sitemap.truncated = True
    return sitemap
