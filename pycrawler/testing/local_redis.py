"""A private ``redis-server`` on a free loopback port, for the tests and benchmarks of a cluster.

It runs as a child process in the foreground with its data (the append-only file: every write
is logged and fsynced, so a restart loses nothing acknowledged) in a folder of its own, and
binds 127.0.0.1 only. :meth:`LocalRedis.stop` ends only the process this object started.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from ..errors import SetupError
from ..local_servers import free_port, terminate

START_TIMEOUT = 10.0


def find_redis_server() -> str | None:
    return shutil.which("redis-server") or next(
        (p for p in ("/usr/bin/redis-server", "/usr/sbin/redis-server") if Path(p).is_file()), None)


class LocalRedis:
    """``with LocalRedis(folder) as redis_url``; :meth:`restart` keeps the port and the data."""

    def __init__(self, folder: Path, *, password: str | None = None):
        self.executable = find_redis_server()
        if self.executable is None:
            raise SetupError("redis-server is not installed (scripts/setup installs Debian's redis-server)")
        self.folder, self.password = Path(folder), password
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        auth = f":{self.password}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def start(self) -> str:
        command = [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
                   "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no",
                   "--logfile", str(self.folder / "redis.log")]
        if self.password:
            command += ["--requirepass", self.password]
        self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        self._wait_ready()
        return self.url

    def _wait_ready(self) -> None:
        import redis

        client = redis.Redis(host="127.0.0.1", port=self.port, password=self.password, socket_timeout=1)
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SetupError(f"redis-server exited at start; see {self.folder / 'redis.log'}")
            try:
                if client.ping():
                    client.close()
                    return
            except redis.ConnectionError:
                time.sleep(0.05)
            except redis.BusyLoadingError:
                time.sleep(0.05)
        self.stop()
        raise SetupError("redis-server did not answer within 10 s")

    def stop(self) -> None:
        """SIGTERM (Redis flushes its append-only file and exits), SIGKILL if it lingers."""
        process, self.process = self.process, None
        if process is not None:
            terminate(process)

    def restart(self, down_for: float = 0.0) -> None:
        self.stop()
        time.sleep(down_for)
        self.start()

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
