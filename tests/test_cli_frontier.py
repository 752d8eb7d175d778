"""``pycrawler frontier put|pop|stats``: the contract users and scripts rely on."""

from __future__ import annotations

import io
import json
import sys

import pytest

from pycrawler.cli import main
from pycrawler.store import Environment

ASTRAL = "http://例子.测试/\U0001F600?q=\U00010000"


def run(capsys, *argv: str, stdin: bytes | None = None, monkeypatch=None) -> tuple[int, str, str]:
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def pop_jsonl(capsys, store, n: int = 100) -> list[dict]:
    code, out, _ = run(capsys, "frontier", "pop", str(store), "-n", str(n), "--format", "jsonl")
    assert code == 0
    assert "\\u" not in out  # non-ASCII text is written as UTF-8, not escaped
    return [json.loads(line) for line in out.splitlines()]


def test_put_stats_pop_round_trip(tmp_path, capsys):
    store = tmp_path / "todo"
    code, out, _ = run(capsys, "frontier", "put", str(store), "http://b/", ASTRAL, "http://a/")
    assert code == 0 and out.startswith("put 3 URLs")
    assert run(capsys, "frontier", "stats", str(store))[1] == "layout: pycrawler\norder: key\ncount: 3\n"
    records = pop_jsonl(capsys, store, 2)
    assert [r["ori_url"] for r in records] == ["http://a/", "http://b/"]
    assert set(records[0]) == {"ori_url", "url", "url_no", "status_code", "hit_num", "char_set", "abstract_text",
                               "author", "weight", "description", "file_size", "last_update_time", "time_to_live",
                               "title", "type", "url_references", "layer"}
    code, out, _ = run(capsys, "frontier", "pop", str(store))
    assert out.splitlines()[0] == ASTRAL and f'  ori_url: "{ASTRAL}"' in out.splitlines()
    assert run(capsys, "frontier", "pop", str(store), "-n", "5") == (0, "", "")


def test_stdin_in_small_batches_fifo(tmp_path, capsys, monkeypatch):
    store = tmp_path / "todo"
    lines = b"http://c/\n\nhttp://a/\r\nhttp://c/\n" + ASTRAL.encode() + b"\n"
    code, out, _ = run(capsys, "frontier", "put", str(store), "--order", "fifo", "--batch", "2",
                       stdin=lines, monkeypatch=monkeypatch)
    assert code == 0 and "4 URLs" in out
    assert [r["ori_url"] for r in pop_jsonl(capsys, store)] == ["http://c/", "http://a/", "http://c/", ASTRAL]


def test_the_book_layout_through_the_same_commands(tmp_path, capsys):
    store = tmp_path / "book"
    assert run(capsys, "frontier", "put", str(store), "--layout", "book", "http://zz/", "http://a/long")[0] == 0
    assert run(capsys, "frontier", "stats", str(store))[1] == "layout: book\norder: key\ncount: 2\n"
    # The book's key order: serialized Strings, the shorter first.
    assert [r["ori_url"] for r in pop_jsonl(capsys, store)] == ["http://zz/", "http://a/long"]


@pytest.mark.parametrize("url, why", [
    ("", "empty URL"), ("example.com/x", "not an absolute URL"), ("http://[::1/", "malformed URL"),
    ("http://a b/", "whitespace or a control character"), ("http://a/\x00", "control character"),
    ("http://a/" + "x" * 100_000, "100009 characters is longer than 8192"),
    ("http://a/\udcff", "undecodable bytes"),
])
def test_bad_urls_exit_2_with_one_line_and_store_nothing(tmp_path, capsys, url, why):
    store = tmp_path / "todo"
    code, out, err = run(capsys, "frontier", "put", str(store), "http://fine/", url)
    assert code == 2 and why in err and "argument 2" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not store.exists()


def test_a_bad_line_after_full_batches_says_what_was_stored(tmp_path, capsys, monkeypatch):
    store = tmp_path / "todo"
    code, _, err = run(capsys, "frontier", "put", str(store), "--batch", "2",
                       stdin=b"http://a/\nhttp://b/\nnot a url\n", monkeypatch=monkeypatch)
    assert code == 2 and "stdin line 3" in err and "2 URLs stored before it" in err
    assert run(capsys, "frontier", "stats", str(store))[1].endswith("count: 2\n")


def test_stdin_that_is_not_utf8_is_bad_input(tmp_path, capsys, monkeypatch):
    code, _, err = run(capsys, "frontier", "put", str(tmp_path / "t"), stdin=b"http://a/\xff\n",
                       monkeypatch=monkeypatch)
    assert code == 2 and "stdin line 1 is not UTF-8" in err


def test_the_length_limit_can_be_lifted_and_long_urls_come_back_whole(tmp_path, capsys):
    store, url = tmp_path / "todo", "http://a/" + "\U0001F600" * 100_000
    assert run(capsys, "frontier", "put", str(store), "--max-url-chars", "0", url)[0] == 0
    assert pop_jsonl(capsys, store)[0]["ori_url"] == url


def test_unknown_layouts_and_missing_stores_are_bad_input(tmp_path, capsys):
    with Environment(tmp_path / "other", create=True) as env:
        env.open_database("visited", create=True).close()
    for argv in (["stats", str(tmp_path / "other")], ["pop", str(tmp_path / "other")],
                 ["put", str(tmp_path / "other"), "http://a/"], ["stats", str(tmp_path / "missing")]):
        code, _, err = run(capsys, "frontier", *argv)
        assert code == 2 and ("no TODO store" in err), err


def test_stats_leaves_the_store_untouched(tmp_path, capsys):
    store = tmp_path / "todo"
    run(capsys, "frontier", "put", str(store), "http://a/")
    before = {p.name: p.read_bytes() for p in store.iterdir()}
    assert run(capsys, "frontier", "stats", str(store))[0] == 0
    assert {p.name: p.read_bytes() for p in store.iterdir()} == before


def test_an_order_against_the_existing_store_is_bad_input(tmp_path, capsys):
    store = tmp_path / "todo"
    run(capsys, "frontier", "put", str(store), "http://a/")
    code, _, err = run(capsys, "frontier", "put", str(store), "--order", "fifo", "http://b/")
    assert code == 2 and "in key order" in err


def test_check_url_refuses_none_and_keeps_non_bmp():
    from pycrawler.cli.frontier import check_url
    from pycrawler.errors import BadInput

    with pytest.raises(BadInput, match="empty URL"):
        check_url(None)
    assert check_url(ASTRAL) == ASTRAL
