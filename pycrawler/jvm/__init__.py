"""The one seam for Java: the one place the JVM starts, and the calls that reach Java types.

The rest of pycrawler names no Java bridge: it calls :func:`start` (idempotent), then takes
Java classes with ``jclass``, makes Java arrays with ``byte_array``, ``int_array``,
``long_array`` and ``boolean_array`` (a length or a sequence, copied in one step), turns a
Java ``byte[]`` into bytes with ``to_bytes``, catches ``JavaException`` (and calls the Java
methods of what it caught on ``throwable(exc)``), and attaches a thread of its own with
``attach_thread`` / ``detach_thread``. The bridge behind them is the backend of this
runtime (:data:`RUNTIME`): under CPython, JPype (:mod:`.jpype_backend`),
which starts one JVM per process and can never restart it; under GraalPy, which runs inside
a JVM already started with pycrawler's class path, its ``java`` module
(:mod:`.graalpy_backend`). Backends are imported on first use, so a command that never
touches Java never loads one.

Everything below is how the JVM starts under JPype.

Class path, in order of precedence:

1. ``PYCRAWLER_CLASSPATH``: jars or folders separated by ``os.pathsep``; a folder adds
   every ``*.jar`` in it and the folder itself (for loose classes). A JE jar there (a Heritrix
   3 ``lib/`` has ``je-7.5.11.jar``) is the user's JE: it opens every store it reads. pycrawler
   knows it by its name, ``je-VERSION.jar``; JE under any other name is refused once Java
   starts (:func:`check_loaded_je`).
2. The JE this process runs on (:func:`start`'s ``je``; :mod:`pycrawler.jvm.je_releases` chooses
   it per store, by the store's log version, before the JVM starts). Every other JE jar is left
   out: two JEs cannot share a JVM.
3. ``pycrawler-bridge.jar`` (the Maven build of ``bridge/``; one jar serves every JE: built
   against JE 3.3.98 or 18.3.12, its classes are byte for byte the same).
4. ``lib/*.jar`` (the bridge's runtime dependencies, JE aside).
5. The py4j package's own jar, for the gateway (:mod:`pycrawler.store.gateway_server`).

Items 2 to 4 come from :mod:`pycrawler.jvm.jar_folder`: a checkout's ``target/``, or the jars an
installed wheel carries. The JVM itself is the one :mod:`pycrawler.jvm.java_runtime` finds.

JVM options: ``PYCRAWLER_HEAP`` (e.g. ``2g``) sets ``-Xmx``; ``PYCRAWLER_JVM_OPTS`` adds
any other options (shell-quoted). The collector is the parallel one unless those options
choose another: JE's batches are throughput work, and G1 (the JDK's default) spends a core's
share on concurrent work that a two-core machine takes from JE itself (key-ordered TODO
batches: put 97k -> 125k, get 81k -> 91k records/s; the work-queue frontier's schedule 109k ->
138k URLs/s; see docs/benchmarks.md). A process that has started the JVM must not ``fork()``.
A fatal JVM error's file (``hs_err_pid*.log``) goes to a crawl's state folder or the temporary
folder (:func:`error_file`), never the working folder. ``-Xrs``: the JVM installs no handler
for SIGINT, SIGTERM, SIGHUP or SIGQUIT, so Python's handlers stay in place from the first
instant of the JVM's start (:mod:`pycrawler.crawl.stop_signals`); the JVM's would end the
process with no word and nothing closed. SIGQUIT then prints no Java thread dump (``jstack``
and ``jcmd`` need ``-XX:+StartAttachListener`` in ``PYCRAWLER_JVM_OPTS``).
"""

from __future__ import annotations

import atexit
import importlib
import os
import re
import shlex
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from . import java_runtime, je_releases, jvm_fault_handlers
from ..errors import SetupError
from .jar_folder import BRIDGE_JAR, SETUP_HINT
from .jar_folder import FOLDER as TARGET
from .je_releases import JeRelease

DEFAULT_HEAP = "1g"

RUNTIME = "graalpy" if sys.implementation.name == "graalpy" else "jpype"
"""The bridge to Java: ``"jpype"`` (CPython, a JVM started in this process) or ``"graalpy"``
(Python running inside the JVM)."""

BRIDGE_MODULES = frozenset({"jpype", "_jpype"}) if RUNTIME == "jpype" else frozenset()
"""The top-level modules of the bridge's own Python code, where no exception may be raised
while a Java call is under way (:mod:`pycrawler.crawl.stop_signals`)."""

_BACKEND_CALLS = frozenset({"jclass", "byte_array", "int_array", "long_array", "boolean_array", "to_bytes",
                            "JavaException", "throwable", "attach_thread", "detach_thread"})


def _backend():
    return importlib.import_module(f"{__name__}.{RUNTIME}_backend")


def __getattr__(name: str):
    """The backend's calls (:data:`_BACKEND_CALLS`), bound here on first use so that later
    uses are plain attribute reads. The array types need the running JVM (JPype makes them
    from its classes): before :func:`start` they raise the backend's own error."""
    if name not in _BACKEND_CALLS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = globals()[name] = getattr(_backend(), name)
    return value


def before_shutdown(hook: Callable[[], None]) -> None:
    """Run ``hook`` at the process's exit, before the JVM shuts down. Exit hooks run last
    registered first, and the backend registers its own (JPype's shutdown of the JVM) when it
    is imported, so loading it first puts ``hook`` ahead of the shutdown."""
    _backend()
    atexit.register(hook)


def _expand(entry: str) -> list[Path]:
    path = Path(entry).expanduser()
    if path.is_dir():
        return sorted(path.glob("*.jar")) + [path]
    if path.is_file():
        return [path]
    raise SetupError(f"PYCRAWLER_CLASSPATH names {entry!r}, which does not exist")


def user_entries() -> list[Path]:
    """``PYCRAWLER_CLASSPATH`` as jars and folders (a folder: its jars, then itself)."""
    return [path for entry in filter(None, os.environ.get("PYCRAWLER_CLASSPATH", "").split(os.pathsep))
            for path in _expand(entry)]


def user_je() -> JeRelease | None:
    """The JE jar the user put on ``PYCRAWLER_CLASSPATH``, if any (the first one)."""
    return next(filter(None, map(JeRelease.of_jar, user_entries())), None)


def known_jes() -> list[JeRelease]:
    """The JE releases built or resolved for this checkout (or carried by this wheel), oldest first."""
    return je_releases.known(TARGET)


def classpath(je: JeRelease | None = None) -> list[Path]:
    """The jars and folders the JVM will load to run on ``je`` (None: the JE of new stores),
    user entries first."""
    if not BRIDGE_JAR.is_file():
        raise SetupError(f"the Java bridge is not built ({BRIDGE_JAR} is missing): {SETUP_HINT}")
    je = je or je_releases.for_new_store(TARGET, user_je())
    user = [path for path in user_entries() if JeRelease.of_jar(path) is None]
    deps = [path for path in sorted((TARGET / "lib").glob("*.jar")) if JeRelease.of_jar(path) is None]
    return user + [je.jar, BRIDGE_JAR] + deps + py4j_jar()


def py4j_jar() -> list[Path]:
    """The jar the py4j package ships (its Java side: the gateway server of ``pycrawler
    serve``), found through the package so that it always matches the Python side."""
    try:
        from py4j.java_gateway import find_jar_path
    except ImportError:
        return []
    jar = find_jar_path()
    return [Path(jar)] if jar else []


def crawl_jvm(je_cache_mb: int = 64, *, up_to_mb: int | None = None) -> dict[str, str]:
    """:data:`CRAWL_JVM` for a JE cache of ``je_cache_mb`` MiB: a heap of twice the cache. With
    ``up_to_mb``, for a cache chosen only once the state is open (of ``je_cache_mb`` to
    ``up_to_mb`` MiB): a heap that starts at twice the smallest and may grow to twice the largest,
    so that a crawl whose cache stays small keeps a small heap (the serial collector grows its
    old generation only when what it holds outgrows it)."""
    options = "-XX:+UseSerialGC -Xmn16m -XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=24m"
    if up_to_mb is None:
        return {"PYCRAWLER_HEAP": f"{2 * je_cache_mb}m", "PYCRAWLER_JVM_OPTS": options}
    return {"PYCRAWLER_HEAP": f"{2 * up_to_mb}m", "PYCRAWLER_JVM_OPTS": f"-Xms{2 * je_cache_mb}m {options}"}


CRAWL_JVM = crawl_jvm()
"""The JVM of the Scrapy scheduler, unless the environment says otherwise, and the options of
``pycrawler crawl``'s (whose heap follows its JE cache: ``crawl.settings.set_crawl_jvm_defaults``).
The Scrapy scheduler's JE cache is 64 MB by default and the batches are short-lived, so: a heap
of twice the cache; a 16 MB young generation (the JVM
would size it to a third of the heap, and every page of it is touched between two minor
collections, which the batches' little surviving data keeps cheap); the serial collector (no
GC threads competing for the cores the crawl needs); only the C1 compiler, with a small code
cache (the Java side is thin loops over batches, which C2 would not make measurably faster).
Measured on the JDK docs crawl: the crawling process peaked at ~170 MB instead of ~250 MB
(numba aside), at the same pages/s."""

DEFAULT_COLLECTOR = "-XX:+UseParallelGC"
_COLLECTOR = re.compile(r"^-XX:\+Use\w+GC$")


_error_folder: Path | None = None


def keep_error_files_in(folder: Path) -> None:
    """Have the JVM write its fatal-error file (``hs_err_pid<pid>.log``) into ``folder``, a
    crawl's state folder, when it starts later in this process (see :func:`error_file`)."""
    global _error_folder
    _error_folder = Path(folder).resolve()


def error_file() -> str:
    """Where the JVM writes its fatal-error file, as ``-XX:ErrorFile`` takes it (``%p``: the
    process id): in the folder of :func:`keep_error_files_in`, else in the temporary folder;
    never in the user's working folder, the JVM's own choice. The JVM's report of a fatal
    error names the file."""
    folder = str(_error_folder or Path(tempfile.gettempdir())).replace("%", "%%")
    return os.path.join(folder, "hs_err_pid%p.log")


def jvm_options() -> list[str]:
    user = shlex.split(os.environ.get("PYCRAWLER_JVM_OPTS", ""))
    collector = [] if any(_COLLECTOR.match(opt) for opt in user) else [DEFAULT_COLLECTOR]
    return [f"-Xmx{os.environ.get('PYCRAWLER_HEAP', DEFAULT_HEAP)}", "-Xss4m", f"-XX:ErrorFile={error_file()}",
            "-Xrs", *collector, *user]


_started_on: JeRelease | None = None


def start(je: JeRelease | None = None) -> None:
    """Start the JVM with pycrawler's class path, once per process, on the JE ``je`` (None:
    the JE that writes new stores). A later call changes nothing: see :func:`loaded_je`.
    Under GraalPy the JVM already runs, on the class path its launcher chose."""
    global _started_on
    if started():
        return
    je = je or je_releases.for_new_store(TARGET, user_je())
    _backend().start(java_runtime.libjvm(), jvm_options(), [str(p) for p in classpath(je)])
    check_loaded_je(je)
    _started_on = je
    jvm_fault_handlers.keep()


def check_loaded_je(chosen: JeRelease) -> None:
    """Refuse a JVM that loaded another JE than ``chosen``: pycrawler chooses a store's JE by
    its jar's name before Java starts, and every check that follows (it reads the store, a
    write would not upgrade a foreign log: :mod:`pycrawler.store.je_choice`) holds only for the
    JE that really loaded. A class path entry before ``chosen`` that carries JE (a JE jar whose
    name says nothing of its version, such as ``je.jar``; a folder or jar bundling JE) wins the
    class loader's race, and a JE 18 named ``je.jar`` silently upgraded a JE 3.3 store. Until
    this process exits, :func:`loaded_je` then gives the JE that loaded."""
    version = je_version()
    if f"{version}.".startswith(f"{chosen.version}."):  # a jar's name may give fewer digits (je-18.3.jar)
        return
    source = _backend().jclass("com.sleepycat.je.JEVersion").class_.getProtectionDomain().getCodeSource()
    where = (f"from {_backend().jclass('java.nio.file.Paths').get(source.getLocation().toURI())}" if source
             else "from the JVM's own class path")
    raise SetupError(f"the class path loads JE {version} {where}, not {chosen}, which pycrawler chose: it knows "
                     f"a JE by its jar's name before Java starts, so give JE to PYCRAWLER_CLASSPATH only as a jar of "
                     f"its own named for its version (je-{version}.jar)")


def started() -> bool:
    return _backend().started()


def loaded_je() -> JeRelease:
    """The JE this process runs on (starting the JVM on the JE of new stores if need be)."""
    start()
    if _started_on is None:  # started by someone else's code or GraalPy's launcher: the jar is unknown, the version is not
        return JeRelease(je_version(), Path("?"))
    return _started_on


def je_version() -> str:
    """The version string of the JE that was actually loaded."""
    start()
    return str(_backend().jclass("com.sleepycat.je.JEVersion").CURRENT_VERSION.getVersionString())


def je_major() -> int:
    return int(je_version().split(".")[0])


def max_heap_mb() -> int:
    """The JVM's heap limit (``-Xmx``), in MiB, starting the JVM if need be."""
    start()
    return int(_backend().jclass("java.lang.Runtime").getRuntime().maxMemory()) >> 20


def gc_seconds() -> float:
    """Seconds the JVM's garbage collectors have spent collecting since it started (their
    MXBeans' accumulated times: pauses of the young and old collectors, concurrent work
    included where the collector counts it)."""
    start()
    beans = _backend().jclass("java.lang.management.ManagementFactory").getGarbageCollectorMXBeans()
    return sum(max(0, int(bean.getCollectionTime())) for bean in beans) / 1000


def java_version() -> str:
    start()
    return str(_backend().jclass("org.pycrawler.bridge.Versions").java())
