"""The DbDump text format, held against JE's own DbDump and DbLoad (3.3.98, or 18.3.12 in the JE 18 leg).

The Java tools run as subprocesses from the JE jar of the test run, so what is
checked is interchange with the real programs: pycrawler's dump loads through Java's DbLoad
into identical records, Java's dumps (hex and printable) load through pycrawler into
identical records, and pycrawler writes the very bytes Java's DbDump writes.
"""

from __future__ import annotations

import io
import subprocess

import pytest
from conftest import missing
from java_programs import runtime_jars

from pycrawler.errors import BadInput
from pycrawler.store import Environment
from pycrawler.store.dbdump import DbDumpReader, DbDumpWriter, decode_entry, encode_entry

DB = "records"

# Keys JE orders as unsigned bytes, which is Python's order of bytes: sorted() is scan order.
RECORDS = sorted({
    b"": b"the empty key",
    bytes(range(256)): b"every byte value once",
    b"\\": b"\\\\ backslashes",
    b" leading and trailing spaces ": b"  ",
    b"line\nbreak\r\n": b"\x00",
    b"\x7f\x80\xfe\xff": b"",
    b"plain": b"",
    "unicode \u00fc \u20ac".encode(): "\u00fcn\u00efc\u00f6d\u00e9".encode(),
    b"k" * 300: bytes(range(256)) * 40,
}.items())


def je_jar():
    jars = [jar for jar in runtime_jars() if jar.name.startswith("je-")]
    if not jars:
        missing("no JE jar in target/lib (run scripts/setup)")
    return jars[0]


def java_tool(tool: str, *args) -> None:
    """Run JE's com.sleepycat.je.util.<tool>. DbLoad prints the stack trace of a failed load
    and still exits 0, so anything on standard error is a failure too."""
    done = subprocess.run(["java", "-cp", str(je_jar()), f"com.sleepycat.je.util.{tool}", *map(str, args)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and not done.stderr.strip(), done.stderr


def read_records(path, name=DB, *, expect_dupsort=False) -> list[tuple[bytes, bytes]]:
    with Environment(path, read_only=True) as env:
        db = env.open_database(name, sorted_duplicates=expect_dupsort)
        return list(db.items())


def load_with_pycrawler(dump: bytes, path, name=DB) -> None:
    reader = DbDumpReader(io.BytesIO(dump))
    with Environment(path, create=True) as env:
        db = env.open_database(name, create=True, sorted_duplicates=reader.header.dupsort)
        records = list(reader)
        with env.begin() as txn:
            db.put_many([k for k, _ in records], [v for _, v in records], txn=txn)


def dump_with_pycrawler(path, name=DB, *, format="bytevalue", database=None, dupsort=False) -> bytes:
    out = io.BytesIO()
    with Environment(path, read_only=True) as env, DbDumpWriter(out, database=database, format=format,
                                                               dupsort=dupsort) as writer:
        writer.write_many(env.open_database(name, sorted_duplicates=dupsort).items())
    return out.getvalue()


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A closed environment holding RECORDS in database DB."""
    path = tmp_path_factory.mktemp("source") / "env"
    with Environment(path, create=True) as env:
        db = env.open_database(DB, create=True)
        with env.begin() as txn:
            db.put_many([k for k, _ in RECORDS], [v for _, v in RECORDS], txn=txn)
    return path


@pytest.fixture(scope="module")
def java_dumps(source, tmp_path_factory):
    """What Java's DbDump writes for the source database: {"bytevalue": ..., "print": ...}."""
    out = tmp_path_factory.mktemp("java-dumps")
    dumps = {}
    for fmt, flags in (("bytevalue", ()), ("print", ("-p",))):
        java_tool("DbDump", "-h", source, "-s", DB, *flags, "-f", out / f"{fmt}.dump")
        dumps[fmt] = (out / f"{fmt}.dump").read_bytes()
    return dumps


# -- interchange with JE's own tools -------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["bytevalue", "print"])
def test_pycrawler_writes_the_bytes_java_dbdump_writes(source, java_dumps, fmt):
    assert dump_with_pycrawler(source, format=fmt) == java_dumps[fmt]


@pytest.mark.parametrize("fmt", ["bytevalue", "print"])
def test_java_dbload_loads_a_pycrawler_dump_into_identical_records(source, tmp_path, fmt):
    dump = tmp_path / "records.dump"
    dump.write_bytes(dump_with_pycrawler(source, format=fmt, database=DB))
    # -s names the database for the hex dump; the print dump relies on its database= header line.
    name_flags = ("-s", DB) if fmt == "bytevalue" else ()
    (tmp_path / "loaded").mkdir()  # DbLoad creates the environment, not its folder
    java_tool("DbLoad", "-h", tmp_path / "loaded", *name_flags, "-f", dump)
    assert read_records(tmp_path / "loaded") == RECORDS


@pytest.mark.parametrize("fmt", ["bytevalue", "print"])
def test_pycrawler_loads_a_java_dump_into_identical_records(java_dumps, tmp_path, fmt):
    load_with_pycrawler(java_dumps[fmt], tmp_path / "loaded")
    assert read_records(tmp_path / "loaded") == RECORDS


def test_sorted_duplicates_survive_both_tools(tmp_path):
    records = [(b"a", b""), (b"a", b"\x00"), (b"a", b"second"), (b"b", b"\\")]
    with Environment(tmp_path / "dups", create=True) as env:
        db = env.open_database(DB, create=True, sorted_duplicates=True)
        db.put_many([k for k, _ in records], [v for _, v in records])
    dump = tmp_path / "dups.dump"
    dump.write_bytes(dump_with_pycrawler(tmp_path / "dups", dupsort=True))
    assert b"\ndupsort=1\n" in dump.read_bytes()
    (tmp_path / "loaded").mkdir()
    java_tool("DbLoad", "-h", tmp_path / "loaded", "-s", DB, "-f", dump)
    java_tool("DbDump", "-h", tmp_path / "loaded", "-s", DB, "-f", tmp_path / "back.dump")
    reader = DbDumpReader(io.BytesIO((tmp_path / "back.dump").read_bytes()))
    assert reader.header.dupsort is True
    assert list(reader) == records


# -- the format itself -----------------------------------------------------------------------------
def test_print_format_escapes_what_java_escapes():
    # JE's CmdUtil.formatEntry: bytes 33..126 as themselves, a backslash doubled, all else \xx.
    assert encode_entry(b"a b\\c\x00\x7f\xff~!", printable=True) == "a\\20b\\\\c\\00\\7f\\ff~!"
    assert encode_entry(b"\x00\xab", printable=False) == "00ab"


@pytest.mark.parametrize("data", [b"", bytes(range(256)), b"\\\\\\", b"\\00"])
@pytest.mark.parametrize("printable", [False, True])
def test_every_entry_reads_back(data, printable):
    assert decode_entry(encode_entry(data, printable), printable) == data


def test_reader_takes_c_db_dump_headers_and_literal_spaces():
    # C's db_dump writes db_pagesize and the like, and prints a space as itself.
    text = "VERSION=3\nformat=print\ntype=btree\ndb_pagesize=4096\nHEADER=END\n a b\n \\5cx \nDATA=END\n"
    reader = DbDumpReader(io.StringIO(text))
    assert reader.header.extra == {"db_pagesize": "4096"}
    assert list(reader) == [(b"a b", b"\\x ")]


def test_reader_leaves_what_follows_data_end_unread():
    stream = io.BytesIO(b"VERSION=3\nHEADER=END\n 61\n 62\nDATA=END\nnext section\n")
    assert list(DbDumpReader(stream)) == [(b"a", b"b")]
    assert stream.read() == b"next section\n"


def test_writer_of_an_empty_database_writes_header_and_end():
    out = io.StringIO()
    DbDumpWriter(out).close()
    assert out.getvalue() == "VERSION=3\nformat=bytevalue\ntype=btree\ndupsort=0\nHEADER=END\nDATA=END\n"


def test_writer_leaves_out_a_database_name_the_header_cannot_carry():
    out = io.StringIO()
    DbDumpWriter(out, database=" padded\n").close()
    assert "database=" not in out.getvalue()


HEAD = "VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n"


@pytest.mark.parametrize("text, line, says", [
    ("", 0, "empty"),
    ("this is not a dump\n", 1, "not a header line"),
    ("VERSION=2\nHEADER=END\nDATA=END\n", 1, "VERSION=2"),
    ("VERSION=3\nformat=base64\nHEADER=END\n", 2, "format=base64"),
    ("VERSION=3\ntype=hash\nHEADER=END\n", 2, "type=hash"),
    ("VERSION=3\ndupsort=maybe\nHEADER=END\n", 2, "dupsort=maybe"),
    ("VERSION=3\nformat=bytevalue\n", 2, "without HEADER=END"),
    (HEAD + " 61\n 6\nDATA=END\n", 6, "hex digits"),
    (HEAD + " 61\n zz\nDATA=END\n", 6, "hex digits"),
    (HEAD + "61\n 62\nDATA=END\n", 5, "start with a space"),
    (HEAD + " 61\nDATA=END\n", 6, "key without its value"),
    (HEAD + " 61\n 62\n", 6, "without DATA=END"),
    (HEAD.replace("bytevalue", "print") + " a\\\n b\nDATA=END\n", 5, "backslash"),
    (HEAD.replace("bytevalue", "print") + " a\\4\n b\nDATA=END\n", 5, "backslash"),
    (HEAD.replace("bytevalue", "print") + " a\\xy\n b\nDATA=END\n", 5, "backslash"),
])
def test_malformed_input_is_bad_input_naming_the_line(text, line, says):
    with pytest.raises(BadInput) as caught:
        list(DbDumpReader(io.BytesIO(text.encode()), name="in.dump"))
    message = str(caught.value)
    assert says in message
    assert message.startswith("in.dump is empty" if line == 0 else f"in.dump line {line}: ")
