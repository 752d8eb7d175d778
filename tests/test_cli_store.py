"""``pycrawler store ls|dump|load`` through the console entry point, in subprocesses.

The contract held here: reading commands never change a byte of a store (every file's
checksum and the set of file names are the same afterwards, with or without a ``je.lck``);
dump and load carry records unchanged; and every bad input gives one line on stderr,
``pycrawler: ...``, a non-zero exit (2 for bad input) and no stack trace unless ``--debug``.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st
from java_programs import LEG_LOG_VERSION

from pycrawler.cli import main
from pycrawler.cli.store import _utf8_fault
from pycrawler.store import Environment
from pycrawler.store.bindings import get_binding

STRING, LONG = get_binding("string"), get_binding("long")
URLS = {f"http://example.com/{i}": i * 1000 - 7 for i in range(50)}
RAW = sorted([(b"", b""), (b"\x00\xff", b"\\ \n"), (bytes(range(256)), b"x" * 5000)])


def pycrawler(*args, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], input=stdin,
                          capture_output=True, text=True, timeout=120)


def snapshot(path) -> dict[str, str]:
    """Every file name in the store with a checksum of its bytes."""
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(path.iterdir())}


def records(path, name) -> list[tuple[bytes, bytes]]:
    with Environment(path, read_only=True) as env:
        return list(env.open_database(name).items())


def assert_one_line_error(done: subprocess.CompletedProcess, exit_code: int, says: str) -> None:
    assert done.returncode == exit_code, done.stderr
    assert done.stderr.startswith("pycrawler: ") and done.stderr.count("\n") == 1, done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr and "\tat " not in done.stderr


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A closed store with a string->long database ``urls`` and a binary database ``raw``;
    pycrawler wrote it, so it has the je.lck every JE writer leaves."""
    path = tmp_path_factory.mktemp("store") / "env"
    with Environment(path, create=True) as env:
        urls = env.open_database("urls", create=True)
        urls.put_many([STRING.encode(u) for u in URLS], [LONG.encode(n) for n in URLS.values()])
        raw = env.open_database("raw", create=True)
        raw.put_many([k for k, _ in RAW], [v for _, v in RAW])
    return path


@pytest.fixture
def copied(store, tmp_path):
    """A copy of the store as an archive holds it: without je.lck."""
    path = tmp_path / "copy"
    shutil.copytree(store, path)
    (path / "je.lck").unlink()
    return path


# -- reading never writes --------------------------------------------------------------------
@pytest.mark.parametrize("lock_file", ["with je.lck", "without je.lck"])
def test_ls_lists_databases_counts_and_log_version_and_changes_nothing(store, copied, lock_file):
    path = store if lock_file == "with je.lck" else copied
    before = snapshot(path)
    done = pycrawler("store", "ls", path)
    assert done.returncode == 0, done.stderr
    assert f"{path}: JE log version {LEG_LOG_VERSION}, 2 databases" in done.stdout
    rows = dict(reversed(line.split()) for line in done.stdout.splitlines()[2:])
    assert rows == {"urls": str(len(URLS)), "raw": str(len(RAW))}
    assert snapshot(path) == before


def test_dump_jsonl_decodes_with_bindings_keeps_raw_hex_and_changes_nothing(copied):
    before = snapshot(copied)
    done = pycrawler("store", "dump", copied, "--db", "urls", "--key", "string", "--value", "long")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert {line["key"]: line["value"] for line in lines} == URLS
    assert all(bytes.fromhex(line["key_hex"]) == STRING.encode(line["key"]) for line in lines)
    assert all(bytes.fromhex(line["value_hex"]) == LONG.encode(line["value"]) for line in lines)
    assert snapshot(copied) == before


def test_dump_auto_decodes_serial_bound_records_through_the_class_catalog(tmp_path):
    from pycrawler.store.catalog import ClassCatalog
    from pycrawler.store.serial.encoder import SerialEncoder, java_class

    page = java_class("Page", 1, [("url", "java.lang.String"), ("hits", "int")])
    with Environment(tmp_path / "book", create=True) as env:
        encoder = SerialEncoder(ClassCatalog(env.open_database("java_class_catalog", create=True)))
        urls = env.open_database("URL", create=True)
        urls.put_many([encoder.encode_string("http://a/"), b"\x00not serial"],
                      [encoder.encode_object(page, {"url": "http://a/", "hits": 3}), b"\xff"])
    done = pycrawler("store", "dump", tmp_path / "book", "--db", "URL")
    assert done.returncode == 0, done.stderr
    raw, serial = (json.loads(line) for line in done.stdout.splitlines())  # key order: 0x00 < 0x74
    assert serial["key"] == "http://a/"
    assert serial["value"] == {"@class": "Page", "url": "http://a/", "hits": 3}
    # Bytes the catalog cannot decode are text when they are UTF-8; else the record says why.
    assert raw["key"] == "\x00not serial" and "value" not in raw and raw["value_hex"] == "ff"
    assert raw["value_error"].startswith("not UTF-8 text (invalid start byte at byte 0), nor serial-bound")
    assert done.stderr.count("\n") == 1 and "a value cannot be decoded (not UTF-8 text" in done.stderr


def book_store(path) -> None:
    """The book's layout with Chinese titles and URLs, as BookFrontier writes it."""
    from pycrawler.frontier.book import BookFrontier
    from pycrawler.records.crawl_url import CrawlUrl

    with BookFrontier.open(path, create=True) as frontier:
        frontier.put_urls([CrawlUrl("http://例子.测试/书", title="网络爬虫"), CrawlUrl("http://a/", title="A")])


def test_dump_writes_non_ascii_text_as_utf8_whatever_the_locale(tmp_path):
    book_store(tmp_path / "book")
    done = subprocess.run([sys.executable, "-m", "pycrawler", "store", "dump", tmp_path / "book", "--db", "URL"],
                          capture_output=True, timeout=120, env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("utf-8")
    assert '"title": "网络爬虫"' in text and '"key": "http://例子.测试/书"' in text and "\\u" not in text
    assert sorted(json.loads(line)["value"]["title"] for line in text.splitlines()) == ["A", "网络爬虫"]


def test_dump_writes_a_lone_surrogate_as_a_json_escape_so_lines_stay_valid_utf8(tmp_path):
    with Environment(tmp_path / "env", create=True) as env:
        env.open_database("names", create=True).put(STRING.encode("cut \ud800 pair"), STRING.encode("中"))
    done = subprocess.run([sys.executable, "-m", "pycrawler", "store", "dump", tmp_path / "env", "--db", "names",
                           "--key", "string", "--value", "string"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    line = done.stdout.decode("utf-8")  # strict: a raw surrogate would not decode
    assert '"key": "cut \\ud800 pair", "value": "中"' in line
    assert json.loads(line)["key"] == "cut \ud800 pair"


def test_dump_without_the_class_catalog_says_why_values_cannot_be_decoded(tmp_path):
    """The URL database moved alone (dbdump, then load into a new environment): its
    serialized String keys need no catalog, its CrawlUrl values do."""
    from pycrawler.store.serial.encoder import SerialEncoder
    from pycrawler.store.serial.stream import STREAM_HEADER

    book_store(tmp_path / "book")
    moved = pycrawler("store", "dump", tmp_path / "book", "--db", "URL", "--format", "dbdump",
                      "-o", tmp_path / "url.dump")
    assert moved.returncode == 0, moved.stderr
    assert pycrawler("store", "load", tmp_path / "alone", tmp_path / "url.dump").returncode == 0
    # A whole Java serialization stream of a String (header included) needs no catalog either.
    with Environment(tmp_path / "alone") as env:
        env.open_database("URL").put(STREAM_HEADER + SerialEncoder(None).encode_string("http://whole/"), b"p")
    assert "java_class_catalog" not in pycrawler("store", "ls", tmp_path / "alone").stdout

    done = pycrawler("store", "dump", tmp_path / "alone", "--db", "URL")
    assert done.returncode == 0, done.stderr
    rows = {row["key"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert set(rows) == {"http://a/", "http://例子.测试/书", "http://whole/"}
    assert rows["http://whole/"]["value"] is None  # b"p" is TC_NULL: Java's null, a real value
    for url in ("http://a/", "http://例子.测试/书"):
        assert "value" not in rows[url]
        assert "whose class descriptor is in a class catalog (a StoredClassCatalog database) " \
               "this environment does not have" in rows[url]["value_error"]
    note = done.stderr.splitlines()
    assert len(note) == 1 and note[0].startswith("pycrawler: note: ") and "class catalog" in note[0]


def test_dump_writes_a_cyclic_object_graph_with_references_for_its_back_edges(tmp_path):
    import jpype

    with Environment(tmp_path / "env", create=True) as env:
        jpype.JClass("org.pycrawler.bridge.fixtures.SerialFixtures").writeFixtures(env.java, "classes", "fixtures")
    done = pycrawler("store", "dump", tmp_path / "env", "--db", "fixtures")
    assert done.returncode == 0, done.stderr
    cycle = next(row["value"] for row in map(json.loads, done.stdout.splitlines()) if row["key"] == "cycle")
    # a.next is b, b.next is a; a.self is a; a.selfList holds itself and b; a.selfMap maps "me" to itself.
    assert (cycle["name"], cycle["next"]["name"], cycle["next"]["next"]) == ("a", "b", {"$ref": "#/value"})
    assert cycle["self"] == {"$ref": "#/value"}
    assert cycle["selfList"][0] == {"$ref": "#/value/selfList"}
    assert cycle["selfList"][1]["next"] == {"$ref": "#/value"}
    assert cycle["selfMap"]["me"] == {"$ref": "#/value/selfMap"}


def test_dump_finds_a_class_catalog_of_any_name_or_takes_the_one_named(tmp_path):
    from pycrawler.store.catalog import ClassCatalog
    from pycrawler.store.serial.encoder import SerialEncoder, java_class

    page = java_class("Page", 1, [("url", "java.lang.String")])
    with Environment(tmp_path / "env", create=True) as env:
        encoder = SerialEncoder(ClassCatalog(env.open_database("classDb", create=True)))
        env.open_database("pages", create=True).put(b"k", encoder.encode_object(page, {"url": "http://a/"}))
    for catalog in ((), ("--catalog", "classDb")):
        done = pycrawler("store", "dump", tmp_path / "env", "--db", "pages", *catalog)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["value"] == {"@class": "Page", "url": "http://a/"}
    assert_one_line_error(pycrawler("store", "dump", tmp_path / "env", "--db", "pages", "--catalog", "pages"), 2,
                          "database 'pages' is not a class catalog")
    assert_one_line_error(pycrawler("store", "dump", tmp_path / "env", "--db", "pages", "--catalog", "none"), 2,
                          "none")


def test_dump_reads_four_and_eight_bytes_that_are_not_text_as_integers_and_text_as_text(tmp_path):
    """crawler4j writes document IDs with DataOutput.writeInt (00 00 00 01), JE's IntegerBinding
    flips the sign bit (80 00 00 02); "re..." starts like a class descriptor (0x72) but is text."""
    values = {b"a": b"\x00\x00\x00\x01", b"b": b"\x80\x00\x00\x02", b"c": b"\x7f\xff\xff\xfd", b"d": b"abcd",
              b"e": b"\x00\x00\x00\x00\x00\x00\x01-", b"f": b"redirect_http://a/", b"g": b"\x00\x01\x02"}
    with Environment(tmp_path / "env", create=True) as env:
        env.open_database("ids", create=True).put_many(list(values), list(values.values()))
    done = pycrawler("store", "dump", tmp_path / "env", "--db", "ids")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [row["value"] for row in rows] == [1, 2, -3, "abcd", 301, "redirect_http://a/", "\x00\x01\x02"]
    assert [bytes.fromhex(row["value_hex"]) for row in rows] == list(values.values())
    assert done.stderr == ""


def test_dump_then_load_carries_records_unchanged_in_both_formats(store, tmp_path):
    dump_file = tmp_path / "raw.dump"
    done = pycrawler("store", "dump", store, "--db", "raw", "--format", "dbdump", "-o", dump_file)
    assert done.returncode == 0 and done.stdout == "", done.stderr
    done = pycrawler("store", "load", tmp_path / "from-dbdump", "--db", "raw", dump_file)
    assert done.returncode == 0, done.stderr
    assert records(tmp_path / "from-dbdump", "raw") == RAW

    jsonl = "".join(json.dumps({"key_hex": k.hex(), "value_hex": v.hex()}) + "\n" for k, v in RAW)
    done = pycrawler("store", "load", tmp_path / "from-jsonl", "--db", "copy", "-", stdin=jsonl)
    assert done.returncode == 0, done.stderr
    assert "loaded 3 records" in done.stdout
    assert records(tmp_path / "from-jsonl", "copy") == RAW


def test_load_writes_in_batches_one_transaction_and_jni_call_each(tmp_path, monkeypatch):
    from pycrawler.cli import store as store_cli
    from pycrawler.store.database import Database

    calls = []
    monkeypatch.setattr(store_cli, "LOAD_BATCH_RECORDS", 10)
    put_many = Database.put_many
    monkeypatch.setattr(Database, "put_many", lambda self, k, v, txn=None: calls.append((len(k), txn)) or
                        put_many(self, k, v, txn=txn))
    monkeypatch.setattr(Database, "put", lambda *a, **k: pytest.fail("load wrote one record at a time"))
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"key_hex": f"{i:04x}", "value_hex": ""}) + "\n" for i in range(35)))
    assert main(["store", "load", str(tmp_path / "env"), "--db", "d", str(source)]) == 0
    assert [n for n, _ in calls] == [10, 10, 10, 5]
    assert all(txn is not None for _, txn in calls)
    assert len(records(tmp_path / "env", "d")) == 35


def test_dump_of_sorted_duplicates_holds_each_record_once(tmp_path):
    from pycrawler.store.database import SCAN_PAGE_RECORDS
    from pycrawler.store.dbdump import DbDumpReader

    values = [i.to_bytes(4, "big") for i in range(SCAN_PAGE_RECORDS + 100)]  # more than one scan page
    with Environment(tmp_path / "dups", create=True) as env:
        env.open_database("d", create=True, sorted_duplicates=True).put_many([b"k"] * len(values), values)
    dump = tmp_path / "d.dump"
    assert main(["store", "dump", str(tmp_path / "dups"), "--db", "d", "--format", "dbdump", "-o", str(dump)]) == 0
    with open(dump, "rb") as stream:
        reader = DbDumpReader(stream)
        assert reader.header.dupsort is True
        assert list(reader) == [(b"k", v) for v in values]


# -- bad input: one line, an exit code, no trace --------------------------------------------------
def truncate(path):
    jdb = sorted(path.glob("*.jdb"))[-1]
    jdb.write_bytes(jdb.read_bytes()[: jdb.stat().st_size * 6 // 10])


def corrupt(path):
    jdb = sorted(path.glob("*.jdb"))[-1]
    data = bytearray(jdb.read_bytes())
    middle = len(data) // 2
    data[middle:middle + 16] = bytes(b ^ 0xFF for b in data[middle:middle + 16])
    jdb.write_bytes(bytes(data))


@pytest.mark.parametrize("damage, says", [(truncate, "is damaged"), (corrupt, "is damaged")])
def test_a_damaged_log_is_bad_input_and_stays_as_it_was(copied, damage, says):
    # JE 3.3 alone would take the damage for the end of the log and show fewer records.
    damage(copied)
    before = snapshot(copied)
    assert_one_line_error(pycrawler("store", "dump", copied, "--db", "raw"), 2, says)
    assert snapshot(copied) == before


def test_not_a_je_environment_is_bad_input(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    assert_one_line_error(pycrawler("store", "ls", tmp_path), 2, "not a JE environment")
    assert_one_line_error(pycrawler("store", "ls", tmp_path / "missing"), 2, "does not exist")


def test_a_missing_database_is_bad_input_naming_the_ones_there(copied):
    assert_one_line_error(pycrawler("store", "dump", copied, "--db", "nope"), 2, "has no database 'nope' (it has: ")


REVERSED_ORDER = """
package org.example;
public class ReversedOrder implements java.util.Comparator<byte[]>, java.io.Serializable {
    private static final long serialVersionUID = %dL;
    public int compare(byte[] a, byte[] b) {
        for (int i = 0; i < Math.min(a.length, b.length); i++) {
            if (a[i] != b[i]) return (b[i] & 0xff) - (a[i] & 0xff);
        }
        return b.length - a.length;
    }
}
"""
WRITE_REVERSED = """
import com.sleepycat.je.*;
public class WriteReversed {
    public static void main(String[] args) throws Exception {
        EnvironmentConfig environment = new EnvironmentConfig();
        environment.setAllowCreate(true);
        Environment env = new Environment(new java.io.File(args[0]), environment);
        DatabaseConfig config = new DatabaseConfig();
        config.setAllowCreate(true);
        config.setBtreeComparator(new org.example.ReversedOrder());
        Database db = env.openDatabase(null, "reversed", config);
        db.put(null, new DatabaseEntry(new byte[] {1}), new DatabaseEntry(new byte[] {2}));
        db.close();
        env.close();
    }
}
"""


def test_a_comparator_class_of_another_version_is_named_as_a_class_version_mismatch(tmp_path):
    """JE deserializes a database's B-tree comparator to open the store; the class path's
    version of its class has another serialVersionUID. JE 18 calls the log damaged
    (LOG_INTEGRITY), JE 3.3 says "last LSN=...": the line names the class and both UIDs."""
    je3 = os.path.join(os.path.dirname(__file__), "..", "target", "lib", "je-3.3.98.jar")
    for version in (1, 2):
        (tmp_path / f"src{version}").mkdir()
        (tmp_path / f"src{version}" / "ReversedOrder.java").write_text(REVERSED_ORDER % version)
    (tmp_path / "src1" / "WriteReversed.java").write_text(WRITE_REVERSED)  # the writing program has version 1
    for version in (1, 2):
        sources = (tmp_path / f"src{version}").iterdir()
        subprocess.run(["javac", "-cp", je3, "-d", tmp_path / f"v{version}", *sources], check=True, timeout=120)
    (tmp_path / "store").mkdir()
    subprocess.run(["java", "-cp", os.pathsep.join([je3, str(tmp_path / "v1")]), "WriteReversed", tmp_path / "store"],
                   check=True, timeout=120)
    classpath = os.pathsep.join(filter(None, [os.environ.get("PYCRAWLER_CLASSPATH"), str(tmp_path / "v2")]))
    done = subprocess.run([sys.executable, "-m", "pycrawler", "store", "ls", tmp_path / "store"], capture_output=True,
                          text=True, env=os.environ | {"PYCRAWLER_CLASSPATH": classpath}, timeout=120)
    assert_one_line_error(done, 3, "holds objects of the class org.example.ReversedOrder with serialVersionUID 1, and "
                          "the class path has a version of the class with serialVersionUID 2: a class-version mismatch")


def test_a_store_of_a_newer_log_version_opens_with_no_setting_and_is_left_untouched(shared, tmp_path):
    path = tmp_path / "je7"
    shutil.copytree(shared / "fixtures" / "je7-heritrix-layout", path)
    before = snapshot(path)
    done = pycrawler("store", "ls", path)
    assert done.returncode == 0, done.stderr
    assert f"{path}: JE log version 15, 3 databases, read with JE 18.3.12" in done.stdout
    assert snapshot(path) == before


def test_a_malformed_dump_is_bad_input_naming_the_line_and_creates_nothing(tmp_path):
    bad = tmp_path / "bad.dump"
    bad.write_text("VERSION=3\nformat=bytevalue\nno equals sign\nHEADER=END\nDATA=END\n")
    assert_one_line_error(pycrawler("store", "load", tmp_path / "env", "--db", "d", bad), 2, "line 3")
    assert not (tmp_path / "env").exists()


def test_debug_shows_the_trace(tmp_path):
    done = pycrawler("--debug", "store", "ls", tmp_path)
    assert done.returncode == 2 and "Traceback" in done.stderr


def test_a_locked_store_refuses_a_second_writer_but_lets_readers_in_and_neither_leaves_a_file(copied):
    """JE 7+ starts its own log file (``je.info.N``) before it takes the store's lock: a refused
    load left a new ``je.info.0.1`` in the store. Neither the refused writer nor the reader
    adds a file or changes a byte."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import sys
        from pycrawler.store import Environment
        with Environment({str(copied)!r}):
            print("open", flush=True)
            sys.stdin.read()
        """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        dump = copied.parent / "one.jsonl"
        dump.write_text(json.dumps({"key_hex": "00", "value_hex": ""}) + "\n")
        held = snapshot(copied)
        assert_one_line_error(pycrawler("store", "load", copied, "--db", "raw", dump), 4, "locked")
        assert snapshot(copied) == held
        # JE readers take a shared lock beside the writer's exclusive one: ls still works.
        done = pycrawler("store", "ls", copied)
        assert done.returncode == 0 and "urls" in done.stdout, done.stderr
        assert snapshot(copied) == held
    finally:
        holder.communicate("", timeout=60)
    assert records(copied, "raw") == RAW


# Bytes around UTF-8's boundaries: ASCII, continuation bytes, every lead's edges, never-valid bytes.
_UTF8_EDGES = [0x41, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]


@given(st.lists(st.sampled_from(_UTF8_EDGES), min_size=1, max_size=6).map(bytes))
def test_a_dump_says_why_bytes_are_not_utf8_in_cpythons_words_on_any_runtime(data):
    """The reason a JSON-lines dump gives is pycrawler's own, the same as CPython's decoder
    gives, so that a dump under GraalPy (whose decoder says "malformed input") reads the same."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        assert _utf8_fault(data, exc.start) == exc.reason
