"""A full disk is known under any locale: Python's writes by errno, JE's by cause. A JE write
refused for space fails in Java with an ``IOException`` whose only word of the errno is its
``strerror`` text, in the locale in force; :mod:`pycrawler.store.java_errors` tells a full disk
by that IOException among the causes and the store's filesystem refusing space again now, by
errno, never by the text.

The JE writes here are real: transactions through :class:`pycrawler.store.Environment` into a
2 MB tmpfs until JE refuses (root only: a mount), or until a file size limit (RLIMIT_FSIZE)
refuses one for another reason on a filesystem with room. They run in the German locale
scripts/setup compiles (de_DE.UTF-8), so that Java's message is not English.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import jpype
import pytest
from conftest import missing
from crawl_sites import ROOT

from pycrawler import jvm
from pycrawler.errors import DiskFull
from pycrawler.store import java_errors

GERMAN = "de_DE.UTF-8"


@pytest.fixture(scope="module")
def german():
    """The environment of a process whose locale is German."""
    installed = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    if "de_DE.utf8" not in installed:
        missing(f"no {GERMAN} locale: scripts/setup compiles it (localedef, from Debian's locales package)")
    return os.environ | {"LC_ALL": GERMAN, "LANGUAGE": "", "PYTHONPATH": str(ROOT)}


JE_WRITES_UNTIL_REFUSED = """
import locale, os, resource, sys
locale.setlocale(locale.LC_ALL, "")  # what an application embedding pycrawler may well do
if len(sys.argv) > 2:
    resource.setrlimit(resource.RLIMIT_FSIZE, (int(sys.argv[2]), int(sys.argv[2])))
from pycrawler import jvm
from pycrawler.store import Environment, je_choice
je_choice.start_for(sys.argv[1])
config = {"je.freeDisk": "0"} if jvm.je_major() >= 7 else None  # JE 7's own floor would refuse first
env = Environment(sys.argv[1], create=True, durability="write_no_sync", config=config)
records = env.open_database("records", create=True)
try:
    for batch in range(100_000):
        with env.begin() as txn:
            records.put_many([b"%d-%d" % (batch, i) for i in range(100)], [os.urandom(200)] * 100, txn=txn)
    sys.exit("JE took every write")
except Exception as error:
    cause = error.__cause__
    while not cause.getClass().getName() == "java.io.IOException":
        cause = cause.getCause()
    print(cause.getMessage())
    print(type(error).__name__)
"""


def je_writes_until_refused(store, environment, file_size_limit: int | None = None) -> tuple[str, str]:
    """(Java's IOException message, the pycrawler error's class) of a JE write that failed."""
    limit = [] if file_size_limit is None else [str(file_size_limit)]
    run = subprocess.run([sys.executable, "-c", JE_WRITES_UNTIL_REFUSED, str(store), *limit], cwd=ROOT,
                         env=environment, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stderr
    message, kind = run.stdout.splitlines()
    return message, kind


def test_a_je_write_refused_for_space_is_a_full_disk_in_german(german, small_filesystem):
    message, kind = je_writes_until_refused(small_filesystem(2).path / "store", german)
    assert "No space" not in message and "Speicherplatz" in message  # the locale was in force
    assert kind == "DiskFull"


def test_a_je_write_refused_for_another_reason_is_not_a_full_disk(german, tmp_path):
    message, kind = je_writes_until_refused(tmp_path / "store", german, file_size_limit=1 << 20)
    assert "File too large" not in message and "zu groß" in message  # EFBIG, in German
    assert kind != "DiskFull"


def fill(folder) -> None:
    with open(folder / "filler", "wb") as filler:
        try:
            while True:
                filler.write(b"\0" * (1 << 16))
                filler.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC


def io_failure(message: str):
    """A JE-like failure: an exception whose cause is an ``IOException`` saying ``message``."""
    jvm.start()
    cause = jpype.JClass("java.io.IOException")(message)
    return jpype.JClass("java.lang.RuntimeException")("IOE during write", cause)


@pytest.fixture(params=["unnamed file", "free blocks"])
def space_question(request, monkeypatch):
    """How the store's filesystem is asked for space: an unnamed file given bytes, or (where the
    filesystem has no unnamed files) its free blocks."""
    if request.param == "free blocks":
        opened = os.open

        def without_unnamed_files(path, flags, *args):
            if flags & os.O_TMPFILE == os.O_TMPFILE:
                raise OSError(errno.EOPNOTSUPP, os.strerror(errno.EOPNOTSUPP))
            return opened(path, flags, *args)

        monkeypatch.setattr(java_errors.os, "open", without_unnamed_files)
    return request.param


def test_an_io_failure_is_a_full_disk_by_the_filesystem_not_by_its_text(space_question, small_filesystem, tmp_path):
    says_full, says_other = os.strerror(errno.ENOSPC), "Input/output error"
    assert not isinstance(java_errors.translate(io_failure(says_full), str(tmp_path)), DiskFull)
    disk = small_filesystem(2)
    fill(disk.path)
    where = f"{disk.path} database 'records'"
    error = java_errors.translate(io_failure(says_other), where)
    assert isinstance(error, DiskFull) and error.exit_code == 75
    assert str(error).startswith(f"{where}: the disk is full (IOE during write)")
    assert os.listdir(disk.path) == ["filler"]  # asking left nothing behind


def test_a_command_whose_output_fills_the_disk_says_so_in_one_line(german):
    urls = [f"http://127.0.0.1/page/{i}.html" for i in range(2000)]  # more than one buffer of output
    with open("/dev/full", "w") as full:
        run = subprocess.run([sys.executable, "-m", "pycrawler", "fingerprint", *urls], cwd=ROOT, env=german,
                             stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    assert run.returncode == 75, run.stderr
    (line,) = run.stderr.splitlines()
    assert line.startswith("pycrawler: the disk is full") and "rerun the same command" in line
