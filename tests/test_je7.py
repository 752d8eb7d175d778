"""JE 7 (Heritrix 3's JE) next to the build's JE 3.3: each in its own process.

Read-only opens under JE 7 leave every file of the environment as it was, however long they
run and whatever statistics interval the caller asks for (JE 7.5.11 was seen writing nothing
read-only in 130 s; pycrawler turns its statistics and log file off so it stays that way). A
store JE 3.3 wrote (Heritrix 1's crawl state) opens and reads under JE 7, as a user with
Heritrix 3's jars on the class path does. The JE 7 leg of ``scripts/test`` runs the rest of the
suite under JE 7 itself.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import textwrap

from conftest import ROOT, with_je
from heritrix_stores import crawl, write_h1


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


def test_a_long_read_only_open_under_je_7_changes_no_file(shared, je7_jar, tmp_path):
    store = writable_copy(shared / "fixtures" / "je7-heritrix-layout", tmp_path / "h3")
    before = file_states(store)
    done = subprocess.run([sys.executable, "-c", LONG_READ, str(store), "5"], cwd=ROOT, capture_output=True,
                          text=True, env=with_je(je7_jar), timeout=120)
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) > 2500  # it read the store over and over
    assert file_states(store) == before
    assert not [f.name for f in store.iterdir() if f.name.startswith("je.info")]


def test_je_7_reads_a_heritrix_1_state_that_je_3_wrote(je7_jar, tmp_path):
    state = tmp_path / "h1"
    queued = crawl(40)
    write_h1(state, queued, [u.uri for u in queued[:10]], je3=True)
    before = file_states(state)
    for je in (None, je7_jar):
        done = subprocess.run([sys.executable, "-m", "pycrawler", "heritrix", "inspect", str(state)], cwd=ROOT,
                              capture_output=True, text=True, env=with_je(je), timeout=120)
        assert done.returncode == 0, done.stderr
        assert "Heritrix 1 crawl state" in done.stdout and "seen:" in done.stdout
    assert file_states(state) == before
