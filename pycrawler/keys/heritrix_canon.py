"""Heritrix's default URL canonicalisation, so keys match the ones in its alreadySeenUrl.

Heritrix 3 does not fingerprint the URL it fetches but its canonical form, made by
``RulesCanonicalizationPolicy``'s default rules, run in this order:

1. ``LowercaseRule``: the whole URL lowercased.
2. ``StripUserinfoRule``: ``user:password@`` dropped from http(s) and ftp(s) URLs.
3. ``StripWWWNRule``: a leading ``www``, ``www2``, ``www001``... host label dropped from
   http(s) URLs that have something after the host's slash.
4. ``StripSessionIDs``: ``jsessionid=`` / ``phpsessid=`` / ``sid=`` with 32 letters or
   digits, and ``ASPSESSIONIDxxxxxxxx=`` with 24 letters, dropped with the ``&`` after them.
5. ``StripSessionCFIDs``: ColdFusion's ``CFID=...&CFTOKEN=...`` pair dropped likewise.
6. ``FixupQueryString``: a trailing ``?``, a ``?&`` query, a ``&`` right after ``?`` and a
   trailing ``&`` dropped.

Each rule here behaves as its Java counterpart does, regular expressions included. Java's
rules run ``Matcher.matches()`` (the whole string) on patterns compiled without flags except
the inline ``(?i)``, which in Java folds ASCII letters only; so the Python patterns use
``fullmatch``, ``re.ASCII`` with ``re.IGNORECASE``, and spell Java's ``.`` out, since it
excludes every Java line terminator (``\\n \\r \\u0085 \\u2028 \\u2029``), not ``\\n``
alone. ``StripUserinfoRule`` is case sensitive: Heritrix compiles its pattern with
``CASE_INSENSITIVE`` but then matches the pattern's *text* (``REGEX.pattern()``), which drops
the flag; ``HTTP://user@host/`` keeps its userinfo there too (the default order lowercases
first, so it only matters when the rule is used alone).

Lowercasing follows ``String.toLowerCase()`` in a non-Turkish locale, which Python's
``str.lower()`` matches, ``İ`` (-> ``i̇``) and final sigma included, up to the Unicode
version each implements.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

Rule = Callable[[str], str]

# Java's '.': any character but a line terminator (Pattern without DOTALL or UNIX_LINES).
_ANY = "[^\n\r\u0085\u2028\u2029]"

_USERINFO = re.compile(rf"((?:(?:https?)|(?:ftps?))://)(?:[^/]+@)({_ANY}*)")
_WWWN = re.compile(rf"(https?://)(?:www[0-9]*\.)([^/]*/{_ANY}+)", re.IGNORECASE | re.ASCII)
_SESSION_IDS = tuple(
    re.compile(rf"({_ANY}+)(?:{session_id})(?:&({_ANY}*))?", re.IGNORECASE | re.ASCII)
    for session_id in (
        # 'sid=' ends 'phpsessid=', so the sid pattern runs after the php one, as in Heritrix.
        "(?:(?:jsessionid)|(?:phpsessid))=[0-9a-zA-Z]{32}",
        "sid=[0-9a-zA-Z]{32}",
        "ASPSESSIONID[a-zA-Z]{8}=[a-zA-Z]{24}",
    )
)
# Every session-id pattern above contains one of these (jsessionid= and aspsessionid..=
# contain 'sessionid', phpsessid= and sid= contain 'sid='): a quick test before the scans.
_SESSION_ID_NAME = re.compile("sessionid|sid=", re.IGNORECASE | re.ASCII)
_CFTOKEN = re.compile("cftoken=", re.IGNORECASE | re.ASCII)
_CFIDS = re.compile(
    rf"({_ANY}+)(?:cfid=[^&]+&cftoken=[^&]+(?:jsession=[^&]+)?)(?:&({_ANY}*))?",
    re.IGNORECASE | re.ASCII,
)


def _strip(pattern: re.Pattern, url: str) -> str:
    """What Heritrix's ``doStripRegexMatch`` does: group 1 + group 2 if the whole URL matches."""
    match = pattern.fullmatch(url)
    if match is None:
        return url
    return match.group(1) + (match.group(2) or "")


def lowercase(url: str) -> str:
    """``LowercaseRule``."""
    return url.lower()


def strip_userinfo(url: str) -> str:
    """``StripUserinfoRule``: ``http://user:pw@host/`` -> ``http://host/``.

    Up to the last ``@`` before the first ``/`` after the scheme; http, https, ftp and ftps
    only; case sensitive (see the module's note).
    """
    if "@" not in url:
        return url  # a fast exit for most URLs: the pattern needs an '@'
    return _strip(_USERINFO, url)


def strip_wwwn(url: str) -> str:
    """``StripWWWNRule``: ``http://www3.host/x`` -> ``http://host/x``; ``http://www.host/`` stays."""
    return _strip(_WWWN, url)


def strip_session_ids(url: str) -> str:
    """``StripSessionIDs``: jsessionid, phpsessid, sid (32 alphanumerics) and aspsessionid."""
    if "=" not in url or not _SESSION_ID_NAME.search(url):
        return url  # the patterns scan the whole URL; most URLs have no session id at all
    for pattern in _SESSION_IDS:
        url = _strip(pattern, url)
    return url


def strip_session_cfids(url: str) -> str:
    """``StripSessionCFIDs``: ColdFusion's ``CFID=..&CFTOKEN=..[jsession=..]``."""
    if "=" not in url or not _CFTOKEN.search(url):
        return url
    return _strip(_CFIDS, url)


def fixup_query_string(url: str) -> str:
    """``FixupQueryString``: tidy what session-id stripping leaves at the query's edges.

    Only the last ``?`` counts, and only past the URL's first character: a URL ending
    in ``?`` or ``?&`` loses them; otherwise an ``&`` right after the ``?`` goes, or else a
    trailing ``&``.
    """
    question = url.rfind("?")
    if question <= 0:
        return url
    if question == len(url) - 1:
        return url[:-1]
    if url[question + 1] == "&":
        if question + 2 == len(url):
            return url[:-2]
        return url[: question + 1] + url[question + 2 :]
    if url.endswith("&"):
        return url[:-1]
    return url


DEFAULT_RULES: tuple[Rule, ...] = (
    lowercase,
    strip_userinfo,
    strip_wwwn,
    strip_session_ids,
    strip_session_cfids,
    fixup_query_string,
)
"""``RulesCanonicalizationPolicy.getDefaultRules()``, in its order."""


def canonicalize(url: str, rules: Sequence[Rule] = DEFAULT_RULES) -> str:
    """``url`` passed through ``rules`` in order: Heritrix's canonical form by default."""
    for rule in rules:
        url = rule(url)
    return url


def canonicalize_many(urls: Iterable[str], rules: Sequence[Rule] = DEFAULT_RULES) -> list[str]:
    """:func:`canonicalize` of each URL, as a list (rule by rule over the batch: fewer calls)."""
    urls = list(urls)
    for rule in rules:
        urls = list(map(rule, urls))
    return urls
