"""``pycrawler store ls|dump`` on 29 real JE environments that other programs wrote.

``../shared/wildje/`` holds them (log versions 5 to 17: crawler4j frontiers, stores of JE's
Direct Persistence Layer, class catalogs under several names, Voldemort, Titan, HypergraphDB;
see its README.md and PROVENANCE.tsv). For each, on a copy: ``store ls`` lists what JE lists;
``store dump --format dbdump`` of every database, hex and ``-p``, is byte for byte what JE's
own DbDump writes, run by the JE that reads the store (pycrawler adds a ``database=`` header
line, which DbLoad uses when given no ``-s``; it is the only difference); ``--format jsonl``
ends with exit 0 and carries every record's bytes; and no file of the copy or of the corpus
changed. The HypergraphDB store (09) needs the application's comparator classes to open:
without them every command gives one line naming the class, the fix and the store.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import SHARED, missing
from java_programs import LEG_JE

from pycrawler.jvm.je_releases import JeRelease
from pycrawler.store.dbdump import DbDumpReader
from pycrawler.store.logfile import log_version

ROOT = Path(__file__).resolve().parent.parent
CORPUS = SHARED / "wildje"
REFERENCE_SOURCE = Path(__file__).resolve().parent / "wildje" / "ReferenceDump.java"
CLI_RUNS = Path(__file__).resolve().parent / "cli_runs.py"
READING_JES = ((6, ROOT / "target" / "lib" / "je-3.3.98.jar"),
               (7, ROOT / "target" / "je" / "je-4.0.92.jar"),
               (8, ROOT / "target" / "je" / "je-5.0.73.jar"),
               (17, ROOT / "target" / "je" / "je-18.3.12.jar"))
"""The newest log version each JE reads, oldest JE first."""
NEEDS_APPLICATION_CLASSES = {"09-Kotatstu-NoSQL_HypergraphDB_API-a9ff476":
                             "org.hypergraphdb.type.javaprimitive.StringType$StringComparator"}
"""Stores whose B-trees use a comparator class of the program that wrote them, not here."""


def folders() -> list[str]:
    table = CORPUS / "PROVENANCE.tsv"
    if not table.is_file():
        return ["(corpus missing)"]
    with open(table, encoding="utf-8", newline="") as rows:
        return [row["folder"] for row in csv.DictReader(rows, delimiter="\t")]


def corpus_folder(name: str) -> Path:
    """The corpus's folder ``name``; a missing corpus fails the test."""
    folder = CORPUS / name
    if not folder.is_dir():
        missing(f"the JE corpus is not at {CORPUS} (the project's shared/ beside it)")
    return folder


def reading_je(log_version: int) -> Path:
    """The oldest JE jar here that reads stores of ``log_version``."""
    for newest, jar in READING_JES:
        if log_version <= newest:
            if not jar.is_file():
                missing(f"{jar} is not built (scripts/setup fetches it)")
            return jar
    raise AssertionError(f"no JE here reads log version {log_version}")


def chosen_je(log_version: int) -> str:
    """The JE pycrawler's commands choose for a store of ``log_version`` with no setting: this
    run's own JE (``scripts/test``'s JE 18 leg names it) when it reads the store, else the oldest
    that does."""
    leg = JeRelease.of_jar(LEG_JE[0]) if LEG_JE else None
    return leg.version if leg and leg.reads(log_version) else JeRelease.of_jar(reading_je(log_version)).version


def hashes(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (relative name) with a checksum of its bytes."""
    return {str(f.relative_to(folder)): hashlib.sha256(f.read_bytes()).hexdigest()
            for f in sorted(folder.rglob("*")) if f.is_file()}


@pytest.fixture(scope="session")
def reference_classes(tmp_path_factory):
    """ReferenceDump compiled against each JE (their setters' return types differ), on demand."""
    compiled: dict[Path, Path] = {}

    def classes_for(jar: Path) -> Path:
        if jar not in compiled:
            into = tmp_path_factory.mktemp(f"reference-{jar.stem}")
            done = subprocess.run(["javac", "-nowarn", "-cp", str(jar), "-d", str(into), str(REFERENCE_SOURCE)],
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            compiled[jar] = into
        return compiled[jar]
    return classes_for


def reference_dump(classes: Path, jar: Path, home: Path, out: Path) -> tuple[list[str], str | None]:
    """JE's own DbDump of every database (``out/N.bytevalue``, ``out/N.print``): the database
    names, and the root cause when JE cannot open the store."""
    out.mkdir()
    done = subprocess.run(["java", "-cp", os.pathsep.join([str(classes), str(jar)]), "ReferenceDump",
                           str(home), str(out)], capture_output=True, timeout=300)
    lines = done.stdout.decode("utf-8").splitlines()
    if done.returncode == 3 and lines and lines[0].startswith("error\t"):
        return [], lines[0].split("\t", 1)[1]
    assert done.returncode == 0, done.stderr.decode("utf-8", "replace")
    return lines, None


def run_cli(commands: list[list[str]]) -> list[dict]:
    """Each command's exit code, stdout and stderr, run by one process through pycrawler's
    entry point, with no JE named but this run's own."""
    done = subprocess.run([sys.executable, str(CLI_RUNS)], input=json.dumps(commands), capture_output=True,
                          text=True, encoding="utf-8", timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def without_database_line(dump: bytes) -> bytes:
    """A pycrawler dump as JE's DbDump writes it with ``-s``: the same, less ``database=``."""
    header, end, data = dump.partition(b"HEADER=END\n")
    kept = [line for line in header.splitlines(keepends=True) if not line.startswith(b"database=")]
    return b"".join(kept) + end + data


def dump_records(path: Path) -> list[tuple[str, str]]:
    with open(path, "rb") as stream:
        return [(key.hex(), value.hex()) for key, value in DbDumpReader(stream, name=str(path))]


def assert_one_clean_line(result: dict, *says: str) -> None:
    assert result["exit"] != 0
    assert result["stderr"].startswith("pycrawler: ") and result["stderr"].count("\n") == 1, result["stderr"]
    assert "Traceback" not in result["stderr"] and "\tat " not in result["stderr"]
    for text in says:
        assert text in result["stderr"], result["stderr"]


@pytest.mark.parametrize("name", folders())
def test_store_lists_and_dumps_as_jes_own_dbdump_and_keeps_every_byte(name, tmp_path, reference_classes):
    source = corpus_folder(name)
    corpus_before = hashes(source)
    jar = reading_je(log_version(source))
    reference_home, store = tmp_path / "reference-copy", tmp_path / "store"
    shutil.copytree(source, reference_home)
    shutil.copytree(source, store)
    store_before = hashes(store)
    names, cannot_open = reference_dump(reference_classes(jar), jar, reference_home, tmp_path / "reference")
    out = tmp_path / "pycrawler"
    out.mkdir()

    if name in NEEDS_APPLICATION_CLASSES:
        # JE's own DbDump cannot open it either: recovery loads every database's comparator.
        missing = NEEDS_APPLICATION_CLASSES[name]
        assert cannot_open and missing in cannot_open
        results = run_cli([["store", "ls", str(store)],
                                ["store", "dump", str(store), "--db", "any", "--format", "jsonl"],
                                ["store", "dump", str(store), "--db", "any", "--format", "dbdump"]])
        for result in results:
            assert_one_clean_line(result, missing, "PYCRAWLER_CLASSPATH", str(store))
            assert "pycrawler-read-only-" not in result["stderr"]
    else:
        assert cannot_open is None and names
        assert_lists_and_dumps_as_je(store, log_version(source), names, tmp_path / "reference", out)

    assert hashes(store) == store_before
    assert hashes(source) == corpus_before


def assert_lists_and_dumps_as_je(store: Path, version: int, names: list[str], reference: Path, out: Path) -> None:
    """``store ls`` lists ``names``; every database's ``store dump`` is JE's own in ``reference``
    (hex and ``-p``), and its jsonl carries the same records."""
    commands = [["store", "ls", str(store)]]
    for i, database in enumerate(names):
        dump = ["store", "dump", str(store), "--db", database]
        commands += [[*dump, "--format", "dbdump", "-o", f"{out}/{i}.bytevalue"],
                     [*dump, "--format", "dbdump", "-p", "-o", f"{out}/{i}.print"],
                     [*dump, "--format", "jsonl", "-o", f"{out}/{i}.jsonl"]]
    ls, *dumps = run_cli(commands)
    assert ls["exit"] == 0, ls["stderr"]
    heading, _columns, *rows = ls["stdout"].splitlines()
    plural = "s" * (len(names) != 1)
    assert heading == (f"{store}: JE log version {version}, {len(names)} database{plural}, "
                       f"read with JE {chosen_je(version)}")
    assert [re.fullmatch(r" *\d+  (.*)", row).group(1) for row in rows] == names
    for i, database in enumerate(names):
        bytevalue, printable, jsonl = dumps[3 * i:3 * i + 3]
        for result in (bytevalue, printable, jsonl):
            assert result["exit"] == 0, (database, result["stderr"])
        for form in ("bytevalue", "print"):
            ours = without_database_line((out / f"{i}.{form}").read_bytes())
            assert ours == (reference / f"{i}.{form}").read_bytes(), (database, form)
        lines = [json.loads(line) for line in io.StringIO((out / f"{i}.jsonl").read_text(encoding="utf-8"))]
        assert [(r["key_hex"], r["value_hex"]) for r in lines] == dump_records(out / f"{i}.bytevalue"), database


def test_an_empty_newest_log_file_is_passed_over_as_je_passes_it_over(tmp_path, reference_classes):
    """A JE killed right after it created its next log file leaves it empty; JE's recovery ends
    the log in the file before, and so does pycrawler's choice of JE (the newest begun file's
    log version)."""
    source = corpus_folder("19-polutekape-RestFulApi_For_BankOnTrack-b9ce4dc")
    reference_home, store = tmp_path / "reference-copy", tmp_path / "store"
    for copy in (reference_home, store):
        shutil.copytree(source, copy)
        (copy / "00000001.jdb").touch()
    store_before = hashes(store)
    jar = reading_je(6)
    names, cannot_open = reference_dump(reference_classes(jar), jar, reference_home, tmp_path / "reference")
    assert cannot_open is None and names
    out = tmp_path / "pycrawler"
    out.mkdir()
    assert log_version(store) == 6
    assert_lists_and_dumps_as_je(store, 6, names, tmp_path / "reference", out)
    assert hashes(store) == store_before


def test_a_dpl_catalog_dumps_to_the_same_bytes_under_any_hash_seed(tmp_path):
    """A DPL catalog holds Java sets (each format's ``supertypes``...): decoded in the order the
    stream holds them, never in the order a Python set iterates, which follows
    ``PYTHONHASHSEED``."""
    store = tmp_path / "store"
    shutil.copytree(corpus_folder("11-jackpay-DocumentParserToolkit-03243ba"), store)
    dumps = []
    for seed in ("1", "2"):
        done = subprocess.run([sys.executable, "-m", "pycrawler", "store", "dump", str(store), "--db",
                               "persist#EntityStore#com.sleepycat.persist.formats", "--format", "jsonl"],
                              capture_output=True, env=os.environ | {"PYTHONHASHSEED": seed}, timeout=120)
        assert done.returncode == 0, done.stderr
        dumps.append(done.stdout)
    assert b'"supertypes": ["' in dumps[0]
    assert dumps[0] == dumps[1]
