"""Parsing fetched documents: charset, title, meta fields and outlinks with their hop types.

:func:`extract` does one document in this process; :class:`ParsePool` runs it in worker
processes so the fetching event loop never waits for a parse.
"""

from ..lazy import lazy_attributes

# Loaded on first use: the HTML parser brings selectolax (lexbor), which the commands that never
# parse a page (the store's and the readers', and every command under GraalPy) do without.
_HOMES = {"Document": "html", "extract": "html", "ParsePool": "pool",
          **dict.fromkeys(["Hop", "LinkResolver", "Outlink", "PathRepetitionRule", "absolute_url", "extend_hop_path",
                           "trailing_redirects"], "links")}

__all__ = list(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
