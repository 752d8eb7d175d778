"""The server a URL names: what scope, robots.txt and politeness key by."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.crawl.scope import _server as split_server
from pycrawler.crawl.scope import server


def test_each_spelling_of_an_origin_names_its_server_and_other_urls_none():
    assert server("http://Example.COM/x") == ("example.com", 80)
    assert server("http://example.com:80?q") == ("example.com", 80)
    assert server("HTTPS://u:p@example.com:8443#f") == ("example.com", 8443)
    assert server("http://[::1]:81/") == ("::1", 81)
    for url in ("ftp://example.com/", "http:///x", "http://h:99999/", "http://h:x/", "http://[::1/", "mailto:a@b", "x"):
        assert server(url) is None, url


URL_PIECES = st.sampled_from(["http", "HTTPS", "ftp", ":", "//", "/", "h", "H", "u@", "[::1]", "[", "80", "99999", "?",
                              "#", "\t", " ", ".", "é", "x"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(URL_PIECES, max_size=10).map("".join))
def test_the_server_from_the_cache_is_the_one_the_whole_url_names_however_often_its_origin_was_asked(url):
    assert server(url) == split_server(url)
    assert server(url + "/more?q") == split_server(url + "/more?q")
