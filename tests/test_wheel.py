"""``pip install`` of the wheel: with only a Java runtime on the machine, pycrawler works.

The wheel is built from this checkout (``pip wheel . --no-deps``: setup.py puts the bridge jar
and JE 18.3.12 inside) and installed into a fresh virtualenv outside the checkout, its
dependencies from PyPI. Every command then runs from a folder outside the checkout, with no
``PYCRAWLER_*`` variable and no ``PYTHONPATH``: ``pycrawler version`` names the bundled JE, which
reads a crawler4j frontier of ``../shared/wildje/`` (log version 7) and leaves its bytes as they
were, refuses to write into it, and crawls a site served on loopback. A cluster without the
``redis`` extra, or no Java at all, is one line saying what to install.

``scripts/test`` runs this module in its first leg only: the wheel is the same in both.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing
from crawl_sites import CountingServer, assert_each_page_fetched_once, write_site

ROOT = Path(__file__).resolve().parent.parent
STORE = "15-DenniJensen-MiniCrawler-cd02144"
"""A crawler4j 3.5 frontier (JE 4.0, log version 7): a checkout reads it with JE 4.0.92, a wheel with JE 18."""


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A fresh virtualenv outside the checkout with the wheel built from it installed."""
    dist = tmp_path_factory.mktemp("dist")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q", "-w", str(dist)],
                           cwd=dist, capture_output=True, text=True, timeout=300)
    if built.returncode != 0:
        missing(f"pip wheel . failed (needs setuptools from PyPI): {built.stderr.strip().splitlines()[-1:]}")
    wheel, = dist.glob("pycrawler-*.whl")
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    installed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                               cwd=venv, env=outside_env(venv), capture_output=True, text=True, timeout=600)
    if installed.returncode != 0:
        missing(f"pip install of the wheel failed (its dependencies come from PyPI): {installed.stderr.strip()[-300:]}")
    return venv


def outside_env(venv: Path, **changes: str) -> dict[str, str]:
    """The environment of a user who installed the wheel: no PYCRAWLER_* and no PYTHONPATH."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("PYCRAWLER_") and name not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return env | {"PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"} | changes


def pycrawler(venv: Path, cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "pycrawler"), *args], cwd=cwd, env=outside_env(venv, **env),
                          capture_output=True, text=True, timeout=120)


def digests(folder: Path) -> dict[str, str]:
    return {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in sorted(folder.glob("*.jdb"))}


def test_the_wheel_runs_on_the_je_it_carries(venv, tmp_path):
    done = pycrawler(venv, tmp_path, "version")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[2] == "je 18.3.12 (writes new stores)"
    assert [line.split() for line in lines[4:]] == [
        ["18.3.12", "log", "versions", "up", "to", "17", "pycrawler/java/je/je-18.3.12.jar"]]
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import pycrawler; print(pycrawler.__file__)"],
                           cwd=tmp_path, env=outside_env(venv), capture_output=True, text=True, timeout=60)
    assert Path(where.stdout.strip()).is_relative_to(venv), "the installed package, not the checkout's"


def test_help_reads_as_plain_text(venv, tmp_path):
    done = pycrawler(venv, tmp_path, "--help")
    assert done.returncode == 0, done.stderr
    description = done.stdout.split("\n\n")[1]
    assert description.startswith("pycrawler: crawl frontiers and URL-seen tables on Berkeley DB Java Edition")
    assert "``" not in done.stdout


def test_a_crawler4j_frontier_is_read_with_je_18_and_left_as_it_was(venv, tmp_path, shared):
    corpus = shared / "wildje" / STORE
    if not corpus.is_dir():
        missing(f"the JE corpus has no {STORE}")
    store = tmp_path / "store"
    shutil.copytree(corpus, store, copy_function=shutil.copyfile)
    store.chmod(0o755)
    done = pycrawler(venv, tmp_path, "store", "ls", str(store))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{store}: JE log version 7, 2 databases, read with JE 18.3.12",
                                        "records  database", "    324  DocIDs", "      0  PendingURLsDB"]
    refused = pycrawler(venv, tmp_path, "frontier", "put", str(store), "http://127.0.0.1/a")
    assert refused.returncode == 3
    assert refused.stderr.startswith(f"pycrawler: {store} has JE log version 7") and "--upgrade-log" in refused.stderr
    assert digests(store) == digests(corpus) and len(digests(store)) == 1


def test_a_crawl_of_a_loopback_site_fetches_every_page_once(venv, tmp_path):
    site = tmp_path / "site"
    reachable = write_site(site, 40)
    server = CountingServer(site)
    with server as base:
        done = pycrawler(venv, tmp_path, "crawl", base + "index.html", "--state", str(tmp_path / "state"),
                         "--no-progress", "--delay", "0", "--concurrency", "8")
    assert done.returncode == 0, done.stderr
    counts = server.page_counts()
    assert_each_page_fetched_once(counts, reachable)
    assert f"{len(reachable) + 1} answered" in done.stdout and "0 URLs pending" in done.stdout


def test_a_cluster_without_the_redis_extra_is_one_line(venv, tmp_path):
    done = pycrawler(venv, tmp_path, "cluster", "status", "--redis", "redis://127.0.0.1:9/0", "--cluster", "c")
    assert done.returncode == 3
    assert done.stderr.splitlines() == ["pycrawler: a cluster needs the redis package, which pycrawler's redis "
                                        "extra installs: pip install 'redis>=5' (or the wheel with [redis])"]


def test_no_java_is_one_line_naming_what_to_install(venv, tmp_path):
    done = pycrawler(venv, tmp_path, "version", JAVA_HOME=str(tmp_path / "no-java"), PATH=str(venv / "bin"))
    assert done.returncode == 3
    assert done.stderr.splitlines() == [
        f"pycrawler: JAVA_HOME ({tmp_path / 'no-java'}) holds no Java runtime: install a Java runtime 11 or newer "
        "(e.g. openjdk-17-jre-headless) or set JAVA_HOME to one"]
