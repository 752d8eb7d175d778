"""The seam's calls on GraalPy: Python runs inside the JVM and reaches Java through its ``java`` module.

The JVM is the one GraalPy runs in, started with pycrawler's class path by its launcher, so
there is nothing to start and no thread to attach (every Python thread is a Java thread).

Bytes cross as Latin-1 text, which maps each byte to one character and back: the launcher's
``org.pycrawler.graalpy.Bytes`` (in pycrawler-graalpy.jar, on the class path wherever pycrawler
runs under GraalPy: scripts/graalpy and the JSR-223 engine) turns it into a ``byte[]`` and a
``byte[]`` back into text in one call each, so no byte is copied by interpreted code (a ``byte[]`` read element by element is signed,
which ``bytes()`` refuses, and is the slow way). The other arrays are filled by one slice
assignment, which GraalPy's interop runs.

A Java exception arrives as GraalPy's ``ForeignException``, a ``BaseException`` that no
module exports; on GraalPy 23.1 a method called on it by attribute syntax is not found,
while the same object handed back by Java answers (:func:`throwable`).
"""

from __future__ import annotations

from pathlib import Path

import java

RUNTIME = "graalpy"

jclass = java.type

_BYTES = jclass("org.pycrawler.graalpy.Bytes")
_same = jclass("java.util.Objects").requireNonNull


def _java_exception_type() -> type:
    try:
        jclass("java.lang.Integer").parseInt("")
    except BaseException as exc:  # the type a Java exception arrives as, whatever it is
        return type(exc)
    raise AssertionError("Integer.parseInt('') returned")


JavaException = _java_exception_type()


def byte_array(data):
    """A ``byte[]`` of ``data`` (bytes-like), or of ``data`` zeros (an int)."""
    if isinstance(data, int):
        return jclass("byte[]")(data)
    return _BYTES.fromLatin1(str(data, "latin-1"))


def to_bytes(array) -> bytes:
    """The bytes of a Java ``byte[]``."""
    return _BYTES.toLatin1(array).encode("latin-1")


def _filled(array_type):
    def make(values):
        if isinstance(values, int):
            return array_type(values)
        made = array_type(len(values))
        made[:] = values
        return made
    return make


int_array = _filled(jclass("int[]"))
long_array = _filled(jclass("long[]"))
boolean_array = _filled(jclass("boolean[]"))


def throwable(exc):
    """The Java ``Throwable`` behind a caught :data:`JavaException`, whose methods answer."""
    return _same(exc)


def started() -> bool:
    return True


def start(libjvm: Path, options: list[str], classpath: list[str]) -> None:
    raise AssertionError("under GraalPy the JVM already runs: pycrawler.jvm.start never starts one")


def attach_thread() -> None:
    """Nothing to do: a GraalPy thread is a Java thread."""


def detach_thread() -> None:
    """Nothing to do: a GraalPy thread is a Java thread."""
