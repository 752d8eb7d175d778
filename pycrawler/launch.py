"""The ``pycrawler`` console script and ``python -m pycrawler``: stop signals handled from the start.

Importing the command line takes a second or more (numpy, numba, JPype and every command
group), and a SIGINT or SIGTERM then must end the run as at any later instant: one line and
128 + its number, never Python's defaults (death by SIGTERM, a trace for SIGINT). So the first
thing this module does, before it imports anything else, is to note those signals; then the
handler of :mod:`pycrawler.crawl.stop_signals` takes over for the life of the process (a crawl
takes it over in turn for its own phases). Before the first line of this module the interpreter
starts, which no Python code can cover: the ``pycrawler`` command's front (``scripts/pycrawler``)
starts it with those signals blocked, and this module unblocks them once its handler is in
place, so one sent meanwhile is handled here (``python -m pycrawler`` has no front).

The end is covered too. After the exit hooks (the JVM's shutdown among them) the interpreter
tears its modules down with Python's signal handling switched off, a few hundred ms with
numpy, numba and LLVM loaded, and a SIGTERM there would kill the process with no word. That
teardown has nothing of pycrawler's to write, so the process ends after the last exit hook.
"""

from __future__ import annotations

import atexit
import signal

_noted: list[int] = []
for _signum in (signal.SIGINT, signal.SIGTERM):  # while the handler's own modules load
    signal.signal(_signum, lambda signum, frame: _noted.append(signum))
# Blocked by the command's front (module docstring): one that came during the interpreter's start is noted now.
signal.pthread_sigmask(signal.SIG_UNBLOCK, (signal.SIGINT, signal.SIGTERM))


def _end_after_the_exit_hooks() -> None:
    """Registered first, so run last of the exit hooks: end the process before the teardown,
    with the command's exit code (or 128 + a signal that came since).

    The exit code is decided with the stop signals blocked: one that comes after the decision
    (while the kernel releases the process's memory, tens of ms for a JVM's) stays pending and
    changes nothing, and ``/proc/PID/status`` shows them blocked (``SigBlk``) from then on."""
    if _signals is not None and _signals.exit_code is not None:
        signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # (a signal that came just before is handled here)
        pending = sorted(signal.sigpending() & set(STOP_SIGNALS))
        exit_code = 128 + pending[0] if pending else _signals.exit_code
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed or broken pipe: nothing more to say on it
                stream.flush()
        os._exit(exit_code)


atexit.register(_end_after_the_exit_hooks)

# The imports after the exit hook: it must be registered before any module that could register its own.
import contextlib  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402

from .crawl.stop_signals import COMMAND, STOP_SIGNALS, Interrupted, StopSignals  # noqa: E402

_signals: StopSignals | None = None
"""The process's handler, from :func:`main` on."""


def main() -> int:
    global _signals
    _signals = signals = StopSignals().__enter__()  # never exited: the process's handler until it ends
    exit_code = None
    try:
        exit_code = _run_command(signals)
    except SystemExit as exit_:  # argparse's --help or usage error
        if exit_.code is None or isinstance(exit_.code, int):
            exit_code = exit_.code or 0
        raise
    finally:
        signals.exiting(exit_code)
    return exit_code


def _run_command(signals: StopSignals) -> int:
    try:
        if _noted:  # before the handler was in place
            signals.caught = _noted[0]
        signals.checkpoint()
        from .cli import main as run_command

        signals.checkpoint()  # a signal noted during the imports
        signals.phase = COMMAND
        return run_command()
    except Interrupted as stopped:  # outside the command's own error handling: imports, arguments
        print(f"pycrawler: {stopped}", file=sys.stderr)
        return stopped.exit_code

