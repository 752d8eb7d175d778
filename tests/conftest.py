"""Shared test set-up: the JVM's class path and scratch environments.

Java helper classes used only by tests (serializable fixtures, a book-style frontier) are
compiled by Maven into target/test-classes; they join the class path here, before the JVM
starts, since JPype can start it only once per process.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from java_programs import BUILD, LEG_JE_VERSION

from pycrawler.jvm import CRAWL_JVM

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
TEST_CLASSES = BUILD / "test-classes"

# Every JVM the tests start, in their own processes and in the crawls and commands they run, is
# the one a crawl runs (pycrawler.jvm.CRAWL_JVM: the C1 compiler only, the serial collector).
# A test's processes are short-lived: with the JVM's defaults, C2 compiling JE's code took a
# fifth of their CPU on two cores (tests/test_cli_store.py and test_cli_heritrix.py: 171 -> 131
# CPU s, 95 -> 79 s). Tests of the default JVM itself clear it (tests/test_jvm.py); a
# PYCRAWLER_JVM_OPTS of the caller's own is kept.
os.environ.setdefault("PYCRAWLER_JVM_OPTS", CRAWL_JVM["PYCRAWLER_JVM_OPTS"])

if TEST_CLASSES.is_dir():
    entries = [e for e in os.environ.get("PYCRAWLER_CLASSPATH", "").split(os.pathsep) if e]
    os.environ["PYCRAWLER_CLASSPATH"] = os.pathsep.join(entries + [str(TEST_CLASSES)])


collect_ignore = ["graalpy"]
"""tests/graalpy runs under GraalPy only, as its own root (scripts/test's GraalPy leg: ``scripts/graalpy
-m pytest -c tests/graalpy/pytest.ini``, where this file is never loaded). It has no conftest.py
of its own: one there would be imported as ``conftest`` too, and shadow this one for every test
module here that imports from it."""

ANY_JE = frozenset({
    # No JE at all: keys, parsing, fetching, caches and their simulation, test sites, the crawl's slots.
    "test_cache_sim", "test_cli_fingerprint", "test_fetch", "test_gc_pause", "test_heritrix_canon",
    "test_heritrix_fingerprint", "test_inflight", "test_keys", "test_parse", "test_robots",
    "test_simple_bloom", "test_site", "test_spill", "test_synthetic_web", "test_url_cache", "test_product_imports",
    "test_cli_help",
    # JE as the crawl's storage only, what these hold is above it: Redis coordination, output
    # formats, hostile sites, the cache's effect on a crawl, the terminal display, the demo, Scrapy.
    # The store, its recovery after a kill and a full disk are held on both JEs by the other modules.
    "test_cluster", "test_cluster_host_table", "test_cluster_central", "test_cluster_end",
    "test_crawl_outputs", "test_crawl_traps", "test_crawl_url_cache", "test_progress", "test_demo",
    "test_scrapy",
    # The console reads the crawl's counters and crawl.log; the page and /metrics are above the store.
    "test_console",
    # The wheel carries its own JE 18, whatever the leg.
    "test_wheel",
    # Signals and the JVM's error file: JPype's and the JVM's handlers, whatever JE is loaded.
    "test_signals",
    # The tools' commands killed at their failpoints: they run with no JE named, so on the build's
    # JE in either leg (only the input stores would change).
    "test_tool_kills",
    # The crash harness's modes above the store (tests/test_crashpoints_above_je.py says why), and
    # its modes on the store: what they hold is pycrawler's order of durable steps, killed at each;
    # JE's part under a kill (a committed transaction is recovered, an uncommitted one is not) is
    # held on both JEs by test_crawl_kill, test_drum_crash and test_workqueues_crash.
    "test_crashpoints_above_je", "test_crashpoints",
    # Redis coordination under faults (Redis away, a worker killed), as test_cluster above.
    "test_cluster_durability",
    # Every process of the migration tests names its JE (with_je below, run_java's je3): the
    # leg's JE is never the one that runs.
    "test_store_migrate",
    # The real Heritrix 3.13 writes with its own JE 7.5.11 and pycrawler reads its log version 15
    # with JE 18 (or Heritrix's lib/) whatever the leg's JE.
    "test_real_heritrix",
    # A real Heritrix writes with its own JE 7.5.11 and pycrawler reads its checkpoint with the JE
    # it chooses for log version 15, whatever the leg's JE: the rescue of a killed crawl.
    "test_heritrix_rescue",
    # Heritrix runs Python in its own JVM, on its own JE 7.5.11: pycrawler's JE plays no part.
    "test_heritrix_graalpy",
    # A real crawler4j crawl continued by pycrawler: crawler4j runs on its own JE 5.0.73 and every
    # pycrawler command there runs with no JE named, so on the frontier's 5.0.73 in either leg.
    "test_crawler4j_real",
    # The web's pathologies and sitemaps: what they hold is how many requests a hostile or helpful
    # site costs, above the store (test_crawl_traps above is their older sibling).
    "test_pathologies", "test_sitemaps",
    # Page workers ending with their crawl, and seeds refused before a state exists: processes and
    # the command line, whatever JE is loaded.
    "test_orphans", "test_cli_crawl",
    # The numpy-free paths against the numpy ones: both sides of each comparison run on the same JE.
    "test_without_numpy",
})
"""Test modules whose outcome does not depend on which JE runs: marked ``any_je``, they run in
the JE 3.3 leg only (scripts/test)."""


SLOWEST_FIRST = (
    "test_crashpoints_above_je", "test_crashpoints", "test_real_heritrix", "test_crawler4j_real",
    "test_store_migrate", "test_cluster_durability", "test_crawl_stops", "test_heritrix_rescue",
    "test_tool_kills", "test_crawler4j", "test_heritrix_journal", "test_wildje", "test_cli_heritrix",
    "test_scrapy", "test_gateway", "test_wheel",
)
"""The modules that take longest, slowest first (measured: ``scripts/test`` prints each test's
time). The two workers take modules in collection order, so these start first and the short
ones fill in at the end, instead of one worker running a long module alone at the close."""


def pytest_collection_modifyitems(config, items):
    """Puts the :data:`SLOWEST_FIRST` modules first and marks the :data:`ANY_JE` modules' tests
    ``any_je``. Under another JE than the build's 3.3 (the JE 18 leg), tests of how JE 3.3 itself
    behaves skip."""
    rank = {name: position for position, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.module.__name__, len(rank)))
    for item in items:
        if item.module.__name__ in ANY_JE:
            item.add_marker(pytest.mark.any_je)
    if LEG_JE_VERSION.startswith("3."):
        return
    skip = pytest.mark.skip(reason=f"holds JE 3.3's own behaviour; this run loads JE {LEG_JE_VERSION}")
    for item in items:
        if item.get_closest_marker("je3"):
            item.add_marker(skip)


@pytest.fixture
def env(tmp_path):
    """A fresh transactional JE environment, closed after the test."""
    from pycrawler.store import Environment

    with Environment(tmp_path / "env", create=True) as environment:
        yield environment


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        missing("../shared is not beside the project")
    return SHARED


JE18_JAR = ROOT / "target" / "je" / "je-18.3.12.jar"


def require_je18_jar() -> Path:
    """JE 18.3.12's jar (from Maven Central, resolved by scripts/setup), for tests that run it
    in a child process: it writes every log version newer than JE 3.3's, Heritrix 3's layout
    among them. Missing, the test fails (a missing install step)."""
    if not JE18_JAR.is_file():
        missing(f"JE 18 is not at {JE18_JAR.relative_to(ROOT)} (scripts/setup resolves it from Maven Central)")
    return JE18_JAR


@pytest.fixture(scope="session")
def je18_jar() -> Path:
    return require_je18_jar()


HERITRIX_HOME = ROOT / "target" / "heritrix-3.13.0"
"""Heritrix 3.13.0's own distribution (peers/pom.xml; scripts/setup resolves it)."""


@pytest.fixture(scope="session")
def je7_jar() -> Path:
    """Exactly JE 7.5.11, Heritrix 3's own JE, for tests of stores written for it to read back:
    the jar Heritrix 3.13.0's distribution ships in its ``lib/``."""
    jar = HERITRIX_HOME / "lib" / "je-7.5.11.jar"
    if not jar.is_file():
        missing(f"JE 7.5.11 is not at {jar.relative_to(ROOT)} (scripts/setup resolves Heritrix 3.13.0 from Maven Central)")
    return jar


def missing(what: str):
    """A fixture, server or tool a test needs is missing: that is a missing install step
    (``scripts/setup`` installs all of them), so the test fails, whether or not ``CI`` is set."""
    pytest.fail(what, pytrace=False)


def with_je(jar: Path | None) -> dict[str, str]:
    """The environment of a child process that loads JE from ``jar`` (None: the build's JE 3.3)."""
    entries = [e for e in os.environ.get("PYCRAWLER_CLASSPATH", "").split(os.pathsep)
               if e and not Path(e).name.startswith("je-")]
    return os.environ | {"PYCRAWLER_CLASSPATH": os.pathsep.join(([str(jar)] if jar else []) + entries)}


# -- fixtures several test modules use ----------------------------------------------------------
@pytest.fixture
def runtime(tmp_path, monkeypatch):
    """A runtime folder (``PYCRAWLER_RUNTIME_DIR``) of this test's own, for servers and clients."""
    folder = tmp_path / "run"
    monkeypatch.setenv("PYCRAWLER_RUNTIME_DIR", str(folder))
    return folder


@pytest.fixture
def local_redis(tmp_path):
    """A real redis-server on a free loopback port (append-only file on), stopped after the test."""
    from pycrawler.testing.local_redis import LocalRedis, find_redis_server

    if find_redis_server() is None:
        missing("redis-server is not installed (scripts/setup installs it)")
    server = LocalRedis(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


class SmallFilesystem:
    """A tmpfs of ``size_mb`` mounted at ``path``; :meth:`grow` frees space by enlarging it."""

    def __init__(self, path, size_mb: int):
        self.path = path
        path.mkdir()
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(path)],
                                 capture_output=True, text=True)
        if mounted.returncode != 0:
            missing(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")

    def grow(self, size_mb: int) -> None:
        subprocess.run(["mount", "-o", f"remount,size={size_mb}m", str(self.path)], check=True)

    def unmount(self) -> None:
        subprocess.run(["umount", str(self.path)], check=True)


@pytest.fixture
def small_filesystem(tmp_path):
    """``make(size_mb)``: a :class:`SmallFilesystem` under the test's folder, unmounted after it."""
    filesystems = []

    def make(size_mb: int) -> SmallFilesystem:
        filesystems.append(SmallFilesystem(tmp_path / f"fs{len(filesystems)}", size_mb))
        return filesystems[-1]

    yield make
    for filesystem in filesystems:
        filesystem.unmount()
