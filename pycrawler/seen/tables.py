"""The Visited tables a state folder can hold, by name, and where each one lives in it.

A crawl (``pycrawler crawl --seen``) and the Scrapy scheduler (``PYCRAWLER_SEEN``) pick their
table by the same names, so one function opens them:

=========  ===================================  ==============================================
name       where, in the state folder           what
=========  ===================================  ==============================================
``exact``  database ``visited`` of its JE env   :class:`~.exact.ExactVisited`: never errs
``bloom``  file ``visited.bloom``               :class:`~.bloom.BloomFilter` at FPR 0.001,
                                                sized at creation
``drum``   folder ``drum/`` (bucket files); its     :class:`~.drum.DrumVisited`: asynchronous
           repository: databases ``drum.blocks``
           and ``drum.meta`` of the JE env
=========  ===================================  ==============================================

Every table lives with the state's JE environment so that a frontier can bind it
(:meth:`~.protocol.Visited.bound_to`): DRUM's repository is in it, the Bloom file's marks
follow its commits. A state folder written before DRUM's repository moved there (its own
environment in ``drum/repository/``) has it copied in when opened.
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
        path = Path(state) / SEEN_TABLE_PATHS["drum"]
        adopt_drum_repository(path, env)
        return DrumVisited(path, env=env)
    raise BadInput(f"{option} must be exact, bloom or drum, not {kind!r}")


DRUM_DATABASES = ("drum.blocks", "drum.meta")
OWN_REPOSITORY = "repository"


def adopt_drum_repository(path: Path, env) -> None:
    """Copy the repository of the DRUM in folder ``path``, when it has an environment of its
    own (``repository/``, where DRUM kept it before), into ``env``, in one transaction, then
    remove that folder. Copying again after a crash between the two writes the same records."""
    import shutil

    from ..store import Environment
    from ..store.packing import pack

    own = path / OWN_REPOSITORY
    if not own.is_dir():
        return
    with Environment(own, read_only=True) as source, env.begin() as txn:
        for name in DRUM_DATABASES:
            if name in source.database_names():
                records = list(source.open_database(name).items())
                target = env.open_database(name, create=True)
                if records:
                    target.put_many(pack([k for k, _ in records]), pack([v for _, v in records]), txn=txn)
    shutil.rmtree(own)
