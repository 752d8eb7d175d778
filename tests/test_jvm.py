"""The JVM bootstrap: what goes on the class path, and one clear line naming the fix when
something is missing. The JVM starts once per process, so anything that needs a JVM of its
own runs ``pycrawler`` in a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from java_programs import LEG_JE_VERSION

from pycrawler import jvm
from pycrawler.jvm import java_runtime
from pycrawler.errors import SetupError

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pycrawler", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=120)


def test_version_names_what_was_loaded():
    out = run_cli("version")
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(" ", 1) for line in out.stdout.splitlines()[:3])
    assert lines["pycrawler"]
    assert lines["java"].startswith("17")
    assert lines["je"] == f"{LEG_JE_VERSION} (writes new stores)"


def test_class_path_puts_the_user_first_and_lets_their_je_win(tmp_path, monkeypatch):
    heritrix_lib = tmp_path / "lib"
    heritrix_lib.mkdir()
    (heritrix_lib / "je-7.5.11.jar").write_bytes(b"")
    (heritrix_lib / "heritrix-commons-3.4.0.jar").write_bytes(b"")
    monkeypatch.setenv("PYCRAWLER_CLASSPATH", str(heritrix_lib))
    path = jvm.classpath()
    names = [p.name for p in path]
    assert names[:4] == ["heritrix-commons-3.4.0.jar", "lib", "je-7.5.11.jar", "pycrawler-bridge.jar"]
    assert "pycrawler-bridge.jar" in names
    assert "je-3.3.98.jar" not in names, "the bundled JE must give way to the user's"


def test_a_class_path_entry_that_does_not_exist_is_named(monkeypatch, tmp_path):
    monkeypatch.setenv("PYCRAWLER_CLASSPATH", str(tmp_path / "no-such-lib"))
    with pytest.raises(SetupError, match="no-such-lib"):
        jvm.classpath()


def test_heap_and_options_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("PYCRAWLER_HEAP", "3g")
    monkeypatch.setenv("PYCRAWLER_JVM_OPTS", "-XX:+UseSerialGC -Dx='a b'")
    assert jvm.jvm_options()[0] == "-Xmx3g"
    assert jvm.jvm_options()[-2:] == ["-XX:+UseSerialGC", "-Dx=a b"]
    assert jvm.DEFAULT_COLLECTOR not in jvm.jvm_options()  # the user's collector, alone


def test_the_parallel_collector_is_the_default(monkeypatch):
    monkeypatch.setenv("PYCRAWLER_JVM_OPTS", "-Dx=1")
    assert jvm.jvm_options()[-2:] == ["-XX:+UseParallelGC", "-Dx=1"]


def java_home() -> Path:
    """The home of the ``java`` on this machine's PATH."""
    java = shutil.which("java")
    assert java, "the tests need a Java runtime on PATH"
    return Path(java).resolve().parent.parent


def test_java_home_names_the_runtime(monkeypatch):
    monkeypatch.setenv("JAVA_HOME", str(java_home()))
    assert java_runtime.libjvm() == java_home() / "lib" / "server" / "libjvm.so"


def test_java_on_path_leads_to_its_home_through_its_links(monkeypatch, tmp_path):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "java").symlink_to(shutil.which("java"))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert java_runtime.libjvm() == java_home() / "lib" / "server" / "libjvm.so"


def test_a_java_home_that_holds_no_runtime_is_one_line(tmp_path):
    out = run_cli("version", env={"JAVA_HOME": str(tmp_path / "nowhere"), "PATH": str(Path(sys.executable).parent)})
    assert out.returncode == 3
    assert out.stderr.splitlines() == [
        f"pycrawler: JAVA_HOME ({tmp_path / 'nowhere'}) holds no Java runtime: install a Java runtime 11 or newer "
        "(e.g. openjdk-17-jre-headless) or set JAVA_HOME to one"]


def test_no_java_anywhere_names_what_to_install(monkeypatch, tmp_path):
    import jpype

    def nothing_in_the_usual_places():  # JPype's search of /usr/lib/jvm and the like, on a machine without Java
        raise jpype.JVMNotFoundException("No JVM shared library file (libjvm.so) found")

    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(jpype, "getDefaultJVMPath", nothing_in_the_usual_places)
    with pytest.raises(SetupError, match=r"^no Java runtime found .*: install a Java runtime 11 or newer "
                                         r"\(e.g. openjdk-17-jre-headless\) or set JAVA_HOME to one$"):
        java_runtime.libjvm()


def test_a_java_older_than_11_is_refused_by_its_release_file(monkeypatch, tmp_path):
    library = tmp_path / "jre" / "lib" / "amd64" / "server" / "libjvm.so"
    library.parent.mkdir(parents=True)
    library.write_bytes(b"")
    (tmp_path / "release").write_text('JAVA_VERSION="1.8.0_392"\n')
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(SetupError, match="is Java 8, older than the bridge runs on: install a Java runtime 11"):
        java_runtime.libjvm()


@pytest.mark.parametrize("missing", ["bridge", "je"])
def test_an_unbuilt_bridge_is_one_line_naming_setup(tmp_path, missing):
    home = tmp_path / "home"
    (home / "target" / "lib").mkdir(parents=True)
    if missing == "je":
        shutil.copy(ROOT / "target" / "pycrawler-bridge.jar", home / "target")
    out = run_cli("version", env={"PYCRAWLER_HOME": str(home), "PYCRAWLER_CLASSPATH": ""})
    assert out.returncode == 3
    assert len(out.stderr.strip().splitlines()) == 1
    assert "scripts/setup" in out.stderr
    assert "Traceback" not in out.stderr


# Counts the full Python collections that start on a thread other than the main one (JPype's
# "Python Reference Queue" thread) while Java collects eight times and Python, as a crawl does,
# allocates enough for its own automatic collections to run in between.
COLLECTIONS_PER_JAVA_GC = """
import gc, sys, threading, time
import jpype
from pycrawler import jvm
if sys.argv[1] == "pycrawler":
    jvm.start()
else:
    jpype.startJVM(*jvm.jvm_options(), classpath=[str(p) for p in jvm.classpath()])
off_main = []
gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2
                    and threading.current_thread() is not threading.main_thread() and off_main.append(1))
for _ in range(8):
    garbage = [[i] for i in range(50_000)]
    jpype.JClass("java.lang.System").gc()
    time.sleep(0.4)  # the reference queue's thread polls every 250 ms
print(len(off_main))
"""


def default_jvm_env() -> dict[str, str]:
    """This environment for a child that starts the JVM with pycrawler's defaults (the tests
    set PYCRAWLER_JVM_OPTS for every other process: tests/conftest.py)."""
    env = {name: value for name, value in os.environ.items() if name != "PYCRAWLER_JVM_OPTS"}
    return {**env, "PYTHONPATH": str(ROOT)}


def full_collections_off_the_main_thread(start: str) -> int:
    out = subprocess.run([sys.executable, "-c", COLLECTIONS_PER_JAVA_GC, start], capture_output=True, text=True,
                         env=default_jvm_env(), timeout=120)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


@pytest.mark.any_je  # JPype's and the JVM's behaviour, whichever JE is on the class path
def test_a_java_collection_does_not_run_a_full_python_collection():
    """JPype alone runs a full Python collection after each Java one (the cost that grew with
    a crawl's size); the JVM pycrawler starts runs at most one, whatever Java does."""
    assert full_collections_off_the_main_thread("jpype") >= 8
    assert full_collections_off_the_main_thread("pycrawler") <= 1


# Python's faulthandler enabled before the JVM starts and disabled before exit (what pytest's
# faulthandler plugin does around a test session) while Java runs compiled code on the
# fork-join pool's threads: JVM shutdown arms a safepoint, whose poll faults on purpose.
FAULT_HANDLERS_AT_EXIT = """
import faulthandler, sys, threading, time
faulthandler.enable()
import jpype
from pycrawler import jvm
from pycrawler.jvm import jvm_fault_handlers
if sys.argv[1] == "jpype":
    jvm_fault_handlers.keep = lambda: None
jvm.start()

def sort_for_ever():
    jpype.java.lang.Thread.attachAsDaemon()
    numbers = jpype.JClass("java.util.Random")(1)
    while True:
        jpype.JClass("java.util.Arrays").parallelSort(numbers.ints(5_000_000).toArray())

threading.Thread(target=sort_for_ever, daemon=True).start()
time.sleep(2)
faulthandler.disable()
"""


def exit_codes_with_java_running(start: str, runs: int = 3) -> list[int]:
    return [subprocess.run([sys.executable, "-c", FAULT_HANDLERS_AT_EXIT, start], capture_output=True,
                           env=default_jvm_env(), timeout=120).returncode
            for _ in range(runs)]


@pytest.mark.any_je  # JPype's and the JVM's behaviour, whichever JE is on the class path
def test_the_jvm_keeps_its_fault_handlers_through_shutdown_whatever_python_restored():
    """A process whose work all succeeded exits 0 even when faulthandler was disabled after the
    JVM started; without keeping the JVM's handlers it dies of SIGSEGV at shutdown."""
    assert -11 in exit_codes_with_java_running("jpype")
    assert exit_codes_with_java_running("pycrawler") == [0, 0, 0]


@pytest.mark.any_je  # the bridge's conversions, whichever JE is on the class path
def test_the_seams_calls_carry_java_values_both_ways():
    """The calls the rest of pycrawler reaches Java by: arrays from Python values (every byte
    value, the extremes of int and long) read back as Java sees them, and a Java exception
    caught as the seam's JavaException with its Java class and message."""
    jvm.start()
    assert jvm.RUNTIME == ("graalpy" if sys.implementation.name == "graalpy" else "jpype")
    every_byte = bytes(range(256))
    made = jvm.byte_array(every_byte)
    assert str(made.getClass().getName()) == "[B" and len(made) == 256 and made[255] == -1
    assert jvm.to_bytes(made) == every_byte and jvm.to_bytes(jvm.byte_array(b"")) == b""
    assert len(jvm.byte_array(3)) == 3 and jvm.to_bytes(jvm.byte_array(3)) == bytes(3)
    arrays = jvm.jclass("java.util.Arrays")
    assert str(arrays.toString(jvm.int_array([-2**31, 0, 2**31 - 1]))) == "[-2147483648, 0, 2147483647]"
    assert str(arrays.toString(jvm.long_array([-2**63, 2**63 - 1]))) == "[-9223372036854775808, 9223372036854775807]"
    assert str(arrays.toString(jvm.boolean_array([True, False]))) == "[true, false]"
    assert str(arrays.toString(jvm.boolean_array(2))) == "[false, false]"
    with pytest.raises(jvm.JavaException) as caught:
        jvm.jclass("java.lang.Integer").parseInt("x")
    java = jvm.throwable(caught.value)
    assert str(java.getClass().getName()) == "java.lang.NumberFormatException"
    assert str(java.getMessage()) == 'For input string: "x"'
