"""``pycrawler crawler4j inspect|export|import`` on frontiers crawler4j itself wrote.

Fixtures are written by crawler4j 4.2 on JE 5.0.73 and crawler4j 3.5 on JE 4.0.92 (their jars
from Maven Central, in target/crawler4j/ and target/je/), driven by
tests/crawler4j_writer/Crawler4jFrontierWriter.java as its CrawlController and WebCrawler drive
them; the corpus's four real crawler4j frontiers (../shared/wildje 01, 05, 12, 15) are read too.
What the export must say is computed from the same script the writer ran: crawler4j numbers
docids in scheduling order and hands URLs out by (priority as an unsigned byte, depth, docid).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT, missing, with_je
from crawl_sites import CountingServer, write_pages

TARGET = ROOT / "target"
CRAWLER4J = {"4.2": "5.0.73", "3.5": "4.0.92"}
"""crawler4j release -> the JE it shipped with."""
LOGGING = ("slf4j-api-1.7.32.jar", "slf4j-nop-1.7.32.jar", "log4j-over-slf4j-1.7.32.jar")
REAL_FRONTIERS = ("01-", "05-", "12-", "15-")


def reader_env() -> dict[str, str]:
    """The environment of every pycrawler process here: no JE named, so each command chooses the
    JE that reads the frontier (4.0.92 for log version 7, 5.0.73 for 8)."""
    return with_je(None)


def pycrawler(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, env=reader_env(), timeout=180)


def require(path: Path) -> Path:
    """``path``, or a failure naming what scripts/setup should have put there."""
    if not path.is_file():
        missing(f"{path.relative_to(ROOT)} is missing (scripts/setup resolves crawler4j and JE from Maven Central)")
    return path


@pytest.fixture(scope="session")
def writers(tmp_path_factory) -> dict[str, str]:
    """crawler4j release -> class path of the compiled writer on that release and its JE."""
    paths = {}
    for release, je in CRAWLER4J.items():
        jars = [require(TARGET / "crawler4j" / f"crawler4j-{release}.jar"), require(TARGET / "je" / f"je-{je}.jar"),
                *(require(TARGET / "crawler4j" / name) for name in LOGGING)]
        classes = tmp_path_factory.mktemp(f"writer-{release}")
        classpath = os.pathsep.join(map(str, jars))
        done = subprocess.run(["javac", "-nowarn", "-cp", classpath, "-d", str(classes),
                               str(ROOT / "tests" / "crawler4j_writer" / "Crawler4jFrontierWriter.java")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        paths[release] = os.pathsep.join([str(classes), classpath])
    return paths


class Script:
    """What a crawl did to its frontier, and what crawler4j then holds (the model of the tests)."""

    def __init__(self):
        self.lines: list[str] = []
        self.scheduled: list[dict] = []   # docid order
        self.handed_out: list[dict] = []
        self.finished: list[dict] = []

    def schedule(self, url: str, parent: dict | None, depth: int, priority: int = 0, anchor: str | None = None):
        row = {"url": url, "docid": len(self.scheduled) + 1, "parent_docid": parent["docid"] if parent else 0,
               "parent_url": parent["url"] if parent else None, "depth": depth, "priority": priority,
               "anchor": anchor}
        self.scheduled.append(row)
        self.lines.append(f"S\t{url}\t{parent['url'] if parent else ''}\t{depth}\t{priority}\t{anchor or ''}")
        return row

    def take(self, n: int):
        """Hand the first ``n`` pending URLs out to the crawler's threads."""
        self.handed_out += self.queue_order([r for r in self.scheduled if r not in self.handed_out])[:n]
        self.lines.append(f"T\t{n}")

    def finish(self, n: int):
        """The threads finish the next ``n`` URLs handed out."""
        self.finished = self.handed_out[:len(self.finished) + n]
        self.lines.append(f"P\t{n}")

    @staticmethod
    def queue_order(rows: list[dict]) -> list[dict]:
        return sorted(rows, key=lambda r: (r["priority"] & 0xFF, min(r["depth"], 127), r["docid"]))

    def expected(self, resumable: bool) -> tuple[list[dict], list[dict]]:
        """(pending rows in crawl order, done rows in DocIDs order)."""
        in_process = [r for r in self.handed_out if r not in self.finished] if resumable else []
        waiting = [r for r in self.scheduled if r not in self.handed_out]
        pending = [{**r, "in_process": r in in_process} for r in self.queue_order(waiting + in_process)]
        done = sorted(({"url": r["url"], "docid": r["docid"]} for r in self.scheduled
                       if r not in waiting and r not in in_process), key=lambda r: r["url"].encode())
        return pending, done


def write_frontier(classpath: str, folder: Path, script: Script, resumable: bool) -> Path:
    done = subprocess.run(["java", "-cp", classpath, "Crawler4jFrontierWriter", str(folder), str(resumable).lower()],
                          input="\n".join(script.lines) + "\n", capture_output=True, text=True, encoding="utf-8",
                          timeout=120)
    assert done.returncode == 0, done.stderr
    (folder / "je.lck").unlink(missing_ok=True)   # as a copied or archived frontier
    return folder


def file_hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def a_crawl(base: str = "http://a.example/") -> Script:
    """A crawl of a few pages: priorities (one negative: crawler4j stores it as an unsigned byte,
    so it comes last), depths past the key's cap of 127, anchors with non-ASCII text and none."""
    script = Script()
    seed = script.schedule(base, None, 0)
    script.take(1)
    script.finish(1)
    first = script.schedule(base + "x", seed, 1, 0, "X é 中文")
    script.schedule(base + "urgent", seed, 1, -1, "later")
    script.schedule(base + "deep", first, 200, 0, None)
    script.schedule(base + "y?q=1", first, 2, 3, "Y")
    script.schedule("https://b.example/z", first, 2, 0, "Z")
    script.take(2)
    script.finish(1)
    return script


@pytest.mark.parametrize("release", sorted(CRAWLER4J))
@pytest.mark.parametrize("resumable", [True, False], ids=["resumable", "not-resumable"])
def test_export_gives_every_field_in_crawl_order_and_changes_no_byte(writers, tmp_path, release, resumable):
    script = a_crawl()
    frontier = write_frontier(writers[release], tmp_path / "crawl" / "frontier", script, resumable)
    before = file_hashes(frontier)
    done = pycrawler("crawler4j", "export", frontier.parent, "--pending", tmp_path / "p.jsonl",
                     "--done", tmp_path / "d.jsonl")
    assert done.returncode == 0, done.stderr
    pending, finished = script.expected(resumable)

    def read(name: str) -> list:
        return [json.loads(line) for line in (tmp_path / name).read_text(encoding="utf-8").splitlines()]

    assert read("p.jsonl") == pending
    assert read("d.jsonl") == finished
    assert file_hashes(frontier) == before


def test_inspect_counts_databases_depths_and_priorities(writers, tmp_path):
    script = a_crawl()
    frontier = write_frontier(writers["4.2"], tmp_path / "frontier", script, True)
    done = pycrawler("crawler4j", "inspect", frontier)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "crawler4j frontier (resumable), JE log version 8 (written by JE 4.1 or 5.0 (crawler4j 4.x)), read with JE 5.0.73" in lines[0]
    pending, finished = script.expected(resumable=True)
    in_process = sum(row["in_process"] for row in pending)
    assert [line.split() for line in lines[1:6]] == [
        ["records", "database"], ["6", "DocIDs"], [str(in_process), "InProcessPagesDB"],
        [str(len(pending) - in_process), "PendingURLsDB"], ["2", "Statistics"]]
    assert lines[6] == f"pending: {len(pending)} URLs ({len(pending) - in_process} waiting, {in_process} in process)"
    depths = Counter(min(row["depth"], 127) for row in pending)   # "deep" (200) is held as 127 in its key
    assert [line.split() for line in lines[7:7 + len(depths) + 1]] == [["urls", "depth"]] + [
        [str(n), f"{depth}{'+' * (depth == 127)}"] for depth, n in sorted(depths.items())]
    priorities = Counter(row["priority"] for row in pending)
    assert lines[8 + len(depths)].split() == ["priority:count"] + [f"{p}:{n}" for p, n in sorted(priorities.items())]
    lines = lines[9 + len(depths):]
    assert lines[0] == f"scheduled: 6 URLs with a docid (DocIDs), {len(finished)} of them no longer pending"
    # Every URL crawler4j took out of the queues is pending, in process or processed: none dropped.
    assert lines[1].startswith(f"  {len(script.finished)} processed (Processed-Pages), 0 dropped by crawler4j: ")
    assert lines[2] == f"counters: Processed-Pages={len(script.finished)} Scheduled-Pages=6"


@pytest.fixture(scope="module")
def real_frontiers(shared, tmp_path_factory) -> list[Path]:
    """Copies of the corpus's crawler4j frontiers (JE writes je.lck into what it opens)."""
    copies = []
    for prefix in REAL_FRONTIERS:
        source = next((shared / "wildje").glob(prefix + "*"))
        copy = tmp_path_factory.mktemp("wild") / source.name
        shutil.copytree(source, copy)
        copy.chmod(0o755)
        copies.append(copy)
    return copies


def test_the_real_frontiers_export_whole_and_in_order(real_frontiers, tmp_path):
    for frontier in real_frontiers:
        before = file_hashes(frontier)
        listed = pycrawler("store", "ls", frontier)
        counts = {line.split()[1]: int(line.split()[0]) for line in listed.stdout.splitlines()[2:]}
        done = pycrawler("crawler4j", "export", frontier, "--pending", tmp_path / "p.jsonl", "--done", tmp_path / "d.jsonl")
        assert done.returncode == 0, (frontier.name, done.stderr)
        pending = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
        finished = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text(encoding="utf-8").splitlines()]
        assert len(pending) == counts["PendingURLsDB"] + counts.get("InProcessPagesDB", 0)
        assert len(pending) + len(finished) == counts["DocIDs"]
        assert sum(row["in_process"] for row in pending) == counts.get("InProcessPagesDB", 0)
        order = [(r["priority"] & 0xFF, min(r["depth"], 127), r["docid"]) for r in pending]
        assert order == sorted(order)
        assert all(set(row) == {"url", "docid", "parent_docid", "parent_url", "depth", "priority", "anchor",
                                "in_process"} and row["url"].startswith("http") for row in pending)
        assert file_hashes(frontier) == before


SITE = {"index.html": ["a.html", "b.html", "c.html"], "a.html": ["d.html"], "b.html": ["a.html", "f.html"],
        "c.html": ["g.html"], "d.html": [], "e.html": ["index.html"], "f.html": [], "g.html": []}


@pytest.mark.parametrize("release", sorted(CRAWLER4J))
def test_an_imported_crawl4j_frontier_continues_where_crawler4j_stopped(writers, tmp_path, release):
    # crawler4j 3.5's frontier is JE 4.0.92's (log version 7), whose CacheMode has no EVICT_LN:
    # the state is written on JE 5.0.73 (log version 8), which the crawl then opens by itself.
    server = CountingServer(write_pages(tmp_path / "site", SITE))
    with server as base:
        # crawler4j fetched index and a; c is in process; b and e wait (e at a higher priority).
        script = Script()
        index = script.schedule(base + "index.html", None, 0)
        script.take(1)
        script.finish(1)
        script.schedule(base + "a.html", index, 1)
        script.schedule(base + "c.html", index, 1)
        script.schedule(base + "b.html", index, 1, 0, "B")
        script.schedule(base + "e.html", index, 1, -3 & 0x7F, "E")
        script.take(2)
        script.finish(1)
        frontier = write_frontier(writers[release], tmp_path / "crawl" / "frontier", script, True)
        state = tmp_path / "py"
        done = pycrawler("crawler4j", "import", frontier, "--into", state)
        assert done.returncode == 0, done.stderr
        manifest = json.loads((state / "crawler4j-import.json").read_text())
        assert (manifest["frontier"]["urls"], manifest["frontier"]["in_process"], manifest["seen"]["keys"]) == (3, 1, 5)
        assert json.loads((state / "crawl.json").read_text()) == {
            "seen": "drum", "queue_policy": "host", "canon": "crawler4j", "seen_key": "md5"}
        # crawler4j's defaults, for the crawl that goes on: no depth limit, 200 ms between fetches.
        assert json.loads((state / "crawl-defaults.json").read_text()) == {"max_depth": None, "delay": "0.2"}
        assert manifest["state_je"] == "5.0.73"

        crawled = subprocess.run([*map(str, [sys.executable, "-m", "pycrawler", "crawl", base + "index.html",
                                             "--state", state, "--no-progress", "--delay", "0"])],
                                 cwd=ROOT, capture_output=True, text=True, env=reader_env(), timeout=120)
        assert crawled.returncode == 0, crawled.stderr
    # crawler4j's done URLs (index, a) are not fetched again, nor d, linked only from a.
    assert server.page_counts() == {"c.html": 1, "b.html": 1, "e.html": 1, "f.html": 1, "g.html": 1}
    fetched = [line.split()[3:6] for line in (state / "crawl.log").read_text().splitlines()]
    assert [f[0] for f in fetched[:3]] == [base + "c.html", base + "b.html", base + "e.html"]  # crawler4j's order
    assert fetched[1] == [base + "b.html", "L", base + "index.html"]


def test_the_real_3x_frontiers_import_on_a_je_that_writes_work_queues(real_frontiers, tmp_path):
    """crawler4j 3.x frontiers (the corpus's 01 and 15, JE 4.0.92) import: the state is written
    on JE 5.0.73, since JE 4.0 has no CacheMode.EVICT_LN (the import failed on the first queued
    URL: "database 'pending': NoSuchFieldError: EVICT_LN", exit 1)."""
    for frontier in real_frontiers:
        if not frontier.name.startswith(("01-", "15-")):
            continue
        before = file_hashes(frontier)
        listed = pycrawler("store", "ls", frontier)
        counts = {line.split()[1]: int(line.split()[0]) for line in listed.stdout.splitlines()[2:]}
        assert "JE log version 7" in listed.stdout
        state = tmp_path / frontier.name
        done = pycrawler("crawler4j", "import", frontier, "--into", state)
        assert done.returncode == 0, (frontier.name, done.stderr)
        manifest = json.loads((state / "crawler4j-import.json").read_text())
        assert (manifest["frontier"]["urls"], manifest["seen"]["keys"]) == (counts["PendingURLsDB"], counts["DocIDs"])
        assert "JE log version 8" in pycrawler("store", "ls", state).stdout
        assert file_hashes(frontier) == before
        if not frontier.name.startswith("01-"):
            continue
        # A JE 4.0 named by the user is refused in one line before anything is built.
        refused = subprocess.run([sys.executable, "-m", "pycrawler", "crawler4j", "import", frontier, "--into",
                                  tmp_path / "refused"], cwd=ROOT, capture_output=True, text=True, timeout=180,
                                 env=with_je(TARGET / "je" / "je-4.0.92.jar"))
        assert (refused.returncode, refused.stderr.count("\n")) == (3, 1), refused.stderr
        assert "has no EVICT_LN" in refused.stderr and "Traceback" not in refused.stderr
        assert not list(tmp_path.glob("refused*"))
        assert file_hashes(frontier) == before


def a_store_of_log_version(folder: Path, version: int) -> Path:
    """A folder whose one .jdb file has a JE file header naming ``version``."""
    folder.mkdir()
    item = bytes(8) + struct.pack("<i", version)
    (folder / "00000000.jdb").write_bytes(struct.pack("<IBBII", 0, 0x19, 0, 0, len(item)) + item)
    return folder


def test_bad_input_gets_one_line_and_exit_2(shared, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(next((shared / "wildje").glob("08-*")), other)   # a JE 5 store of another program
    other.chmod(0o755)
    cases = {
        tmp_path / "nowhere": "is not a crawler4j frontier: it does not exist",
        tmp_path: "it holds no JE log files (.jdb)",
        other: "is a JE environment but not a crawler4j frontier: it has no DocIDs and PendingURLsDB database",
    }
    for folder, message in cases.items():
        done = pycrawler("crawler4j", "inspect", folder)
        assert (done.returncode, done.stderr.count("\n")) == (2, 1), (folder, done.stderr)
        assert message in done.stderr and "Traceback" not in done.stderr
    # A log no known JE reads is a matter of what is installed (exit 3), named in one line.
    future = pycrawler("crawler4j", "inspect", a_store_of_log_version(tmp_path / "future", 99))
    assert (future.returncode, future.stderr.count("\n")) == (3, 1), future.stderr
    assert "has JE log version 99, written by a JE newer than 18.3" in future.stderr
    refused = pycrawler("crawler4j", "export", other)
    assert refused.returncode == 2 and "--pending" in refused.stderr
