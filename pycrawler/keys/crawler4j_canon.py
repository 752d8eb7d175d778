"""crawler4j's canonical form of a URL (``edu.uci.ics.crawler4j.url.URLCanonicalizer``, 4.x).

crawler4j keys its ``DocIDs`` (its URL-seen set) and fetches on this form, so a crawl that
continues a crawler4j crawl must fold spellings exactly as it did: no more (a page crawler4j
fetched under two spellings would be taken for one), no less (a spelling crawler4j folded would
be fetched again). Step by step, as crawler4j 4.4.0 does it on an absolute URL:

- the host lowercased (no host: no URL); the scheme lowercased; the port dropped when it is the
  scheme's default; user information dropped (``new URL(protocol, host, port, file)``); the
  fragment dropped;
- the path: ``\\`` made ``/``, U+3000 and spaces escaped (``%E3%80%80``, ``%20``), then
  ``java.net.URI.normalize`` (``.`` and resolvable ``..`` segments removed; a path ``URI``
  refuses, such as one with ``|``, ``"`` or a stray ``%``, drops the URL), every ``//`` folded
  to ``/``, leading ``/../`` removed, ``%7E`` made ``~``; an empty path is ``/``. Path
  parameters stay: ``/a;jsessionid=X`` is kept as it is;
- the query: split on ``&``, empty pairs dropped, each pair split at its first ``=``; a name
  given twice keeps its first place and its last value (a ``LinkedHashMap``); the parameters
  named ``jsessionid``, ``phpsessid`` and ``aspsessionid`` (any case) dropped; each name and
  value percent-decoded (``+`` kept as ``%2B``) and encoded again as RFC 3986 wants
  (``URLEncoder`` with ``%20``, ``%2A`` and ``~``); a value that is empty loses its ``=``; a query
  left empty loses its ``?``.

tests/test_crawler4j_real.py holds this to crawler4j's own class on spellings of every rule.
"""

from __future__ import annotations

import re
from urllib.parse import quote

DEFAULT_PORTS = {"http": 80, "https": 443, "ftp": 21}
SESSION_PARAMETERS = frozenset({"jsessionid", "phpsessid", "aspsessionid"})

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*\Z")
# What java.net.URI takes in a path: unreserved, punctuation, escapes, '/', and any non-ASCII
# character that is not a control or a space ("other"). Anything else: URISyntaxException.
_URI_PATH = re.compile(r"(?:[A-Za-z0-9\-_.!~*'();:@&=+$,/]|%[0-9A-Fa-f]{2}|[^\x00-\x7f\s\x80-\x9f])*\Z")
_AUTHORITY = re.compile(r"(?:[A-Za-z0-9\-_.!~*'();:@&=+$,]|%[0-9A-Fa-f]{2}|[^\x00-\x7f\s\x80-\x9f])+\Z")
_ESCAPES = re.compile(r"(?:%[0-9A-Fa-f]{2})+")


def _normalize_path(path: str) -> str:
    """``java.net.URI.normalize`` on an absolute path: empty segments (``//``) and ``.``
    segments removed, ``..`` removed with the segment before it unless that is ``..`` too
    (a ``..`` that climbs past the root stays); a trailing slash kept, and added where the last
    segment was ``.`` or a ``..`` that went."""
    segments = path.split("/")[1:]
    if not any(s in ("", ".", "..") for s in segments[:-1]) and segments[-1] not in (".", ".."):
        return path
    out: list[str] = []
    removed_last = False
    for segment in segments:
        removed_last = True
        if segment in ("", "."):
            continue
        if segment == ".." and out and out[-1] != "..":
            out.pop()
            continue
        out.append(segment)
        removed_last = False
    trailing = path.endswith("/") or (removed_last and segments[-1] in (".", ".."))
    return "/" + "/".join(out) + ("/" if out and trailing else "")


def _uri_path(path: str) -> str | None:
    """What ``new URI(path).normalize().toString()`` gives for the path of a URL; None where
    ``URI`` refuses it. A path that starts with ``//`` is read by ``URI`` as an authority and
    a path, and only that path is normalized."""
    if not _URI_PATH.match(path):
        return None
    if not path.startswith("//"):
        return _normalize_path(path) if path else path
    authority, slash, rest = path[2:].partition("/")
    if not authority and not slash:
        return None
    if authority and not _AUTHORITY.match(authority):
        return None
    return "//" + authority + (_normalize_path(slash + rest) if slash else "")


def _url_decode(text: str) -> str | None:
    """``URLDecoder.decode(text, "UTF-8")`` ('+' already escaped); None where it throws."""
    if "%" not in text:
        return text
    pieces = text.split("%")
    if any(len(p) < 2 or not re.match(r"[0-9A-Fa-f]{2}", p) for p in pieces[1:]):
        return None
    return _ESCAPES.sub(lambda m: bytes.fromhex(m.group(0).replace("%", "")).decode("utf-8", "replace"), text)


def _encode(text: str) -> str:
    """crawler4j's ``percentEncodeRfc3986`` of one query name or value."""
    text = text.replace("+", "%2B")
    decoded = _url_decode(text)
    if decoded is None:
        return text
    # URLEncoder.encode(.., "UTF-8"): all but A-Z a-z 0-9 . - * _ escaped, space as '+'
    encoded = quote(decoded, safe=".-*_", errors="surrogatepass").replace("%20", "+").replace("~", "%7E")
    return encoded.replace("+", "%20").replace("*", "%2A").replace("%7E", "~")


def _query(query: str) -> str:
    params: dict[str, str] = {}
    for pair in query.split("&"):
        if not pair:
            continue
        name, equals, value = pair.partition("=")
        params[name] = value
    parts = []
    for name, value in params.items():
        if name.lower() in SESSION_PARAMETERS:
            continue
        parts.append(_encode(name) + ("=" + _encode(value) if value else ""))
    return "&".join(parts)


def canonical(url: str) -> str | None:
    """crawler4j's canonical form of the absolute URL ``url``; None where crawler4j drops it."""
    url = url.strip()
    scheme, sep, rest = url.partition("://")
    if not sep or not _SCHEME.match(scheme):
        return None
    scheme = scheme.lower()
    if "#" in rest:
        rest = rest[:rest.index("#")]
    end = re.search(r"[/?]", rest)
    authority, tail = (rest, "") if end is None else (rest[:end.start()], rest[end.start():])
    path, question, query = tail.partition("?")
    hostport = authority.rpartition("@")[2]
    if hostport.startswith("["):
        host, _, port_text = hostport.partition("]")
        host, port_text = host + "]", port_text[1:] if port_text.startswith(":") else ""
    else:
        host, _, port_text = hostport.partition(":")
    host = host.lower()
    if not host:
        return None
    if port_text and not port_text.isdigit():
        return None
    port = int(port_text) if port_text else None
    if port is not None and port == DEFAULT_PORTS.get(scheme):
        port = None
    path = path.replace("\\", "/").replace("\u3000", "%E3%80%80").replace(" ", "%20")
    path = _uri_path(path)
    if path is None:
        return None
    while "//" in path:
        path = path.replace("//", "/")
    while path.startswith("/../"):
        path = path[3:]
    path = path.strip()
    query = _query(query) if question else ""
    if not path:
        path = "/"
    path = path.replace("%7E", "~").replace(" ", "%20")
    return f"{scheme}://{host}{'' if port is None else ':' + str(port)}{path}{'?' + query if query else ''}"
