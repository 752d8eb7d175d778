"""SIGINT and SIGTERM at any instant of a run, from the first line of Python to the exit.

One handler serves the whole process, so no phase falls back to Python's defaults (SIGTERM's
default kills the process on the spot, with no word and a state that only a kill -9 leaves).
The console script installs it before anything heavy is imported (:mod:`pycrawler.launch`),
the crawl takes it over for its own phases (:class:`StopSignals`), and the JVM is told to leave
it in place (:func:`pycrawler.jvm.start`):

- **start-up** (the imports, settings, the JVM's start, JE's open, the seen table, the repair
  of ``.open`` WARC files): the signal is noted and acted on at the next safe point, where the
  run ends with one line (:class:`Interrupted`; nothing is lost: start-up only recovers what
  the last run left, and the next run recovers it again): after the imports
  (:mod:`pycrawler.launch`), after the JVM's start (:meth:`StopSignals.claim`), at any other
  :meth:`StopSignals.checkpoint`, or at the first turn of the event loop, which stops the
  crawl gracefully before it fetches anything (its summary, and 128 + n).
  The two long steps of a start-up stop at once, where an exception is known to unwind
  cleanly (:data:`INTERRUPTIBLE`): the wait for JE's recovery (which runs off the main thread,
  :func:`pycrawler.store.environment._recovering`) and the reading of a ``.open`` WARC file;
- **a command** other than ``crawl``: the signal stops it where it is (:class:`Interrupted`),
  unless JPype or an import is under way, and then a moment later;
- **running**: the signal is handed to the event loop (the crawler's graceful stop);
- **closing**: the signal is noted and the close finishes, since a half-done close is the
  state a kill -9 leaves; the run then ends as stopped by that signal;
- **exiting** (the command is done; the exit hooks run, the JVM's shutdown among them): the
  signal sets the exit code to 128 + its number, and the process ends after the exit hooks
  (:mod:`pycrawler.launch`).

Why not raise where the signal finds the main thread, as Python's KeyboardInterrupt does? An
exception can then come out of any line: inside JPype's own Python code while a Java call is
under way ("Fatal error in exception handling", SIGABRT and a JVM error file), inside an import
(numpy turns it into an ImportError of its own), or between JE opening a database and the
store noting it (whose close then fails, "There is 1 open Database"). A noted signal is looked
at again every :data:`HANDLE_AGAIN_AFTER` seconds, so one that came just before an interruptible
step stops that step too.
"""

from __future__ import annotations

import _thread
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import jvm
from ..errors import PycrawlerError

if TYPE_CHECKING:  # asyncio itself is not imported before the crawl needs it: this module runs first
    import asyncio

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Signals that stop a crawl gracefully (a second one: at once); the CLI exits 128 + signal."""

STARTING, COMMAND, RUNNING, CLOSING, EXITING = "start-up", "command", "running", "close", "exit"
"""The phases (module docstring)."""

INTERRUPTIBLE = {
    ("pycrawler.store.environment", "_recovering"): "concurrent.futures",
    ("pycrawler.crawl.warc", "repair"): "",
}
"""The start-up steps a signal stops at once: (module, function) -> the module the function
must be calling into at that instant ("": any). JE's recovery only while it is waited for (the
worker thread recovers, and a kill at any point leaves it to be done again); the repair of a
``.open`` WARC file anywhere (it reads, then cuts and renames; the next run does it again)."""

HANDLE_AGAIN_AFTER = 0.01
"""Seconds after which a signal that could not be acted on is handled again."""


class Interrupted(PycrawlerError):
    """A stop signal ended the run outside the crawl's graceful stop: 128 + its number."""

    def __init__(self, signum: int, phase: str):
        self.signum = signum
        self.exit_code = 128 + signum
        name = signal.Signals(signum).name
        if phase == COMMAND:
            super().__init__(f"stopped by {name}")
            return
        done = "nothing is lost" if phase == STARTING else "the crawl closed cleanly"
        super().__init__(f"stopped by {name} during {phase}: {done}; run the same command to resume")


class StopSignals:
    """``with StopSignals() as signals``: the stop signals handled by phase (module docstring).

    :meth:`running` hands them to ``on_signal`` on the event loop, :meth:`closing` notes them,
    :meth:`exiting` makes them the exit code; :attr:`caught` is the first signal. Outside the
    main thread (where Python cannot handle signals) it does nothing."""

    def __init__(self) -> None:
        self.phase = STARTING
        self.caught: int | None = None
        self._again: threading.Timer | None = None  # the next look at a signal not acted on yet
        self._on_signal: Callable[[int], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, object] = {}
        self.exit_code: int | None = None  # set when exiting

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            self._previous = {signum: signal.signal(signum, self._handle) for signum in STOP_SIGNALS}
        return self

    def claim(self) -> None:
        """Once the JVM has started, and before JE opens: a safe point, where a signal noted
        during start-up stops the run. Takes the stop signals back too: :func:`pycrawler.jvm.start`
        asks JPype to leave them alone, but a JVM started otherwise installs its own handlers,
        which end the process at once (exit 128 + n, no word, nothing closed)."""
        if self._previous:
            for signum in STOP_SIGNALS:
                signal.signal(signum, self._handle)
        self.checkpoint()

    def checkpoint(self) -> None:
        """A safe point of the start-up: a signal noted so far stops the run here."""
        if self.phase == STARTING and self.caught is not None:
            self._stop(self.caught)

    def __exit__(self, *exc) -> None:
        self._forget_again()
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def running(self, loop: asyncio.AbstractEventLoop, on_signal: Callable[[int], None]) -> None:
        """From now on a signal calls ``on_signal(signum)`` on ``loop``; one noted during the
        start-up's last steps stops the crawl now, before it fetches anything."""
        self._forget_again()
        self._loop, self._on_signal, self.phase = loop, on_signal, RUNNING
        if self.caught is not None:
            loop.call_soon(on_signal, self.caught)

    def closing(self) -> None:
        """From now on a signal is noted, and the close goes on."""
        self.phase = CLOSING

    def exiting(self, exit_code: int | None) -> None:
        """The command is over with ``exit_code`` (None: it failed with a trace); from now on
        a signal makes :attr:`exit_code` 128 + its number."""
        self.phase, self.exit_code = EXITING, exit_code

    def _handle(self, signum: int, frame) -> None:
        if self.caught is None:
            self.caught = signum
        if self.phase == RUNNING:
            self._loop.call_soon_threadsafe(self._on_signal, signum)
        elif self.phase == EXITING:
            self.exit_code = 128 + signum
        elif self.phase in (STARTING, COMMAND):
            if _interruptible(frame) if self.phase == STARTING else not _uninterruptible(frame):
                self._stop(signum)
            self._handle_again_later(signum)

    def _stop(self, signum: int) -> None:
        self._forget_again()
        phase, self.phase = self.phase, CLOSING  # what start-up opened closes as it unwinds
        raise Interrupted(signum, phase)

    def _handle_again_later(self, signum: int) -> None:
        """Run the handler again in :data:`HANDLE_AGAIN_AFTER` seconds, as if ``signum`` came
        again (Python's own way to signal its main thread: no signal is sent)."""
        self._again = threading.Timer(HANDLE_AGAIN_AFTER, _thread.interrupt_main, (signum,))
        self._again.daemon = True
        self._again.start()

    def _forget_again(self) -> None:
        if self._again is not None:
            self._again.cancel()
            self._again = None


def _interruptible(frame) -> bool:
    """Whether the main thread, at ``frame``, is in a step of :data:`INTERRUPTIBLE`, and not
    inside JPype or an import within it."""
    callee = None
    while frame is not None:
        if _uninterruptible_here(frame):
            return False
        calling_into = INTERRUPTIBLE.get((frame.f_globals.get("__name__"), frame.f_code.co_name))
        if calling_into is not None:
            return not calling_into or (callee is not None and _module(callee).startswith(calling_into))
        callee, frame = frame, frame.f_back
    return False


def _uninterruptible(frame) -> bool:
    """Whether the main thread, at ``frame``, is inside the Java bridge's own code or an import."""
    while frame is not None:
        if _uninterruptible_here(frame):
            return True
        frame = frame.f_back
    return False


def _uninterruptible_here(frame) -> bool:
    return (_module(frame).partition(".")[0] in jvm.BRIDGE_MODULES
            or frame.f_code.co_filename.startswith("<frozen importlib"))


def _module(frame) -> str:
    return frame.f_globals.get("__name__") or ""
