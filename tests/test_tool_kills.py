"""``heritrix import``, ``crawler4j import``, ``store migrate`` and ``store load`` killed -9 at
each of their failpoints (:mod:`pycrawler.failpoints`), then run again as a user would.

The contract: the command run again after the kill ends as an uninterrupted run ends (its
target's databases equal record for record, its other files byte for byte), or, once the
kill came after the target was whole, refuses in one line and leaves it whole; between the
kill and the second run, nothing at the target looks like a finished result (an import or a
migration builds ``DIR.part`` and renames it into place last: :mod:`pycrawler.whole_folder`).
Each command is killed at the first hit of each of its points and at a later hit where a
run passes a point more than once (a batch after the first).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, with_je
from heritrix_stores import Queued, write_h1
from test_crawler4j import Script, write_frontier, writers  # noqa: F401 (writers: a fixture)

from pycrawler.atomic_write import PARTIAL_SUFFIX
from pycrawler.errors import BadInput
from pycrawler.failpoints import ARM_VARIABLE, POINTS
from pycrawler.frontier.pending_records import NORMAL
from pycrawler.whole_folder import building

BATCH_URLS = 4096  # heritrix.export.DECODE_BATCH and crawler4j.frontier.BATCH: more, for a second batch
LOAD_BATCH = 10_000  # cli.store.LOAD_BATCH_RECORDS

_RUN_THEN_READ = """
import json, sys
from cli_runs import run
from pycrawler import store
argv, target = json.loads(sys.argv[1]), sys.argv[2]
[result] = run([argv])
result["databases"] = {}
with store.open(target, read_only=True) as env:
    for name in env.database_names():
        db = env.open_database(name)
        result["databases"][name] = [[key.hex(), value.hex()] for key, value in db.items()]
        db.close()
json.dump(result, sys.stdout)
"""


def command_env(failpoint: str | None = None) -> dict[str, str]:
    """The environment of every process here: no JE named, so each command runs on the JE the
    build chooses for its input (whatever JE leg the tests run in), armed with ``failpoint``."""
    environment = {name: value for name, value in with_je(None).items() if name != ARM_VARIABLE}
    return environment | ({ARM_VARIABLE: failpoint} if failpoint else {})


def pycrawler(*args, failpoint: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, env=command_env(failpoint), timeout=300)


def run_then_read(command: list, target: Path) -> tuple[dict, dict[str, object]]:
    """Run the pycrawler ``command``, then read what ``target`` holds for its user: every JE
    database's records and every other file's bytes (JE's own lock and info files left out).
    One process for both, so one JVM start: the records are read by the JE the command ran on.
    Returns (exit, stdout, stderr of the command; the contents)."""
    done = subprocess.run([sys.executable, "-c", _RUN_THEN_READ, json.dumps(list(map(str, command))), str(target)],
                          cwd=ROOT / "tests", capture_output=True, text=True, env=command_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    files = {str(path.relative_to(target)): path.read_bytes() for path in sorted(target.rglob("*"))
             if path.is_file() and path.suffix != ".jdb" and not path.name.startswith("je.")}
    return result, {"databases": result.pop("databases"), "files": files}


def uninterrupted_result(command: list, target: Path) -> dict[str, object]:
    """What ``command`` leaves at ``target`` run without a kill."""
    result, contents = run_then_read(command, target)
    assert result["exit"] == 0, result["stderr"]
    return contents


def partial(target: Path) -> Path:
    return target.with_name(target.name + PARTIAL_SUFFIX)


def assert_killed(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == -signal.SIGKILL, f"not killed at its failpoint: exit {done.returncode}\n{done.stderr}"


def kill_then_rerun(command: list, target: Path, failpoint: str, uninterrupted: dict) -> None:
    """Kill ``command`` (which builds ``target``) at ``failpoint``, check what is left, run it again."""
    assert failpoint.partition(":")[0] in POINTS
    assert_killed(pycrawler(*command, failpoint=failpoint))
    whole = failpoint.startswith("folder.build.renamed")
    if not whole:  # nothing there to take for a result, only DIR.part
        assert not target.exists() and partial(target).is_dir()
    again, contents = run_then_read(command, target)
    if whole:  # a second run is refused, in one line
        assert again["exit"] == 2 and again["stderr"].count("\n") == 1, again["stderr"]
        assert "is not an empty folder" in again["stderr"]
    else:  # the second run cleared DIR.part and started over
        assert again["exit"] == 0, again["stderr"]
    assert not partial(target).exists()
    assert contents == uninterrupted


def test_a_folder_appears_whole_and_a_build_under_way_is_not_cleared_by_a_second_one(tmp_path):
    target = tmp_path / "new"
    with building(target, "import") as build:
        (build.path / "half").write_text("written")
        with pytest.raises(BadInput, match="being written by another import"), building(target, "import"):
            pass
        assert (build.path / "half").exists() and not target.exists()
    assert (target / "half").read_text() == "written" and not partial(target).exists()

    left = tmp_path / "left"  # what a killed build leaves: the next one starts from nothing
    partial(left).mkdir()
    (partial(left) / "stale").write_text("a dead build's")
    with building(left, "import") as build:
        assert list(build.path.iterdir()) == []

    failing = tmp_path / "failing"
    with pytest.raises(ZeroDivisionError), building(failing, "import") as build:
        (build.path / "half").write_text("written")
        raise ZeroDivisionError("a failure half-way through the build")
    assert not failing.exists() and not partial(failing).exists()


# -- heritrix import ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def heritrix_job(tmp_path_factory) -> tuple[Path, dict]:
    """A Heritrix 1.14 state with two batches of pending URLs over three queues, and the folder
    an uninterrupted import makes of it."""
    folder = tmp_path_factory.mktemp("heritrix")
    urls = [Queued(f"host{i % 3}.example", f"http://host{i % 3}.example/p{i}", None, "", NORMAL, 1, i + 1, False)
            for i in range(BATCH_URLS + 50)]
    write_h1(folder / "state", urls, [u.uri for u in urls[:100]])
    target = folder / "uninterrupted"
    command = ["heritrix", "import", folder / "state", "--into", target]
    return folder / "state", uninterrupted_result(command, target)


@pytest.mark.parametrize("failpoint", ["import.pending.restored", "import.pending.restored:2", "import.seen.added",
                                       "folder.build.written", "folder.build.renamed"])
def test_a_killed_heritrix_import_run_again_ends_as_an_uninterrupted_one(heritrix_job, tmp_path, failpoint):
    state, uninterrupted = heritrix_job
    target = tmp_path / "imported"
    kill_then_rerun(["heritrix", "import", state, "--into", target], target, failpoint, uninterrupted)


# -- crawler4j import -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def crawler4j_frontier(writers, tmp_path_factory) -> tuple[Path, dict]:  # noqa: F811 (writers: the fixture)
    """A crawler4j 4.2 frontier with two batches of pending URLs and of DocIDs, and the folder an
    uninterrupted import makes of it."""
    folder = tmp_path_factory.mktemp("crawler4j")
    script = Script()
    seed = script.schedule("http://a.example/", None, 0)
    script.take(1)
    script.finish(1)
    for i in range(BATCH_URLS + 50):
        script.schedule(f"http://{'ab'[i % 2]}.example/p{i}", seed, 1)
    frontier = write_frontier(writers["4.2"], folder / "crawl" / "frontier", script, True)
    target = folder / "uninterrupted"
    return frontier, uninterrupted_result(["crawler4j", "import", frontier, "--into", target], target)


@pytest.mark.parametrize("failpoint", ["import.pending.restored", "import.pending.restored:2", "import.seen.added",
                                       "import.seen.added:2", "folder.build.written", "folder.build.renamed"])
def test_a_killed_crawler4j_import_run_again_ends_as_an_uninterrupted_one(crawler4j_frontier, tmp_path, failpoint):
    frontier, uninterrupted = crawler4j_frontier
    target = tmp_path / "imported"
    kill_then_rerun(["crawler4j", "import", frontier, "--into", target], target, failpoint, uninterrupted)


# -- store migrate --------------------------------------------------------------------------------

_WRITE_STORE = """
import sys
from pycrawler.store import Environment
with Environment(sys.argv[1], create=True) as env:
    env.open_database("plain", create=True).put_many([b"k%05d" % i for i in range(300)],
                                                     [b"v" * (i % 7) for i in range(300)])
    env.open_database("dups", create=True, sorted_duplicates=True).put_many([b"a", b"a", b"b"], [b"1", b"2", b"3"])
"""


@pytest.fixture(scope="module")
def je_store(tmp_path_factory) -> tuple[Path, dict]:
    """A JE store of two databases (one with sorted duplicates), and its copy by an
    uninterrupted ``store migrate --to 3``."""
    folder = tmp_path_factory.mktemp("migrate")
    done = subprocess.run([sys.executable, "-c", _WRITE_STORE, str(folder / "source")], cwd=ROOT,
                          capture_output=True, text=True, env=command_env(), timeout=300)
    assert done.returncode == 0, done.stderr
    target = folder / "uninterrupted"
    command = ["store", "migrate", folder / "source", target, "--to", "3"]
    return folder / "source", uninterrupted_result(command, target)


@pytest.mark.parametrize("failpoint", ["folder.build.written", "folder.build.renamed"])
def test_a_killed_store_migrate_run_again_ends_as_an_uninterrupted_one(je_store, tmp_path, failpoint):
    source, uninterrupted = je_store
    target = tmp_path / "copy"
    kill_then_rerun(["store", "migrate", source, target, "--to", "3"], target, failpoint, uninterrupted)


@pytest.mark.parametrize("failpoint", ["store.migrate.committed", "store.migrate.committed:2"])
def test_a_migration_whose_writer_is_killed_fails_in_one_line_and_leaves_nothing(je_store, tmp_path, failpoint):
    """The writer (a child process on the target's JE) dies between two databases' commits: the
    command says so in one line and removes what it wrote; run again, it copies everything."""
    source, uninterrupted = je_store
    target = tmp_path / "copy"
    failed = pycrawler("store", "migrate", source, target, "--to", "3", failpoint=failpoint)
    assert failed.returncode == 1 and failed.stderr.count("\n") == 1
    assert "migration failed writing" in failed.stderr and "killed by SIGKILL" in failed.stderr
    assert not target.exists() and not partial(target).exists()
    again, contents = run_then_read(["store", "migrate", source, target, "--to", "3"], target)
    assert again["exit"] == 0, again["stderr"]
    assert contents == uninterrupted


# -- store load -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dump_file(tmp_path_factory) -> tuple[Path, dict]:
    """A DbDump file of a sorted-duplicates database, two load batches long (every key twice),
    and the store an uninterrupted ``store load`` makes of it."""
    from pycrawler.store.dbdump import DbDumpWriter

    folder = tmp_path_factory.mktemp("load")
    records = sorted((b"key%06d" % (i // 2), b"value%d" % i) for i in range(LOAD_BATCH + 500))
    with open(folder / "records.dump", "wb") as out, DbDumpWriter(out, database="db", dupsort=True) as writer:
        writer.write_many(records)
    target = folder / "uninterrupted"
    command = ["store", "load", target, folder / "records.dump"]
    return folder / "records.dump", uninterrupted_result(command, target)


@pytest.mark.parametrize("failpoint", ["store.load.committed", "store.load.committed:2"])
def test_a_killed_store_load_run_again_ends_as_an_uninterrupted_one(dump_file, tmp_path, failpoint):
    """A load adds to a store, so it has no folder to build aside: what it committed before the
    kill stays, and the same load again puts every record again, each held once."""
    records, uninterrupted = dump_file
    target = tmp_path / "store"
    assert_killed(pycrawler("store", "load", target, records, failpoint=failpoint))
    again, contents = run_then_read(["store", "load", target, records], target)
    assert again["exit"] == 0, again["stderr"]
    assert contents == uninterrupted
