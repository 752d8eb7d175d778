"""Live progress for long commands: a display on stderr when stderr is a terminal, nothing otherwise.

Every long command (``crawl``, ``store dump``/``load``, ``heritrix export``/``import``, the
benchmarks) decides here when to draw, so they all agree: ``--progress`` forces the display,
``--no-progress`` turns it off, and by default it shows only when stderr is a terminal. Output
piped to a file or read by CI therefore stays exactly the plain lines it always was, and
progress never goes to standard output, where the data goes (``store dump`` to stdout is
byte-identical with or without a display).

The display is tqdm's: a counter with its rate, elapsed time and, given a total, a bar and an
ETA (:func:`meter`), and for what a counter cannot show (the crawl's queues, pending and seen
URLs, bytes/s) a text line drawn under it (:func:`status_line`). tqdm is already the project's
bar (``cache-sim``), has no dependencies of its own, and its ``update`` costs a counter add
and, now and then, a clock read, which the crawl's per-fetch path can afford; a disabled tqdm
does nothing at all. rich would draw the same fields in a table, at the price of a console
library (and its pygments and markdown dependencies) and a refresh thread competing with the
crawl's event loop for the GIL.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from tqdm import tqdm


_command_choice: bool | None = None
"""What the command's ``--progress`` / ``--no-progress`` said (None: neither), for what a command
draws below its own meters: a store's recovery shown while it opens."""


def choose(choice: bool | None) -> None:
    """Records the command's ``--progress`` / ``--no-progress`` for every display of the process."""
    global _command_choice
    _command_choice = choice


def wanted(choice: bool | None, stream: TextIO | None = None) -> bool:
    """Whether to draw: ``choice`` when given, else the command's (:func:`choose`), else whether
    ``stream`` (stderr) is a terminal."""
    if choice is None:
        choice = _command_choice
    if choice is not None:
        return choice
    stream = sys.stderr if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or already closed
        return False


def meter(desc: str, *, total: int | Callable[[], int] | None = None, unit: str = "it", enabled: bool | None = None,
          stream: TextIO | None = None, position: int | None = None, unit_scale: bool = False) -> tqdm:
    """A counter drawn on ``stream`` (default stderr) when :func:`wanted`; use it as a context
    manager and call ``update(n)`` as work is done. ``unit`` is plural (``records``): the display
    reads ``12345 records [00:03, 4115.0 records/s]``; with ``unit_scale``, ``12.3k records``.
    A ``total`` adds a bar and an ETA; given as a function, it is called only when the meter is
    drawn (JE counts a database by walking it: a plain run should not pay for that)."""
    from tqdm import tqdm  # here, not at the top: every command's start-up imports this module

    stream = sys.stderr if stream is None else stream
    shown = wanted(enabled, stream)
    if callable(total):
        total = total() if shown else None
    return tqdm(desc=desc, total=total, unit=f" {unit}", unit_scale=unit_scale, file=stream, position=position,
                disable=not shown, dynamic_ncols=True)


def status_line(*, enabled: bool | None = None, stream: TextIO | None = None, position: int = 1) -> tqdm:
    """A line of text drawn under a :func:`meter` (``set_description_str(text)`` redraws it)."""
    from tqdm import tqdm

    stream = sys.stderr if stream is None else stream
    return tqdm(bar_format="{desc}", file=stream, position=position, disable=not wanted(enabled, stream),
                dynamic_ncols=True)


def add_option(parser: argparse.ArgumentParser) -> None:
    """``--progress`` / ``--no-progress``, for a command that draws through :func:`meter`."""
    parser.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                        help="show a live progress display on stderr (default: when stderr is a terminal)")
