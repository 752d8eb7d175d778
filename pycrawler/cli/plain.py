"""Help text from the command modules' docstrings, as plain text: ``--help`` shows no reStructuredText."""

from __future__ import annotations

import re

_INLINE = re.compile(r"(?::[\w:]+:)?``?([^`]+)``?")


def first_line(doc: str) -> str:
    """A docstring's first line with its inline literals (````x````) and roles (``:mod:`x```) as plain text."""
    return _INLINE.sub(r"\1", doc.strip().splitlines()[0])
