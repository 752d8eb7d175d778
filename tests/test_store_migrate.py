"""``pycrawler store migrate``: an environment copied into another JE's format, byte for byte.

Each side runs on its own JE in its own process (a child per JE), so these tests drive the
command line: a real JE 7 store to JE 3.3 and back to a newer JE, the book's store written by the
book's Java code, and a pycrawler crawl state that the newer JE then continues. The newer JE is
JE 18 (Maven Central) and Heritrix 3's own JE 7.5.11 (from Heritrix 3.13.0's distribution).
"Equal" is checked the way a user would: ``store dump --format dbdump`` of every database,
source against copy, each dumped by the JE that reads it; and the source is left byte-identical.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, with_je
from crawl_sites import CountingServer, crawl_command, write_site
from java_programs import run_java

from pycrawler.records.crawl_url import CrawlUrl, encode


def cli(*args, je=None, check=True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, env=with_je(je), timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def dumps(path, je=None) -> dict[str, str]:
    """Database name -> its DbDump text."""
    names = [line.split()[-1] for line in cli("store", "ls", path, je=je).stdout.splitlines()[2:]]
    return {name: cli("store", "dump", path, "--db", name, "--format", "dbdump", je=je).stdout for name in names}


def digest(path) -> dict[str, str]:
    return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(path.iterdir()) if f.is_file()}


LOG_VERSION = {"18": 17, "7": 15}


@pytest.fixture(params=["18", "7"])
def newer(request):
    """``--to``, the jar of that JE, and the options that name it: JE 18, and Heritrix 3.13.0's JE 7.5.11."""
    if request.param == "18":
        return "18", request.getfixturevalue("je18_jar"), ()
    jar = request.getfixturevalue("je7_jar")
    return "7", jar, ("--je7-jar", jar)


def test_a_heritrix_3_store_goes_to_je_3_and_back_unchanged(shared, newer, tmp_path):
    to, jar, options = newer
    source = tmp_path / "h3"
    shutil.copytree(shared / "fixtures" / "je7-heritrix-layout", source)
    source.chmod(0o755)
    for f in source.iterdir():
        f.chmod(0o644)
    before = digest(source)
    original = dumps(source)
    assert sorted(original) == ["alreadySeenUrl", "pending", "tupleStringLong"]

    done = cli("store", "migrate", source, tmp_path / "je3", "--to", "3")
    assert "2,500  records in 3 databases, written by JE 3" in done.stdout
    assert "JE log version 6" in cli("store", "ls", tmp_path / "je3").stdout
    assert dumps(tmp_path / "je3") == original

    cli("store", "migrate", tmp_path / "je3", tmp_path / "back", "--to", to, *options)
    assert f"JE log version {LOG_VERSION[to]}" in cli("store", "ls", tmp_path / "back", je=jar).stdout
    assert dumps(tmp_path / "back", je=jar) == original
    assert digest(source) == before  # read-only: the source is left byte-identical


def test_the_books_store_moves_to_a_newer_je_with_its_catalog(newer, tmp_path):
    to, jar, options = newer
    book = tmp_path / "book"
    book.mkdir()
    records = [CrawlUrl(ori_url=f"http://example.com/{i}", title=f"页面 {i}", weight=i % 7) for i in range(300)]
    run_java("BookFrontierTool", "put", book, stdin="".join(encode(r).hex() + "\n" for r in records), je3=True)
    original = dumps(book)
    assert {"java_class_catalog", "URL"} <= set(original)
    cli("store", "migrate", book, tmp_path / "book7", "--to", to, *options)
    assert dumps(tmp_path / "book7", je=jar) == original
    popped = cli("frontier", "pop", tmp_path / "book7", "-n", "3", "--format", "jsonl", je=jar).stdout.splitlines()
    assert len(popped) == 3 and "页面" in popped[0]


def test_a_crawl_state_moves_to_a_newer_je_and_that_je_continues_it(newer, tmp_path):
    to, jar, naming_je = newer
    root = tmp_path / "site"
    reachable = write_site(root, 60, seed=4)
    state = tmp_path / "state"
    options = ("--delay", "0", "--queue-policy", "bkdr", "--max-pages", "30")
    with CountingServer(root) as base:
        first = subprocess.run(crawl_command(base + "index.html", state, *options), cwd=ROOT, capture_output=True,
                               text=True, env=with_je(None), timeout=120)
        assert first.returncode == 0, first.stderr
        original = dumps(state)
        cli("store", "migrate", state, tmp_path / "state7", "--to", to, *naming_je)
        assert dumps(tmp_path / "state7", je=jar) == original
        for kept in ("crawl.json", "crawl.log"):
            shutil.copy(state / kept, tmp_path / "state7" / kept)
        rest = subprocess.run(crawl_command(base + "index.html", tmp_path / "state7", "--delay", "0"), cwd=ROOT,
                              capture_output=True, text=True, env=with_je(jar), timeout=120)
    assert rest.returncode == 0, rest.stderr
    assert "0 URLs pending" in rest.stdout
    assert f"{len(reachable) + 1:,} fetched records" in rest.stdout


SETTINGS = textwrap.dedent("""
    import sys
    from pycrawler.store import Environment
    with Environment(sys.argv[1], read_only=True) as env:
        prefixing = env.stored_key_prefixing()
        for name in env.database_names():
            config = env.open_database(name).java.getConfig()
            print(name, bool(config.getSortedDuplicates()), prefixing[name])
""")


def settings(path, je=None) -> set[str]:
    """``NAME DUPLICATES PREFIXING`` of each database, as stored, read by ``je``."""
    done = subprocess.run([sys.executable, "-c", SETTINGS, str(path)], cwd=ROOT, capture_output=True, text=True,
                          env=with_je(je), timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.splitlines())


def test_duplicates_prefixing_binary_and_empty_databases_keep_their_configuration(newer, tmp_path):
    to, jar, options = newer
    source = tmp_path / "mixed"
    make = textwrap.dedent(r"""
        import sys
        from pycrawler.store import Environment
        with Environment(sys.argv[1], create=True) as env:
            dups = env.open_database("dups", create=True, sorted_duplicates=True)
            dups.put_many([b"k", b"k", b"k", b"\x00"], [b"v2", b"v1", b"", b"\xff" * 300])
            keys = [f"http://example.com/{i:05d}".encode() for i in range(20_000)]
            env.open_database("prefixed", create=True, key_prefixing=True).put_many(keys, [bytes(4)] * len(keys))
            env.open_database("empty", create=True)
    """)
    made = subprocess.run([sys.executable, "-c", make, str(source)], cwd=ROOT, capture_output=True, text=True,
                          env=with_je(None), timeout=120)
    assert made.returncode == 0, made.stderr
    expected = settings(source)
    assert expected == {"dups True False", "prefixed False True", "empty False False"}
    original = dumps(source)
    cli("store", "migrate", source, tmp_path / "to7", "--to", to, *options)
    cli("store", "migrate", tmp_path / "to7", tmp_path / "back", "--to", "3", *options)
    # JE 7 and later prefix the keys of every database with duplicates (their two-part keys), whatever they are told
    assert settings(tmp_path / "to7", je=jar) == expected - {"dups True False"} | {"dups True True"}
    assert settings(tmp_path / "back") == expected - {"dups True False"} | {"dups True True"}
    assert dumps(tmp_path / "to7", je=jar) == dumps(tmp_path / "back") == original
    assert original["dups"].count("\n 6b\n") == 3  # every duplicate of key "k" is there


def test_migrate_refuses_what_it_cannot_do_in_one_line(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    no_env = cli("store", "migrate", tmp_path / "nothing", tmp_path / "dst", "--to", "7", check=False)
    assert no_env.returncode == 2 and "not a JE environment" in no_env.stderr
    src = tmp_path / "book"
    src.mkdir()
    run_java("BookFrontierTool", "put", src, stdin=encode(CrawlUrl(ori_url="http://a/")).hex() + "\n", je3=True)
    occupied = cli("store", "migrate", src, tmp_path / "full", "--to", "18", check=False)
    assert occupied.returncode == 2 and "is not an empty folder" in occupied.stderr
    no_jar = cli("store", "migrate", src, tmp_path / "dst", "--to", "7", check=False)
    assert no_jar.returncode == 3 and "--je7-jar" in no_jar.stderr and len(no_jar.stderr.splitlines()) == 1
    assert not (tmp_path / "dst").exists()
