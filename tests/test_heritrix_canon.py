"""Heritrix's default canonicalisation rules, with the examples of Heritrix 3's own tests."""

from __future__ import annotations

import pytest

from pycrawler.keys.heritrix_canon import (
    DEFAULT_RULES,
    canonicalize,
    canonicalize_many,
    fixup_query_string,
    lowercase,
    strip_session_cfids,
    strip_session_ids,
    strip_userinfo,
    strip_wwwn,
)

URL = "http://WWW.aRchive.Org/index.html"
BASE = "http://www.archive.org/index.html"
ID32 = "0123456789abcdefghijklemopqrstuv"


def test_default_rules_are_heritrix_order():
    assert DEFAULT_RULES == (
        lowercase,
        strip_userinfo,
        strip_wwwn,
        strip_session_ids,
        strip_session_cfids,
        fixup_query_string,
    )


def test_lowercase():
    assert lowercase(URL) == "http://www.archive.org/index.html"
    # Java's toLowerCase (non-Turkish locale): dotted capital I becomes i + combining dot.
    assert lowercase("http://\u0130.example/") == "http://i\u0307.example/"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (URL, URL),
        ("http://stack:password@WWW.aRchive.Org/index.html", URL),
        ("http://stack:pass@@@@@@word@WWW.aRchive.Org/index.html", URL),  # up to the last '@'
        ("ftp://stack:pass@@@@@@word@archive.org/index.html", "ftp://archive.org/index.html"),
        ("https://u@h/", "https://h/"),
        ("ftps://u@h/", "ftps://h/"),
        ("gopher://u@h/", "gopher://u@h/"),  # other schemes keep it
        ("http://h/path@x", "http://h/path@x"),  # an '@' after the first '/' is not userinfo
        # Heritrix loses the pattern's CASE_INSENSITIVE flag (it matches REGEX.pattern()).
        ("HTTP://u@h/", "HTTP://u@h/"),
    ],
)
def test_strip_userinfo(url, expected):
    assert strip_userinfo(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (URL, "http://aRchive.Org/index.html"),
        ("http://www001.aRchive.Org/index.html", "http://aRchive.Org/index.html"),
        ("http://www3.aRchive.Org/index.html", "http://aRchive.Org/index.html"),
        ("HTTPS://WWW.a.org/x", "HTTPS://a.org/x"),  # this one is case-insensitive
        ("http://www.archive.org/", "http://www.archive.org/"),  # top page: nothing after '/'
        ("http://www.archive.org", "http://www.archive.org"),
        ("ftp://www.archive.org/x", "ftp://www.archive.org/x"),
        ("http://wwwx.archive.org/x", "http://wwwx.archive.org/x"),
        # Java's '.' stops at any line terminator, not only '\n'.
        ("http://www.a.org/x\u2028y", "http://www.a.org/x\u2028y"),
    ],
)
def test_strip_wwwn(url, expected):
    assert strip_wwwn(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (BASE + "?jsessionid=" + ID32, BASE + "?"),
        (BASE + "?jsessionid=" + ID32 + "0", BASE + "?jsessionid=" + ID32 + "0"),  # not 32
        (BASE + "?jsessionid=" + ID32 + "&x=y", BASE + "?x=y"),
        (BASE + "?one=two&jsessionid=" + ID32 + "&x=y", BASE + "?one=two&x=y"),
        (BASE + "?one=two&jsessionid=" + ID32, BASE + "?one=two&"),
        (BASE + "?aspsessionidABCDEFGH=ABCDEFGHIJKLMNOPQRSTUVWX&x=y", BASE + "?x=y"),
        (BASE + "?phpsessid=" + ID32 + "&x=y", BASE + "?x=y"),
        (BASE + "?one=two&phpsessid=" + ID32 + "&x=y", BASE + "?one=two&x=y"),
        (BASE + "?one=two&phpsessid=" + ID32, BASE + "?one=two&"),
        (BASE + "?sid=9682993c8daa2c5497996114facdc805&x=y", BASE + "?x=y"),
        (BASE + "?sid=9682993c8daa2c5497996114facdc805&jsessionid=" + ID32, BASE + "?"),
        (BASE + "?JSESSIONID=" + ID32.upper(), BASE + "?"),
        # (.+) must match something first: a bare session id is not stripped.
        ("jsessionid=" + ID32, "jsessionid=" + ID32),
    ],
)
def test_strip_session_ids(url, expected):
    assert strip_session_ids(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://a.b.c/boo?CFID=1169580&CFTOKEN=48630702&dtstamp=22%2F08%2F2006%7C06%3A58%3A11",
         "http://a.b.c/boo?dtstamp=22%2F08%2F2006%7C06%3A58%3A11"),
        ("http://a.b.c/boo?CFID=12412453&CFTOKEN=15501799   &dt=19_08_2006_22_39_28",
         "http://a.b.c/boo?dt=19_08_2006_22_39_28"),
        ("http://a.b.c/boo?CFID=14475712   &CFTOKEN=2D89F5AF-3048-2957-DA4EE4B6B13661AB"
         "&r=468710288378&m=forgotten",
         "http://a.b.c/boo?r=468710288378&m=forgotten"),
        ("http://a.b.c/boo?CFID=16603925   &CFTOKEN=2AE13EEE-3048-85B0-56CEDAAB0ACA44B8",
         "http://a.b.c/boo?"),
        ("http://a.b.c/boo?CFID=4308017&CFTOKEN=63914124&requestID=200608200458360%2E39414378",
         "http://a.b.c/boo?requestID=200608200458360%2E39414378"),
        ("http://a.b.c/boo?cfid=1&cftoken=2&x=y", "http://a.b.c/boo?x=y"),
        ("http://a.b.c/boo?cfid=1&x=2", "http://a.b.c/boo?cfid=1&x=2"),  # no token: kept
    ],
)
def test_strip_session_cfids(url, expected):
    assert strip_session_cfids(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        (URL, URL),
        (URL + "?", URL),
        (URL + "?&", URL),
        (URL + "?&x=y", URL + "?x=y"),
        (URL + "?x=y", URL + "?x=y"),
        (URL + "?x=y&", URL + "?x=y"),
        (URL + "?a?", URL + "?a"),  # the last '?' counts
        ("?", "?"),  # a '?' at 0 is left alone
        ("", ""),
    ],
)
def test_fixup_query_string(url, expected):
    assert fixup_query_string(url) == expected


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://archive.org/index.html", "http://archive.org/index.html"),
        ("http://www.archive.org/index.html", "http://archive.org/index.html"),
        ("http://www.archive.org/index.html?jsessionid=01234567890123456789012345678901",
         "http://archive.org/index.html"),
        ("HTTP://User:Pw@WWW2.Archive.ORG/A.html?Q=1&PHPSESSID=" + ID32.upper(),
         "http://archive.org/a.html?q=1"),
        ("http://www.archive.org/", "http://www.archive.org/"),
    ],
)
def test_default_chain(url, expected):
    assert canonicalize(url) == expected


def test_batch_is_the_scalar_form_over_a_list():
    urls = [URL, BASE + "?jsessionid=" + ID32 + "&x=y", "http://u@www.a.org/b?&c=d&", ""]
    assert canonicalize_many(iter(urls)) == [canonicalize(url) for url in urls]
    assert canonicalize_many(urls, rules=(lowercase,)) == [url.lower() for url in urls]
