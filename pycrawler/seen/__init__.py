"""Visited (URL-seen) tables behind one protocol (:mod:`pycrawler.seen.protocol`).

- :class:`BloomFilter`: sized, stably hashed, memory-mapped; may drop a new URL (false
  positive) at the rate it was sized for.
- :class:`ExactVisited`: exact, on a JE database (Heritrix's ``BdbUriUniqFilter`` layout).
- :class:`SimpleBloomFilter`: the book's fixed 2^25-bit filter over URL strings, bit for bit.
- DRUM (:mod:`pycrawler.seen.drum`): disk-bucketed batches merged into a JE repository.
"""

from ..lazy import lazy_attributes

# Loaded on first use: the Bloom filters compile their kernels with numba (~70 MB), which a
# crawl on the exact set never needs.
_HOMES = {"Visited": "protocol", "SynchronousVisited": "synchronous", "per_key": "protocol",
          "BloomFilter": "bloom", "optimal_parameters": "bloom", "ExactVisited": "exact",
          "SimpleBloomFilter": "simple_bloom"}

__all__ = list(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
