"""crawler4j frontiers (``crawlStorageFolder/frontier/``), read without crawler4j's classes.

:mod:`.records` decodes the records crawler4j writes (its ``WebURLTupleBinding``, the keys of
its work queues, ``DocIDs`` and ``Statistics``); :mod:`.frontier` opens a frontier folder
read-only and streams its pending URLs in crawl order; :mod:`.migrate` makes a pycrawler crawl
state that continues the crawl. See docs/crawler4j.md.
"""

from ..lazy import lazy_attributes
from .frontier import Crawler4jFrontier

# The import into a pycrawler crawl state brings the crawl's side (numpy, numba), which reading a
# frontier (inspect, export) does without: it loads on first use.
__all__ = ["Crawler4jFrontier", "import_frontier"]
__getattr__ = lazy_attributes(__name__, {"import_frontier": "migrate"})
