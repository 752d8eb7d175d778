"""``pycrawler version``: what is actually loaded, not what was asked for, and the JEs known."""

from __future__ import annotations

import argparse

from .. import __version__, jvm
from ..jvm import jar_folder


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("version", help="pycrawler, Java and JE versions actually loaded, and the JEs known")
    p.set_defaults(run=run_version)


def run_version(args: argparse.Namespace) -> int:
    print(f"pycrawler {__version__}")
    print(f"java {jvm.java_version()}")
    print(f"je {jvm.je_version()} (writes new stores)")
    user = jvm.user_je()
    print("JEs known, each opening the stores whose newest log file it reads (the oldest that does):")
    for je in ([user] if user else []) + jvm.known_jes():
        origin = "PYCRAWLER_CLASSPATH, first" if je is user else je.jar.relative_to(jar_folder.ROOT)
        reads = f"log versions up to {je.writes}" if je.writes else "log versions unknown to pycrawler"
        print(f"  {je.version:<9} {reads:<24} {origin}")
    return 0
