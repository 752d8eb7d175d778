"""Shared test set-up: the JVM's class path and scratch environments.

Java helper classes used only by tests (serializable fixtures, a book-style frontier) are
compiled by Maven into target/test-classes; they join the class path here, before the JVM
starts, since JPype can start it only once per process.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from java_programs import BUILD, LEG_JE_VERSION

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
TEST_CLASSES = BUILD / "test-classes"

if TEST_CLASSES.is_dir():
    entries = [e for e in os.environ.get("PYCRAWLER_CLASSPATH", "").split(os.pathsep) if e]
    os.environ["PYCRAWLER_CLASSPATH"] = os.pathsep.join(entries + [str(TEST_CLASSES)])


def pytest_collection_modifyitems(config, items):
    """Under another JE than the build's 3.3 (the JE 7 leg), tests of how JE 3.3 itself behaves skip."""
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
        pytest.skip("../shared is not beside the project")
    return SHARED


JE7_JAR = SHARED / "deps" / "je-7.5.11" / "je-7.5.11.jar"


def require_je7_jar() -> Path:
    """JE 7.5.11's jar (Heritrix 3's JE), for tests that run JE 7 in a child process. Missing,
    the test skips with the reason, except under CI, where JE 7 is part of what is tested."""
    if not JE7_JAR.is_file():
        reason = "JE 7 is not at ../shared/deps/je-7.5.11/je-7.5.11.jar (the project's shared/ beside it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return JE7_JAR


@pytest.fixture(scope="session")
def je7_jar() -> Path:
    return require_je7_jar()


def with_je(jar: Path | None) -> dict[str, str]:
    """The environment of a child process that loads JE from ``jar`` (None: the build's JE 3.3)."""
    entries = [e for e in os.environ.get("PYCRAWLER_CLASSPATH", "").split(os.pathsep)
               if e and not Path(e).name.startswith("je-")]
    return os.environ | {"PYCRAWLER_CLASSPATH": os.pathsep.join(([str(jar)] if jar else []) + entries)}
