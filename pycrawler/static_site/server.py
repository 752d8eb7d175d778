"""A directory served over HTTP on 127.0.0.1: the site the demo, the tests and the crawl benchmark crawl.

:class:`StaticSite` serves with nginx when it is installed (Debian's ``nginx-light``, which
``scripts/setup`` installs): a static-file server written in C, with two worker processes,
so that a crawl measured against it measures the crawler and not the server. nginx runs as
a child process in the foreground (``daemon off``) with a configuration generated into a
temporary directory that also holds its PID file, error log and temp paths, so nothing
outside that directory is read or written but the served files and nginx's own
``mime.types``. Without nginx, a threaded :mod:`http.server` in this process serves the same
files (correct, but a bottleneck for a benchmark: :attr:`StaticSite.kind` says which ran).

Only 127.0.0.1 is ever bound. :meth:`StaticSite.stop` ends only the nginx master process
this object started (which takes its workers down with it) and waits for it.
"""

from __future__ import annotations

import functools
import grp
import http.server
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from ..errors import BadInput, SetupError
from ..local_servers import LOOPBACK, free_port, terminate

NGINX_WORKERS = 2
START_TIMEOUT = 10.0
PORT_ATTEMPTS = 3
"""A free port is found by binding port 0 and releasing it; another program may take it before
nginx binds it, so a start that fails on a busy port is retried on a new one."""

_NGINX_CANDIDATES = ("/usr/sbin/nginx", "/usr/local/sbin/nginx")
_MIME_TYPES = Path("/etc/nginx/mime.types")
_FALLBACK_TYPES = "types { text/html html htm; text/css css; application/javascript js; image/png png; }"


def find_nginx() -> str | None:
    """The nginx executable (on PATH or in the sbin folders PATH often lacks), None if absent."""
    found = shutil.which("nginx")
    if found:
        return found
    return next((path for path in _NGINX_CANDIDATES if os.access(path, os.X_OK)), None)


def worker_user() -> str:
    """nginx's ``user`` directive that keeps its workers as the invoking user ('' unless root).
    Run as root, nginx's master drops its workers to `nobody`, who cannot read a private
    directory such as a test's tmp_path."""
    if os.geteuid() != 0:
        return ""
    return f"user {pwd.getpwuid(os.getuid()).pw_name} {grp.getgrgid(os.getgid()).gr_name};"


def nginx_config(root: Path, port: int, scratch: Path, *, workers: int = NGINX_WORKERS) -> str:
    """An nginx.conf serving ``root`` on 127.0.0.1:``port``, every writable path inside ``scratch``."""
    user = worker_user()
    types = f"include {_MIME_TYPES};" if _MIME_TYPES.is_file() else _FALLBACK_TYPES
    temp_paths = "\n".join(f"    {name}_temp_path {scratch / name};"
                           for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    return f"""\
daemon off;
master_process on;
worker_processes {workers};
{user}
pid {scratch / "nginx.pid"};
error_log {scratch / "error.log"} warn;
events {{
    worker_connections 1024;
}}
http {{
    {types}
    default_type application/octet-stream;
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
{temp_paths}
    server {{
        listen {LOOPBACK}:{port};
        server_name localhost;
        root {root};
        index index.html;
    }}
}}
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Static files over HTTP/1.1 keep-alive (as nginx serves them), without a log line per request."""

    protocol_version = "HTTP/1.1"
    timeout = 5  # an idle keep-alive connection's thread ends instead of outliving stop()

    def log_message(self, format, *args):  # the base class's signature
        pass


class StaticSite:
    """Serves the files under ``root`` at ``http://127.0.0.1:<free port>/``.

    ``server``: ``"auto"`` (nginx if installed, else Python), ``"nginx"`` (SetupError without
    it) or ``"python"``. Use as a context manager, which gives the base URL::

        with StaticSite(docs) as base_url:
            crawl(base_url + "index.html")
    """

    def __init__(self, root: str | Path, *, server: str = "auto", workers: int = NGINX_WORKERS):
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise BadInput(f"{root}: not a directory to serve")
        if server not in ("auto", "nginx", "python"):
            raise BadInput(f"server must be auto, nginx or python, not {server!r}")
        self._nginx = find_nginx() if server != "python" else None
        if server == "nginx" and self._nginx is None:
            raise SetupError("nginx is not installed (scripts/setup installs Debian's nginx-light)")
        self.kind = "nginx" if self._nginx else "python"
        self.workers = workers
        self.url: str | None = None
        self.pid: int | None = None  # the nginx master's, None for the in-process server
        self._process: subprocess.Popen | None = None
        self._scratch: tempfile.TemporaryDirectory | None = None
        self._server: http.server.ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Start serving; the base URL, ending in ``/``."""
        if self.url is not None:
            raise RuntimeError("this site is already being served")
        port = self._start_nginx() if self._nginx else self._start_python()
        self.url = f"http://{LOOPBACK}:{port}/"
        return self.url

    def stop(self) -> None:
        """Stop serving and wait until the server is gone. Safe to call twice."""
        if self._process is not None:
            self._stop_process()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join()
            self._server = self._thread = None
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None
        self.url = None

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # nginx

    def _start_nginx(self) -> int:
        self._scratch = tempfile.TemporaryDirectory(prefix="pycrawler-site-")
        scratch = Path(self._scratch.name)
        config = scratch / "nginx.conf"
        for _attempt in range(PORT_ATTEMPTS):
            port = free_port()
            config.write_text(nginx_config(self.root, port, scratch, workers=self.workers))
            with open(scratch / "stderr.log", "wb") as stderr:
                # -e: nginx opens its compiled-in error log before reading the config; point it here.
                self._process = subprocess.Popen(
                    [self._nginx, "-p", str(scratch), "-c", str(config), "-e", str(scratch / "error.log")],
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=stderr)
            self.pid = self._process.pid
            if self._wait_listening(port):
                return port
            complaint = self._nginx_complaint(scratch)
            self._process = self.pid = None
            if "Address already in use" not in complaint:
                break
        self.stop()
        raise SetupError(f"nginx did not start: {complaint.strip() or 'no message'}")

    def _wait_listening(self, port: int) -> bool:
        """True once nginx accepts connections on ``port``; False (and nginx reaped) if it exited."""
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                return False
            try:
                socket.create_connection((LOOPBACK, port), timeout=0.2).close()
                return True
            except OSError:
                time.sleep(0.02)
        self._stop_process()
        return False

    @staticmethod
    def _nginx_complaint(scratch: Path) -> str:
        logs = [scratch / "stderr.log", scratch / "error.log"]
        return "\n".join(log.read_text(errors="replace") for log in logs if log.is_file())

    def _stop_process(self) -> None:
        """TERM (nginx's fast shutdown) to the master this object started, KILL if it lingers."""
        process, self._process, self.pid = self._process, None, None
        terminate(process)

    # pure-Python fallback

    def _start_python(self) -> int:
        handler = functools.partial(_QuietHandler, directory=str(self.root))
        self._server = http.server.ThreadingHTTPServer((LOOPBACK, 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="static-site", daemon=True)
        self._thread.start()
        return self._server.server_address[1]
