"""The JE releases pycrawler knows, which log versions each reads, and which one opens a store.

Every JE writes one log version (JE's ``LogEntryType.LOG_VERSION``) into the header of each
``.jdb`` file it starts, and reads that version and every older one. Two releases cannot share a
JVM (same class names), and JPype starts one JVM per process, so a process runs on one JE, chosen
before the JVM starts:

- a JE the user named (a ``je-*.jar`` on ``PYCRAWLER_CLASSPATH``, such as a Heritrix 3 ``lib/``),
  when it reads the store;
- else the oldest known release that reads the store's log version: the one closest to the
  program that wrote it, so that an old store (a crawler4j 3.x frontier, a Heritrix 1 state) is
  read by the JE of its era and never converted on the way (JE 5 converts the duplicate
  databases of JE 4.0 and older);
- a new store: the first known of :data:`NEW_STORE_VERSIONS`.

Known releases, in a checkout: Debian's ``libdb-je-java`` (3.3.98, in ``target/lib`` by the Maven
build) and the releases Maven Central serves, which ``scripts/setup`` resolves into ``target/je/``
(18.3.12, the JE that reads every log version to 17; 5.0.73 and 4.0.92, crawler4j's eras). An
installed wheel knows only 18.3.12 (:mod:`pycrawler.jvm.jar_folder`), which then opens every store.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import SetupError
from .jar_folder import SETUP_HINT

LOG_VERSION_OF_LINE = {(3, 2): 5, (3, 3): 6, (4, 0): 7, (4, 1): 8, (5, 0): 8, (6, 0): 9, (6, 1): 9,
                       (6, 2): 10, (6, 3): 10, (6, 4): 11, (7, 0): 12, (7, 1): 13, (7, 2): 13, (7, 3): 14,
                       (7, 4): 14, (7, 5): 15, (18, 1): 16, (18, 3): 17}
"""The log version each JE release line writes (and so the newest it reads)."""

WRITERS = {5: "JE 3.2", 6: "JE 3.3 (Heritrix 1.14)", 7: "JE 4.0 (crawler4j 3.x)", 8: "JE 4.1 or 5.0 (crawler4j 4.x)",
           9: "JE 6.0", 10: "JE 6.2", 11: "JE 6.4", 12: "JE 7.0", 13: "JE 7.1 or 7.2", 14: "JE 7.3 or 7.4",
           15: "JE 7.5 (Heritrix 3.4+)", 16: "JE 18.1", 17: "JE 18.3"}
"""Which JE release writes each log version: for messages that name what a store needs."""

MAVEN_RELEASES = ("18.3.12", "5.0.73", "4.0.92")
"""``com.sleepycat:je`` versions that ``scripts/setup`` resolves from Maven Central."""

NEW_STORE_VERSIONS = (os.environ["PYCRAWLER_JE"],) if os.environ.get("PYCRAWLER_JE") else ("3.3.98", "18.3.12")
"""The release that writes pycrawler's own new stores, the first of these known, unless the user
named a JE (``PYCRAWLER_CLASSPATH``) or another known release (``PYCRAWLER_JE``): JE 3.3.98 where
it is built (see docs/store.md for the measurements behind it), else JE 18.3.12 (a wheel's only JE)."""

_JAR_NAME = re.compile(r"^(?:je|db-je)-(\d+)\.(\d+)[\d.]*\.jar$")


@dataclass(frozen=True)
class JeRelease:
    """One JE jar: its version (from the jar's name, as Maven and Debian name them) and where it is."""

    version: str
    jar: Path

    @classmethod
    def of_jar(cls, jar: Path) -> JeRelease | None:
        """The release a jar's name says (``je-7.5.11.jar``), None for another jar."""
        return cls(jar.name.split("-", 1)[1][:-len(".jar")] if jar.name.startswith("je-")
                   else jar.name[len("db-je-"):-len(".jar")], jar) if _JAR_NAME.match(jar.name) else None

    @property
    def line(self) -> tuple[int, int]:
        major, minor = self.version.split(".")[:2]
        return int(major), int(minor)

    @property
    def writes(self) -> int | None:
        """The log version this release writes; None for a release line pycrawler does not know."""
        return LOG_VERSION_OF_LINE.get(self.line)

    def reads(self, log_version: int) -> bool:
        return self.writes is not None and log_version <= self.writes

    def __str__(self) -> str:
        return f"JE {self.version}"


def writer_of(log_version: int) -> str:
    """The JE release that writes a log version, in words."""
    if log_version in WRITERS:
        return WRITERS[log_version]
    return "a JE newer than 18.3" if log_version > max(WRITERS) else "a JE older than 3.2"


def known(target: Path) -> list[JeRelease]:
    """The releases built or resolved under the project's ``target/``, oldest first."""
    jars = [*target.glob("lib/*.jar"), *target.glob("je/*.jar")]
    releases = {release.version: release for release in map(JeRelease.of_jar, jars) if release}
    return sorted(releases.values(), key=lambda release: tuple(map(int, release.version.split("."))))


def for_new_store(target: Path, user: JeRelease | None) -> JeRelease:
    """The JE that creates a new store: the user's, else the first known of :data:`NEW_STORE_VERSIONS`."""
    if user is not None:
        return user
    releases = {release.version: release for release in known(target)}
    for version in NEW_STORE_VERSIONS:
        if version in releases:
            return releases[version]
    named = "PYCRAWLER_JE" if os.environ.get("PYCRAWLER_JE") else "the JE of new stores"
    raise SetupError(f"JE {' or '.join(NEW_STORE_VERSIONS)} ({named}) is not among the JEs here "
                     f"({', '.join(releases) or 'none'}): {SETUP_HINT}")


def reader_of(log_version: int, where: str, target: Path, user: JeRelease | None) -> JeRelease:
    """The JE that opens a store of ``log_version`` (see the module docstring); one line naming
    the store, its log version, the release that writes it and what to install when none does."""
    if user is not None and user.reads(log_version):
        return user
    for release in known(target):
        if release.reads(log_version):
            return release
    newest = max(known(target), key=lambda r: r.writes or 0, default=None)
    hint = ("run scripts/setup, which resolves JE 18.3.12 from Maven Central" if newest is None or
            (newest.writes or 0) < 17 and log_version <= 17 else
            f"put a JE that reads it ({writer_of(log_version)} or later) on PYCRAWLER_CLASSPATH")
    return _unreadable(where, log_version, newest, hint)


def _unreadable(where: str, log_version: int, newest: JeRelease | None, hint: str):
    reads = f"the newest JE here ({newest.version}) reads log versions up to {newest.writes}" if newest else "no JE is built here"
    raise SetupError(f"{where} has JE log version {log_version}, written by {writer_of(log_version)}; {reads}: {hint}")
