"""SIGTERM and SIGINT at any instant of ``pycrawler crawl``, from launch to exit.

Every run a signal stops ends in one of the two forms the contract allows, with the exit code
128 + n: one line on stderr (``pycrawler: stopped by SIGTERM during start-up: ...``), or the
crawl's summary on stdout (and at most that line). Never death by the signal, a silent exit,
JPype's "Fatal error in exception handling" (an abort), a Python trace, or a JVM error file
(``hs_err_pid*.log``) in the user's working folder; and the same command then resumes.

The instants are placed on what the test sees of the child from outside, so that every phase
is hit whatever the machine's speed: its signal handler in place (``/proc/PID/status``; before
that the interpreter is still starting, and its defaults rule), the JVM loaded
(``/proc/PID/maps``), JE's first log file, the first page served, the last page served (the
flush, the close, the summary, the JVM's and the interpreter's shutdown); each with offsets.
Children run a few at a time.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from crawl_sites import DANGLING, ROOT, CountingServer, write_site

from pycrawler.crawl.stop_signals import STOP_SIGNALS

CONSOLE_SCRIPT = Path(sys.executable).with_name("pycrawler")
CHILDREN_AT_ONCE = 4
SUMMARY_END = "crawl.log:"  # the summary's last line

# anchor -> seconds after it; the anchors in the order a run passes them. 22 instants per signal
# with the resumed run: on a fast machine the last ones may come after the run's end (the last
# fetch to the exit takes ~0.15 s on a quiet machine: flush, close, summary, the JVM's shutdown).
INSTANTS = {
    "handler": (0, 0.02, 0.1, 0.25, 0.5),            # the imports: numpy, numba, JPype, the command groups
    "jvm": (0, 0.03, 0.08, 0.2),                      # the JVM's start, JPype's own set-up, the JE check
    "log": (0, 0.03, 0.1, 0.25),                      # JE's open, the seen table, the frontier, the outputs
    "first fetch": (0, 0.1),                          # fetching
    "last fetch": (0, 0.01, 0.03, 0.06, 0.1, 0.2),   # flush, close, summary, the JVM's shutdown, the exit
}


@dataclass(frozen=True)
class Instant:
    signum: int
    anchor: str
    offset: float
    resume: bool = False

    def __str__(self) -> str:
        resumed = ", then resumed" if self.resume else ""
        return f"{signal.Signals(self.signum).name} at {self.anchor} + {self.offset:g} s{resumed}"


CASES = [Instant(signum, anchor, offset) for signum in (signal.SIGTERM, signal.SIGINT)
         for anchor, offsets in INSTANTS.items() for offset in offsets]
RESUMED = [Instant(signal.SIGTERM, "log", 0.03, resume=True), Instant(signal.SIGINT, "first fetch", 0.05, resume=True)]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("site")
    return root, write_site(root, 12, seed=11) | {DANGLING}


def _signal_mask(pid: int, field: str) -> int:
    """A signal mask of ``/proc/PID/status`` (``SigCgt``: caught, ``SigBlk``: blocked)."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1], 16) for line in status if line.startswith(f"{field}:"))


def _catches_sigterm(pid: int) -> bool:
    return bool(_signal_mask(pid, "SigCgt") & (1 << (signal.SIGTERM - 1)))


def _exit_decided(pid: int) -> bool:
    """The process has decided its exit code: it blocks the stop signals from then on
    (pycrawler.launch), and one sent now changes nothing. The run is over."""
    blocked = _signal_mask(pid, "SigBlk")
    return all(blocked & (1 << (signum - 1)) for signum in (signal.SIGTERM, signal.SIGINT))


def _jvm_loaded(pid: int) -> bool:
    with open(f"/proc/{pid}/maps") as maps:
        return "libjvm.so" in maps.read()


def _wait_for(anchor: str, child: subprocess.Popen, state: Path, server: CountingServer, pages: int) -> None:
    def served() -> int:
        return sum(server.page_counts().values())

    reached = {
        "handler": lambda: _catches_sigterm(child.pid),
        "jvm": lambda: _jvm_loaded(child.pid),
        "log": lambda: (state / "00000000.jdb").exists(),
        "first fetch": lambda: served() >= 1,
        "last fetch": lambda: served() >= pages,
    }[anchor]
    deadline = time.monotonic() + 60
    while child.poll() is None and time.monotonic() < deadline:
        try:
            if reached():
                return
        except OSError:  # the child's /proc entry is gone: it ended
            pass
        time.sleep(0.002)
    raise AssertionError(f"the crawl never reached {anchor} (exit {child.poll()})")


def _broken_contract(instant: Instant, child: subprocess.Popen, out: str, err: str, cwd: Path) -> str | None:
    """What is wrong with how a signalled run ended (None: nothing)."""
    lines = err.splitlines()
    stopped = f"pycrawler: stopped by {signal.Signals(instant.signum).name}"
    if child.returncode != 128 + instant.signum:
        return f"exit {child.returncode}"
    if "Fatal error" in out + err or "Traceback" in err:
        return "an abort or a trace"
    if error_files := list(cwd.rglob("hs_err_pid*.log")):
        return f"a JVM error file: {error_files}"
    if SUMMARY_END in out:
        return None if len(lines) <= 1 and all(line.startswith(stopped) for line in lines) else "more than one line"
    return None if len(lines) == 1 and lines[0].startswith(stopped) else "neither one line nor the summary"


def _signalled_run(instant: Instant, site, tmp_path: Path) -> tuple[bool, str | None]:
    """Run the crawl in a folder of its own and signal it at ``instant``: (whether the signal
    came before the run ended, what went wrong if anything)."""
    root, pages = site
    cwd = tmp_path / "".join(c if c.isalnum() or c in "+." else "_" for c in str(instant))
    cwd.mkdir()
    state = cwd / "state"
    server = CountingServer(root)
    with server as base:
        command = [str(CONSOLE_SCRIPT), "crawl", base + "index.html", "--state", str(state), "--no-progress",
                   "--delay", "0", "--parse-workers", "1"]
        child = subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait_for(instant.anchor, child, state, server, len(pages))
            time.sleep(instant.offset)
            with contextlib.suppress(OSError):  # (its /proc entry gone: it ended)
                if _exit_decided(child.pid):
                    child.wait(timeout=60)
            if child.poll() is not None:  # the run was over before this instant
                return False, None if child.returncode == 0 else f"exit {child.returncode} before the signal"
            child.send_signal(instant.signum)
            out, err = child.communicate(timeout=60)
        finally:
            if child.poll() is None:
                child.kill()
                child.communicate()
        if broken := _broken_contract(instant, child, out, err, cwd):
            return True, f"{broken}; stdout ends {out[-200:]!r}, stderr {err[-600:]!r}"
        if instant.resume:
            resumed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)
            if resumed.returncode != 0 or not pages <= set(server.page_counts()):
                return True, f"did not resume: exit {resumed.returncode}, {resumed.stderr[-400:]!r}"
    return True, None


def test_a_signal_at_any_instant_ends_in_one_line_or_the_summary_and_the_same_command_resumes(site, tmp_path):
    assert CONSOLE_SCRIPT.is_file(), f"no console script {CONSOLE_SCRIPT}: install pycrawler (scripts/setup)"
    with concurrent.futures.ThreadPoolExecutor(CHILDREN_AT_ONCE) as pool:
        runs = dict(zip(CASES + RESUMED, pool.map(lambda instant: _signalled_run(instant, site, tmp_path),
                                                 CASES + RESUMED)))
    problems = {str(instant): problem for instant, (_, problem) in runs.items() if problem}
    assert not problems, "\n".join(f"{instant}: {problem}" for instant, problem in problems.items())
    for signum in (signal.SIGTERM, signal.SIGINT):
        signalled = [instant for instant, (came, _) in runs.items() if came and instant.signum == signum]
        assert len(signalled) >= 20, f"only {len(signalled)} {signal.Signals(signum).name}s came before the run ended"
    assert all(runs[instant][0] for instant in RESUMED)


AFTER_START = (0, 0.005, 0.01, 0.02, 0.03, 0.05)
"""Seconds after the command's first instruction, where its front (scripts/pycrawler) blocks the
stop signals until pycrawler/launch.py handles them. Not after the test's launch: a process
given no CPU yet (tens of ms on a loaded machine) dies of a signal before its first instruction,
whatever that instruction is."""
EVERY_TIME = 3


def _started(child: subprocess.Popen) -> bool:
    """Wait for the command's first instruction, seen as its stop signals blocked."""
    deadline = time.monotonic() + 60
    with contextlib.suppress(OSError):  # (its /proc entry gone: it ended)
        while child.poll() is None and time.monotonic() < deadline:
            blocked = _signal_mask(child.pid, "SigBlk")
            if all(blocked & (1 << (signum - 1)) for signum in STOP_SIGNALS):
                return True
            time.sleep(0.0002)
    return False


def _signalled_at_start(signum: int, after: float, state: Path) -> str | None:
    command = [str(CONSOLE_SCRIPT), "crawl", "http://127.0.0.1:9/", "--state", str(state), "--no-progress"]
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        if not _started(child):
            return "the command never started with the stop signals blocked"
        time.sleep(after)
        child.send_signal(signum)
        out, err = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    lines = err.splitlines()
    if child.returncode != 128 + signum or "Traceback" in err or len(lines) != 1 \
            or not lines[0].startswith(f"pycrawler: stopped by {signal.Signals(signum).name}"):
        return f"exit {child.returncode}, stdout {out[-200:]!r}, stderr {err[-400:]!r}"
    return None


def test_a_signal_from_the_commands_first_instant_gives_one_line_and_128_plus_n_every_time(tmp_path):
    cases = [(signum, after, round_) for signum in STOP_SIGNALS for after in AFTER_START for round_ in range(EVERY_TIME)]

    def run(case) -> str | None:
        signum, after, round_ = case
        return _signalled_at_start(signum, after, tmp_path / f"{signum}-{after}-{round_}")

    with concurrent.futures.ThreadPoolExecutor(CHILDREN_AT_ONCE) as pool:
        problems = {case: problem for case, problem in zip(cases, pool.map(run, cases)) if problem}
    assert not problems, "\n".join(f"{signal.Signals(signum).name} {after * 1000:g} ms after the start "
                                    f"(round {round_}): {problem}" for (signum, after, round_), problem in problems.items())


FATAL_JVM_ERROR = """
import sys
from pathlib import Path
from pycrawler import jvm
if len(sys.argv) > 1:
    jvm.keep_error_files_in(Path(sys.argv[1]))
jvm.start()
import jpype
unsafe = jpype.JClass("sun.misc.Unsafe").class_.getDeclaredField("theUnsafe")
unsafe.setAccessible(True)
unsafe.get(None).putAddress(0, 0)  # a write to address 0: the JVM dies of a fatal error
"""


@pytest.mark.parametrize("kept_in_state", [True, False], ids=["state folder", "temporary folder"])
def test_a_fatal_jvm_error_leaves_its_file_in_the_state_or_temporary_folder_and_names_it(tmp_path, kept_in_state):
    working, temporary = tmp_path / "working", tmp_path / "tmp"
    folder = working / "state" if kept_in_state else temporary
    for made in (working, temporary, folder):
        made.mkdir(exist_ok=True)
    crashed = subprocess.run([sys.executable, "-c", FATAL_JVM_ERROR, *([str(folder)] if kept_in_state else [])],
                             cwd=working, capture_output=True, text=True, timeout=120,
                             env=os.environ | {"PYTHONPATH": str(ROOT), "TMPDIR": str(temporary),
                                               "PYCRAWLER_JVM_OPTS": "-XX:-CreateCoredumpOnCrash"})
    assert crashed.returncode != 0, crashed.stderr  # 1: without a core dump the JVM exits, not aborts
    (error_file,) = folder.glob("hs_err_pid*.log")
    assert not list(working.glob("hs_err_pid*.log"))
    assert str(error_file) in crashed.stdout
