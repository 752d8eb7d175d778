"""``pycrawler heritrix inspect|seen|export|import`` as a user runs them (in subprocesses):
output formats, the one-line errors and their exit codes."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys

import numpy as np
import pytest
from conftest import with_je
from gateways import Server
from heritrix_stores import Holder, crawl, early_crawl_uri, queue_order, seen_keys, write_h1
from java_programs import LEG_JE_VERSION, LEG_LOG_VERSION

from pycrawler.frontier.pending_records import decode_entry, decode_key
from pycrawler.frontier.workqueues import WorkQueueFrontier
from pycrawler.heritrix import canonicalize, create_key
from pycrawler.seen.drum import DrumVisited
from pycrawler.store import Environment

URLS = crawl(24)
SEEN = [u.uri for u in URLS[::2]]


def pycrawler(*args, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], input=stdin,
                          capture_output=True, text=True, encoding="utf-8", timeout=120, env=env)


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    path = tmp_path_factory.mktemp("job") / "state"
    write_h1(path, URLS, SEEN)
    return path


def one_line_error(done: subprocess.CompletedProcess, code: int, *needles: str) -> None:
    assert done.returncode == code, done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in done.stderr


def test_inspect_shows_versions_databases_queues_and_seen(state):
    done = pycrawler("heritrix", "inspect", state, "--top", "2")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert f"Heritrix 1 crawl state, JE log version {LEG_LOG_VERSION}, read with JE {LEG_JE_VERSION}" in out
    assert f"pending: {len(URLS)} URLs in 4 queues" in out
    assert "... 2 more queues" in out and f"seen: {len(SEEN)} URL keys" in out
    for name in ("pending", "alreadySeenUrl", "classCatalog"):
        assert f"  {name}\n" in out


def test_seen_answers_in_input_order_with_key_and_canonical_form(state):
    asked = [u.uri for u in URLS[:6]]
    done = pycrawler("heritrix", "seen", state, *asked)
    assert done.returncode == 0, done.stderr
    lines = [line.split("\t") for line in done.stdout.splitlines()]
    assert lines == [["seen" if i % 2 == 0 else "new", f"{create_key(canonicalize(u)):016x}", canonicalize(u), u]
                     for i, u in enumerate(asked)]


def test_seen_reads_urls_from_stdin_and_keys_them_as_given_with_no_canon(state):
    uri = URLS[0].uri  # upper-case host and a session id: its canonical form differs
    done = pycrawler("heritrix", "seen", state, stdin=f"{uri}\n\n{URLS[2].uri}\r\n")
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == ["seen", "seen"]
    raw = pycrawler("heritrix", "seen", state, "--no-canon", stdin=f"{uri}\n{canonicalize(uri)}\n")
    assert [line.split("\t")[:3] for line in raw.stdout.splitlines()] == [
        ["new", f"{create_key(uri):016x}", uri], ["seen", f"{create_key(canonicalize(uri)):016x}", canonicalize(uri)]]


def test_export_writes_pending_in_queue_order_and_sorted_raw_seen_keys(state, tmp_path):
    done = pycrawler("heritrix", "export", state, "--pending", tmp_path / "p.jsonl", "--seen", tmp_path / "s.u64")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "p.jsonl").read_text(encoding="utf-8")
    assert '"queue": "b\u00fccher.example"' in text  # non-ASCII text as UTF-8, not escaped
    rows = [json.loads(line) for line in text.splitlines()]
    assert [(r["queue"], r["uri"], r["via"], r["pathFromSeed"]) for r in rows] == \
        [(u.queue, u.uri, u.via, u.path_from_seed) for u in queue_order(URLS)]
    assert np.fromfile(tmp_path / "s.u64", dtype=">u8").tolist() == sorted(seen_keys(SEEN))
    hexed = pycrawler("heritrix", "export", state, "--seen", tmp_path / "s.txt", "--seen-format", "hex")
    assert hexed.returncode == 0
    assert (tmp_path / "s.txt").read_text().split() == [f"{k:016x}" for k in sorted(seen_keys(SEEN))]


def test_a_crawl_uri_without_write_object_of_its_own_exports_and_imports(tmp_path):
    """Earlier Heritrix 1 releases: CrawlURI writes no data of its own, so CandidateURI's
    (the URI, via, attribute list) is the only custom data in a value."""
    from pycrawler.heritrix.pending import H1_CRAWL_URI
    from pycrawler.heritrix.state import HeritrixState
    from pycrawler.store.catalog import ClassCatalog
    from pycrawler.store.serial.stream import SC_WRITE_METHOD

    state = tmp_path / "early" / "state"
    write_h1(state, URLS, SEEN, early_classes=early_crawl_uri(tmp_path / "classes"))
    with HeritrixState.open(state) as opened:
        catalog = ClassCatalog(opened.env.open_database("classCatalog"))
        assert not catalog.descriptor(catalog.class_id(H1_CRAWL_URI)).flags & SC_WRITE_METHOD
    done = pycrawler("heritrix", "export", state, "--pending", tmp_path / "p.jsonl")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [(r["uri"], r["via"], r["alist"], r["outLinks"], r["pathFromSeed"], r["holderCost"]) for r in rows] == \
        [(u.uri, u.via, None, None, u.path_from_seed, u.cost) for u in queue_order(URLS)]
    imported = pycrawler("heritrix", "import", state, "--into", tmp_path / "py")
    assert imported.returncode == 0, imported.stderr
    manifest = json.loads((tmp_path / "py" / "heritrix-import.json").read_text())
    assert (manifest["frontier"]["urls"], manifest["seen"]["keys"]) == (len(URLS), len(SEEN))
    with WorkQueueFrontier.open(tmp_path / "py", read_only=True) as frontier:
        assert sorted(decode_entry(v).ori_url for v in frontier.pending.values() if v) == sorted(u.uri for u in URLS)


def test_import_fills_a_work_queue_frontier_in_place_and_a_seen_table_keyed_as_heritrix(state, tmp_path):
    done = pycrawler("heritrix", "import", state, "--into", tmp_path / "py")
    assert done.returncode == 0, done.stderr
    assert "continue with: pycrawler crawl SEED... --state" in done.stdout
    manifest = json.loads((tmp_path / "py" / "heritrix-import.json").read_text())
    assert (manifest["frontier"]["urls"], manifest["seen"]["keys"]) == (len(URLS), len(SEEN))
    with WorkQueueFrontier.open(tmp_path / "py", read_only=True) as frontier:
        assert frontier.seen_key.name == "heritrix"
        places = [(decode_entry(v).ori_url, decode_entry(v).layer, *decode_key(k)[1:])
                  for k, v in frontier.pending.items() if v]
    # Every URL at its Heritrix place: directive, precedence (the holder cost), ordinal.
    assert sorted(places) == sorted((u.uri, len(u.path_from_seed), u.directive, u.cost, u.ordinal) for u in URLS)
    with Environment(tmp_path / "py") as env, DrumVisited(tmp_path / "py" / "drum", env=env) as table:
        keys = np.array([create_key(canonicalize(u.uri)) for u in URLS], dtype=np.uint64)
        assert table.contains_many(keys).tolist() == [i % 2 == 0 for i in range(len(URLS))]
    again = pycrawler("heritrix", "import", state, "--into", tmp_path / "py")
    one_line_error(again, 2, "is not an empty folder: import into a new or empty folder")


def test_a_heritrix_3_store_opens_with_no_setting_and_is_left_untouched(shared, tmp_path):
    shutil.copytree(shared / "fixtures" / "je7-heritrix-layout", tmp_path / "h3")
    done = pycrawler("heritrix", "inspect", tmp_path / "h3")
    assert done.returncode == 0, done.stderr
    assert "Heritrix 3 crawl state, JE log version 15, read with JE 18.3.12" in done.stdout
    assert sorted(p.name for p in (tmp_path / "h3").iterdir()) == ["00000000.jdb", "je.config.csv", "je.stat.csv"]


def test_bad_input_is_one_line_and_exit_2(state, tmp_path):
    one_line_error(pycrawler("heritrix", "inspect", tmp_path / "nowhere"), 2, "does not exist")
    one_line_error(pycrawler("heritrix", "export", state), 2, "--pending FILE and/or --seen FILE")
    one_line_error(pycrawler("heritrix", "inspect", state, "--checkpoint", "latest"), 2, "has no checkpoints")
    debug = pycrawler("--debug", "heritrix", "inspect", tmp_path / "nowhere")
    assert debug.returncode == 2 and "Traceback" in debug.stderr


def test_a_running_crawl_is_refused_in_one_line(state, tmp_path):
    shutil.copytree(state, tmp_path / "live")
    with Holder(tmp_path / "live") as crawler:
        one_line_error(pycrawler("heritrix", "inspect", tmp_path / "live"), 4,
                       f"process {crawler.pid} holds its JE write lock", "--checkpoint latest")


# -- through a served copy's address ------------------------------------------------------------
def outputs(target, tmp_path, name: str, env: dict | None = None) -> dict[str, bytes | str]:
    """What inspect, seen and export give for ``target`` (a folder or an address)."""
    asked = "".join(f"{u.uri}\n" for u in URLS[:8]) + "http://never.example/\n"
    files = tmp_path / name
    files.mkdir()
    inspect = pycrawler("heritrix", "inspect", target, env=env)
    seen = pycrawler("heritrix", "seen", target, stdin=asked, env=env)
    export = pycrawler("heritrix", "export", target, "--pending", files / "p.jsonl", "--seen", files / "s.hex",
                       "--seen-format", "hex", env=env)
    for done in (inspect, seen, export):
        assert done.returncode == 0, done.stderr
    return {"inspect": inspect.stdout, "seen": seen.stdout, "pending": (files / "p.jsonl").read_bytes(),
            "seen keys": (files / "s.hex").read_bytes()}


def assert_same_as_the_folder(served: dict, local: dict, server: Server, folder) -> None:
    """Byte for byte, but for inspect's first line, which names what it read."""
    first, _, rest = served.pop("inspect").partition("\n")
    local_first, _, local_rest = local.pop("inspect").partition("\n")
    assert rest == local_rest and served == local
    assert first == local_first.replace(str(folder), server.address).replace(
        "(live state (no writer))", f"(served from {server.folder.resolve()})")


def file_states(path) -> dict[str, tuple[str, int]]:
    return {f.name: (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns)
            for f in sorted(path.iterdir()) if f.is_file()}


def test_inspect_seen_and_export_through_an_address_give_the_folders_output(state, tmp_path, runtime):
    shutil.copytree(state, tmp_path / "copy")
    with Server(tmp_path / "copy") as server:
        served = outputs(server.address, tmp_path, "served")
        one_line_error(pycrawler("heritrix", "inspect", server.address, "--checkpoint", "latest"), 2,
                       "a checkpoint from the state folder's files", "give the folder itself")
    assert "pending: 24 URLs in 4 queues" in served["inspect"] and served["pending"].count(b"\n") == len(URLS)
    assert_same_as_the_folder(served, outputs(state, tmp_path, "local"), server, state)


def test_a_state_served_read_only_reads_the_same_and_keeps_every_byte(state, tmp_path, runtime):
    before = file_states(state)
    with Server(state, "--read-only") as server:
        served = outputs(server.address, tmp_path, "served")
        one_line_error(pycrawler("frontier", "put", server.address, "http://example.com/"), 2, "read-only")
    assert file_states(state) == before
    assert_same_as_the_folder(served, outputs(state, tmp_path, "local"), server, state)


def test_a_heritrix_3_store_served_by_je_18_reads_the_same_through_its_address(shared, tmp_path, runtime):
    """The server chooses JE 18 for the fixture's log version by itself and serves it read-only,
    leaving its bytes as they were; this side reads through the address on any JE."""
    fixture = shared / "fixtures" / "je7-heritrix-layout"
    before = file_states(fixture)
    with Server(fixture, "--read-only", env=with_je(None)) as server:
        served = outputs(server.address, tmp_path, "served")
    assert file_states(fixture) == before
    assert "read with JE 18.3.12" in served["inspect"]
    assert_same_as_the_folder(served, outputs(fixture, tmp_path, "local"), server, fixture)


def databases(path) -> dict[str, tuple]:
    """Per database: sorted duplicates, stored key prefixing, every record."""

    with Environment(path, read_only=True) as env:
        prefixing = env.stored_key_prefixing()
        return {name: (db.sorted_duplicates, prefixing[name], list(db.items()))
                for name in env.database_names() for db in [env.open_database(name)]}


def test_migrate_from_a_served_state_equals_migrate_from_its_folder(state, tmp_path, runtime):
    to = LEG_JE_VERSION.split(".")[0]  # a JE format this process reads back
    shutil.copytree(state, tmp_path / "copy")
    with Server(tmp_path / "copy") as server:
        migrated = pycrawler("store", "migrate", server.address, tmp_path / "from-served", "--to", to)
    assert migrated.returncode == 0, migrated.stderr
    local = pycrawler("store", "migrate", state, tmp_path / "from-folder", "--to", to)
    assert local.returncode == 0, local.stderr
    assert migrated.stdout.replace("from-served", "from-folder") == local.stdout
    copied = databases(tmp_path / "from-served")
    assert copied == databases(tmp_path / "from-folder") and len(copied["pending"][2]) == len(URLS) + 4
