"""Cache simulation over crawl traces (``pycrawler cache-sim``): miss rates of LRU, CLOCK,
RANDOM, STATIC (and STATIC-COLD), MIN (and MIN-BYPASS) and INFINITE at many sizes, as in
Broder, Najork and Wiener's study.

- :mod:`.trace`: reading a trace (URL lines or 64-bit keys, gzip accepted);
- :mod:`.sweep`: exact miss counts per policy and size;
- :mod:`.offline_kernel`: the compiled passes of the offline policies (LRU stack distances, MIN);
- :mod:`.plot`: the curves as a PNG;
- :mod:`.synthetic`: seeded synthetic link traces (Zipf-like popularity, host locality, new URLs).
"""
