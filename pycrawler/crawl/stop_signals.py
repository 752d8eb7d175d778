"""SIGINT and SIGTERM in every phase of a crawl: start-up, the event loop and close.

One handler serves the whole run, so no phase falls back to Python's defaults (SIGTERM's
default kills the process on the spot, with no word and a state that only a kill -9 leaves):

- **start-up** (settings, JE recovery, the repair of ``.open`` WARC files): the signal raises
  :class:`Interrupted` where the start-up is, which unwinds what was opened; nothing is lost,
  since start-up only recovers what the last run left and the next run recovers it again;
- **running**: the signal is handed to the event loop (the crawler's graceful stop);
- **closing**: the signal is noted and the close finishes, since a half-done close is the
  state a kill -9 leaves; the run then ends as stopped by that signal.

JE's recovery of a large log, the one long Java call of a start-up, runs off the main thread
(:func:`pycrawler.store.environment._recovering`), so a signal stops it at once too.
"""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable

from ..errors import PycrawlerError

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""Signals that stop a crawl gracefully (a second one: at once); the CLI exits 128 + signal."""

STARTING, RUNNING, CLOSING = "start-up", "running", "close"


class Interrupted(PycrawlerError):
    """A stop signal arrived during start-up: the run ends with 128 + its number."""

    def __init__(self, signum: int, phase: str):
        self.signum = signum
        self.exit_code = 128 + signum
        done = "nothing is lost" if phase == STARTING else "the crawl closed cleanly"
        super().__init__(f"stopped by {signal.Signals(signum).name} during {phase}: {done}; "
                         "run the same command to resume")


class StopSignals:
    """``with StopSignals() as signals``: the stop signals handled by phase (module docstring).

    :meth:`running` hands them to ``on_signal`` on the event loop, :meth:`closing` notes them;
    :attr:`caught` is the first signal noted outside the loop. Outside the main thread (where
    Python cannot handle signals) it does nothing."""

    def __init__(self) -> None:
        self.phase = STARTING
        self.caught: int | None = None
        self._on_signal: Callable[[int], None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._previous: dict[int, object] = {}

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            self._previous = {signum: signal.signal(signum, self._handle) for signum in STOP_SIGNALS}
        return self

    def claim(self) -> None:
        """Take the stop signals back once the JVM has started: it installs its own handlers,
        which end the process at once (exit 128 + n, no word, nothing closed)."""
        if self._previous:
            for signum in STOP_SIGNALS:
                signal.signal(signum, self._handle)

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def running(self, loop: asyncio.AbstractEventLoop, on_signal: Callable[[int], None]) -> None:
        """From now on a signal calls ``on_signal(signum)`` on ``loop``."""
        self._loop, self._on_signal, self.phase = loop, on_signal, RUNNING

    def closing(self) -> None:
        """From now on a signal is noted, and the close goes on."""
        self.phase = CLOSING

    def _handle(self, signum: int, frame) -> None:
        if self.phase == RUNNING:
            self._loop.call_soon_threadsafe(self._on_signal, signum)
            return
        if self.caught is None:
            self.caught = signum
        if self.phase == STARTING:
            self.phase = CLOSING  # what start-up opened closes as it unwinds, whatever comes next
            raise Interrupted(signum, STARTING)
