"""Failpoints: named places at the durable steps, where a crash test kills the process.

A durable step (a commit, a rename, a file removed after a commit) is only proven safe by
dying on each side of it. Each such place calls :func:`hit` with its name; a test names one
point, and the hit at which to die, in the environment of the process it starts::

    PYCRAWLER_FAILPOINT=drum.merge.committed:2   # SIGKILL at the second pass through that point

The process then sends itself SIGKILL, which is what ``kill -9`` from outside does, at exactly
that instant, with no handler, ``finally`` or ``atexit`` run. ``PYCRAWLER_FAILPOINT_TRACE=FILE``
appends the name of every point passed, one a line, so a harness learns which points a run
crosses and how often (the points of one mode differ from another's).

Off, a point costs one call of a function that returns at once: the variables are read once,
at import, and :func:`hit` is bound to a no-op. Points sit at per-flush or per-batch steps,
never per record.

:data:`POINTS` names every point; a test holds the code and this list to each other.
"""

from __future__ import annotations

import os
import signal

POINTS: dict[str, str] = {
    # filled in as the points are placed: name -> the durable step it sits at
    "bloom.create.written": "a new Bloom file written and reserved under its temporary name, before the rename",
    "bloom.create.renamed": "a new Bloom file renamed into place and its folder synced",
}
"""Every failpoint's name and the step it guards."""

ARM_VARIABLE = "PYCRAWLER_FAILPOINT"
TRACE_VARIABLE = "PYCRAWLER_FAILPOINT_TRACE"


def _off(name: str) -> None:
    """A point when no failpoint is armed and no trace is asked for."""


def _armed(point: str | None, at: int, trace: str | None):
    passes = 0

    def hit(name: str) -> None:
        nonlocal passes
        if trace is not None:
            with open(trace, "a", encoding="utf-8") as out:
                out.write(name + "\n")
        if name == point:
            passes += 1
            if passes == at:
                os.kill(os.getpid(), signal.SIGKILL)

    return hit


def _from_environment():
    spec, trace = os.environ.get(ARM_VARIABLE), os.environ.get(TRACE_VARIABLE)
    if not spec and not trace:
        return _off
    point, at = None, 1
    if spec:
        point, _, count = spec.partition(":")
        at = int(count) if count else 1
    return _armed(point, at, trace or None)


hit = _from_environment()
"""``hit(name)``: pass the failpoint ``name`` (module docstring)."""
