"""Extracting what a crawler needs from a fetched document: charset, title, meta fields, outlinks.

:func:`extract` takes the body bytes, the URL they came from and the response headers, and
returns a :class:`Document`. Non-HTML documents are recorded (MIME type, no links) and not
parsed. HTML goes through selectolax's lexbor parser (an HTML5 tree builder, as browsers
parse: tolerant of any markup and any bytes), after decoding with the charset found by
:func:`sniff_charset`.

Hostile input and why it is safe here:

- bad bytes: decoding replaces what the charset cannot map (U+FFFD), never raises;
- huge pages: the fetcher caps body size; titles and meta fields are cut at
  :data:`MAX_FIELD_LENGTH`, outlinks at ``max_outlinks`` per page (Heritrix's 6000);
- deep nesting: an HTML5 tree builder scans its stack of open elements for most start tags,
  so its cost grows with the square of the nesting depth (20,000 nested ``<div>`` take lexbor
  1.6 s, 200,000 take minutes). When a cheap count bounds the depth above
  :data:`FLATTEN_DEPTH`, every tag that cannot carry a link or a field is removed before
  parsing (:func:`_flatten`), which leaves a shallow tree with the same links;
- long links, javascript:/data:/mailto: links: dropped by :func:`links.absolute_url`.
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from collections.abc import Mapping

from selectolax.lexbor import LexborHTMLParser

from .links import Hop, LinkResolver, Outlink, absolute_url

MAX_FIELD_LENGTH = 1024
"""Longest title, description or author kept (characters): they end up in every CrawlUrl record."""

MAX_OUTLINKS = 6000
"""Outlinks kept per page by default (Heritrix's ``maxOutlinks``)."""

FLATTEN_DEPTH = 4096
"""Above this bound on the nesting depth, the markup is flattened before parsing (see module doc)."""

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
SNIFF_BYTES = 4096
"""How far into the body a ``<meta charset>`` is looked for (HTML requires it in the first 1024)."""

# WHATWG's encoding standard maps these labels to windows-1252, a superset browsers decode with.
_WINDOWS_1252_LABELS = frozenset({"iso8859-1", "ascii", "latin-1", "latin1", "us-ascii", "iso-8859-1"})
_META_CHARSET = re.compile(rb"""<meta[^>]{0,512}?charset\s*=\s*["']?\s*([-\w.:]{1,40})""", re.IGNORECASE)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?\s*([-\w.:]{1,40})""", re.IGNORECASE)
_REFRESH_URL = re.compile(r"""^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$""", re.IGNORECASE | re.DOTALL)
_SPACES = re.compile(r"\s+")

# Tags that can carry a link or a recorded field, and the ones whose content is not markup.
_KEPT_TAGS = "a|area|link|frame|iframe|base|meta|title|img|script|html|head|body"
_NON_LINK_TAG = re.compile(rf"<(?!/?(?:{_KEPT_TAGS})[\s/>])[^>]*>", re.IGNORECASE)

# What to look for, in one selector so that lexbor walks the tree once, in document order.
_LINK_SELECTOR = ("a[href], area[href], link[href], frame[src], iframe[src], img[src], script[src], "
                  "meta[content]")
_EMBED_LINK_RELS = frozenset({"stylesheet", "icon", "shortcut", "apple-touch-icon", "preload", "prefetch",
                              "modulepreload", "manifest"})


@dataclasses.dataclass(slots=True)
class Document:
    """What one fetched document says about itself and where it points."""

    url: str                      # the URL it was fetched from
    mime_type: str | None         # from Content-Type, parameters dropped, lowercased
    is_html: bool                 # parsed for links (else only recorded)
    char_set: str | None = None   # the codec the text was decoded with (Python's name for it)
    title: str | None = None
    description: str | None = None
    author: str | None = None
    base_url: str | None = None   # what relative links were resolved against
    outlinks: list[Outlink] = dataclasses.field(default_factory=list)

    def record_on(self, crawl_url) -> None:
        """Copy the fields a :class:`~pycrawler.records.crawl_url.CrawlUrl` keeps onto it."""
        crawl_url.type = self.mime_type
        crawl_url.char_set = self.char_set
        crawl_url.title = self.title
        crawl_url.description = self.description
        crawl_url.author = self.author
        crawl_url.url_references = [link.url for link in self.outlinks]


def mime_type(headers: Mapping[str, str]) -> str | None:
    """The Content-Type's media type, lowercased, without parameters; None when absent."""
    value = _header(headers, "content-type")
    media = value.partition(";")[0].strip().lower() if value else ""
    return media or None


def _header(headers: Mapping[str, str], name: str) -> str | None:
    value = headers.get(name)
    if value is None:  # a plain dict with the server's capitalisation
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value


def _codec(label: str | bytes | None) -> str | None:
    """Python's codec name for a charset label, WHATWG's windows-1252 for Latin-1 labels; None if unknown."""
    if not label:
        return None
    if isinstance(label, bytes):
        label = label.decode("ascii", "replace")
    try:
        name = codecs.lookup(label.strip().lower()).name
    except LookupError:
        return None
    if name in _WINDOWS_1252_LABELS:
        return "cp1252"
    if name.startswith(("utf-16", "utf-32")):
        return None  # declared in ASCII-compatible markup it cannot be true; a BOM decides instead
    return name


def sniff_charset(body: bytes, headers: Mapping[str, str]) -> str | None:
    """The declared charset, in the HTML standard's order: BOM, then Content-Type, then <meta>.

    None when nothing usable is declared (the caller then tries UTF-8 and falls back to
    windows-1252, as browsers do).
    """
    for bom, name in ((codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"),
                      (codecs.BOM_UTF16_BE, "utf-16-be")):
        if body.startswith(bom):
            return name
    content_type = _header(headers, "content-type")
    if content_type and (found := _HEADER_CHARSET.search(content_type)) and (name := _codec(found.group(1))):
        return name
    if found := _META_CHARSET.search(body, 0, SNIFF_BYTES):
        return _codec(found.group(1))
    return None


def decode(body: bytes, headers: Mapping[str, str]) -> tuple[str, str]:
    """(text, codec name): the declared charset with bad bytes replaced, else UTF-8, else windows-1252."""
    declared = sniff_charset(body, headers)
    if declared:
        text = body.decode(declared, errors="replace")
        return (text[1:] if text.startswith("\ufeff") else text), declared
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return body.decode("cp1252", errors="replace"), "cp1252"


def looks_like_html(body: bytes) -> bool:
    """Sniff a body served without a Content-Type (the HTML standard's sniffing, in short)."""
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<a ", b"<!--"))


def depth_bound(body: bytes) -> int:
    """An upper bound on the element nesting depth: start tags minus end tags (void tags count as open).

    Counted on the bytes (every charset a page may declare here is ASCII-compatible for '<',
    '/' and '!'; for UTF-16 the bound is merely loose)."""
    ends = body.count(b"</")
    return body.count(b"<") - 2 * ends - body.count(b"<!")


def _flatten(text: str) -> str:
    """``text`` without the tags that can carry neither a link nor a recorded field."""
    return _NON_LINK_TAG.sub(" ", text)


def _field(text: str | None) -> str | None:
    """Whitespace collapsed, cut to MAX_FIELD_LENGTH; None for nothing."""
    if text is None:
        return None
    text = _SPACES.sub(" ", text[:MAX_FIELD_LENGTH * 4]).strip()[:MAX_FIELD_LENGTH]
    return text or None


def refresh_target(content: str) -> str | None:
    """The URL of a meta refresh's ``content`` ("5; url=/next"), quotes stripped; None if it has none."""
    found = _REFRESH_URL.match(content)
    target = found.group(1).strip() if found else ""
    if target[:1] in ("'", '"'):
        target = target[1:].partition(target[0])[0]
    return target or None


def extract(body: bytes, url: str, headers: Mapping[str, str], *, embeds: bool = True,
            max_outlinks: int = MAX_OUTLINKS) -> Document:
    """What ``body`` (fetched from ``url`` with response ``headers``) says and links to.

    ``embeds=False`` leaves out ``img`` and ``script`` sources (pages only).
    """
    media = mime_type(headers)
    is_html = media in HTML_TYPES if media else looks_like_html(body)
    document = Document(url=url, mime_type=media, is_html=is_html)
    if not is_html:
        return document
    text, document.char_set = decode(body, headers)
    if "\x00" in text:
        # The HTML standard's tree builder drops a NUL in text (and makes one in an attribute
        # U+FFFD, in no usable URL): the parse is the same without them. lexbor keeps each as a
        # 3-byte replacement while it builds the tree, so 32 MB of NULs (a compression bomb's
        # body, cut at the cap) took 650 MB to parse; without them, nothing.
        text = text.replace("\x00", "")
    if depth_bound(body) > FLATTEN_DEPTH:
        text = _flatten(text)
    tree = LexborHTMLParser(text)

    base = url
    if (base_node := tree.css_first("base[href]")) is not None:
        base = absolute_url(url, base_node.attributes.get("href") or "") or url
    document.base_url = base
    resolve = LinkResolver(base)
    if (title := tree.css_first("title")) is not None:
        document.title = _field(title.text(deep=True))

    outlinks = document.outlinks
    for node in tree.css(_LINK_SELECTOR):
        if len(outlinks) >= max_outlinks:
            break
        tag, attributes = node.tag, node.attributes
        if tag == "meta":
            _meta(document, attributes, resolve)
            continue
        if tag in ("a", "area"):
            hop, attribute = Hop.LINK, "href"
        elif tag == "link":
            rels = set((attributes.get("rel") or "").lower().split())
            hop, attribute = (Hop.EMBED if rels & _EMBED_LINK_RELS else Hop.LINK), "href"
        elif tag in ("frame", "iframe"):
            hop, attribute = Hop.EMBED, "src"
        elif embeds:  # img, script
            hop, attribute = Hop.EMBED, "src"
        else:
            continue
        if target := resolve(attributes.get(attribute) or ""):
            outlinks.append(Outlink(target, hop, f"{tag}/@{attribute}"))
    return document


def _meta(document: Document, attributes: Mapping[str, str | None], resolve: LinkResolver) -> None:
    """A ``<meta content>``: the first description and author are kept; a refresh becomes an
    R outlink (Heritrix's hop for it)."""
    name = (attributes.get("name") or "").strip().lower()
    if name == "description" and document.description is None:
        document.description = _field(attributes.get("content"))
    elif name == "author" and document.author is None:
        document.author = _field(attributes.get("content"))
    if (attributes.get("http-equiv") or "").strip().lower() != "refresh":
        return
    target = refresh_target(attributes.get("content") or "")
    if target and (resolved := resolve(target)):
        document.outlinks.append(Outlink(resolved, Hop.REDIRECT, "meta/@content"))
