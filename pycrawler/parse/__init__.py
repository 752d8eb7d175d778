"""Parsing fetched documents: charset, title, meta fields and outlinks with their hop types.

:func:`extract` does one document in this process; :class:`ParsePool` runs it in worker
processes so the fetching event loop never waits for a parse.
"""

from .html import Document, extract
from .links import (Hop, LinkResolver, Outlink, PathRepetitionRule, absolute_url, extend_hop_path,
                    trailing_redirects)
from .pool import ParsePool

__all__ = ["Document", "extract", "Hop", "LinkResolver", "Outlink", "PathRepetitionRule", "absolute_url", "extend_hop_path",
           "trailing_redirects", "ParsePool"]
