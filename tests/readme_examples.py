"""The README's examples as a reader copies them: its fenced code blocks, read from README.md,
so that the tests run what the README shows and it stays true.

The examples crawl ``https://www.example.org/``; a test puts its own loopback site in that
place (:func:`localised`) and adds only what a loopback test needs (no politeness delay).
"""

from __future__ import annotations

import re
import shlex
import sys

from conftest import ROOT

EXAMPLE_SITE = "https://www.example.org/"


def code_blocks() -> list[tuple[str, str]]:
    """(language, text) of each fenced block of README.md, in order (language '' when none)."""
    text = (ROOT / "README.md").read_text()
    return [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```$", text, re.M | re.S)]


def block_after(language: str, index: int = 0) -> tuple[str, str | None]:
    """The ``index``-th block in ``language`` and the unlabelled block right after it (what it
    prints), or None."""
    blocks = code_blocks()
    positions = [i for i, (lang, _) in enumerate(blocks) if lang == language]
    at = positions[index]
    following = blocks[at + 1] if at + 1 < len(blocks) else None
    return blocks[at][1], following[1] if following and following[0] == "" else None


def shell_commands(index: int) -> list[list[str]]:
    """The commands of the ``index``-th ``sh`` block, split as a shell would, comments left out."""
    block, _ = block_after("sh", index)
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.strip()]


def localised(argv: list[str], seeds: list[str], extra: tuple[str, ...] = (),
              paths: dict[str, str] | None = None) -> list[str]:
    """A README ``pycrawler`` command run by this checkout's Python, on the test's site: its
    example site replaced by ``seeds``, each argument under a path named in ``paths`` (README
    spelling -> the test's) moved there, and ``extra`` options added."""
    assert argv[0] == "pycrawler", argv
    args = []
    for arg in argv[1:]:
        if arg == EXAMPLE_SITE:
            args.extend(seeds)
            continue
        for readme_path, test_path in (paths or {}).items():
            if arg == readme_path or arg.startswith(readme_path + "/"):
                arg = test_path + arg[len(readme_path):]
        args.append(arg)
    return [sys.executable, "-m", "pycrawler", *args, *extra]
