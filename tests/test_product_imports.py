"""No product module imports :mod:`pycrawler.testing` (the sites and servers tests and benchmarks
crawl), read from the source's import statements, the lazy ones inside functions included."""

import ast
from pathlib import Path

import pycrawler

PACKAGE = Path(pycrawler.__file__).parent
TESTING = "pycrawler.testing"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved against its own package."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0]
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


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
