"""The wheel's Java half: the build copies the bridge jar and JE 18.3.12, with its licence, into
``pycrawler/java/`` of the wheel (see pycrawler/jvm/jar_folder.py). Everything else is in pyproject.toml.

The jars come from the checkout's ``target/``, where ``scripts/setup`` builds and resolves them
(the Maven build of ``bridge/``; JE from Maven Central); they are never copied into the source
tree. An editable install copies nothing: a checkout finds its jars in ``target/`` itself. Only
JE 18.3.12 is bundled: it is under the Apache licence, while the other JEs pycrawler knows (3.3.98,
4.0.92, 5.0.73) are under the Sleepycat licence.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.errors import FileError

HERE = Path(__file__).resolve().parent
BUNDLED = {
    "target/pycrawler-bridge.jar": "pycrawler-bridge.jar",
    "target/je/je-18.3.12.jar": "je/je-18.3.12.jar",
    "licenses/je-18.3.12.txt": "je/LICENSE-je-18.3.12.txt",
}
"""Source in the checkout -> path under the wheel's ``pycrawler/java/``."""


class BuildPyWithJars(build_py):
    """``build_py``, then the jars into the build's ``pycrawler/java/``."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        missing = [source for source in BUNDLED if not (HERE / source).is_file()]
        if missing:
            raise FileError(f"the wheel carries {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} "
                             "not built: run scripts/setup (or mvn package and mvn -Pfrom-central validate) first")
        for source, inside in BUNDLED.items():
            destination = Path(self.build_lib) / "pycrawler" / "java" / inside
            self.mkpath(str(destination.parent))
            self.copy_file(str(HERE / source), str(destination))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        jars = [str(Path(self.build_lib) / "pycrawler" / "java" / inside) for inside in BUNDLED]
        return super().get_outputs(include_bytecode) + ([] if self.editable_mode else jars)


setup(cmdclass={"build_py": BuildPyWithJars})
