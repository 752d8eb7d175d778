"""Run the Java test programs (bridge/src/test/java) in their own JVM, as another process
would: the book's BDBFrontier driver and a StoredSortedMap reader of pycrawler's TODO store."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "target"


def require_test_classes() -> None:
    if not (TARGET / "test-classes" / "BookFrontierTool.class").is_file():
        pytest.skip("Java test classes are not built (mvn ... package)")


def compile_java(sources: Path, into: Path) -> Path:
    """The .java files under ``sources`` compiled against the built classes into ``into``:
    for stand-ins that share a name with a test class, so cannot be built with them."""
    require_test_classes()
    classpath = [TARGET / "classes", TARGET / "test-classes", *sorted((TARGET / "lib").glob("*.jar"))]
    done = subprocess.run(["javac", "-nowarn", "-cp", os.pathsep.join(map(str, classpath)), "-d", str(into),
                           *map(str, sorted(sources.rglob("*.java")))], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return into


def run_java(main_class: str, *args: str, stdin: str | None = None, first: tuple[Path, ...] = ()) -> list[str]:
    """The ``record<TAB>...`` lines a test program printed, without the prefix. Classes in
    the folders ``first`` take the place of test classes of the same name."""
    require_test_classes()
    classpath = [*first, TARGET / "classes", TARGET / "test-classes", *sorted((TARGET / "lib").glob("*.jar"))]
    done = subprocess.run(["java", "-cp", os.pathsep.join(map(str, classpath)), main_class, *map(str, args)],
                          input=stdin, capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("\t", 1)[1] for line in done.stdout.splitlines() if line.startswith("record\t")]
