"""A pseudo-terminal to run a command under, as a user's shell does: what draws only on a
terminal (pycrawler's live progress) draws, and what it shows is kept. The crawl benchmarks
measure a crawl with its live display this way, and the progress tests check the display."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import struct
import termios
import threading
from collections.abc import Iterator
from typing import BinaryIO


@contextlib.contextmanager
def pseudo_terminal(log: BinaryIO, columns: int = 120) -> Iterator[int]:
    """A pseudo-terminal ``columns`` wide (a fresh one has no size, and tqdm draws nothing in
    zero columns): yields the file descriptor to give a child as its stdout or stderr; what the
    terminal shows is copied into ``log`` until the block ends, after the child is done."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))

    def copy():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer has closed the terminal
                return
            if not data:
                return
            log.write(data)

    copier = threading.Thread(target=copy, daemon=True)
    copier.start()
    try:
        yield slave
    finally:
        os.close(slave)
        copier.join(timeout=10)
        os.close(master)
