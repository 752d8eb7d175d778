"""Run several ``pycrawler`` commands in one process, for tests that run many over one store.

Each command goes through :func:`pycrawler.cli.main`, the console entry point, as it would in
a process of its own; the JVM (one per process, one JE per JVM) starts once for them all.
Reads a JSON list of argument lists on standard input and writes a JSON list of
``{"exit": N, "stdout": ..., "stderr": ...}`` on standard output, one per command.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys


def run(commands: list[list[str]]) -> list[dict]:
    from pycrawler.cli import main

    results = []
    for argv in commands:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
        results.append({"exit": code, "stdout": out.getvalue(), "stderr": err.getvalue()})
    return results


if __name__ == "__main__":
    json.dump(run(json.load(sys.stdin)), sys.stdout)
