"""The library half where numpy and numba cannot be imported (as under GraalPy), byte for byte.

Each test runs the same script in two child processes: one as usual, one where importing
numpy or numba fails (``sys.modules`` holds None for them before pycrawler is imported), so
the store, the records, the keys and the TODO frontier take their numpy-free paths. The two
give the same answers: Heritrix's keys are also held to Heritrix's own
(``../shared/vectors/heritrix-fp.tsv``), and the 29 stores of ``../shared/wildje`` list and
dump to the same text through the command line.

The same scripts run a third time under GraalPy (``scripts/graalpy``, a JVM with JE on its class
path and no numpy): the ``graalpy`` side of each test, marked ``graalpy``, which scripts/test runs
in its GraalPy leg. A store is read there with the JE pycrawler chooses for it under CPython,
named to the launcher on ``PYCRAWLER_CLASSPATH``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_wildje import CORPUS, NEEDS_APPLICATION_CLASSES, READING_JES, chosen_je, corpus_folder, folders

from pycrawler.jvm.je_releases import JeRelease
from pycrawler.store.logfile import log_version

TESTS = Path(__file__).resolve().parent
GRAALPY = TESTS.parent / "scripts" / "graalpy"
WITHOUT_NUMPY = "import sys; sys.modules['numpy'] = sys.modules['numba'] = None\n"
NUMPY_FREE = "import pycrawler.store.packing as packing; assert packing.np is None\n"

SIDES = pytest.mark.parametrize("side", ["without-numpy", pytest.param("graalpy", marks=pytest.mark.graalpy)])
"""Each test's other side: CPython with numpy and numba unimportable, or GraalPy."""


def run(script: str, data, *, side: str = "numpy", je: Path | None = None):
    """``script`` in a child process (``data`` as JSON on its stdin, its JSON stdout back) on
    ``side``: CPython with numpy, CPython without it, or GraalPy (on the JE jar ``je``, else the
    launcher's); off numpy, the script first checks that pycrawler chose its numpy-free paths."""
    prelude = f"import sys; sys.path.insert(0, {str(TESTS)!r})\n"
    command, env = [sys.executable, "-c"], None
    if side == "without-numpy":
        prelude = WITHOUT_NUMPY + prelude + NUMPY_FREE
    elif side == "graalpy":
        prelude += NUMPY_FREE
        command = [str(GRAALPY), "-c"]
        env = {**os.environ, "PYCRAWLER_GRAALPY_JIT": "0",  # a JIT's start costs more than it earns here
               **({"PYCRAWLER_CLASSPATH": str(je)} if je else {})}
    done = subprocess.run([*command, prelude + script], input=json.dumps(data), capture_output=True,
                          text=True, encoding="utf-8", timeout=1200, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def both(script: str, data=None, side: str = "without-numpy", je: Path | None = None):
    """The script's answer with numpy and on ``side``; the second is checked to be numpy-free."""
    return run(script, data), run(script, data, side=side, je=je)


def heritrix_vectors(shared: Path) -> tuple[list[str], list[list[str]]]:
    """The URLs of Heritrix's vectors and their create_key, fp64, fp24, fp40 in hex."""
    lines = (shared / "vectors" / "heritrix-fp.tsv").read_bytes().decode("utf-8").split("\n")[:-1]
    rows = [line.split("\t", 4) for line in lines]
    return [row[4] for row in rows], [[row[i] for row in rows] for i in range(4)]


KEYS = """
import json, sys
from pycrawler.keys.heritrix_fp import STD24, STD40, STD64, create_keys
from pycrawler.keys.md5 import md5_keys
urls = json.load(sys.stdin)
heritrix = [[f"{int(v):016x}" for v in batch] for batch in (create_keys(urls), STD64.fp_many(urls),
                                                              STD24.fp_many(urls), STD40.fp_many(urls))]
json.dump({"heritrix": heritrix, "md5": md5_keys([url for url in urls if url])}, sys.stdout)  # MD5 refuses ""
"""


@SIDES
def test_heritrix_keys_and_md5_keys_are_the_same_without_numpy(side, shared):
    urls, expected = heritrix_vectors(shared)
    # Over 16,384 URLs: the numpy side's MD5 runs its compiled kernel, the other hashlib.
    urls = (urls * 5)[:20_000]
    expected = [(column * 5)[:20_000] for column in expected]
    with_numpy, without = both(KEYS, urls, side)
    assert without["heritrix"] == expected
    assert with_numpy["heritrix"] == expected
    assert without["md5"] == with_numpy["md5"] and len(without["md5"]) > 16_384


RECORDS = """
import json, sys
from crawl_url_samples import sample_records
from pycrawler.records.crawl_url import decode, decode_many, encode_many
records = sample_records(json.load(sys.stdin))
values = encode_many(records)
decoded = decode_many(values)
assert decoded == records and [decode(v) for v in values[:20]] == records[:20]
json.dump({"values": [v.hex() for v in values], "decoded": list(map(repr, decoded))}, sys.stdout)
"""


@SIDES
def test_crawl_url_records_encode_and_decode_the_same_without_numpy(side):
    # 300 records: the numpy side decodes them with its compiled scan (64 and more).
    with_numpy, without = both(RECORDS, 300, side)
    assert without == with_numpy


TODO = """
import json, sys, contextlib, io
from crawl_url_samples import frontier_records
from pycrawler.cli import main
from pycrawler.frontier.todo import ORDERS, JeTodoFrontier
folder, order = json.load(sys.stdin)
records = frontier_records(500)
taken = []
with JeTodoFrontier.open(folder, order, create=True) as todo:
    todo.put_urls(records[:300])
    taken += todo.get_next_batch(120)
    todo.put_urls(records[300:])
    taken += todo.get_next_batch(100) + [todo.get_next()]
    left = len(todo)
out = io.StringIO()
with contextlib.redirect_stdout(out):
    assert main(["store", "dump", folder, "--db", ORDERS[order], "--format", "dbdump"]) == 0
json.dump({"taken": list(map(repr, taken)), "left": left, "dump": out.getvalue()}, sys.stdout)
"""


@pytest.mark.parametrize("order", ["key", "fifo"])
@SIDES
def test_todo_frontier_puts_and_takes_in_the_same_order_without_numpy(side, order, tmp_path):
    with_numpy = run(TODO, [str(tmp_path / "with"), order])
    without = run(TODO, [str(tmp_path / "without"), order], side=side)
    assert len(without["taken"]) == 221 and without["left"] == 279
    assert without == with_numpy


WILD = """
import json, re, sys
from cli_runs import run
answers = {}
for store in json.load(sys.stdin):
    (ls,) = run([["store", "ls", store]])
    rows = ls["stdout"].splitlines()[2:] if ls["exit"] == 0 else []
    names = [re.fullmatch(r" *\\d+  (.*)", row).group(1) for row in rows] or ["any"]
    forms = (["--format", "dbdump"], ["--format", "dbdump", "-p"], ["--format", "jsonl"])
    answers[store] = [ls, *run([["store", "dump", store, "--db", name, *form] for name in names for form in forms])]
json.dump(answers, sys.stdout)
"""


def by_reading_je() -> dict[str, list[str]]:
    """The corpus's stores grouped by the JE pycrawler reads each with: one process (one JVM,
    one JE) per group and side instead of one per store."""
    groups: dict[str, list[str]] = {}
    for name in folders():
        folder = CORPUS / name
        groups.setdefault(chosen_je(log_version(folder)) if folder.is_dir() else "missing", []).append(name)
    return groups


def reading_je_jar(version: str) -> Path | None:
    """The jar of the JE ``version`` :func:`by_reading_je` names (None: the launcher's own)."""
    return next((jar for _, jar in READING_JES if JeRelease.of_jar(jar).version == version), None)


@pytest.mark.parametrize("je", sorted(by_reading_je()))
@SIDES
def test_wild_stores_list_and_dump_the_same_without_numpy(side, je, tmp_path):
    stores = []
    for name in by_reading_je()[je]:
        stores.append(str(tmp_path / name))
        shutil.copytree(corpus_folder(name), stores[-1])
    with_numpy, without = both(WILD, stores, side, je=reading_je_jar(je))
    assert without == with_numpy
    for store, results in without.items():
        if Path(store).name in NEEDS_APPLICATION_CLASSES:
            assert all(result["exit"] != 0 for result in results)  # one clean line each, as test_wildje holds
        else:
            assert all(result["exit"] == 0 for result in results) and len(results) > 3, store


def test_the_command_line_names_the_work_queue_layout_as_its_frontier_does():
    from pycrawler.cli.frontier import WORKQUEUES
    from pycrawler.frontier.workqueues import WorkQueueFrontier

    assert WORKQUEUES == WorkQueueFrontier.layout


HERITRIX = """
import json, sys
from pathlib import Path
from cli_runs import run
state, urls, out = json.load(sys.stdin)
results = run([["heritrix", "inspect", state], ["heritrix", "seen", state, *urls],
               ["heritrix", "export", state, "--pending", f"{out}.pending", "--seen", f"{out}.raw"],
               ["heritrix", "export", state, "--seen", f"{out}.hex", "--seen-format", "hex"]])
files = {form: Path(f"{out}.{form}").read_bytes().hex() for form in ("pending", "raw", "hex")}
json.dump({"results": results, "files": files}, sys.stdout)
"""


@SIDES
def test_heritrix_inspect_seen_and_export_answer_the_same_without_numpy(side, shared, tmp_path):
    state = tmp_path / "h3"
    shutil.copytree(shared / "fixtures" / "je7-heritrix-layout", state)
    crawled = (shared / "fixtures" / "je7-heritrix-layout.urls.txt").read_text(encoding="utf-8").split()
    urls = [url for pair in zip(crawled[:300], (u + "?not-crawled" for u in crawled)) for url in pair]
    # The same output paths (the commands name them), read back by each run before the next.
    with_numpy, without = both(HERITRIX, [str(state), urls, str(tmp_path / "export")], side)
    assert all(result["exit"] == 0 for result in without["results"]), without["results"]
    answers = [line.split("\t")[0] for line in without["results"][1]["stdout"].splitlines()]
    assert answers.count("seen") >= 1 and answers.count("new") >= 300
    assert without == with_numpy


CRAWLER4J = """
import json, sys
from pathlib import Path
from cli_runs import run
frontier, out = json.load(sys.stdin)
results = run([["crawler4j", "inspect", frontier],
               ["crawler4j", "export", frontier, "--pending", f"{out}.pending", "--done", f"{out}.done"]])
files = {form: Path(f"{out}.{form}").read_text(encoding="utf-8") for form in ("pending", "done")}
json.dump({"results": results, "files": files}, sys.stdout)
"""


@pytest.mark.parametrize("name", [folder for folder in folders() if "crawler4j" in folder or folder[:2] in ("01", "05", "15")])
@SIDES
def test_crawler4j_inspect_and_export_answer_the_same_without_numpy(side, name, tmp_path):
    """The crawler4j frontiers of ../shared/wildje (3.5, 4.2 and a 4.3 fork)."""
    frontier = tmp_path / "frontier"
    shutil.copytree(corpus_folder(name), frontier)
    with_numpy, without = both(CRAWLER4J, [str(frontier), str(tmp_path / "export")], side,
                             je=reading_je_jar(chosen_je(log_version(frontier))))
    assert all(result["exit"] == 0 for result in without["results"]), without["results"]
    assert without["files"]["pending"] or without["files"]["done"]
    assert without == with_numpy


EXACT = """
import contextlib, io, json, sys
from pycrawler.cli import main
from pycrawler.seen import ExactVisited, per_key
from pycrawler.store import Environment
folder, keys, urls = json.load(sys.stdin)
answers, heard = {}, []
with Environment(folder, create=True) as env:
    for name, long_binding in (("visited", False), ("alreadySeenUrl", True)):
        table = ExactVisited(env, name=name, long_binding=long_binding, batch=700)
        table.set_receiver(per_key(lambda key, url, new: heard.append([key, url, new])))
        first = table.add_many(keys[:2000])
        again = table.add_many(keys)
        table.add_urls(urls)
        answers[name] = {"first": [bool(b) for b in first], "again": [bool(b) for b in again],
                         "contains": [bool(b) for b in table.contains_many(keys[::3] + [0, (1 << 64) - 1])],
                         "one": [keys[5] in table, table.contains(1)], "count": len(table)}
        table.close()
dumps = []
for name in ("visited", "alreadySeenUrl"):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["store", "dump", folder, "--db", name, "--format", "dbdump"]) == 0
    dumps.append(out.getvalue())
json.dump({"answers": answers, "heard": heard, "dumps": dumps}, sys.stdout)
"""


@SIDES
def test_exact_visited_answers_and_stores_the_same_without_numpy(side, shared, tmp_path):
    urls, expected = heritrix_vectors(shared)
    # Heritrix's keys (past 2**63 as often as not), a key twice in a batch, the extremes.
    keys = [int(key, 16) for key in expected[0][:3000]] + [int(expected[0][7], 16), 0, (1 << 64) - 1]
    with_numpy = run(EXACT, [str(tmp_path / "with"), keys, urls[:500]])
    without = run(EXACT, [str(tmp_path / "without"), keys, urls[:500]], side=side)
    assert without["answers"]["visited"]["again"].count(True) == len(set(keys)) - len(set(keys[:2000]))
    assert without == with_numpy


BLOOM = """
import json, sys
from pathlib import Path
from pycrawler.seen.bloom import BLOCKED, CLASSIC, BloomFilter, blocked_false_positive_rate, blocked_parameters
folder, keys, urls = json.load(sys.stdin)
out = {"sizes": [blocked_parameters(capacity, fpr) for capacity in (1, 10, 1000, 123_457, 10**8)
                 for fpr in (0.3, 0.01, 0.001, 1e-6)],
       "rates": [blocked_false_positive_rate(capacity, 1000, k) for capacity in (10, 5000, 50_000) for k in (1, 7, 20)]}
for version in (BLOCKED, CLASSIC):
    path = Path(folder) / f"{version}.bloom"
    table = BloomFilter.create(path, capacity=4000, fpr=0.01, version=version)
    answers = {"first": table.add_many(keys[:3000]), "again": table.add_many(keys)}
    table.add_urls(urls)
    table.close()
    table = BloomFilter.open(path)  # (read_only=True: a blocked filter's check fails to compile with numba)
    answers.update(contains=table.contains_many(keys + [key ^ 1 for key in keys[:500]]),
                   urls=table.contains_urls(urls + [url + "#x" for url in urls]), url_keys=table.url_keys(urls),
                   count=len(table), filled=table.false_positive_rate(), file=path.read_bytes().hex())
    table.close()
    in_memory = BloomFilter(2000, 0.001, version=version)
    answers.update(memory=[in_memory.m, in_memory.k, in_memory.add_many(keys[:2000]), in_memory.contains_many(keys)])
    out[version] = answers
json.dump(out, sys.stdout, default=lambda array: array.tolist())
"""


@SIDES
def test_bloom_filters_answer_and_write_the_same_bytes_without_numpy(side, shared, tmp_path):
    urls, expected = heritrix_vectors(shared)
    keys = [int(key, 16) for key in expected[0][:3000]] + [int(expected[0][3], 16), 0, (1 << 64) - 1]
    (tmp_path / "with").mkdir()
    (tmp_path / "without").mkdir()
    with_numpy = run(BLOOM, [str(tmp_path / "with"), keys, urls[1:600]])
    without = run(BLOOM, [str(tmp_path / "without"), keys, urls[1:600]], side=side)
    # The expected rates are sums of floats: numpy adds them pairwise, Python in order.
    assert without.pop("rates") == pytest.approx(with_numpy.pop("rates"), rel=1e-12)
    assert without["1"]["first"].count(True) > 2900 and all(without["1"]["contains"][:len(keys)])
    assert without == with_numpy


SIMPLE_BLOOM = """
import json, sys
from pycrawler.seen.simple_bloom import SimpleBloomFilter, bit_indexes
path, urls = json.load(sys.stdin)
table = SimpleBloomFilter()
table.add_many(urls[:3000])
table.save(path)
loaded = SimpleBloomFilter.load(path)
json.dump({"indexes": [list(map(int, row)) for row in bit_indexes(urls)],
           "contains": [bool(hit) for hit in loaded.contains_many(urls + [url + "/" for url in urls])],
           "bits": open(path, "rb").read().hex()}, sys.stdout)
"""


@SIDES
def test_simple_bloom_sets_the_books_bits_without_numpy(side, shared, tmp_path):
    """The book's filter: its bit indexes are Java's own (../shared/vectors/simple-bloom.tsv)."""
    lines = (shared / "vectors" / "simple-bloom.tsv").read_bytes().decode("utf-8").split("\n")[:-1]
    rows = [line.split("\t", 1) for line in lines]
    urls = [url for _, url in rows]
    with_numpy, without = both(SIMPLE_BLOOM, [str(tmp_path / "bits"), urls], side)
    assert without["indexes"] == [[int(i) for i in indexes.split(",")] for indexes, _ in rows]
    assert all(without["contains"][:3000])
    assert without == with_numpy


STORE = """
import contextlib, io, json, sys
from pycrawler.cli import main
from pycrawler.store import Environment
folder, copy, migrated = json.load(sys.stdin)
keys = [f"k{i:05d}".encode() for i in range(0, 3000, 3)] + ["ümlaut".encode(), b"\\x00\\xff"]
flags = lambda answers: [bool(a) for a in answers]
out = {}
with Environment(folder, create=True, transactional=True) as env:
    db = env.open_database("d", create=True)
    out["put"] = db.put_many(keys, [k[::-1] * 3 for k in keys])
    out["absent"] = flags(db.put_if_absent_many(keys[::7] + [b"new", b"new"], [b"v"] * (len(keys[::7]) + 2)))
    out["contains"] = flags(db.contains_many(keys[::5] + [b"nope"]))
    out["get"] = [None if v is None else v.hex() for v in db.get_many(keys[::11] + [b"nope"])]
    out["deleted"] = flags(db.delete_many(keys[::13] + [b"nope"]))
    with env.begin() as txn:
        db.put(b"in-txn", b"kept", txn=txn)
    txn = env.begin()
    db.put(b"aborted", b"gone", txn=txn)
    txn.abort()
    out["items"] = [[k.hex(), v.hex()] for k, v in db.items(prefix=b"k01", page_records=7)]
    out["reverse"] = [k.hex() for k in db.keys(b"k005", b"k020", reverse=True, page_records=5)]
    with db.cursor() as cursor:
        out["cursor"] = [[k.hex(), v.hex()] for k, v in (cursor.first(), cursor.next(), cursor.last(), cursor.prev())]
    out["count"] = db.count()
    db.close()

def cli(*argv):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        code = main(list(argv))
    return [code, text.getvalue()]

out["jsonl"] = cli("store", "dump", folder, "--db", "d", "-o", f"{folder}.jsonl")
out["load"] = cli("store", "load", copy, "--db", "d", f"{folder}.jsonl")
out["migrate"] = cli("store", "migrate", copy, migrated, "--to", "3")
out["dump"] = cli("store", "dump", migrated, "--db", "d", "--format", "dbdump")
json.dump(out, sys.stdout)
"""


@SIDES
def test_store_api_load_and_migrate_give_the_same_records_without_numpy(side, tmp_path):
    answers = []
    for folder, runs_on in (("with", "numpy"), ("without", side)):
        answer = run(STORE, [str(tmp_path / folder / name) for name in ("store", "copy", "migrated")], side=runs_on)
        answers.append(json.loads(json.dumps(answer).replace(str(tmp_path / folder), "FOLDER")))  # the commands name it
    with_numpy, without = answers
    assert without["put"] == 1002 and without["absent"][-2:] == [True, False]
    assert without["load"][0] == 0 and without["migrate"][0] == 0 and "HEADER=END" in without["dump"][1]
    assert without == with_numpy


def test_a_bloom_filter_made_without_posix_fallocate_is_the_same_file(tmp_path, monkeypatch):
    """GraalPy's os module has no posix_fallocate: zeros written up to the size stand for it."""
    from pycrawler.seen import bloom

    files = []
    for allocate in (bloom._allocate, bloom._write_zeros):
        monkeypatch.setattr(bloom, "_allocate", allocate)
        path = tmp_path / f"{len(files)}.bloom"
        table = bloom.BloomFilter.create(path, capacity=1_000_000, fpr=0.01)  # over 1 MiB: two writes of zeros
        table.add_many(list(range(0, 3_000_000, 7)))
        table.close()
        files.append(path.read_bytes())
    assert files[0] == files[1] and len(files[1]) > (1 << 20)
