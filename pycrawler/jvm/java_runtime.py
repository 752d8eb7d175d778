"""The Java runtime pycrawler starts in-process: its ``libjvm``, found before the JVM starts.

In order: ``JAVA_HOME`` (when set, it is the user's choice, so a folder that holds no runtime is
named rather than passed over); else the ``java`` on ``PATH``, whose real path leads to its
home; else JPype's own search (``/usr/lib/jvm`` and the like). None found, or one older than
the bridge's class files need (Java 11), is one line saying what to install.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from ..errors import SetupError

MINIMUM = 11
"""The oldest Java the bridge runs on: Maven compiles it for release 11 (pom.xml)."""
INSTALL = f"install a Java runtime {MINIMUM} or newer (e.g. openjdk-17-jre-headless) or set JAVA_HOME to one"
LIBRARIES = ("libjvm.so", "libjvm.dylib", "jvm.dll")
_RELEASE_VERSION = re.compile(r'^JAVA_VERSION="(\d+)(?:\.(\d+))?', re.MULTILINE)


def libjvm() -> Path:
    """The ``libjvm`` of the Java runtime to start (see the module docstring)."""
    if java_home := os.environ.get("JAVA_HOME"):
        library = in_home(Path(java_home))
        if library is None:
            raise SetupError(f"JAVA_HOME ({java_home}) holds no Java runtime: {INSTALL}")
        return checked(library, Path(java_home))
    if java := shutil.which("java"):
        home = Path(java).resolve().parent.parent  # HOME/bin/java, through the alternatives' links
        if library := in_home(home):
            return checked(library, home)
    return checked(_jpype_default(), None)


def in_home(home: Path) -> Path | None:
    """The JVM library under a Java home, the server VM first; None when there is none."""
    if not home.is_dir():
        return None
    found = [path for name in LIBRARIES for path in home.glob(f"**/{name}")]
    return min(found, key=lambda path: (path.parent.name != "server", len(path.parts)), default=None)


def _jpype_default() -> Path:
    import jpype

    try:
        return Path(jpype.getDefaultJVMPath())
    except (jpype.JVMNotFoundException, jpype.JVMNotSupportedException):
        raise SetupError(f"no Java runtime found (JAVA_HOME is unset, no java on PATH): {INSTALL}") from None


def checked(library: Path, home: Path | None) -> Path:
    """``library``, unless its home's ``release`` file says it is older than :data:`MINIMUM`."""
    version = feature_version(home or _home_of(library))
    if version is not None and version < MINIMUM:
        raise SetupError(f"{library} is Java {version}, older than the bridge runs on: {INSTALL}")
    return library


def _home_of(library: Path) -> Path:
    """A Java home holding ``library``: the nearest folder above it with a ``release`` file."""
    return next((folder for folder in library.parents if (folder / "release").is_file()), library.parent)


def feature_version(home: Path) -> int | None:
    """The Java feature version a home's ``release`` file names (``1.8.0_392``: 8), if it has one."""
    try:
        match = _RELEASE_VERSION.search((home / "release").read_text(errors="replace"))
    except OSError:
        return None
    if match is None:
        return None
    major = int(match[1])
    return int(match[2] or 0) if major == 1 else major
