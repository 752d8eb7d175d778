"""Keep the JVM's fault handlers in place until the JVM has shut down.

HotSpot needs its own SIGSEGV (and SIGBUS, SIGILL, SIGFPE) handler while it runs: a safepoint
poll in compiled code is a read of a page the JVM protects, and the fault is how a thread stops
for the safepoint. Python code that saved the handlers before the JVM started and puts them
back later leaves the JVM without them: ``faulthandler.disable()`` does exactly that, and
pytest's faulthandler plugin enables at start-up and disables at exit, before the interpreter
shuts the JVM down. The next safepoint (JVM shutdown arms them while JE's threads and the
fork-join pool may still run compiled code) then kills the process with a raw SIGSEGV after
everything has succeeded (tests/test_jvm.py reproduces it: 6 of 6 runs crashed).

:func:`keep` snapshots the handlers right after the JVM started and registers an exit hook
that puts them back. Exit hooks run last-registered first, so it runs before JPype's own
shutdown hook, registered when ``jpype`` was imported. JPype after 1.7.1 does the same in C++.
The snapshot is an opaque ``struct sigaction`` (the buffer is larger than any platform's), so
nothing here depends on its layout.
"""

from __future__ import annotations

import atexit
import ctypes
import signal

SIGNALS = tuple(getattr(signal, name) for name in ("SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE") if hasattr(signal, name))
_SIGACTION_BYTES = 512


def _libc():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc if hasattr(libc, "sigaction") else None
    except OSError:  # no C library by that name (Windows): nothing to keep
        return None


def keep() -> None:
    """Snapshot the JVM's fault handlers now and put them back at exit, before JPype shuts
    the JVM down."""
    libc = _libc()
    if libc is None:
        return
    snapshot = {}
    for signum in SIGNALS:
        action = ctypes.create_string_buffer(_SIGACTION_BYTES)
        if libc.sigaction(signum, None, action) == 0:
            snapshot[signum] = action
    atexit.register(_restore, libc, snapshot)


def _restore(libc, snapshot: dict) -> None:
    for signum, action in snapshot.items():
        libc.sigaction(signum, action, None)
