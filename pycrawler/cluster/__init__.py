"""Several crawl workers over Redis: membership, and the exchange of discovered links.

Each worker is a whole crawl (fetcher, parser, JE frontier and seen table, resumable from its
state folder); the cluster only decides which worker fetches which URL. See `protocol`.
"""

from __future__ import annotations

import importlib.util

from ..errors import SetupError


def require_redis() -> None:
    """One line when the redis package is missing: a wheel installs it with the ``redis`` extra
    only, since a single crawl never talks to Redis."""
    if importlib.util.find_spec("redis") is None:
        raise SetupError("a cluster needs the redis package, which pycrawler's redis extra installs: "
                         "pip install 'redis>=5' (or the wheel with [redis])")
