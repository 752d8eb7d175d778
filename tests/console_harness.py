"""A crawl with its console, and a headless browser to look at it: for tests/test_console.py and
scripts/console_screenshots.py.

:class:`ConsoleCrawl` runs ``pycrawler crawl --console`` against a synthetic web served on
loopback (:class:`~pycrawler.testing.synthetic_server.SyntheticServer`), politely enough that it
runs until it is stopped; :func:`chromium` starts Debian's chromium headless through its own
chromedriver (Selenium), or says what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from pycrawler.local_servers import free_port
from pycrawler.testing.synthetic_server import SyntheticServer
from pycrawler.testing.synthetic_web import SyntheticWeb

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
START_TIMEOUT = 60.0


def http(url: str, *, method: str = "GET", headers: dict | None = None, body: bytes | None = None) -> tuple[int, bytes]:
    """(status, body) of one request; an HTTP error status is returned, not raised."""
    request = urllib.request.Request(url, method=method, headers=headers or {}, data=body)
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def wait_for(check, timeout: float, what: str, every: float = 0.1):
    """The first true value of ``check()`` within ``timeout`` seconds, else AssertionError."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := check():
            return value
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout:g} s")


class ConsoleCrawl:
    """``with ConsoleCrawl(folder) as crawl``: a crawl of a synthetic web with its console at
    :attr:`url`; :attr:`process` is the crawl, :attr:`token` the console's token."""

    def __init__(self, folder: Path, *, pages: int = 100_000, hosts: int = 2, delay: float = 0.05,
                 options: tuple[str, ...] = (), env: dict | None = None):
        """``options``: more of ``pycrawler crawl``'s; ``env``: more environment variables."""
        self.folder = Path(folder)
        self.state = self.folder / "state"
        self.server = SyntheticServer(SyntheticWeb(pages, hosts, seed=24))
        self.delay, self.options, self.env = delay, options, env or {}
        self.process: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> ConsoleCrawl:
        self.server.start()
        port = free_port()
        self.stderr = self.folder / "crawl.stderr"
        self.environment = dict(os.environ, **self.env,
                                PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
        self.command = [sys.executable, "-m", "pycrawler", "crawl", *self.server.seeds, "--state", str(self.state),
                        "--delay", str(self.delay), "--concurrency", "4", "--console", f"127.0.0.1:{port}",
                        *self.options]
        with open(self.stderr, "w") as errors:
            self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=errors, text=True,
                                            env=self.environment)
        self.url = f"http://127.0.0.1:{port}/"
        wait_for(lambda: "console at" in self.stderr.read_text() or self.process.poll() is not None,
                 START_TIMEOUT, "the console's address on stderr")
        assert self.process.poll() is None, self.stderr.read_text()
        self.token = (self.state / "console.token").read_text().strip()
        return self

    def figures(self) -> dict:
        return self.get("api/figures")

    def get(self, path: str):
        """The JSON the console answers at ``path`` (200 expected)."""
        status, body = http(self.url + path)
        assert status == 200, body
        return json.loads(body)

    def post(self, action: str, token: str | None, body: dict | None = None, **headers) -> tuple[int, bytes]:
        if token is not None:
            headers["X-Pycrawler-Token"] = token
        return http(self.url + "api/" + action, method="POST", headers=headers, body=json.dumps(body or {}).encode())

    def log_lines(self) -> list[str]:
        return (self.state / "crawl.log").read_text().splitlines()

    def log_size(self) -> int:
        return (self.state / "crawl.log").stat().st_size

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        """Wait for the crawl's end: (exit code, stdout)."""
        out, _ = self.process.communicate(timeout=timeout)
        return self.process.returncode, out

    def __exit__(self, *exc) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.communicate(timeout=60)
        self.server.stop()


def chromium(width: int = 1400, height: int = 1100):
    """A headless Debian chromium driven by Selenium through its chromedriver; raises
    ``LookupError`` naming what is missing."""
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not shutil.which(path)]
    if missing:
        raise LookupError(f"{' and '.join(missing)} missing: scripts/setup installs chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--window-size={width},{height}"):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
