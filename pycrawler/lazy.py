"""Package attributes loaded on first use.

Some modules pull in heavy dependencies (numba's compiler is ~70 MB of a process) that most
processes never need: a package lists where each public name lives, and the module behind it
is imported only when the name is first read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable


def lazy_attributes(package: str, homes: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` that imports ``package.<homes[name]>`` on first access."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str):
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{homes[name]}", package), name)
        namespace[name] = value
        return value

    return __getattr__
