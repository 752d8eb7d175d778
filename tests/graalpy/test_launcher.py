"""scripts/graalpy runs Python as the python command does: a file, -m, -c; sys.argv and the exit
status are Python's, and an uncaught exception prints its Python traceback only."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
GRAALPY = ROOT / "scripts" / "graalpy"
# The launches here are short: interpreted, with HotSpot's C1 compiler only. A JIT start costs
# them far more CPU than it earns (each launch under GraalPy 25's JIT: 60-130 s on a loaded
# two-core machine, against 15-25 s so), and what they hold is the same jar either way.
SHORT_RUN = {"PYCRAWLER_GRAALPY_JIT": "0", "PYCRAWLER_JVM_OPTS": os.environ.get("PYCRAWLER_JVM_OPTS", "-XX:TieredStopAtLevel=1")}


def graalpy(*args, cwd):
    return subprocess.run([str(GRAALPY), *args], cwd=cwd, env={**os.environ, **SHORT_RUN},
                          capture_output=True, text=True, timeout=300)


def launcher_lines(stderr):
    """The launcher's own lines on stderr: at most the one saying it runs without a JIT."""
    return [line for line in stderr.splitlines() if line.startswith(("graalpy:", "[engine]", "[To redirect"))]


def test_sys_executable_is_the_launcher():
    assert sys.implementation.name == "graalpy"
    assert Path(sys.executable) == GRAALPY


def test_file_gets_argv_its_folder_on_the_path_and_its_exit_code(tmp_path):
    script = tmp_path / "prog.py"
    (tmp_path / "helper.py").write_text("NAME = 'helper beside the file'\n")
    script.write_text("import sys, helper\nprint(sys.argv[1:], helper.NAME)\nsys.exit(int(sys.argv[1]))\n")
    done = graalpy(str(script), "3", "two words", cwd=ROOT)
    assert done.returncode == 3
    assert done.stdout == "['3', 'two words'] helper beside the file\n"
    assert [line for line in launcher_lines(done.stderr) if "WARNING" in line or "[engine]" in line] == []
    assert len(launcher_lines(done.stderr)) <= 1


def test_module_runs_as_main_with_argv(tmp_path):
    (tmp_path / "greet.py").write_text(
        "import sys\nif __name__ == '__main__':\n    print(__name__, sys.argv[0].endswith('greet.py'), sys.argv[1:])\n")
    done = graalpy("-m", "greet", "a", "-x", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "__main__ True ['a', '-x']\n")


def test_code_with_argv_imports_pycrawler_and_java(tmp_path):
    code = ("import sys, java, pycrawler; print(sys.argv, sys.path[0] == '', "
            "pycrawler.__file__.startswith(sys.argv[1]), java.type('com.sleepycat.je.EnvironmentConfig'))")
    done = graalpy("-c", code, str(ROOT), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"['-c', '{ROOT}'] True True com.sleepycat.je.EnvironmentConfig\n"


def test_uncaught_exception_prints_the_python_traceback_only_and_exits_1(tmp_path):
    script = tmp_path / "fails.py"
    script.write_text("def inner():\n    raise ValueError('no such record')\n\ninner()\n")
    done = graalpy(str(script), cwd=tmp_path)
    assert done.returncode == 1
    python_lines = [line for line in done.stderr.splitlines() if line not in launcher_lines(done.stderr)]
    assert python_lines == [
        "Traceback (most recent call last):",
        f'  File "{script}", line 4, in <module>',
        "    inner()",
        f'  File "{script}", line 2, in inner',
        "    raise ValueError('no such record')",
        "ValueError: no such record",
    ]


def test_system_exit_with_a_message_prints_it_and_exits_1(tmp_path):
    done = graalpy("-c", "raise SystemExit('store is locked')", cwd=tmp_path)
    assert done.returncode == 1
    assert "store is locked" in done.stderr.splitlines()


def test_bad_usage_is_one_line_and_exit_2(tmp_path):
    done = graalpy("--no-such-option", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("usage: graalpy ") and done.stderr.count("\n") == 1
    missing = graalpy(str(tmp_path / "absent.py"), cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stderr == f"graalpy: can't open file '{tmp_path / 'absent.py'}': no such file\n"
