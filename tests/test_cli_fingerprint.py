"""``pycrawler fingerprint URL...`` as a user runs it (in subprocesses): for each URL its
``web`` (the default), ``safe`` and ``heritrix`` canonical forms, the MD5 key and 64-bit
fingerprint of the web form, and Heritrix's ``createKey`` of the heritrix form, as text or JSON
lines.

The createKeys are checked against ../shared/vectors/heritrix-fp.tsv, Heritrix's own
``createKey`` of each URL string as given: so against the rows whose URL is already in
Heritrix's canonical form (the key the command prints is of that form).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from pycrawler.keys.canon import canonicalize_many

WWW = "http://WWW.Example.com:80/a/../b?jsessionid=0123456789abcdef0123456789abcdef&x=1#top"


def pycrawler(*args, stdin: bytes | None = None, **env) -> subprocess.CompletedProcess:
    """The command's run, stdout and stderr as bytes (so their encoding is checked too)."""
    return subprocess.run([sys.executable, "-m", "pycrawler", *args], input=stdin, capture_output=True,
                          timeout=120, env={**os.environ, **env})


def jsonl(done: subprocess.CompletedProcess) -> list[dict]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.decode("utf-8").splitlines()]


def one_line_error(done: subprocess.CompletedProcess, says: str) -> None:
    stderr = done.stderr.decode("utf-8")
    assert done.returncode == 2, stderr
    assert stderr.startswith("pycrawler: ") and stderr.count("\n") == 1 and "Traceback" not in stderr, stderr
    assert says in stderr


@pytest.fixture(scope="module")
def vectors(shared) -> dict[str, int]:
    """URL -> Heritrix's createKey of it, from the Java outputs."""
    lines = (shared / "vectors" / "heritrix-fp.tsv").read_bytes().decode("utf-8").split("\n")[:-1]
    return {url: int(key, 16) for key, _, _, _, url in (line.split("\t", 4) for line in lines)}


def test_each_url_gets_its_canonical_forms_and_keys():
    (row,) = jsonl(pycrawler("fingerprint", "--format", "jsonl", WWW))
    assert row == {
        "url": WWW,
        "web": "http://www.example.com/b?x=1",
        "safe": "http://www.example.com/b?jsessionid=0123456789abcdef0123456789abcdef&x=1",
        "heritrix": "http://example.com:80/a/../b?x=1#top",
        "md5": hashlib.md5(b"http://www.example.com/b?x=1").hexdigest(),
        "fp64": row["md5"][:16],
        "create_key": row["create_key"],
    }
    # BdbUriUniqFilterTest.testCreateKey: Heritrix's own value for this URL (a Java long).
    (archive,) = jsonl(pycrawler("fingerprint", "--format", "jsonl", "http://archive.org/index.html"))
    assert int(archive["create_key"], 16) == 6613237167064754714


def test_create_keys_are_heritrix_own_for_urls_in_heritrix_canonical_form(vectors):
    urls = [u for u in vectors if u and u == u.strip() and "\n" not in u and "\r" not in u]
    urls = [u for u, safe in zip(urls, canonicalize_many(urls, "safe")) if safe is not None]
    rows = jsonl(pycrawler("fingerprint", "--format", "jsonl", stdin="\n".join(urls).encode("utf-8", "surrogatepass")))
    assert [r["url"] for r in rows] == urls
    checked = [(r["url"], r["create_key"], f"{vectors[r['heritrix']]:016x}") for r in rows if r["heritrix"] in vectors]
    assert len(checked) >= 200
    assert [c for c in checked if c[1] != c[2]] == []
    assert all(r["md5"] == hashlib.md5(r["web"].encode("utf-8", "surrogatepass")).hexdigest()
               and r["fp64"] == r["md5"][:16] for r in rows)


def test_text_format_shows_one_line_per_key_and_createkey_as_java_prints_it():
    done = pycrawler("fingerprint", "http://archive.org/index.html", "http://a/")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode("utf-8").splitlines()
    assert lines[:7] == ["http://archive.org/index.html",
                         "  web: http://archive.org/index.html",
                         "  safe: http://archive.org/index.html",
                         "  heritrix: http://archive.org/index.html",
                         "  md5: e0d7956097dcd6ff84654e000c94e8e1",
                         "  fp64: e0d7956097dcd6ff",
                         "  create_key: 5bc6f02a3e4e2a1a (6613237167064754714)"]
    assert lines[7] == "http://a/" and len(lines) == 14


def test_urls_come_from_stdin_one_per_line_when_none_are_given():
    stdin = b"http://a/\n\n  http://b/x  \r\nhttp://c/\n"
    assert [r["url"] for r in jsonl(pycrawler("fingerprint", "--format", "jsonl", stdin=stdin))] == \
        ["http://a/", "http://b/x", "http://c/"]


def test_jsonl_is_utf8_text_one_document_per_line_whatever_the_locale():
    url = "http://例子.测试/路径?q=\U0001F50D"
    done = pycrawler("fingerprint", "--format", "jsonl", url, PYTHONIOENCODING="ascii")
    line = done.stdout.decode("utf-8")
    assert "例子.测试/路径" in line and "\\u" not in line  # written as UTF-8, not escaped
    (row,) = jsonl(done)
    assert row["heritrix"] == url and row["safe"] == "http://例子.测试/%E8%B7%AF%E5%BE%84?q=%F0%9F%94%8D"
    assert row["web"] == "http://xn--fsqu00a.xn--0zwm56d/%E8%B7%AF%E5%BE%84?q=%F0%9F%94%8D"  # the host as sent


def test_a_lone_surrogate_is_a_json_escape_in_jsonl_and_a_backslash_escape_in_text():
    # A command-line argument that is not UTF-8 reaches Python as a lone surrogate (\udcff).
    url = os.fsencode("http://a/") + b"\xff"
    done = pycrawler("fingerprint", "--format", "jsonl", url)
    assert b'"heritrix": "http://a/\\udcff"' in done.stdout
    (row,) = jsonl(done)
    assert row["heritrix"] == "http://a/\udcff" and row["safe"] == "http://a/%ED%B3%BF"
    text = pycrawler("fingerprint", url)
    assert text.returncode == 0 and b"  heritrix: http://a/\\udcff\n" in text.stdout


def test_a_url_that_is_not_absolute_is_bad_input_after_the_ones_before_it():
    done = pycrawler("fingerprint", "--format", "jsonl", "http://a/", "example.com/x")
    one_line_error(done, "argument 2: not an absolute URL (scheme://host...): 'example.com/x'")
    assert [json.loads(line)["url"] for line in done.stdout.decode().splitlines()] == ["http://a/"]
    one_line_error(pycrawler("fingerprint", stdin=b"http://a/\nmailto:x@y\n"), "stdin line 2: not an absolute URL")


def test_stdin_that_is_not_utf8_is_bad_input():
    one_line_error(pycrawler("fingerprint", stdin=b"http://a/\xff\n"), "stdin line 1 is not UTF-8")
