"""Shared test set-up: the JVM's class path and scratch environments.

Java helper classes used only by tests (serializable fixtures, a book-style frontier) are
compiled by Maven into target/test-classes; they join the class path here, before the JVM
starts, since JPype can start it only once per process.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
TEST_CLASSES = ROOT / "target" / "test-classes"

if TEST_CLASSES.is_dir():
    entries = [e for e in os.environ.get("PYCRAWLER_CLASSPATH", "").split(os.pathsep) if e]
    os.environ["PYCRAWLER_CLASSPATH"] = os.pathsep.join(entries + [str(TEST_CLASSES)])


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
