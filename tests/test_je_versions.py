"""Which JE opens a store, chosen per store with no setting, and JEs other than the build's 3.3.

Each process runs on one JE (one JVM per process), chosen before the JVM starts from the log
version of the store's newest ``.jdb`` file: the user's JE (``PYCRAWLER_CLASSPATH``) when it
reads it, else the oldest known JE that does (3.3.98 from Debian; 4.0.92, 5.0.73 and 18.3.12
from Maven Central). A read-write open that would upgrade a foreign store's log is refused
unless asked for. Read-only opens under a newer JE leave every file as it was, however long
they run (JE 7+ keeps statistics and a log file in the environment's folder: pycrawler turns
them off).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import ROOT, with_je
from heritrix_stores import crawl, write_h1

from pycrawler import jvm
from pycrawler.errors import SetupError
from pycrawler.jvm.je_releases import JeRelease, for_new_store, reader_of
from pycrawler.store.logfile import log_version

KNOWN = ("3.3.98", "4.0.92", "5.0.73", "18.3.12")


def file_states(path) -> dict[str, tuple[str, int]]:
    return {f.name: (hashlib.sha256(f.read_bytes()).hexdigest(), f.stat().st_mtime_ns)
            for f in sorted(path.iterdir())}


def writable_copy(source, target):
    shutil.copytree(source, target)
    target.chmod(0o755)
    for f in target.iterdir():
        f.chmod(0o644)
    (target / "je.lck").touch()  # as a live crawl's store has: JE then opens the folder itself
    return target


def cli(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, env=env, timeout=300)


def no_user_je() -> dict[str, str]:
    return with_je(None)


def test_every_known_je_is_built_and_the_oldest_reader_of_each_log_version_is_chosen():
    releases = {je.version: je for je in jvm.known_jes()}
    assert tuple(releases) == KNOWN
    expected = {5: "3.3.98", 6: "3.3.98", 7: "4.0.92", 8: "5.0.73", **{v: "18.3.12" for v in range(9, 18)}}
    for version_of_log, version in expected.items():
        assert reader_of(version_of_log, "s", jvm.TARGET, None).version == version
    heritrix3 = JeRelease.of_jar(ROOT / "lib" / "je-7.5.11.jar")
    assert reader_of(15, "s", jvm.TARGET, heritrix3) is heritrix3   # the user's JE first, when it reads it
    assert reader_of(17, "s", jvm.TARGET, heritrix3).version == "18.3.12"


def test_with_je_18_alone_it_opens_every_store_and_writes_new_ones(tmp_path):
    """A wheel's jar folder: JE 18.3.12 only (the others are under the Sleepycat licence)."""
    (tmp_path / "je").mkdir()
    shutil.copy(ROOT / "target" / "je" / "je-18.3.12.jar", tmp_path / "je")
    assert for_new_store(tmp_path, None).version == "18.3.12"
    assert {reader_of(log_version, "s", tmp_path, None).version for log_version in range(5, 18)} == {"18.3.12"}
    with pytest.raises(SetupError, match="s has JE log version 18, written by a JE newer than 18.3"):
        reader_of(18, "s", tmp_path, None)


def test_version_lists_the_jes_known_and_the_log_versions_each_reads():
    done = cli("version", env=no_user_je())
    assert done.returncode == 0, done.stderr
    listed = done.stdout.splitlines()[4:]
    assert [line.split()[0] for line in listed] == list(KNOWN)
    assert [line.split()[5] for line in listed] == ["6", "7", "8", "17"]


def test_a_log_version_no_known_je_reads_gets_one_line_naming_it(tmp_path):
    store = tmp_path / "future"
    store.mkdir()
    # A file header entry of log version 99: entry header (type 0x19), then an item whose last 4 bytes are the version.
    item = bytes(20) + (99).to_bytes(4, "little")
    header = bytes(4) + bytes((0x19, 0)) + bytes(4) + len(item).to_bytes(4, "little") + item
    (store / "00000000.jdb").write_bytes(header)
    done = cli("store", "ls", store, env=no_user_je())
    assert done.returncode == 3 and len(done.stderr.splitlines()) == 1, done.stderr
    assert f"{store} has JE log version 99, written by a JE newer than 18.3" in done.stderr
    assert "18.3.12" in done.stderr and "reads log versions up to 17" in done.stderr
    assert "je-7.5.11" not in done.stderr


def test_a_newer_je_never_writes_into_an_older_store_unless_told(tmp_path, je18_jar):
    state = tmp_path / "h1"
    queued = crawl(10)
    write_h1(state, queued, [u.uri for u in queued[:3]], je3=True)
    before = file_states(state)
    refused = cli("store", "load", state, "--db", "extra", "/dev/null", env=with_je(je18_jar))
    assert refused.returncode == 3 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert "log version 6" in refused.stderr and "JE 18.3.12" in refused.stderr
    assert "--upgrade-log" in refused.stderr and "could no longer read it" in refused.stderr
    assert file_states(state) == before
    # With no JE named, JE 3.3 (the store's own) is chosen, and writes it as it is.
    assert cli("store", "load", state, "--db", "extra", "/dev/null", env=no_user_je()).returncode == 0
    assert "JE log version 6" in cli("store", "ls", state).stdout
    upgraded = cli("--upgrade-log", "store", "load", state, "--db", "more", "/dev/null", env=with_je(je18_jar))
    assert upgraded.returncode == 0, upgraded.stderr
    listed = cli("store", "ls", state, env=no_user_je())
    assert "JE log version 17" in listed.stdout and "read with JE 18.3.12" in listed.stdout


def test_a_je_jar_whose_name_hides_its_version_is_refused_before_it_writes_a_foreign_store(shared, je18_jar,
                                                                                          tmp_path):
    """JE 18 as ``je.jar`` won the class loader's race against the JE 3.3 chosen for a log
    version 6 store, and upgraded it to 17 without a word. The JE that loaded is compared with
    the one chosen as soon as Java starts."""
    store = shutil.copytree(shared / "wildje" / "19-polutekape-RestFulApi_For_BankOnTrack-b9ce4dc", tmp_path / "s")
    store.chmod(0o755)
    anonymous = shutil.copy(je18_jar, tmp_path / "je.jar")
    env = no_user_je()
    env["PYCRAWLER_CLASSPATH"] = os.pathsep.join(filter(None, [str(anonymous), env["PYCRAWLER_CLASSPATH"]]))
    before = file_states(store)
    for command in (["store", "load", store, "--db", "extra", "/dev/null"], ["store", "ls", store]):
        refused = cli(*command, env=env)
        assert refused.returncode == 3 and len(refused.stderr.splitlines()) == 1, refused.stderr
        assert f"loads JE 18.3.12 from {anonymous}, not JE 3.3.98" in refused.stderr
        assert "je-18.3.12.jar" in refused.stderr
    assert file_states(store) == before
    assert log_version(store) == 6


LONG_READ = textwrap.dedent("""
    import sys, time
    from pycrawler.store import Environment
    with Environment(sys.argv[1], read_only=True, config={"je.stats.collect.interval": "1 s"}) as env:
        deadline = time.monotonic() + float(sys.argv[2])
        reads = 0
        while time.monotonic() < deadline:
            for name in env.database_names():
                reads += sum(1 for _ in env.open_database(name).items())
        print(reads)
""")


@pytest.fixture(params=["18.3.12", "7.5.11"])
def newer_je(request):
    """JE 18 and Heritrix 3's own JE 7.5.11 (from Heritrix 3.13.0's distribution)."""
    return request.getfixturevalue("je18_jar" if request.param == "18.3.12" else "je7_jar")


def test_a_long_read_only_open_under_a_newer_je_changes_no_file(shared, newer_je, tmp_path):
    store = writable_copy(shared / "fixtures" / "je7-heritrix-layout", tmp_path / "h3")
    before = file_states(store)
    done = subprocess.run([sys.executable, "-c", LONG_READ, str(store), "5"], cwd=ROOT, capture_output=True,
                          text=True, env=with_je(newer_je), timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 2500  # it read the store over and over
    assert file_states(store) == before
    assert not [f.name for f in store.iterdir() if f.name.startswith("je.info")]


def test_a_heritrix_1_state_that_je_3_wrote_reads_the_same_under_every_je(newer_je, tmp_path):
    state = tmp_path / "h1"
    queued = crawl(40)
    write_h1(state, queued, [u.uri for u in queued[:10]], je3=True)
    before = file_states(state)
    outputs = []
    for env in (no_user_je(), with_je(newer_je)):
        done = cli("heritrix", "inspect", state, env=env)
        assert done.returncode == 0, done.stderr
        assert "Heritrix 1 crawl state" in done.stdout and "seen:" in done.stdout
        outputs.append(done.stdout.split("read with JE", 1)[1].split("\n", 1)[1])
    assert outputs[0] == outputs[1]
    assert file_states(state) == before
