"""The Visited tables a state folder can hold, by name, and where each one lives in it.

A crawl (``pycrawler crawl --seen``) and the Scrapy scheduler (``PYCRAWLER_SEEN``) pick their
table by the same names, so one function opens them:

=========  ===================================  ==============================================
name       where, in the state folder           what
=========  ===================================  ==============================================
``exact``  database ``visited`` of its JE env   :class:`~.exact.ExactVisited`: never errs
``bloom``  file ``visited.bloom``               :class:`~.bloom.BloomFilter` at FPR 0.001,
                                                sized at creation
``drum``   folder ``drum/``                     :class:`~.drum.DrumVisited`: asynchronous
=========  ===================================  ==============================================
"""

from __future__ import annotations

from pathlib import Path

from ..errors import BadInput

SEEN_TABLE_PATHS = {"exact": "visited", "bloom": "visited.bloom", "drum": "drum"}
"""Where each Visited table of a state folder lives (``exact``: a database of its environment)."""
BLOOM_FPR = 0.001


def open_visited(kind: str, env, state: Path, *, bloom_capacity: int, bloom_fpr: float = BLOOM_FPR,
                 option: str = "--seen"):
    """The Visited table ``kind`` of the state folder ``state`` whose JE environment is ``env``,
    made when absent (a Bloom filter for ``bloom_capacity`` keys at ``bloom_fpr``); ``option``
    names the setting in the error for an unknown ``kind``."""
    if kind == "exact":
        from .exact import ExactVisited
        return ExactVisited(env, SEEN_TABLE_PATHS["exact"], create=True)
    if kind == "bloom":
        from .bloom import BloomFilter
        path = Path(state) / SEEN_TABLE_PATHS["bloom"]
        return BloomFilter.open(path) if path.exists() else BloomFilter.create(path, bloom_capacity, bloom_fpr)
    if kind == "drum":
        from .drum import DrumVisited
        return DrumVisited(Path(state) / SEEN_TABLE_PATHS["drum"])
    raise BadInput(f"{option} must be exact, bloom or drum, not {kind!r}")
