"""robots.txt rules as RFC 9309's reference parser reads them (Google's ``robots.cc``).

:func:`parse` reads a robots.txt body once for one crawler's product token and keeps only
what applies to it; :meth:`Rules.allows` then decides a URL as the ``fast-robotstxt`` build
of Google's ``RobotsMatcher::OneAgentAllowedByRobots`` does, decision for decision
(tests/test_robots.py checks it against that library on generated files and URLs):

- lines end at LF, CR or CRLF, a leading UTF-8 BOM (or a prefix of one) is skipped, a line
  is cut at 16,665 bytes, ``#`` starts a comment;
- a key ends at the first ``:``; a line without one may use whitespace instead when it holds
  exactly two words; keys are matched by prefix, case-insensitively, with the frequent typos
  (``useragent``, ``user agent``, ``dissallow``, ``disalow``...);
- a group is one or more ``User-agent`` lines and the rules after them; a ``User-agent``
  line after a rule starts a new group. A group is the crawler's when a ``User-agent`` value,
  cut at its first character outside ``[A-Za-z_-]`` (``pycrawler/1.0`` reads ``pycrawler``),
  equals the product token ignoring case (RFC 9309 2.2.1: ``pycrawl`` is not ``pycrawler``);
  it is global when the value is ``*`` (alone or followed by whitespace). The crawler's
  groups are merged; only when it has none do the global groups apply;
- the path matched is the URL's path, params and query as a WHATWG parser gives them
  (:func:`url_path`); a pattern's bytes above 0x7F are percent-escaped and its escapes
  upper-cased; an escape on either side is compared as the byte it stands for (``%2F`` is
  ``/``, ``%41`` is ``A``); ``*`` matches any run of bytes and a final ``$`` the end. The
  longest matching pattern (in escaped bytes) wins, Allow wins a tie; an empty pattern
  matches nothing that counts. ``Allow`` of a ``.../index.htm(l)`` also allows its
  directory (``.../$``).

``Crawl-delay`` is the first one of the crawler's groups, else of the global ones (as the
library reads it too); the ``Sitemap`` lines are the whole file's.
"""

from __future__ import annotations

import dataclasses
import math
import re

MAX_LINE_BYTES = 2083 * 8 - 1
"""Bytes of a line read; the rest is dropped (robots.cc's ``kMaxLineLen``, less its NUL)."""

_BOM = b"\xef\xbb\xbf"
_LINE_END = re.compile(rb"\r\n|\r|\n")
_ASCII_SPACE = " \t\n\v\f\r"
_AGENT_TOKEN = re.compile(r"[A-Za-z_-]*")
_ESCAPE_OR_HIGH = re.compile(r"%[0-9A-Fa-f]{2}|[\x80-\xff]")

USER_AGENT, ALLOW, DISALLOW, SITEMAP, CRAWL_DELAY, OTHER = (
    "user-agent", "allow", "disallow", "sitemap", "crawl-delay", "other")
_KEY_PREFIXES = (  # in robots.cc's order: the first kind whose prefix the key starts with
    (USER_AGENT, ("user-agent", "useragent", "user agent")),
    (ALLOW, ("allow",)),
    (DISALLOW, ("disallow", "dissallow", "dissalow", "disalow", "diasllow", "disallaw")),
    (SITEMAP, ("sitemap", "site-map")),
    (CRAWL_DELAY, ("crawl-delay", "crawldelay", "crawl delay")),
)
_LEADING_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def key_kind(key: str) -> str:
    lowered = key.lower()
    for kind, prefixes in _KEY_PREFIXES:
        if lowered.startswith(prefixes):
            return kind
    return OTHER


def lines(body: bytes) -> list[str]:
    """The body's lines, each byte one character (Latin-1), so that matching is on bytes."""
    for size in (3, 2, 1):
        if body.startswith(_BOM[:size]):
            body = body[size:]
            break
    return [line[:MAX_LINE_BYTES].decode("latin-1") for line in _LINE_END.split(body)]


def key_and_value(line: str) -> tuple[str, str] | None:
    """The line's directive (key, value), or None for a blank, comment-only or unreadable line."""
    line = line.split("#", 1)[0].strip(_ASCII_SPACE)
    if not line:
        return None
    key, colon, value = line.partition(":")
    if not colon:  # some people forget the colon: whitespace stands for it between exactly two words
        words = re.split(r"[ \t]+", line)
        if len(words) != 2:
            return None
        key, value = words
    key = key.strip(_ASCII_SPACE)
    return (key, value.strip(_ASCII_SPACE)) if key else None


def escape_pattern(value: str) -> str:
    """Bytes above 0x7F percent-escaped, existing escapes' hex digits upper-cased (robots.cc's
    ``MaybeEscapePattern``)."""
    return _ESCAPE_OR_HIGH.sub(lambda m: m[0].upper() if m[0][0] == "%" else f"%{ord(m[0]):02X}", value)


def url_path(url: str) -> str:
    """What rules match: the URL's path, params and query, ``/`` when it has none, one
    character per byte of its UTF-8. As the reference reads it through a WHATWG URL parser:
    no fragment, no lone ``?``, no tab or newline, ``\\`` read as ``/``, the bytes WHATWG
    escapes in a path or a query escaped, and ``*`` and ``$`` escaped so that only a
    pattern's own are special. Dot segments are left alone: the crawler's URLs have none."""
    plain = _PLAIN_URL.fullmatch(url)
    if plain:  # nothing to escape, drop or read twice: the common case, in a fifth of the time
        path, query = plain[1] or "/", plain[2]
        return f"{path}?{query}" if query else path
    url = _TAB_OR_NEWLINE.sub("", url.encode("utf-8").decode("latin-1").strip(_C0_OR_SPACE))
    start = 2 if url.startswith("//") else 0
    early_path = _find_first_of(url, "/?;", start)
    protocol_end = url.find("://", start)
    if protocol_end == -1 or (early_path != -1 and early_path < protocol_end):
        protocol_end = start
    else:
        protocol_end += 3
    path_start = _find_first_of(url, "/?", protocol_end)
    if path_start == -1:
        return "/"
    path, _, query = url[path_start:].split("#", 1)[0].partition("?")
    path = _PATH_ESCAPED.sub(_escape_byte, path.replace("\\", "/"))
    path = path if path.startswith("/") else "/" + path
    query = _QUERY_ESCAPED.sub(_escape_byte, query)
    return (path + "?" + query if query else path).replace("*", "%2A").replace("$", "%24")


_PLAIN_URL = re.compile(r'[A-Za-z][A-Za-z0-9+.-]*://[^/?#\\\x00-\x20\x7f-\U0010ffff]*'
                        r'(/[^"#<>?`{}\\*$\x00-\x20\x7f-\U0010ffff]*)?'
                        r'(?:\?([^"#<>\'*$\x00-\x20\x7f-\U0010ffff]*))?(?:#.*)?', re.DOTALL)
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_TAB_OR_NEWLINE = re.compile("[\t\n\r]")
_PATH_ESCAPED = re.compile(r'[\x00-\x20"#<>?`{}\x7f-\xff]')
_QUERY_ESCAPED = re.compile(r'[\x00-\x20"#<>\'\x7f-\xff]')


def _escape_byte(match: re.Match) -> str:
    return f"%{ord(match[0]):02X}"


def _find_first_of(text: str, chars: str, start: int) -> int:
    found = [i for i in (text.find(c, start) for c in chars) if i != -1]
    return min(found) if found else -1


_HEX = "0123456789ABCDEFabcdef"
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def decoded(text: str) -> str:
    """``text`` with each escape replaced by its byte, read from the left, as robots.cc compares."""
    return _ESCAPE.sub(lambda match: chr(int(match[1], 16)), text) if "%" in text else text


def _byte_regex(byte: str) -> str:
    """What stands for ``byte`` in a path: the byte itself (a ``%`` only when no escape starts
    there) or its escape, either case of hex digit."""
    high, low = f"{ord(byte):02X}"
    escape = "%" + "".join(f"[{d}{d.lower()}]" if d.isalpha() else d for d in (high, low))
    raw = "%(?![0-9A-Fa-f]{2})" if byte == "%" else re.escape(byte)
    return f"(?:{raw}|{escape})"


def _exact_regex(text: str) -> re.Pattern:
    """robots.cc's ``Matches`` byte by byte on the path as written, for the patterns the decoded
    comparison would misjudge (:class:`Pattern`)."""
    parts, i = [], 0
    while i < len(text):
        char = text[i]
        if char == "$" and i == len(text) - 1:
            parts.append(r"\Z")
            i += 1
        elif char == "*":
            parts.append(".*")
            i += 1
        elif char == "%" and i + 2 < len(text) and text[i + 1] in _HEX and text[i + 2] in _HEX:
            parts.append(_byte_regex(chr(int(text[i + 1:i + 3], 16))))
            i += 3
        else:
            parts.append(_byte_regex(char))
            i += 1
    return re.compile("".join(parts), re.DOTALL)


@dataclasses.dataclass(frozen=True, slots=True)
class Pattern:
    """One ``Allow`` or ``Disallow`` value, escaped; its priority is its length in bytes.

    ``*`` matches any run of bytes, a final ``$`` the path's end, and an escape on either side
    stands for its byte (robots.cc's ``Matches`` decodes both as it goes). So the pattern is
    kept as its decoded literals between its own ``*``, matched against the decoded path:
    the same answer, except where robots.cc, resuming after a ``*`` at every byte of the path,
    starts inside an escape (``/*2F`` matches ``/%2F``): only a literal that begins with a hex
    digit can match there, and a pattern with one after a ``*`` is matched byte by byte."""

    text: str
    first: str                    # the decoded literal before the pattern's first '*' (all of it without one)
    rest: tuple[str, ...]         # the decoded literals after each of its '*'
    anchored: bool                # a final '$'
    exact: re.Pattern | None      # the byte-by-byte matcher, for a hex digit after a '*'

    @classmethod
    def of(cls, text: str) -> Pattern:
        anchored = text.endswith("$")
        first, *rest = (decoded(part) for part in (text[:-1] if anchored else text).split("*"))
        inside_escape = any(part and part[0] in _HEX for part in rest)
        return cls(text, first, tuple(rest), anchored, _exact_regex(text) if inside_escape else None)

    def matches(self, path: str, plain: str) -> bool:
        """Does the pattern match ``path`` (as written), ``plain`` being it :func:`decoded`?"""
        if not plain.startswith(self.first):  # the literal before any '*' starts at an escape's start
            return False
        if self.exact is not None:
            return self.exact.match(path) is not None
        rest = self.rest
        if not rest:
            return not self.anchored or len(plain) == len(self.first)
        at = len(self.first)
        for part in rest[:-1]:  # leftmost is enough: what follows may start anywhere after it
            at = plain.find(part, at)
            if at == -1:
                return False
            at += len(part)
        last = rest[-1]
        if self.anchored:
            return len(plain) - len(last) >= at and plain.endswith(last)
        return plain.find(last, at) != -1


@dataclasses.dataclass(frozen=True, slots=True)
class Rules:
    """The rules of a robots.txt that apply to one crawler."""

    allow: tuple[Pattern, ...] = ()
    disallow: tuple[Pattern, ...] = ()
    crawl_delay: float | None = None
    sitemaps: tuple[str, ...] = ()
    _by_prefix: dict[str, tuple[tuple[Pattern, bool], ...]] = dataclasses.field(
        init=False, repr=False, compare=False)

    def __post_init__(self):
        """Index the patterns by the first :data:`PREFIX` characters of their literal before any
        ``*``, which a matching path starts with (key "" for the shorter ones): a decision
        looks at two lists, not at every rule."""
        index: dict[str, list[tuple[Pattern, bool]]] = {}
        for patterns, allow in ((self.allow, True), (self.disallow, False)):
            for pattern in patterns:
                key = pattern.first[:PREFIX] if len(pattern.first) >= PREFIX else ""
                index.setdefault(key, []).append((pattern, allow))
        object.__setattr__(self, "_by_prefix", {key: tuple(entries) for key, entries in index.items()})

    def allows(self, url: str) -> bool:
        path = url_path(url)
        plain = decoded(path)
        allowed = disallowed = -1
        for key in ("", plain[:PREFIX]) if len(plain) >= PREFIX else ("",):
            for pattern, allow in self._by_prefix.get(key, ()):
                if pattern.matches(path, plain):
                    if allow:
                        allowed = max(allowed, len(pattern.text))
                    else:
                        disallowed = max(disallowed, len(pattern.text))
        return not (disallowed > 0 and disallowed > allowed)


PREFIX = 4
"""Characters of a pattern's leading literal the rules are indexed by (``/sea`` of ``/search*``)."""


@dataclasses.dataclass(slots=True)
class _Groups:
    """The rules collected so far for the crawler's own groups, or for the global ones."""

    allow: list[Pattern] = dataclasses.field(default_factory=list)
    disallow: list[Pattern] = dataclasses.field(default_factory=list)
    crawl_delay: float | None = None

    def add(self, kind: str, value: str) -> None:
        pattern = escape_pattern(value)
        if kind == DISALLOW:
            self.disallow.append(Pattern.of(pattern))
            return
        self.allow.append(Pattern.of(pattern))
        slash = pattern.rfind("/")
        if slash != -1 and pattern.startswith("/index.htm", slash):
            self.allow.append(Pattern.of(pattern[:slash + 1] + "$"))


def _is_global(agent_value: str) -> bool:
    return agent_value[:1] == "*" and (len(agent_value) == 1 or agent_value[1] in _ASCII_SPACE)


def _delay(value: str) -> float:
    """A ``Crawl-delay`` value as robots.cc reads it (``strtod``: its leading number, 0 for
    none or a negative one), but only decimal: ``inf`` and ``nan`` are 0 too."""
    number = _LEADING_NUMBER.match(value)
    seconds = float(number[0]) if number else 0.0
    return seconds if 0 <= seconds < math.inf else 0.0


def parse(body: bytes, agent: str) -> Rules:
    """The rules of robots.txt ``body`` for the crawler whose product token is ``agent``
    (letters, ``-`` and ``_`` only, as RFC 9309 2.2.1 asks)."""
    agent = agent.lower()
    own, global_ = _Groups(), _Groups()
    in_own = in_global = after_rule = has_own = False
    sitemaps: list[str] = []
    for line in lines(body):
        directive = key_and_value(line)
        if directive is None:
            continue
        key, value = directive
        kind = key_kind(key)
        if kind == USER_AGENT:
            if after_rule:
                in_own = in_global = after_rule = False
            if _is_global(value):
                in_global = True
            elif _AGENT_TOKEN.match(value)[0].lower() == agent:
                in_own = has_own = True
        elif kind in (ALLOW, DISALLOW):
            if in_own or in_global:
                after_rule = True
                (own if in_own else global_).add(kind, value)
        elif kind == SITEMAP:
            if value:
                sitemaps.append(value)
        elif kind == CRAWL_DELAY and (in_own or in_global):
            groups = own if in_own else global_
            if groups.crawl_delay is None:
                groups.crawl_delay = _delay(value)
    chosen = own if has_own else global_
    crawl_delay = own.crawl_delay if has_own and own.crawl_delay is not None else global_.crawl_delay
    return Rules(tuple(chosen.allow), tuple(chosen.disallow), crawl_delay, tuple(sitemaps))
