"""No product module imports :mod:`pycrawler.testing` (the sites and servers tests and benchmarks
crawl), no two modules of the package import each other (layers point down), and only the Java
seam (:mod:`pycrawler.jvm`, the bottom layer) imports a bridge to Java; read from the source's
import statements, the lazy ones inside functions included."""

import ast
from collections.abc import Iterator
from pathlib import Path

import pycrawler

PACKAGE = Path(pycrawler.__file__).parent
TESTING = "pycrawler.testing"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_statements(path: Path) -> Iterator[tuple[str, list[str]]]:
    """``(module, names)`` of every import in ``path``, relative imports resolved against its own
    package: ``from .x import a, b`` gives ``("<package>.x", ["a", "b"])``, ``import a.b`` ``("a.b", [])``."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from ((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0]
                base = f"{anchor}.{base}" if base else anchor
            yield base, [alias.name for alias in node.names]


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, and every ``module.name`` it imports from one."""
    found = set()
    for base, names in import_statements(path):
        found.add(base)
        found.update(f"{base}.{name}" for name in names)
    return found


def package_imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of ``modules`` that ``path`` imports: of ``from package import name`` the
    module ``package.name`` when there is one (``from . import status`` needs no package's
    ``__init__``), else ``package`` itself."""
    found = set()
    for base, names in import_statements(path):
        submodules = {f"{base}.{name}" for name in names} & modules
        found |= submodules
        if len(submodules) < len(names) or not names:
            found.add(base)
    return found & modules - {module_name(path)}


def in_testing(name: str) -> bool:
    return name == TESTING or name.startswith(TESTING + ".")


def test_no_product_module_imports_the_testing_package():
    product = [path for path in PACKAGE.rglob("*.py") if not in_testing(module_name(path))]
    assert len(product) > 100 and PACKAGE / "demo.py" in product
    offenders = {module_name(path): sorted(filter(in_testing, imported_modules(path))) for path in product}
    assert {module: names for module, names in offenders.items() if names} == {}


def test_the_import_reader_sees_relative_and_absolute_imports_of_the_testing_package():
    local_redis = imported_modules(PACKAGE / "testing" / "local_redis.py")
    assert "pycrawler.local_servers.free_port" in local_redis            # from ..local_servers import ...
    synthetic_server = imported_modules(PACKAGE / "testing" / "synthetic_server.py")
    assert "pycrawler.testing.synthetic_web" in synthetic_server          # from .synthetic_web import ...


def test_no_two_modules_of_the_package_import_each_other():
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    imports = {name: package_imports(path, set(modules)) for name, path in modules.items()}
    mutual = {tuple(sorted((module, other))) for module, imported in imports.items() for other in imported
              if module in imports[other]}
    assert sorted(mutual) == []


def test_the_cycle_reader_sees_lazy_imports_and_tells_a_submodule_from_its_package():
    modules = {module_name(path) for path in PACKAGE.rglob("*.py")}
    migrate = package_imports(PACKAGE / "heritrix" / "migrate.py", modules)
    assert "pycrawler.frontier.assignment" in migrate                    # inside import_state
    robots = package_imports(PACKAGE / "fetch" / "robots.py", modules)
    assert "pycrawler.fetch.status" in robots and "pycrawler.fetch" not in robots   # from . import status
    state = package_imports(PACKAGE / "heritrix" / "state.py", modules)
    assert {"pycrawler.store", "pycrawler.store.packing"} <= state       # from ..store import Environment


SEAM = "pycrawler.jvm"
BRIDGES = {"jpype", "_jpype", "java"}
"""The Python modules of the bridges to Java: JPype's, and GraalPy's ``java`` module."""


def in_seam(name: str) -> bool:
    return name == SEAM or name.startswith(SEAM + ".")


def test_only_the_java_seam_imports_a_bridge_to_java():
    """Everything else reaches Java through :mod:`pycrawler.jvm`, whichever runtime is under it."""
    outside = {module_name(path): sorted(name for name in imported_modules(path) if name.split(".")[0] in BRIDGES)
               for path in PACKAGE.rglob("*.py") if not in_seam(module_name(path))}
    assert {module: names for module, names in outside.items() if names} == {}
    inside = set().union(*(imported_modules(path) for path in (PACKAGE / "jvm").glob("*_backend.py")))
    assert {"jpype", "java"} <= inside


def test_the_java_seam_is_the_bottom_layer():
    """The seam imports nothing of pycrawler but its errors: every layer may use it, it uses none."""
    modules = {module_name(path) for path in PACKAGE.rglob("*.py")}
    seam = {module_name(path): path for path in (PACKAGE / "jvm").glob("*.py")}
    assert {"pycrawler.jvm", "pycrawler.jvm.jpype_backend", "pycrawler.jvm.graalpy_backend"} <= set(seam)
    upward = {name: sorted(found) for name, path in seam.items()
              if (found := {m for m in package_imports(path, modules) if not in_seam(m)} - {"pycrawler.errors"})}
    assert upward == {}
