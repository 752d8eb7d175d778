"""Run the Java test programs (bridge/src/test/java) in their own JVM, as another process
would: the book's BDBFrontier driver and a StoredSortedMap reader of pycrawler's TODO store."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path


ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "target"


_JE_JAR = re.compile(r"^je-(\d+)\.([\d.]+)\.jar$")
LEG_JE = [Path(e) for e in os.environ.get("PYCRAWLER_CLASSPATH", "").split(os.pathsep) if _JE_JAR.match(Path(e).name)]
"""The JE jar this test run loads instead of the build's JE 3.3 (``scripts/test``'s JE 18 leg), if any."""
LEG_JE_VERSION = LEG_JE[0].name[len("je-"):-len(".jar")] if LEG_JE else "3.3.98"
LEG_LOG_VERSION = {"3": 6, "7": 15, "18": 17}[LEG_JE_VERSION.split(".")[0]]
"""The log version the JE of this run writes (JE 3.3: 6, JE 7.5: 15, JE 18.3: 17)."""
BUILD = TARGET if LEG_JE_VERSION.startswith("3.") else TARGET / f"je-{LEG_JE_VERSION}"
"""Where Maven built the bridge and its test classes against this run's JE (``-Dje.jar``:
target/je-VERSION): JE 7 changed some methods' return types, so a class compiled against one JE
may not link with the other."""


def runtime_jars(je3: bool = False) -> list[Path]:
    """The bridge's runtime jars, with the JE of this test run (``je3``: the build's JE 3.3)."""
    built = sorted((TARGET / "lib").glob("*.jar"))
    user_je = [] if je3 else LEG_JE
    return user_je + [jar for jar in built if not (user_je and jar.name.startswith("je-"))]


def java_classpath(*first: Path, je3: bool = False) -> str:
    """Class path of a Java test program: ``first``, the bridge and its tests, the runtime jars
    (``je3``: as built against and run on JE 3.3, whatever this run's JE)."""
    build = TARGET if je3 else BUILD
    return os.pathsep.join(map(str, [*first, build / "classes", build / "test-classes", *runtime_jars(je3)]))


def require_test_classes() -> None:
    if not (BUILD / "test-classes" / "BookFrontierTool.class").is_file():
        from conftest import missing

        missing(f"Java test classes are not built in {BUILD} (scripts/test builds them)")


def compile_java(sources: Path, into: Path) -> Path:
    """The .java files under ``sources`` compiled against the built classes into ``into``:
    for stand-ins that share a name with a test class, so cannot be built with them."""
    require_test_classes()
    done = subprocess.run(["javac", "-nowarn", "-cp", java_classpath(), "-d", str(into),
                           *map(str, sorted(sources.rglob("*.java")))], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return into


def run_java(main_class: str, *args: str, stdin: str | None = None, first: tuple[Path, ...] = (),
             je3: bool = False) -> list[str]:
    """The ``record<TAB>...`` lines a test program printed, without the prefix. Classes in
    the folders ``first`` take the place of test classes of the same name; ``je3``: run on JE 3.3."""
    require_test_classes()
    done = subprocess.run(["java", "-cp", java_classpath(*first, je3=je3), main_class, *map(str, args)],
                          input=stdin, capture_output=True, text=True, encoding="utf-8", errors="replace", timeout=120)
    assert done.returncode == 0, done.stderr
    return [line.split("\t", 1)[1] for line in done.stdout.splitlines() if line.startswith("record\t")]
