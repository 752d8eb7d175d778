"""What every server pycrawler starts on this machine needs: a free loopback port, and an end
for the child process that serves it.

They sit low, beside :mod:`pycrawler.errors`, because servers of every layer use them: the
static site the demo crawls (:mod:`pycrawler.static_site`) and the test and benchmark servers
(:mod:`pycrawler.testing`: redis-server, the synthetic web).
"""

from __future__ import annotations

import signal
import socket
import subprocess

LOOPBACK = "127.0.0.1"
STOP_TIMEOUT = 10.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return probe.getsockname()[1]


def terminate(process: subprocess.Popen, timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM to a child this program started, SIGKILL if it outlives ``timeout``; then reaped."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
