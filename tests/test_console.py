"""The operator's console (pycrawler/console, docs/console.md) in a real browser: Debian's
headless chromium driven by Selenium, on one crawl of a loopback synthetic web shared by the
tests in their order (look, the seen table's, frontier's and robots.txt's figures, scrape,
refuse, add a seed, pause and resume, stop, then the stopped state, also from a read-only
folder); a real Prometheus (Debian's package) scraping its /metrics; a cluster worker's page
over a real Redis; and, without a crawl, the crawl.log tally the reports come from and the
access rules request by request.
"""

from __future__ import annotations

import contextlib
import hashlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import json
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse

import pytest
from aiohttp import web
from aiohttp.test_utils import make_mocked_request
from selenium.webdriver.common.by import By

from console_harness import ROOT, ConsoleCrawl, chromium, http, wait_for
from pycrawler.console.access import Gate, Token
from pycrawler.console.crawl_log import LogTally, tail
from pycrawler.crawl.crawllog import format_line
from pycrawler.failpoints import ARM_VARIABLE
from pycrawler.local_servers import free_port
from pycrawler.seen.drum.visited import BUCKET_BYTES_VARIABLE

PROMETHEUS = "/usr/bin/prometheus"
QUEUE_BUDGET = 1_000_000


@pytest.fixture(scope="module")
def crawl(tmp_path_factory):
    """The shared crawl, on DRUM with buckets small enough to merge every few pages (its
    figures then move), behind a URL cache, with a queue budget it does not reach."""
    with ConsoleCrawl(tmp_path_factory.mktemp("console"), options=("--seen", "drum", "--url-cache", "clock:4096",
                                                                    "--queue-budget", str(QUEUE_BUDGET)),
                      env={BUCKET_BYTES_VARIABLE: "2048"}) as crawl:
        yield crawl


@pytest.fixture(scope="module")
def browser():
    try:
        driver = chromium()
    except LookupError as exc:
        pytest.fail(str(exc))
    yield driver
    driver.quit()


def text(browser, element_id: str) -> str:
    return browser.find_element(By.ID, element_id).text


def count(browser, element_id: str) -> int | None:
    shown = text(browser, element_id).replace(",", "")
    return int(shown) if shown.isdigit() else None


def chart_pixels(browser, element_id: str) -> int:
    """Pixels painted on the chart's canvas (0 for a canvas of no size, or a blank one)."""
    return browser.execute_script(
        "const c = document.querySelector(`#${arguments[0]} canvas`);"
        "if (!c || !c.width || !c.height) return 0;"
        "const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
        "let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i]) n++; return n;", element_id)


def series_points(browser, chart: str) -> int:
    return browser.execute_script(f"return charts.{chart}.data[0].length")


def use_token(browser, token: str) -> None:
    field = browser.find_element(By.ID, "token")
    field.clear()
    field.send_keys(token)


def test_the_page_shows_the_running_crawl_its_counts_move_and_its_chart_draws(crawl, browser):
    browser.get(crawl.url)
    first = wait_for(lambda: count(browser, "fetched"), 30, "a fetched count on the page")
    wait_for(lambda: (count(browser, "fetched") or 0) > first, 10, "the fetched count moving")
    assert text(browser, "status") == "running"
    assert count(browser, "pending") > 0
    wait_for(lambda: series_points(browser, "recent") >= 2, 10, "two seconds of rates in the chart")
    wait_for(lambda: chart_pixels(browser, "chart-recent") > 0, 5, "the chart painted")
    # The reports are asked for every five seconds.
    wait_for(lambda: "127.0.0.1" in text(browser, "hosts") and "127.0.0.2" in text(browser, "hosts"), 12,
             "the hosts report")
    wait_for(lambda: "text/html" in text(browser, "log"), 12, "crawl.log's lines on the page")
    assert "text/html" in text(browser, "mime") and "200" in text(browser, "codes")


def metric(crawl, name: str) -> float | None:
    """The value of the sample ``name`` (with its labels, as written) in the console's /metrics."""
    status, body = http(crawl.url + "metrics")
    assert status == 200
    values = [line.rsplit(" ", 1)[1] for line in body.decode().splitlines() if line.startswith(name + " ")]
    return float(values[0]) if values else None


def test_the_seen_table_frontier_and_robots_figures_show_in_json_metrics_and_page(crawl, browser):
    """DRUM's rounds and merge time, each large queue's next fetch, each host's robots.txt (the
    synthetic web answers 404 for it: absent, all allowed), read from the crawl's own objects."""
    drum = wait_for(lambda: (d := crawl.figures()["seen_table"].get("drum")) and d["rounds"] > 0 and d, 20,
                    "DRUM merge rounds")
    assert drum["merges"] >= drum["rounds"] and drum["keys"] > 0 and drum["merge_seconds"] > 0
    assert metric(crawl, "pycrawler_drum_merge_rounds_total") >= drum["rounds"]
    assert metric(crawl, "pycrawler_drum_keys") >= drum["keys"]
    # --delay 0.05: a queue waits 50 ms after each fetch, so one is caught waiting within a few looks.
    waiting = wait_for(lambda: [q for q in crawl.get("api/frontier?top=5")["largest"] if q["next_fetch"]], 15,
                       "a queue in its politeness wait")
    assert all(time.time() - 1 < q["next_fetch"] < time.time() + 2 for q in waiting)
    hosts = crawl.get("api/hosts?limit=5")
    assert len(hosts) == 2 and all((h["robots"], h["robots_code"]) == ("absent", 404) for h in hosts)
    # Each host's queue against --queue-budget: what it used (at least what crawl.log counted
    # when the report was made, a flush behind the queue's count) and what is left.
    assert all(h["budget_used"] >= h["fetched"] and h["budget_used"] + h["budget_left"] == QUEUE_BUDGET
               for h in hosts)
    assert crawl.figures()["robots"] == {"absent": 2}
    assert metric(crawl, 'pycrawler_robots_hosts{standing="absent"}') == 2
    wait_for(lambda: text(browser, "drum-rounds").replace(",", "").isdigit(), 5, "DRUM's tile on the page")
    wait_for(lambda: "absent (404)" in text(browser, "hosts") and "next fetch" in text(browser, "largest"), 12,
             "robots.txt and next fetch in the reports")
    assert "budget used / left" in text(browser, "hosts")
    assert re.search(r"absent \(404\) [\d,]+ / [\d,]+", text(browser, "hosts"))


def test_a_real_prometheus_scrapes_the_metrics(crawl, tmp_path):
    if not shutil.which(PROMETHEUS):
        pytest.fail(f"{PROMETHEUS} missing: scripts/setup installs prometheus")
    target = urllib.parse.urlsplit(crawl.url).netloc
    config = tmp_path / "prometheus.yml"
    config.write_text(json.dumps({  # YAML reads JSON
        "global": {"scrape_interval": "1s"},
        "scrape_configs": [{"job_name": "pycrawler", "static_configs": [{"targets": [target]}]}]}))
    port = free_port()
    with open(tmp_path / "prometheus.log", "w") as log:
        prometheus = subprocess.Popen([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
                                       f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=log)
    try:
        def fetched_in_prometheus() -> float | None:
            query = urllib.parse.urlencode({"query": 'pycrawler_pages_fetched_total{job="pycrawler"}'})
            try:
                status, body = http(f"http://127.0.0.1:{port}/api/v1/query?{query}")
            except OSError:
                return None  # not listening yet
            results = json.loads(body)["data"]["result"] if status == 200 else []
            return float(results[0]["value"][1]) if results else None

        scraped = wait_for(fetched_in_prometheus, 30, "Prometheus holding pycrawler_pages_fetched_total", every=0.5)
        assert 0 < scraped <= crawl.figures()["counts"]["fetched"]
    finally:
        prometheus.terminate()
        prometheus.wait(timeout=30)


def test_a_wrong_or_missing_token_or_another_origin_changes_nothing(crawl, browser):
    before = crawl.figures()["counts"]["fetched"]
    assert crawl.post("pause", None)[0] == 401
    assert crawl.post("stop", "not-the-token")[0] == 401
    assert crawl.post("pause", crawl.token, Origin="http://elsewhere.example")[0] == 403
    use_token(browser, "not-the-token")
    browser.find_element(By.ID, "pause").click()
    wait_for(lambda: "refused: 401" in text(browser, "message"), 5, "the page telling the refusal")
    wait_for(lambda: crawl.figures()["counts"]["fetched"] > before, 10, "the crawl going on")
    figures = crawl.figures()
    assert not figures["paused"] and not figures["stopping"]
    assert text(browser, "status") == "running"


class TwoPages(BaseHTTPRequestHandler):
    """A site nothing else links to: /added-seed, which links to /beyond."""

    PAGES = {"/added-seed": b'<html><title>added</title><a href="/beyond">beyond</a></html>',
             "/beyond": b"<html><title>beyond</title></html>"}

    def do_GET(self):
        page = self.PAGES.get(self.path)
        self.send_response(404 if page is None else 200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(page or b"")

    def log_message(self, *args):
        pass


def test_a_seed_added_on_the_running_crawl_is_crawled_and_kept_in_crawl_json(crawl):
    """The seed's host joins the scope, as a command-line seed's would: the page only it links
    to is fetched too. crawl.json lists it, for a resume."""
    site = ThreadingHTTPServer(("127.0.0.3", 0), TwoPages)
    threading.Thread(target=site.serve_forever, daemon=True).start()
    base = f"http://127.0.0.3:{site.server_address[1]}"
    try:
        assert crawl.post("seeds", "not-the-token", {"urls": [base + "/added-seed"]})[0] == 401
        assert crawl.post("seeds", crawl.token, {"urls": [base + "/added-seed"]}) == (200, b'{"added": 1}')
        assert json.loads((crawl.state / "crawl.json").read_text())["added_seeds"] == [base + "/added-seed"]
        wait_for(lambda: any(line.split()[1:4:2] == ["200", base + "/beyond"] for line in crawl.log_lines()), 30,
                 "the page only the added seed links to fetched")
    finally:
        site.shutdown()
        site.server_close()


def test_pause_stops_crawl_log_within_two_seconds_and_resume_starts_it_again(crawl, browser):
    use_token(browser, crawl.token)
    browser.find_element(By.ID, "pause").click()
    wait_for(lambda: text(browser, "status") == "paused", 3, "the page showing the pause")
    time.sleep(2)
    held = crawl.log_size()
    time.sleep(1.5)
    assert crawl.log_size() == held, "crawl.log grew while paused"
    browser.find_element(By.ID, "resume").click()
    wait_for(lambda: crawl.log_size() > held, 5, "crawl.log growing after resume")
    wait_for(lambda: text(browser, "status") == "running", 3, "the page showing the crawl running")


def test_stop_ends_the_crawl_with_its_summary(crawl, browser):
    browser.find_element(By.ID, "stop").click()
    browser.switch_to.alert.accept()
    code, out = crawl.finish()
    assert code == 130, out
    assert "(interrupted)" in out and "rate:" in out and "crawl.log:" in out
    assert not (crawl.state / "console.token").exists()


def test_the_page_shows_a_stopped_crawl_read_only(crawl, browser):
    assert crawl.process.poll() is not None
    answered = sum(1 for line in (crawl.state / "crawl.log").read_text().splitlines() if int(line.split()[1]) > 0)
    port = free_port()
    console = subprocess.Popen([sys.executable, "-m", "pycrawler", "console", str(crawl.state),
                                "--listen", f"127.0.0.1:{port}"], stdout=subprocess.PIPE, text=True,
                               cwd=ROOT)
    try:
        assert "console:" in console.stdout.readline()
        browser.get(f"http://127.0.0.1:{port}/")
        wait_for(lambda: text(browser, "status") == "stopped", 10, "the page showing a stopped crawl")
        wait_for(lambda: count(browser, "fetched") == answered, 5, "crawl.log's answered fetches on the page")
        assert not browser.find_element(By.ID, "actions").is_displayed()
        wait_for(lambda: chart_pixels(browser, "chart-recent") > 0, 5, "the stopped crawl's chart painted")
        assert http(f"http://127.0.0.1:{port}/api/pause", method="POST")[0] == 409
    finally:
        console.terminate()
        console.wait(timeout=30)


def folder_bytes(folder) -> dict[str, str]:
    """Every file under ``folder`` (relative path) and a digest of its bytes."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(folder.rglob("*")) if path.is_file()}


@contextlib.contextmanager
def read_only(folder):
    """``folder`` and all in it made read-only (chmod a-w), as a crawl's state copied off a
    server or kept on read-only storage is; restored afterwards."""
    paths = [folder, *folder.rglob("*")]
    modes = {path: path.stat().st_mode for path in paths}
    for path in paths:
        path.chmod(modes[path] & ~0o222)
    try:
        yield
    finally:
        for path in reversed(paths):
            path.chmod(modes[path])


def test_a_read_only_stopped_state_is_served_and_left_unchanged(crawl):
    """``pycrawler console`` writes nothing into the folder it shows: no token file (a stopped
    crawl has no actions), no JE file, on loopback and off it (where the token it prints is
    wanted for every read, and lives in memory only)."""
    assert crawl.process.poll() is not None
    before = folder_bytes(crawl.state)
    with read_only(crawl.state):
        for listen, shown in (("127.0.0.1", "figures"), ("0.0.0.0", "token")):
            port = free_port()
            console = subprocess.Popen([sys.executable, "-m", "pycrawler", "console", str(crawl.state),
                                        "--listen", f"{listen}:{port}"], stdout=subprocess.PIPE, text=True, cwd=ROOT)
            try:
                address = console.stdout.readline().split(" at ", 1)[1].strip()
                token = address.partition("#token=")[2]
                headers = {"X-Pycrawler-Token": token} if shown == "token" else {}
                if shown == "token":
                    assert http(f"http://127.0.0.1:{port}/api/figures")[0] == 401
                status, body = http(f"http://127.0.0.1:{port}/api/figures", headers=headers)
                assert status == 200 and json.loads(body)["mode"] == "stopped"
                status, body = http(f"http://127.0.0.1:{port}/api/hosts", headers=headers)
                assert status == 200 and {h["robots"] for h in json.loads(body)} == {"absent"}
                assert http(f"http://127.0.0.1:{port}/metrics", headers=headers)[0] == 200
            finally:
                console.terminate()
                console.wait(timeout=30)
    assert folder_bytes(crawl.state) == before


def test_a_resume_with_the_same_command_keeps_the_added_seeds(crawl):
    """The resume rewrites crawl.json at its start (killed right there, the rest of a run is
    not needed here): the seeds the console added stay in it, to be scheduled with the
    command's own and to widen the scope as they do."""
    added = json.loads((crawl.state / "crawl.json").read_text())["added_seeds"]
    resumed = subprocess.run(crawl.command, capture_output=True, text=True, timeout=60,
                             env=dict(crawl.environment, **{ARM_VARIABLE: "crawl.settings_written"}))
    assert resumed.returncode == -9, resumed.stderr  # the failpoint's SIGKILL, after the write
    assert json.loads((crawl.state / "crawl.json").read_text())["added_seeds"] == added


def test_crawl_log_tally_counts_codes_hosts_and_rates_a_line_once(tmp_path):
    """The reports' source (pycrawler/console/crawl_log.py), on lines crawl.log's own writer made:
    a line is counted once, a half-written one waits for its end."""
    log = tmp_path / "crawl.log"
    lines = [format_line(status=200, url="http://a.test/1", size=1000, content_type="text/html", logged_at=100.2),
             format_line(status=200, url="http://a.test/2", size=3000, content_type="text/html; charset=utf-8",
                         logged_at=100.7),
             format_line(status=404, url="http://b.test/x", size=10, content_type="text/plain", logged_at=101.5),
             format_line(status=-9998, url="http://b.test/private", logged_at=101.6),
             format_line(status=-2, url="http://c.test/", logged_at=102.4)]
    log.write_text("".join(lines[:3]) + lines[3][:20])
    tally = LogTally(log, from_end=False)
    tally.read()
    assert tally.codes == {200: 2, 404: 1}
    with open(log, "a") as appended:
        appended.write(lines[3][20:] + lines[4])
    tally.read()
    tally.read()
    assert tally.codes == {200: 2, 404: 1, -9998: 1, -2: 1}
    assert tally.mime == {"text/html": 2, "text/plain": 1}
    assert tally.host_rows(2) == [{"host": "a.test", "fetched": 2, "errors": 0, "bytes": 4000, "precluded": 0},
                                  {"host": "b.test", "fetched": 1, "errors": 1, "bytes": 10, "precluded": 1}]
    times, pages, megabytes = tally.recent.series(None)
    assert times == [100, 101] and pages == [2, 1] and megabytes == [0.004, 0.00001]
    assert tail(log, contains="b.test") == [lines[2].strip(), lines[3].strip()]


def test_another_address_than_loopback_wants_the_token_for_every_read(tmp_path):
    """pycrawler/console/access.py's rules, request by request: on 0.0.0.0 a read without the
    token is refused as an action is; on loopback another Host (a rebound DNS name) is refused."""
    token = Token.for_state(tmp_path)
    assert oct((tmp_path / "console.token").stat().st_mode & 0o777) == "0o600"
    remote, local = Gate(token, "0.0.0.0", 8765), Gate(token, "127.0.0.1", 8765)

    def refusal(gate, method, path, **headers) -> int | None:
        request = make_mocked_request(method, path, headers={"Host": "127.0.0.1:8765", **headers})
        try:
            gate.check(request, action=method == "POST", reads_data=path != "/")
        except web.HTTPException as refused:
            return refused.status
        return None

    assert refusal(remote, "GET", "/api/figures") == 401
    assert refusal(remote, "GET", "/metrics", Authorization=f"Bearer {token.value}") is None
    assert refusal(remote, "GET", "/") is None  # the page itself, which asks for the token
    assert refusal(local, "GET", "/api/figures") is None
    assert refusal(local, "GET", "/api/figures", Host="rebound.example:8765") == 421
    assert refusal(local, "POST", "/api/stop", **{"X-Pycrawler-Token": token.value}) is None
    assert refusal(local, "POST", "/api/stop", **{"X-Pycrawler-Token": token.value},
                   Origin="http://elsewhere.example") == 403
    token.remove()
    assert not (tmp_path / "console.token").exists()


def test_a_cluster_workers_page_shows_the_cluster(local_redis, tmp_path, browser):
    """Two workers of one cluster over a real Redis (the first with the console): its page shows
    both members, the hosts each owns (the host table may give both to one), and the links they
    send each other (the seeds of the other's hosts at least)."""
    cluster = ("--redis", local_redis.url, "--cluster", "c", "--settle", "0.5", "--heartbeat", "0.5", "--lease", "5")
    with ConsoleCrawl(tmp_path, options=(*cluster, "--worker", "a")) as crawl:
        other = subprocess.Popen([sys.executable, "-m", "pycrawler", "crawl", *crawl.server.seeds,
                                  "--state", str(tmp_path / "state-b"), "--delay", "0.05", "--no-progress",
                                  *cluster, "--worker", "b"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
        try:
            def both_crawling():
                view = crawl.get("api/cluster")
                workers = view["workers"]
                return (view["members"] == ["a", "b"] and sum(w["hosts"] for w in workers) == 2
                        and sum(w.get("pages", 0) for w in workers) > 0
                        and sum(w.get("sent", 0) for w in workers) > 0 and view)

            view = wait_for(both_crawling, 60, "two workers crawling and sending each other links")
            assert view["worker"] == "a" and [w["worker"] for w in view["workers"]] == ["a", "b"]
            assert metric(crawl, "pycrawler_cluster_members") == 2
            assert metric(crawl, "pycrawler_cluster_hosts") == view["workers"][0]["hosts"]
            browser.get(crawl.url)
            wait_for(lambda: "links sent" in text(browser, "cluster-workers")
                     and text(browser, "cluster-members") == "2", 12, "the cluster on the page")
        finally:
            other.terminate()
            other.wait(timeout=60)
