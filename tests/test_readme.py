"""README.md's examples run as a reader would run them: the crawl stopped with Ctrl-C and
resumed by the same command fetches every page of the site once; the store example prints what
the README says it prints. (Its Heritrix example runs beside a real Heritrix in
tests/test_real_heritrix.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from crawl_sites import CountingServer, assert_each_page_fetched_once, write_site
from readme_examples import block_after, localised, shell_commands


def test_the_crawl_example_stopped_with_ctrl_c_resumes_with_the_same_command(tmp_path):
    (crawl,) = shell_commands(0)
    assert crawl[:2] == ["pycrawler", "crawl"] and "--contact" in crawl
    root = tmp_path / "site"
    reachable = write_site(root, 150)
    server = CountingServer(root)
    with server as base:
        def command(delay: str) -> list[str]:
            # Loopback needs no politeness: the README's default delay (3 s or more a page) would
            # make this a 7-minute test.
            return localised(crawl, [base + "index.html"], ("--delay", delay, "--no-progress"))

        first = subprocess.Popen(command("0.02"), cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True)
        deadline = time.monotonic() + 30
        while sum(server.page_counts().values()) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        first.send_signal(signal.SIGINT)  # what Ctrl-C sends
        out, err = first.communicate(timeout=30)
        assert first.returncode == 130, err
        assert 20 <= sum(server.page_counts().values()) < len(reachable)
        again = subprocess.run(command("0"), cwd=tmp_path, capture_output=True, text=True, timeout=60)
        assert again.returncode == 0, again.stderr
    assert_each_page_fetched_once(server.page_counts(), reachable)
    assert (tmp_path / "crawls" / "example" / "crawl.log").is_file()


def test_the_store_example_prints_what_the_readme_says(tmp_path):
    code, printed = block_after("python")
    assert printed is not None, "the README shows what its Python example prints"
    script = tmp_path / "example.py"
    script.write_text(code)
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == printed
    assert (tmp_path / "mystore").is_dir()
