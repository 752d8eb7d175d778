"""Where pycrawler's jars are: an installed wheel's own ``pycrawler/java/``, else a checkout's ``target/``.

Both folders have one layout: ``pycrawler-bridge.jar`` (the Maven build of ``bridge/``),
``lib/*.jar`` (its runtime dependencies) and ``je/*.jar`` (JE releases). A checkout's
``target/`` is filled by ``scripts/setup``: the bridge, Debian's JE 3.3.98 in ``lib/`` and the
JEs from Maven Central in ``je/``. A wheel's build (``setup.py``) copies the bridge and JE
18.3.12 with its licence into ``pycrawler/java/``; JE 3.3.98, 4.0.92 and 5.0.73 are under the
Sleepycat licence and stay out of it, so a wheel runs every store on JE 18, which reads every
log version to 17. ``PYCRAWLER_HOME`` names a checkout to take ``target/`` from instead.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
"""The ``pycrawler`` package folder (this module is in its ``jvm/``)."""
BUNDLED = PACKAGE / "java"
"""An installed wheel's jars; a checkout has no such folder (the build writes it into the wheel only)."""

_HOME = os.environ.get("PYCRAWLER_HOME")
IN_WHEEL = _HOME is None and BUNDLED.is_dir()
"""True when this is an installed wheel, which carries its own jars."""

ROOT = PACKAGE.parent if IN_WHEEL else Path(_HOME or PACKAGE.parent)
"""What jar paths are shown relative to: the checkout, or the folder the package is installed in."""
FOLDER = BUNDLED if IN_WHEEL else ROOT / "target"
BRIDGE_JAR = FOLDER / "pycrawler-bridge.jar"

SETUP_HINT = ("this installation carries JE 18.3.12 only (the wheel leaves out the JEs under the Sleepycat "
              "licence); put the JE you need on PYCRAWLER_CLASSPATH" if IN_WHEEL else "run scripts/setup")
"""What to do when a jar pycrawler looks for is not here."""
