"""The seam's calls on JPype: CPython starts a JVM in this process and reaches it through JNI.

Each call is JPype's own object (``jclass`` is ``jpype.JClass``, ``byte_array`` the type
``JArray(JByte)``, ``to_bytes`` is ``bytes``, which copies a Java ``byte[]`` through the
buffer protocol in one step), so a caller that binds one once pays what a direct JPype call
costs. The array types exist only once the JVM runs, so they are made when first asked for
(:func:`__getattr__`), and :mod:`pycrawler.jvm` keeps them from then on.
"""

from __future__ import annotations

import gc
from pathlib import Path

import _jpype
import jpype

from ..errors import SetupError

RUNTIME = "jpype"

jclass = jpype.JClass
JavaException = jpype.JException
to_bytes = bytes

_ARRAY_ELEMENTS = {"byte_array": jpype.JByte, "int_array": jpype.JInt, "long_array": jpype.JLong,
                   "boolean_array": jpype.JBoolean}


def __getattr__(name: str):
    """``byte_array``, ``int_array``, ``long_array``, ``boolean_array``: JPype's array types,
    which take a length or a sequence (bytes, a numpy array, a list) and copy it in one step."""
    if name in _ARRAY_ELEMENTS:
        return jpype.JArray(_ARRAY_ELEMENTS[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def throwable(exc):
    """The Java ``Throwable`` behind a caught :data:`JavaException`: JPype's exception is it."""
    return exc


def started() -> bool:
    return jpype.isJVMStarted()


def start(libjvm: Path, options: list[str], classpath: list[str]) -> None:
    """Start the JVM in this process (once: JPype cannot start a second one)."""
    try:
        # interrupt=False: JPype leaves SIGINT and SIGTERM to Python's handlers (its own would
        # end the process at once, or interrupt Java's main thread in the middle of JE's I/O);
        # -Xrs (jvm_options) keeps the JVM's own off them while it starts.
        jpype.startJVM(str(libjvm), *options, classpath=classpath, convertStrings=False, interrupt=False)
    except (OSError, RuntimeError) as exc:
        raise SetupError(f"the JVM did not start: {exc}") from None
    decouple_collectors()


def attach_thread() -> None:
    """Attach the calling thread to the JVM as a daemon thread: a non-daemon attached thread
    would keep the JVM from shutting down at exit."""
    jpype.java.lang.Thread.attachAsDaemon()


def detach_thread() -> None:
    jpype.java.lang.Thread.detach()


def decouple_collectors() -> None:
    """Stop JPype from running each heap's collector when the other one runs.

    JPype ties the two collectors together: its "Python Reference Queue" thread runs a full
    Python collection (all generations, holding the GIL) after every Java collection, and its
    hook in ``gc.callbacks`` calls ``System.gc()`` when the process's memory grew since the
    last Python collection. A crawl's JVM collects its 16 MB young generation every few
    hundred pages, so the cost of a crawl grew with the number of Python objects it holds:
    on a 1M-page crawl that thread took 67% of a core at 600k pages (docs/benchmarks.md,
    "The reference-queue cost"). The coupling only matters for reference cycles through
    JPype proxies (Python objects implementing Java interfaces), which pycrawler does not
    make; each heap's own collector still runs on its own schedule.

    Removing the hook is enough for both directions: JPype's Java-side trigger runs one
    last Python collection and then waits for the hook's end-of-collection call, which
    never comes (tests/test_jvm.py holds this). JPype 1.7 registers the hook twice, and one
    copy left behind keeps the coupling alive (its end-of-collection call re-arms the
    trigger at the next automatic Python collection), so every copy goes."""
    gc.callbacks[:] = [callback for callback in gc.callbacks if callback != _jpype._collect]
