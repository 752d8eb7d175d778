"""The real Heritrix 3.13.0 crawls a loopback site; pycrawler reads, continues and hands back its crawl.

One crawl for the module (tests/real_heritrix.py drives Heritrix): Heritrix crawls
:class:`HeritrixSite` (four hosts, robots.txt disallowing a folder, redirects, 404s, a deep chain,
alias spellings), is paused and checkpointed twice (``cp1``, then ``cp2``), its own view of the
frontier read at each (every pending CrawlURI and every ``alreadySeenUrl`` key, from its
scripting console, and its REST report), and is killed with SIGKILL while paused. Then:

- ``heritrix inspect``, ``export`` (from the journal, and from the values with Heritrix's own
  classes), ``seen`` and ``import`` give Heritrix's view of the live state and of each
  checkpoint, with the journal in the forms Heritrix leaves it: rotated parts and an empty
  current file (after a checkpoint), and a current file cut short (as a kill leaves it);
- pycrawler continues the imported crawl part of the way (``--max-pages``); from there, once
  pycrawler finishes it, and once ``heritrix journal`` hands it back to a fresh Heritrix
  (``importURIs``), which finishes it: either way, across the runs, every URL of the site's
  ground truth fetched exactly once, and nothing robots.txt disallows.

Heritrix writes with its own JE 7.5.11 and pycrawler reads its log version 15 with JE 18 (or
Heritrix's lib/) whatever the test leg, so the module runs in one leg (tests/conftest.py ANY_JE).
"""

from __future__ import annotations

import collections
import gzip
import json
import os
import re
import shutil
import zlib
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import HERITRIX_HOME, missing
from real_heritrix import Heritrix, HeritrixSite, delta, ok

ROOT = Path(__file__).resolve().parent.parent
HOSTS, PAGES = 4, 120
FIRST_STOP, SECOND_STOP = 150, 300   # URIs Heritrix has done at cp1 and at cp2
PYCRAWLER_PAGES = 100                # what pycrawler's first continuation fetches before it stops


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """Heritrix's crawl, stopped at two checkpoints and killed; its views and the site's counts."""
    if not (HERITRIX_HOME / "lib" / "heritrix-engine-3.13.0.jar").is_file():
        missing("Heritrix 3.13.0 is not in target/heritrix-3.13.0 (scripts/setup unpacks it)")
    folder = tmp_path_factory.mktemp("heritrix")
    with HeritrixSite(HOSTS, PAGES) as site:
        (folder / "run1").mkdir()
        heritrix = Heritrix(folder / "run1").start()
        try:
            heritrix.create_job("job", site.seeds, threads=5)
            heritrix.launch("job")
            heritrix.wait_done("job", FIRST_STOP)
            heritrix.pause("job")
            cp1 = heritrix.checkpoint("job")
            view1 = heritrix.frontier_view("job")
            heritrix.action("job", "unpause")
            heritrix.wait_done("job", SECOND_STOP)
            heritrix.pause("job")
            cp2 = heritrix.checkpoint("job")
            view2 = heritrix.frontier_view("job")
            paths = heritrix.job_paths("job")
        finally:
            heritrix.kill()
        yield SimpleNamespace(site=site, folder=folder, cp1=cp1, cp2=cp2, view1=view1, view2=view2,
                              run1=site.fetch_counts(), **paths)


def inspect_counts(text: str) -> tuple[int, dict[str, int], int]:
    """(pending, URLs per queue, seen) from ``heritrix inspect``'s output."""
    pending = int(re.search(r"^pending: (\d+) URLs", text, re.M).group(1))
    seen = int(re.search(r"^seen: (\d+) URL keys", text, re.M).group(1))
    per_queue = {m.group(2): int(m.group(1)) for m in re.finditer(r"^\s+(\d+)\s+\S+\s+\S+\s+(\S+#\d+)$", text, re.M)}
    return pending, per_queue, seen


def heritrix_rows(view) -> list[tuple]:
    return [(p.queue, p.directive, p.precedence, p.ordinal, p.uri, p.via or None, p.path_from_seed)
            for p in view.pending]


def exported_rows(path: Path) -> list[tuple]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["queue"], r["directive"], r["precedence"], r["ordinal"], r["uri"], r.get("via"), r["pathFromSeed"])
            for r in rows]


def readings(crawl):
    """(state argument list, Heritrix's view of it, the name it is reported by): the live state
    (which the kill left as cp2 had it) and the first checkpoint."""
    return [([crawl.state], crawl.view2, "live"), ([crawl.state, "--checkpoint", crawl.cp1], crawl.view1, "cp1")]


def test_heritrix_crawled_the_site_as_its_ground_truth_says_and_its_two_views_agree(crawl):
    """The crawl the rest is checked against: robots.txt obeyed, nothing fetched twice, only
    pages of the site; Heritrix's REST report counts what its scripting console lists."""
    assert crawl.site.disallowed_requests() == []
    assert set(crawl.run1.values()) == {1} and set(crawl.run1) <= crawl.site.expected()
    for view in (crawl.view1, crawl.view2):
        assert view.report["uriTotalsReport"]["queuedUriCount"] == len(view.pending) > 0
    assert len(crawl.view1.seen) < len(crawl.view2.seen)
    assert len(crawl.run1) == crawl.view2.report["uriTotalsReport"]["downloadedUriCount"] - HOSTS  # robots.txt


def test_inspect_gives_heritrixs_pending_per_queue_and_seen_counts(crawl):
    for state, view, name in readings(crawl):
        pending, per_queue, seen = inspect_counts(ok("heritrix", "inspect", *state, "--top", "100").stdout)
        assert (pending, per_queue, seen) == (len(view.pending), view.per_queue(), len(view.seen)), name


def test_export_from_the_journal_equals_heritrixs_view_field_for_field_and_in_order(crawl, tmp_path):
    """The journal as Heritrix 3.13 leaves it after a checkpoint: its lines in the rotated parts
    ``frontier.recover.gz.cp0000N-...``, the current file at 0 bytes (it was refused as "not
    gzip" before). With ``--checkpoint`` the parts written after it are named as such. The
    seen keys exported are Heritrix's ``alreadySeenUrl`` keys."""
    assert (crawl.logs / "frontier.recover.gz").stat().st_size == 0
    assert len(list(crawl.logs.glob("frontier.recover.gz.cp0000*"))) == 2
    for state, view, name in readings(crawl):
        out, seen = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.seen"
        done = ok("heritrix", "export", *state, "--recover-log", crawl.logs, "--pending", out,
                  "--seen", seen, "--seen-format", "hex")
        assert exported_rows(out) == heritrix_rows(view), name
        assert [int(line, 16) for line in seen.read_text().split()] == sorted(view.seen), name
        assert f"{len(view.pending)} placed by the pending keys (heritrix-host queues)" in done.stderr
        assert " 0 not; 0 lines skipped" in done.stderr
        notes = done.stderr
        if name == "live":
            assert "frontier.recover.gz: empty (0 bytes" in notes
        if name == "cp1":
            assert (f"not read (written after checkpoint {crawl.cp1}, the state read): "
                    f"{crawl.logs / ('frontier.recover.gz.' + crawl.cp2)}, {crawl.logs / 'frontier.recover.gz'}") in notes
        assert "not the run this state continues" not in notes


def test_export_with_heritrixs_own_classes_equals_its_view(crawl, tmp_path):
    """With Heritrix's lib/ on the class path its Kryo values are decoded by its own classes."""
    env = os.environ | {"PYCRAWLER_CLASSPATH": str(HERITRIX_HOME / "lib")}
    ok("heritrix", "export", crawl.state, "--pending", tmp_path / "live.jsonl", env=env)
    assert exported_rows(tmp_path / "live.jsonl") == heritrix_rows(crawl.view2)


def test_seen_keys_every_spelling_of_what_heritrix_saw_as_heritrix_did(crawl):
    """Every URL Heritrix fetched or queued, as fetched and with the capital scheme some links
    spell it with, is ``seen`` under a key of Heritrix's alreadySeenUrl; the site's URLs it
    never discovered are ``new``, under keys it does not hold. (A ``#fragment`` Heritrix drops
    when it parses a link, before its canonicalisation rules; ``heritrix seen`` keys the string
    given to the rules, so it is not given one here.)"""
    known = set(crawl.run1) | {p.uri for p in crawl.view2.pending}
    spellings = sorted({*known, *("HTTP" + u[4:] for u in known)})
    undiscovered = sorted(crawl.site.expected() - known)
    done = ok("heritrix", "seen", crawl.state, stdin="\n".join(spellings + undiscovered) + "\n")
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    assert [line[3] for line in lines] == spellings + undiscovered
    heritrix_seen = set(crawl.view2.seen)
    for verdict, key, _canonical, url in lines:
        assert (verdict == "seen") == (url in spellings) == (int(key, 16) in heritrix_seen), url
    assert len({line[1] for line in lines if line[0] == "seen"}) == len(known)
    assert len(undiscovered) > 0


def test_a_journal_cut_short_by_a_kill_is_read_up_to_the_cut_and_said_so(crawl, tmp_path):
    """The journal as a kill in the middle of a write leaves it: the current file a gzip stream
    cut short. Read against the checkpoint before it, it is a part written after the checkpoint
    (not read: Heritrix's view of cp1 exactly); read against the live state, every whole line
    before the cut is read, one line says where it was cut, and every URL placed is at
    Heritrix's place for it."""
    logs = tmp_path / "logs"
    logs.mkdir()
    first = crawl.logs / f"frontier.recover.gz.{crawl.cp1}"
    shutil.copy(first, logs / first.name)
    second = (crawl.logs / f"frontier.recover.gz.{crawl.cp2}").read_bytes()
    (logs / "frontier.recover.gz").write_bytes(second[:len(second) * 2 // 3])
    at_cp1 = ok("heritrix", "export", crawl.state, "--checkpoint", crawl.cp1, "--recover-log", logs,
                "--pending", tmp_path / "cp1.jsonl")
    assert exported_rows(tmp_path / "cp1.jsonl") == heritrix_rows(crawl.view1)
    assert f"not read (written after checkpoint {crawl.cp1}, the state read): {logs / 'frontier.recover.gz'}" \
        in at_cp1.stderr
    live = ok("heritrix", "export", crawl.state, "--recover-log", logs, "--pending", tmp_path / "live.jsonl")
    cut_notes = [line for line in live.stderr.splitlines() if "gzip cut short" in line]
    assert len(cut_notes) == 1 and str(logs / "frontier.recover.gz") in cut_notes[0]
    with gzip.open(first) as part:
        whole = part.read().count(b"\n")
    whole += zlib.decompressobj(31).decompress(second[:len(second) * 2 // 3]).count(b"\n")   # lines before the cut
    assert f"recover log: {whole} lines in 2 files" in live.stderr
    # A queue with lines after the cut is left by the cut journal with other URLs pending than the
    # state holds (its finishing lines are lost): it is named, and its URLs are exported unplaced,
    # as queued. A queue with no line after the cut (its host idle then) pairs up, and each of its
    # URLs is placed exactly where Heritrix has it.
    heritrix = {row[4]: row for row in heritrix_rows(crawl.view2)}
    rows = [json.loads(line) for line in (tmp_path / "live.jsonl").read_text().splitlines()]
    unpaired = set(re.findall(r"queue (\S+): \d+ pending keys, .*not paired", live.stderr))
    assert rows and unpaired
    placed = [r for r in rows if r["placed"]]
    assert all(r["queue"] in unpaired for r in rows if not r["placed"])
    assert all(r["queue"] not in unpaired for r in placed)
    assert [row for row in exported_rows(tmp_path / "live.jsonl") if row[4] in {r["uri"] for r in placed}] \
        == [heritrix[r["uri"]] for r in placed]
    assert len(unpaired | {r["queue"] for r in placed}) <= HOSTS
    still_pending = {p.uri for p in crawl.view1.pending} & set(heritrix)   # queued before cp1, never finished
    assert still_pending <= {r["uri"] for r in rows} <= set(heritrix) | set(crawl.run1)
    assert all((r["via"], r["pathFromSeed"]) == heritrix[r["uri"]][5:] for r in rows if r["uri"] in heritrix)


@pytest.fixture(scope="module")
def imported(crawl):
    """The live state imported (journal read from the logs folder), and pycrawler's first
    continuation of it, stopped after :data:`PYCRAWLER_PAGES` pages."""
    state = crawl.folder / "pycrawler"
    done = ok("heritrix", "import", crawl.state, "--recover-log", crawl.logs, "--into", state)
    before = crawl.site.fetch_counts()
    run = ok("crawl", *crawl.site.seeds, "--state", state, "--delay", "0", "--max-pages", PYCRAWLER_PAGES,
             "--no-progress")
    return SimpleNamespace(state=state, manifest=json.loads((state / "heritrix-import.json").read_text()),
                           output=done, run=run, run2=delta(crawl.site.fetch_counts(), before))


def test_import_takes_heritrixs_pending_urls_and_seen_keys(crawl, imported):
    manifest = imported.manifest
    assert manifest["frontier"]["urls"] == len(crawl.view2.pending)
    assert manifest["seen"]["keys"] == len(crawl.view2.seen)
    assert manifest["recover_log"]["placed"] == len(crawl.view2.pending) and manifest["recover_log"]["unplaced"] == 0
    assert manifest["recover_log"]["empty_files"] == [str(crawl.logs / "frontier.recover.gz")]
    # --max-pages counts URLs fetched or refused: a /private/ URL Heritrix had queued and
    # robots.txt keeps pycrawler from (2 a host at most) counts without a request.
    assert sum(imported.run2.values()) == len(imported.run2)
    assert PYCRAWLER_PAGES - 2 * HOSTS <= len(imported.run2) <= PYCRAWLER_PAGES


def test_pycrawler_finishes_the_crawl_with_every_page_fetched_once(crawl, imported, tmp_path):
    state = tmp_path / "finish"
    shutil.copytree(imported.state, state)
    before = crawl.site.fetch_counts()
    ok("crawl", *crawl.site.seeds, "--state", state, "--delay", "0", "--no-progress")
    run = delta(crawl.site.fetch_counts(), before)
    total = crawl.run1 + imported.run2 + run
    assert set(total) == crawl.site.expected()
    assert set(total.values()) == {1}, {url: n for url, n in total.items() if n > 1}
    assert crawl.site.disallowed_requests() == []


def test_heritrix_journal_goes_back_into_a_fresh_heritrix_which_finishes_the_crawl(crawl, imported, tmp_path):
    """``heritrix journal`` of pycrawler's state names the URLs pycrawler fetched and those left
    pending; the URLs Heritrix had finished come from its own journal's parts (pycrawler holds
    only their keys). A new Heritrix job with the site's hosts in scope and no seeds imports
    both with its own ``importURIs`` and finishes the crawl."""
    handback = tmp_path / "handback.recover.gz"
    ok("heritrix", "journal", imported.state, "--out", handback)
    finished = tmp_path / "heritrix-finished.recover.gz"   # Heritrix's own parts, gzip members in order
    finished.write_bytes(b"".join(p.read_bytes() for p in sorted(crawl.logs.glob("frontier.recover.gz.cp*"))))
    with gzip.open(handback, "rt") as lines:
        tags = collections.Counter(line[:2] for line in lines)
    assert tags["Fs"] + tags["Ff"] == PYCRAWLER_PAGES
    before = crawl.site.fetch_counts()
    heritrix = Heritrix(tmp_path / "run3")
    (tmp_path / "run3").mkdir()
    shutil.copy(crawl.folder / "run1" / "adhoc.keystore", tmp_path / "run3")   # its key pair takes seconds to make
    heritrix.start()
    try:
        heritrix.create_job("back", [], threads=5, scope_urls=crawl.site.seeds)
        heritrix.launch("back", unpause=False)
        heritrix.import_uris("back", finished, schedule=False)
        heritrix.import_uris("back", handback)
        heritrix.action("back", "unpause")
        report = heritrix.wait_finished("back")
    finally:
        heritrix.stop()
    run = delta(crawl.site.fetch_counts(), before)
    total = crawl.run1 + imported.run2 + run
    assert set(total) == crawl.site.expected()
    assert set(total.values()) == {1}, {url: n for url, n in total.items() if n > 1}
    assert crawl.site.disallowed_requests() == []
    assert report["uriTotalsReport"]["downloadedUriCount"] == len(run) + HOSTS   # + robots.txt


def test_the_readmes_heritrix_example_continues_the_killed_job_with_every_page_fetched_once(crawl, tmp_path):
    """README.md's "Continue a Heritrix 3 crawl", run as written on the job Heritrix left."""
    import subprocess

    from readme_examples import localised, shell_commands

    import_, continue_ = shell_commands(1)
    assert import_[:3] == ["pycrawler", "heritrix", "import"] and continue_[:2] == ["pycrawler", "crawl"]
    job = {"jobs/myjob": str(crawl.job)}
    before = crawl.site.fetch_counts()
    for argv, extra in ((import_, ()), (continue_, ("--delay", "0", "--no-progress"))):
        done = subprocess.run(localised(argv, crawl.site.seeds, extra, job), cwd=tmp_path, capture_output=True,
                              text=True, timeout=180)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    total = crawl.run1 + delta(crawl.site.fetch_counts(), before)
    assert set(total) == crawl.site.expected()
    assert set(total.values()) == {1}, {url: n for url, n in total.items() if n > 1}
    assert crawl.site.disallowed_requests() == []
