"""One URL, one key, one request: the ``web`` canonical form a new crawl keys on, the URL each
canonical form requests, and crawls of a loopback site whose links spell one page many ways,
carry userinfo, or name a new session in every answer (counted from the server's side)."""

from __future__ import annotations

import json
import secrets

import pytest
from crawl_sites import CountingServer, answer, page, run_crawl
from hypothesis import given, settings
from hypothesis import strategies as st

from pycrawler.errors import BadInput
from pycrawler.fetch.client import request_url
from pycrawler.frontier.queue_records import META
from pycrawler.frontier.workqueues import WorkQueueFrontier
from pycrawler.keys.canon import _web_many, canonicalize, get_canonicalizer, safe, web
from pycrawler.seen.exact import ExactVisited
from pycrawler.store import Environment

SESSION = "0123456789abcdef0123456789ABCDEF"  # 32 letters and digits, as Heritrix's patterns want


@pytest.mark.parametrize("url,canonical", [
    # the normal form: case, default port, escapes, dot segments (escaped ones too)
    ("HTTP://Example.COM:80/a/./b/../C?x=%7e%41%2f#frag", "http://example.com/a/C?x=~A%2F"),
    ("http://h/ok/%34.html", "http://h/ok/4.html"),
    ("http://h/ok/%2e%2E/ok/6.html", "http://h/ok/6.html"),
    # userinfo, plain or escaped, is dropped
    ("https://user:pw@Ex.com:443/p", "https://ex.com/p"),
    ("http://a%3Cb%3E@127.0.0.1:8080/p", "http://127.0.0.1:8080/p"),
    # session ids in the path and the query, whatever their case and value
    (f"http://h/p;jsessionid={SESSION}?PHPSESSID=x1&y=1", "http://h/p?y=1"),
    ("http://h/a;JSESSIONID=node0abc.node0/b;v=2?x=1&sessionid=9&BV_SessionID=@@@@1&z", "http://h/a/b;v=2?x=1&z"),
    ("http://h/p?ASPSESSIONIDQQGGGNCG=LKJHGFDSAQWERTYUIOPASDFG&CFID=1&CFTOKEN=2&osCsid=f00", "http://h/p"),
    (f"http://h/p?sid={SESSION}&q=1", "http://h/p?q=1"),
    ("http://h/p?sid=12&side=1", "http://h/p?sid=12&side=1"),  # a short sid is a parameter like any
    ("http://h/p?", "http://h/p?"),                             # a query that was empty stays so
    ("http://h/a/.;jsessionid=1/b", "http://h/a/b"),            # a dot segment once the id is gone
    # an internationalised host as the HTTP client sends it
    ("http://BÜcher.de/ü", "http://xn--bcher-kva.de/%C3%BC"),
])
def test_the_web_canonical_form(url, canonical):
    assert canonicalize(url) == canonicalize(url, "web") == canonical
    assert web(canonical) == canonical


SPELLINGS = [
    ["http://h:81/ok/4.html", "http://h:81/ok/%34.html", "HTTP://H:81/ok/4.html#x"],
    ["http://h/ok/5.html", "http://h:80/ok/./5.html", "http://h/ok/%2E/5.html"],
    ["http://h/ok/6.html", "http://h/ok/../ok/6.html", "http://h/ok/%2e%2e/ok/%36.html"],
    ["http://h/a%2Fb?q=%3D", "http://h/a%2fb?q=%3d"],
]


@pytest.mark.parametrize("how", ["web", "safe", "w3lib", "heritrix", "crawler4j"])
def test_every_form_requests_the_normal_form_and_each_spelling_is_one_request_and_one_key(how):
    canonicalizer = get_canonicalizer(how)
    for spellings in SPELLINGS:
        requested, keyed = canonicalizer.forms(spellings)
        assert len(set(requested)) == 1 and len(set(keyed)) == 1, (requested, keyed)
        assert safe(requested[0]) == requested[0]
        # what goes on the wire is that form, byte for byte
        assert str(request_url(requested[0])) == requested[0]


def test_a_lossy_form_keys_without_userinfo_and_requests_without_it():
    requested, keyed = get_canonicalizer("heritrix").forms(["http://u:p@www.H.com/A", "http://www.h.com/A"])
    assert requested == ["http://www.h.com/A"] * 2 and keyed == ["http://h.com/a"] * 2


def test_the_request_goes_out_as_the_normal_form():
    for url, path in [("http://h/ok/%34.html", "/ok/4.html"), ("http://h/a%2fb", "/a%2Fb"),
                      ("http://h/x/../y?%7e", "/y?~")]:
        assert request_url(url).raw_path_qs == path
    assert request_url("http://bücher.de/").raw_host == "xn--bcher-kva.de"


URL_PARTS = st.tuples(
    st.sampled_from(["http", "https", "HTTP"]),
    st.sampled_from(["", "u@", "u:p@", "a%3C@"]),
    st.text("aZ0-.", min_size=1, max_size=6),
    st.sampled_from(["", ":80", ":443", ":8080", ":0"]),
    st.lists(st.sampled_from(["a", ".", "..", "%2e", "%41", "%2f", ";jsessionid=X", ";sid=" + SESSION, "é", "~"]),
             max_size=5),
    st.lists(st.sampled_from(["x=1", "PHPSESSID=q", "sid=" + SESSION, "sid=1", "CFID=2", "", "a=%7e"]), max_size=4),
)


@settings(max_examples=500, deadline=None)
@given(URL_PARTS)
def test_the_web_fast_path_agrees_with_the_general_one_and_both_are_fixed_points(parts):
    scheme, userinfo, host, port, segments, pairs = parts
    url = f"{scheme}://{userinfo}{host}{port}/{'/'.join(segments)}" + ("?" + "&".join(pairs) if pairs else "")
    form = web(url)
    assert _web_many([url]) == [form]
    if form is not None:
        assert web(form) == form and _web_many([form]) == [form]
        assert "@" not in form.split("/")[2] and "jsessionid" not in form.lower()
    normal = safe(url)
    assert normal is None or safe(normal) == normal


def test_a_frontier_keeps_the_canonical_form_it_was_made_with(tmp_path):
    with Environment(tmp_path / "new", create=True) as env:
        WorkQueueFrontier(env, ExactVisited(env, "visited"), create=True)
        assert WorkQueueFrontier(env, ExactVisited(env, "visited")).canonicalizer.name == "web"
        with pytest.raises(BadInput, match="keyed on the 'web' canonical form"):
            WorkQueueFrontier(env, ExactVisited(env, "visited"), canonicalizer="safe")
    with Environment(tmp_path / "old", create=True) as env:
        WorkQueueFrontier(env, ExactVisited(env, "visited"), create=True, canonicalizer="crawler4j")
        env.open_database(META, create=False).delete(b"canon")  # as a frontier made before it was recorded
        # the caller's (a crawl's crawl.json's) is taken and recorded
        assert WorkQueueFrontier(env, ExactVisited(env, "visited"), canonicalizer="crawler4j").canonicalizer.name \
            == "crawler4j"
        assert WorkQueueFrontier(env, ExactVisited(env, "visited")).canonicalizer.name == "crawler4j"
        env.open_database(META, create=False).delete(b"canon")
        # none given: the default of then
        assert WorkQueueFrontier(env, ExactVisited(env, "visited")).canonicalizer.name == "safe"


def session_page(handler):
    """Every answer names a new session in each of its links, in the path and in the query."""
    links = [f"/session;jsessionid={secrets.token_hex(16)}?PHPSESSID={secrets.token_hex(16)}",
             f"/session?sid={secrets.token_hex(16)}", "/ok/1.html"]
    answer(handler, 200, page("session", links).encode())


# Links of index.html: ok/1..7.html, each under several spellings (BASE: the server's address).
SPELLING_LINKS = ["/ok/1.html", "/ok/2.html", "/ok/%32.html", "/ok/./3.html", "/ok/3.html", "/ok/../ok/4.html",
                  "/ok/%2e%2e/ok/4.html", "ok/5.html", "/ok/./../ok/%35.html", "/OK/../ok/6.html", "/ok/6.html#top",
                  "BASE/ok/7.html", "BASE/ok/%37.html",
                  # two URLs (an escaped reserved character is not the character), one file on
                  # this server: yarl left to itself sent both as /ok/a=b.html
                  "/ok/a=b.html", "/ok/a%3Db.html", "/ok/a%3db.html"]


def ok_pages(root) -> None:
    """ok/1..8.html and ok/a=b.html, pages without links."""
    (root / "ok").mkdir(parents=True)
    for name in [*range(1, 9), "a=b"]:
        (root / "ok" / f"{name}.html").write_text(page(f"ok {name}", []))


def serve_and_crawl(tmp_path, links: list[str], *options: str, routes=None):
    """Crawl a site whose index.html has ``links`` (``BASE``: the server's address, ``HOST``:
    its host and port); the GETs per path and the crawl.log."""
    root = tmp_path / "site"
    ok_pages(root)
    server = CountingServer(root, routes)
    with server as base:
        host = base.split("//")[1].rstrip("/")
        (root / "index.html").write_text(page("index", [link.replace("BASE", base.rstrip("/")).replace("HOST", host)
                                                         for link in links]))
        done = run_crawl(base + "index.html", tmp_path / "state", "--delay", "0", *options, timeout=60)
    assert done.returncode == 0, done.stderr
    return server.page_counts(), (tmp_path / "state" / "crawl.log").read_text()


@pytest.mark.parametrize("how", ["web", "safe", "heritrix", "crawler4j"])
def test_each_spelling_of_a_page_is_requested_once_under_every_canonical_form(tmp_path, how):
    counts, _ = serve_and_crawl(tmp_path, SPELLING_LINKS, "--canon", how)
    assert counts == {"index.html": 1, **{f"ok/{n}.html": 1 for n in range(1, 8)}, "ok/a=b.html": 1,
                      "ok/a%3Db.html": 1}


def test_userinfo_links_are_the_page_without_it_and_a_session_page_is_fetched_once(tmp_path):
    links = ["/ok/1.html", "http://user:pw@HOST/ok/1.html", "http://a%3Cb%3E@HOST/ok/8.html",
             f"/session;jsessionid={SESSION}"]
    counts, crawl_log = serve_and_crawl(tmp_path, links, routes={"/session": session_page})
    # the session page is requested without its session id, and every new id it names is that page
    assert counts == {"index.html": 1, "ok/1.html": 1, "ok/8.html": 1, "session": 1}
    assert "@" not in crawl_log  # no URL with userinfo was requested, so none is logged
    assert json.loads((tmp_path / "state" / "crawl.json").read_text())["canon"] == "web"


def test_a_state_made_before_web_resumes_keying_as_it_did(tmp_path):
    """A state made with the old default (safe, not recorded in the frontier) resumes with it:
    the session-id spelling it keeps apart is fetched as a page of its own, as before."""
    site = tmp_path / "site"
    ok_pages(site)
    (site / "index.html").write_text(page("index", ["/ok/1.html", "/ok/2.html"]))
    (site / "ok" / "1.html").write_text(page("ok 1", ["/ok/2.html?PHPSESSID=abc"]))
    state = tmp_path / "state"
    server = CountingServer(site)
    with server as base:
        first = run_crawl(base + "index.html", state, "--delay", "0", "--canon", "safe", "--max-pages", "1")
        assert first.returncode == 0, first.stderr
        with Environment(state) as env:
            env.open_database(META, create=False).delete(b"canon")
        done = run_crawl(base + "index.html", state, "--delay", "0")
    assert done.returncode == 0, done.stderr
    assert json.loads((state / "crawl.json").read_text())["canon"] == "safe"
    assert server.page_counts() == {"index.html": 1, "ok/1.html": 1, "ok/2.html": 1, "ok/2.html?PHPSESSID=abc": 1}
