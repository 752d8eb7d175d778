#!/usr/bin/env python3
"""The screenshots of docs/console.md: the console's page during a crawl, and of the stopped crawl.

    .venv/bin/python scripts/console_screenshots.py [--seconds 40] [--out docs]

Crawls a synthetic web on loopback with ``--console`` (tests/console_harness.py, as the browser
tests do), lets it run ``--seconds``, and has headless chromium save the page as
``console-live.png``; then stops the crawl and saves ``pycrawler console STATE``'s page as
``console-stopped.png``. Needs chromium and chromium-driver (scripts/setup installs them).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
from console_harness import ConsoleCrawl, chromium  # noqa: E402

from pycrawler.local_servers import free_port  # noqa: E402

PAGE_HEIGHT = 1500


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=40.0, help="seconds the crawl runs before the picture")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="folder of the PNG files")
    args = parser.parse_args(argv)
    browser = chromium(height=PAGE_HEIGHT)
    try:
        with tempfile.TemporaryDirectory(prefix="console-shots-") as scratch, ConsoleCrawl(Path(scratch)) as crawl:
            browser.get(crawl.url)
            time.sleep(args.seconds)
            browser.save_screenshot(str(args.out / "console-live.png"))
            crawl.post("stop", crawl.token)
            crawl.finish()
            port = free_port()
            console = subprocess.Popen([sys.executable, "-m", "pycrawler", "console", str(crawl.state),
                                        "--listen", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, text=True)
            try:
                console.stdout.readline()  # its address: it is listening
                browser.get(f"http://127.0.0.1:{port}/")
                time.sleep(3)  # two polls of every report
                browser.save_screenshot(str(args.out / "console-stopped.png"))
            finally:
                console.terminate()
                console.wait()
    finally:
        browser.quit()
    print(f"wrote {args.out / 'console-live.png'} and {args.out / 'console-stopped.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
