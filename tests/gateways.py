"""``pycrawler serve`` processes for tests (the private runtime folder their tokens go to is
conftest's ``runtime`` fixture)."""

from __future__ import annotations

import selectors
import signal
import subprocess
import sys

IDLE_TIMEOUT = 1.5


class Server:
    """A ``pycrawler serve`` process and its address; ``env``: the process's environment
    variables (None: this one's, e.g. for another JE through ``PYCRAWLER_CLASSPATH``)."""

    def __init__(self, folder, *extra, env: dict | None = None):
        self.folder = folder
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pycrawler", "serve", str(folder),
             *([] if "--read-only" in extra else ["--create"]), "--idle-timeout", str(IDLE_TIMEOUT), *extra],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.address = self._first_line()

    def _first_line(self, timeout: float = 60) -> str:
        selector = selectors.DefaultSelector()
        selector.register(self.process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout):
            self.kill()
            raise AssertionError("pycrawler serve printed no address")
        line = self.process.stdout.readline().strip()
        assert line.startswith("py4j://127.0.0.1:"), (line, self.stop())
        return line

    def stop(self) -> str:
        """SIGTERM, wait; its standard error."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, err = self.process.communicate(timeout=60)
        return err

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate(timeout=60)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
