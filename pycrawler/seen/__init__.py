"""Visited (URL-seen) tables behind one protocol (:mod:`pycrawler.seen.protocol`).

- :class:`BloomFilter`: sized, stably hashed, memory-mapped; may drop a new URL (false
  positive) at the rate it was sized for.
- :class:`ExactVisited`: exact, on a JE database (Heritrix's ``BdbUriUniqFilter`` layout).
- :class:`SimpleBloomFilter`: the book's fixed 2^25-bit filter over URL strings, bit for bit.
"""

from .bloom import BloomFilter, optimal_parameters
from .exact import ExactVisited
from .protocol import SynchronousVisited, Visited, per_key
from .simple_bloom import SimpleBloomFilter

__all__ = ["Visited", "SynchronousVisited", "per_key", "BloomFilter", "optimal_parameters", "ExactVisited",
           "SimpleBloomFilter"]
