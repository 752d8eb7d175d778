"""A full disk is known under any locale: Python's writes by errno, Java's by the ``strerror``
text of the locale in force. ``/dev/full`` refuses every write with ENOSPC, so these are real
failed writes; the German locale is compiled into a temporary folder (``localedef``), since
the machine may have none but C installed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import jpype
import pytest
from conftest import missing
from crawl_sites import ROOT

from pycrawler import jvm
from pycrawler.errors import DiskFull
from pycrawler.store.java_errors import translate

GERMAN = "de_DE.UTF-8"


def java_write_to_dev_full():
    """The IOException of a real Java write refused with ENOSPC."""
    jvm.start()
    stream = jpype.JClass("java.io.FileOutputStream")("/dev/full")
    try:
        stream.write(jpype.JArray(jpype.JByte)(16))
    except jpype.JException as exc:
        return exc
    finally:
        stream.close()
    raise AssertionError("a write to /dev/full succeeded")


def test_a_java_write_refused_for_space_is_a_full_disk():
    error = translate(java_write_to_dev_full(), "state")
    assert isinstance(error, DiskFull) and error.exit_code == 75


@pytest.fixture(scope="module")
def german(tmp_path_factory):
    """The environment of a process whose locale is German (compiled here from the ``locales``
    package scripts/setup installs), or a skip (a failure under CI)."""
    folder = tmp_path_factory.mktemp("locales")
    if shutil.which("localedef") is None or not os.path.exists("/usr/share/i18n/locales/de_DE"):
        missing("no localedef or no de_DE locale source to compile (Debian's locales package)")
    compiled = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(folder / GERMAN)],
                              capture_output=True, text=True)
    if not (folder / GERMAN).is_dir():
        missing(f"localedef could not compile {GERMAN}: {compiled.stderr.strip()}")
    return os.environ | {"LOCPATH": str(folder), "LC_ALL": GERMAN, "LANGUAGE": "", "PYTHONPATH": str(ROOT)}


IN_GERMAN = """
import locale, os, errno, sys
locale.setlocale(locale.LC_ALL, "")  # what an application embedding pycrawler may well do
sys.path.insert(0, "tests")
from test_disk_full_locale import java_write_to_dev_full
from pycrawler.store.java_errors import translate
exc = java_write_to_dev_full()
print(exc.getMessage())
print(type(translate(exc, "state")).__name__)
"""


def test_a_java_write_refused_for_space_is_a_full_disk_in_german(german):
    run = subprocess.run([sys.executable, "-c", IN_GERMAN], cwd=ROOT, env=german, capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    message, kind = run.stdout.splitlines()
    assert "No space" not in message and "Speicherplatz" in message  # the locale was in force
    assert kind == "DiskFull"


def test_a_command_whose_output_fills_the_disk_says_so_in_one_line(german):
    urls = [f"http://127.0.0.1/page/{i}.html" for i in range(2000)]  # more than one buffer of output
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "pycrawler", "fingerprint", *urls], cwd=ROOT, env=german,
                             stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert run.returncode == 75, run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith("pycrawler: the disk is full") and "rerun the same command" in line
