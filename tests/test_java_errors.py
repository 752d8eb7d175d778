"""JE's exceptions become pycrawler's errors, each one line with the exit code that names what
to do; the classification reads the causes JE wraps, not only the outer message."""

from __future__ import annotations

import jpype

from pycrawler import jvm
from pycrawler.errors import DiskFull, PycrawlerError
from pycrawler.store.java_errors import translate


def java_exception(message: str, cause=None):
    jvm.start()
    return jpype.JClass("java.lang.RuntimeException")(message, cause)


def test_a_write_that_failed_for_space_is_a_full_disk_even_when_jes_wrapper_does_not_say_so():
    # JE 3.3's RunRecoveryException reads "IOE during write"; the IOException it wraps says why.
    jvm.start()
    io = jpype.JClass("java.io.IOException")("No space left on device")
    error = translate(java_exception("IOE during write", io), "state")
    assert isinstance(error, DiskFull) and error.exit_code == 75
    assert str(error).startswith("state: the disk is full (IOE during write)")


def test_a_failed_write_for_another_reason_is_not_a_full_disk():
    error = translate(java_exception("IOE during write", java_exception("Input/output error")), "state")
    assert type(error) is PycrawlerError and "IOE during write" in str(error)
