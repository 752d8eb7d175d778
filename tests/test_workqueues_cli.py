"""``pycrawler frontier put|pop|stats`` on a work-queue frontier."""

from __future__ import annotations

import json

from pycrawler.cli import main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_put_stats_pop_on_work_queues(tmp_path, capsys):
    store = str(tmp_path / "wq")
    code, out, _ = run(capsys, "frontier", "put", store, "--layout", "workqueues",
                       "http://A.example/1", "http://a.example/2", "http://b.example/1", "http://a.example:80/1")
    assert code == 0 and out.startswith("put 4 URLs") and "workqueues layout" in out and "3 waiting" in out
    code, out, _ = run(capsys, "frontier", "stats", store)
    assert code == 0
    assert "layout: workqueues\n" in out and "count: 3\n" in out and "queues: 2\n" in out
    assert "queues ready: 2 queues, 3 URLs\n" in out and "queues empty: 0 queues, 0 URLs\n" in out
    code, out, _ = run(capsys, "frontier", "pop", store, "-n", "3", "--format", "jsonl")
    assert [json.loads(line)["ori_url"] for line in out.splitlines()] == [
        "http://a.example/1", "http://b.example/1", "http://a.example/2"]  # queues in turn
    assert "queues empty: 2 queues, 0 URLs\n" in run(capsys, "frontier", "stats", store)[1]


def test_an_existing_store_keeps_its_layout(tmp_path, capsys):
    work_queues, todo = str(tmp_path / "wq"), str(tmp_path / "todo")
    assert run(capsys, "frontier", "put", work_queues, "--layout", "workqueues", "http://a/")[0] == 0
    assert run(capsys, "frontier", "put", work_queues, "http://b/")[0] == 0  # detected, no --layout needed
    code, _, err = run(capsys, "frontier", "put", work_queues, "--layout", "book", "http://c/")
    assert code == 2 and "holds a work-queue frontier" in err
    assert run(capsys, "frontier", "put", todo, "http://a/")[0] == 0
    code, _, err = run(capsys, "frontier", "put", todo, "--layout", "workqueues", "http://c/")
    assert code == 2 and "another kind of store" in err
