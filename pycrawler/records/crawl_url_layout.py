"""The numbers a CrawlUrl record is read by, shared by the codec (:mod:`.crawl_url`) and its
compiled scan (:mod:`.crawl_url_scan`, which loads numba, so the codec imports it only for a
large batch): the biases of JE's tuple ints and longs, and the scan's verdict on a record."""

INT_BIAS = 1 << 31   # JE's int: two's complement with the sign bit flipped = value + 2**31, unsigned
LONG_BIAS = 1 << 63

# What the scan found of one record; the codec turns all but SCAN_OK into its TupleFormatError.
SCAN_OK, SCAN_BAD_VERSION, SCAN_TRUNCATED, SCAN_TRAILING = 0, 1, 2, 3
