"""URL canonicalisation for scheduling: which spellings of a URL count as the same URL, and
which URL is requested for them.

A frontier keys its URL-seen table on a URL's canonical form, so two spellings of one page
are fetched once. Every canonicaliser requests the URL's RFC 3986 normal form (``safe``
below, or a form derived from it) and keys on that requested URL, so one key is one request
(:meth:`Canonicalizer.forms`); the fetcher sends it as it is. They differ in how much they
merge:

=============  ===========================================================  ==============
name           what it does                                                  requested URL
=============  ===========================================================  ==============
``web``        the default of a new crawl: ``safe``, without userinfo and    the key
               session ids (``;jsessionid=..`` path parameters, query pairs
               such as ``PHPSESSID``, ``ASPSESSIONIDxxxxxxxx``, ``CFID``;
               docs/crawler.md lists them and their sources), the host in
               IDNA (as the HTTP client sends it).
``safe``       RFC 3986 normalisation that never changes the resource: the   the key
               scheme and host lowercased, a default port (http 80, https
               443, ftp 21) and an empty one dropped, the fragment dropped,
               percent-escapes normalised (unreserved characters decoded,
               hex digits uppercased, a stray ``%`` escaped as ``%25``,
               spaces, controls and non-ASCII characters encoded as UTF-8
               escapes), then an empty path made ``/`` and ``.``/``..``
               path segments resolved. Path and query case and order are
               kept. The default before ``web``.
``w3lib``      ``w3lib.url.canonicalize_url`` of the normal form: Scrapy's   the key
               fingerprint form; also *sorts the query arguments*
               (``?b=1&a=2`` == ``?a=2&b=1``).
``heritrix``   Heritrix 3's default rules (:mod:`.heritrix_canon`) over the  normal form
               requested URL: lowercases the whole URL, strips ``www``/      without
               ``wwwN``, session ids and userinfo. Lossy: for the seen key   userinfo
               only (Heritrix requests the URL as found).
``crawler4j``  crawler4j 4.x's ``URLCanonicalizer`` (:mod:`.crawler4j_canon`) the key
               of the normal form: folds ``//`` and drops ``jsessionid``-like
               query parameters, re-encodes the query; what a crawl that
               continues a crawler4j crawl keys on (``crawler4j import`` sets
               it).
``none``       the URL as given (for callers that key URLs themselves).      the URL
=============  ===========================================================  ==============

Batch forms return ``None`` for a URL that is not absolute (``scheme://host...``) so one bad
link does not stop a batch; :func:`canonicalize` raises :class:`~pycrawler.errors.BadInput`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from urllib.parse import quote

from ..errors import BadInput

DEFAULT_PORTS = {"http": "80", "https": "443", "ftp": "21", "ws": "80", "wss": "443"}

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
# The authority runs to the first '/', '?' or '#'.
_AUTHORITY_END = re.compile(r"[/?#]")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_STRAY_PERCENT = re.compile(r"%(?![0-9A-Fa-f]{2})")
# What may stay literal in a path or query (RFC 3986 pchar, '/', '?', and '%' of an escape).
_MUST_QUOTE = re.compile(r"[^A-Za-z0-9\-._~!$&'()*+,;=:@/?%]")
# A host may hold anything but whitespace, controls and the characters that end or split it.
_BAD_HOST = re.compile(r"[\x00-\x20\x7f/?#@\\]")
_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_SAFE_LITERALS = "-._~!$&'()*+,;=:@/?%"

# Session ids the ``web`` form drops (docs/crawler.md, Canonicalisation, says whose patterns):
# a parameter so named, whatever its value, or ``sid`` with Heritrix's 32 letters or digits.
_SESSION_NAMES = r"(?:jsessionid|phpsessid|sessionid|bv_sessionid|aspsessionid[a-z]{8}|cfid|cftoken|oscsid)"
_PATH_SESSION = re.compile(rf";(?:{_SESSION_NAMES}=[^;/]*|sid=[0-9a-z]{{32}}(?=[;/]|\Z))", re.IGNORECASE | re.ASCII)
_QUERY_SESSION = re.compile(rf"{_SESSION_NAMES}=.*|sid=[0-9a-z]{{32}}", re.IGNORECASE | re.ASCII | re.DOTALL)
# Every name above holds one of these: a URL without any keeps the fast path.
_SESSION_HINT = re.compile("s(?:ess|id=)|cf(?:id|token)", re.IGNORECASE | re.ASCII)


def _escape(match: re.Match) -> str:
    code = int(match.group(1), 16)
    return chr(code) if code in _UNRESERVED else "%" + match.group(1).upper()


def _normalise_escapes(text: str) -> str:
    if "%" in text:
        text = _STRAY_PERCENT.sub("%25", _ESCAPE.sub(_escape, text))
    if _MUST_QUOTE.search(text):
        text = quote(text, safe=_SAFE_LITERALS, errors="surrogatepass")
    return text


def remove_dot_segments(path: str) -> str:
    """RFC 3986 section 5.2.4: ``/a/./b/../c`` -> ``/a/c``."""
    out: list[str] = []
    segments = path.split("/")
    for i, segment in enumerate(segments):
        last = i == len(segments) - 1
        if segment == ".":
            if last:
                out.append("")
        elif segment == "..":
            if len(out) > 1:
                out.pop()
            if last:
                out.append("")
        else:
            out.append(segment)
    return "/".join(out) or "/"


def split_authority(authority: str) -> tuple[str, str, str]:
    """(userinfo with its '@' or '', host, port) of an authority; an IPv6 host keeps its brackets."""
    userinfo, at, hostport = authority.rpartition("@")
    host, colon, port = hostport.rpartition(":")
    if not colon or "]" in port:  # no port, or the ':' was inside an IPv6 literal
        host, port = hostport, ""
    return userinfo + at, host, port


def _normal_parts(url: str) -> tuple[str, str, str, str, str] | None:
    """(scheme, userinfo with its '@', host with its ':port' when not the default, path, '?'
    and query) of ``url`` in RFC 3986 normal form; None when it is not absolute."""
    scheme, sep, rest = url.partition("://")
    if not sep or not _SCHEME.match(scheme):
        return None
    end = _AUTHORITY_END.search(rest)
    authority, tail = (rest, "") if end is None else (rest[:end.start()], rest[end.start():])
    if "#" in tail:
        tail = tail[:tail.index("#")]
    scheme = scheme.lower()
    userinfo, host, port = split_authority(authority)
    host = host.lower()
    if not host or _BAD_HOST.search(host):
        return None
    if port and (port != DEFAULT_PORTS.get(scheme)):
        host = f"{host}:{port}"
    path, question, query = tail.partition("?")
    if "%" in tail or _MUST_QUOTE.search(tail):
        # Escapes first (RFC 3986 6.2.2): '%2e%2e' is a dot segment once decoded, and the
        # HTTP client would resolve it on the wire.
        path = _normalise_escapes(path)
        query = _normalise_escapes(query)
    if not path:
        path = "/"
    elif "/." in path:
        path = remove_dot_segments(path)
    return scheme, userinfo, host, path, question + query


def safe(url: str) -> str | None:
    """The ``safe`` canonical form of ``url``, its RFC 3986 normal form (see the module
    docstring); None when ``url`` is not an absolute ``scheme://host...`` URL."""
    parts = _normal_parts(url)
    if parts is None:
        return None
    scheme, userinfo, host, path, query = parts
    return f"{scheme}://{userinfo}{host}{path}{query}"


def _ascii_host(host: str) -> str | None:
    """An internationalised host name as the HTTP client sends it (IDNA, as yarl encodes it);
    None when it is no valid host name."""
    from yarl import URL

    name, colon, port = host.rpartition(":") if not host.endswith("]") else (host, "", "")
    if not colon or not port.isdigit():
        name, colon, port = host, "", ""
    try:
        return URL.build(scheme="http", host=name, encoded=False).raw_host + colon + port
    except (ValueError, UnicodeError):
        return None


def _without_sessions(path: str, query: str) -> tuple[str, str]:
    """``path`` without its session-id parameters (``;jsessionid=...``), ``query`` ('?' and
    the query) without its session-id pairs; a query left with none loses its '?'."""
    if ";" in path:
        path = _PATH_SESSION.sub("", path)
    if len(query) > 1:
        pairs = query[1:].split("&")
        kept = [pair for pair in pairs if not _QUERY_SESSION.fullmatch(pair)]
        if len(kept) < len(pairs):
            query = "?" + "&".join(kept) if kept else ""
    return path, query


def web(url: str) -> str | None:
    """The ``web`` canonical form of ``url``: its normal form (:func:`safe`) without userinfo
    or session ids, the host in IDNA; None when ``url`` is not absolute or its host no name."""
    parts = _normal_parts(url)
    if parts is None:
        return None
    scheme, _userinfo, host, path, query = parts
    if not host.isascii() and (host := _ascii_host(host)) is None:
        return None
    if _SESSION_HINT.search(path) or _SESSION_HINT.search(query):
        path, query = _without_sessions(path, query)
        if "/." in path:  # '/.;jsessionid=X/' was no dot segment before
            path = remove_dot_segments(path)
    return f"{scheme}://{host}{path}{query}"


# Already in safe form (the common case for links a parser resolved): lowercase http(s) scheme
# and host, no userinfo, escape, fragment or dot segment, a path, and no port or one that is
# not a default (every site on a test host or an intranet has one). Such URLs are returned as
# they are, skipping the general path; the tests hold both paths equal.
_ALREADY_SAFE = re.compile(r"https?://[a-z0-9\-.]+(?::(?!80/|443/)[1-9][0-9]{0,4})?(?![^?]*/\.)/"
                           r"[A-Za-z0-9\-._~!$&'()*+,;=:@/]*(?:\?[A-Za-z0-9\-._~!$&'()*+,;=:@/?]*)?")


def _safe_many(urls: Sequence[str]) -> list[str | None]:
    fast = _ALREADY_SAFE.fullmatch
    return [u if isinstance(u, str) and fast(u) else (safe(u) if isinstance(u, str) else None) for u in urls]


def _web_many(urls: Sequence[str]) -> list[str | None]:
    fast, session = _ALREADY_SAFE.fullmatch, _SESSION_HINT.search
    # A session id is a name=value: most URLs, with no '=', skip the search for one.
    return [u if isinstance(u, str) and fast(u) and ("=" not in u or not session(u))
            else (web(u) if isinstance(u, str) else None) for u in urls]


def _w3lib_many(urls: Sequence[str]) -> list[str | None]:
    from w3lib.url import canonicalize_url

    return [None if u is None else safe(canonicalize_url(u)) for u in _safe_many(urls)]


def _without_userinfo_many(urls: Sequence[str]) -> list[str | None]:
    """The normal form of each URL without its userinfo: what the ``heritrix`` form requests."""
    fast = _ALREADY_SAFE.fullmatch
    out: list[str | None] = []
    for url in urls:
        if isinstance(url, str) and fast(url):
            out.append(url)
        elif isinstance(url, str) and (parts := _normal_parts(url)) is not None:
            scheme, _userinfo, host, path, query = parts
            out.append(f"{scheme}://{host}{path}{query}")
        else:
            out.append(None)
    return out


def _heritrix_keys(requested: list[str]) -> list[str]:
    from .heritrix_canon import canonicalize_many

    return canonicalize_many(requested)


def _crawler4j_many(urls: Sequence[str]) -> list[str | None]:
    from .crawler4j_canon import canonical

    return [None if u is None or (c := canonical(u)) is None else safe(c) for u in _safe_many(urls)]


def _none_many(urls: Sequence[str]) -> list[str | None]:
    return [u if isinstance(u, str) and safe(u) is not None else None for u in urls]


@dataclasses.dataclass(frozen=True)
class Canonicalizer:
    """A named canonicalisation: ``requested(urls)`` maps a batch to the URLs to request (None
    for invalid URLs); ``keyed`` maps requested URLs to the form the seen key is taken on (None:
    the requested URL itself). So one requested URL has one key, and one key one request."""

    name: str
    requested: Callable[[Sequence[str]], list[str | None]]
    keyed: Callable[[list[str]], list[str]] | None = None

    def forms(self, urls: Sequence[str]) -> tuple[list[str | None], list[str | None]]:
        """(the URL to request, the form to key) of each of ``urls``; None where it is not absolute."""
        requests = self.requested(urls)
        if self.keyed is None:
            return requests, requests
        keys = iter(self.keyed([r for r in requests if r is not None]))
        return requests, [None if r is None else next(keys) for r in requests]

    def many(self, urls: Sequence[str]) -> list[str | None]:
        """The canonical (keyed) form of each URL; None where it is not absolute."""
        return self.forms(urls)[1]

    def one(self, url: str) -> str:
        """The canonical form of one URL; BadInput when it is not absolute."""
        (result,) = self.many([url])
        if result is None:
            raise BadInput(f"not an absolute URL (scheme://host...): {str(url)[:80]!r}")
        return result


CANONICALIZERS = {
    "web": Canonicalizer("web", _web_many),
    "safe": Canonicalizer("safe", _safe_many),
    "w3lib": Canonicalizer("w3lib", _w3lib_many),
    "heritrix": Canonicalizer("heritrix", _without_userinfo_many, _heritrix_keys),
    "crawler4j": Canonicalizer("crawler4j", _crawler4j_many),
    "none": Canonicalizer("none", _none_many),
}
DEFAULT_CANON = "web"
"""The canonical form a new crawl state keys on (an older state keeps its own, ``safe`` mostly)."""


def get_canonicalizer(name: str | Canonicalizer) -> Canonicalizer:
    if isinstance(name, Canonicalizer):
        return name
    try:
        return CANONICALIZERS[name]
    except KeyError:
        raise BadInput(f"canonicalizer must be one of {', '.join(CANONICALIZERS)}, not {name!r}") from None


def canonicalize(url: str, how: str = DEFAULT_CANON) -> str:
    """``url`` in the named canonical form; BadInput when it is not an absolute URL."""
    return get_canonicalizer(how).one(url)


def canonicalize_many(urls: Sequence[str], how: str = DEFAULT_CANON) -> list[str | None]:
    """The named canonical form of each URL; None where a URL is not absolute."""
    return get_canonicalizer(how).many(list(urls))
