"""CrawlUrl records for the tests: nulls, non-BMP text, long strings and every extreme."""

from __future__ import annotations

import random

from pycrawler.records.crawl_url import INT_MAX, INT_MIN, LONG_MAX, CrawlUrl

# Timestamps: Java's own Timestamp(long) overflows within a second of Long.MIN_VALUE.
SAFE_MS_MIN = -(1 << 63) + 1000
TEXTS = [None, "", "http://example.com/", "ümlaut ☃ 中文", "\U0001F600 astral \U00010000", "nul\x00inside",
         "x" * 100_000, "\x7f\x80\u07ff\u0800\uffff", "http://例子.测试/路径?q=\U0001F50D"]
INTS = [0, 1, -1, INT_MIN, INT_MAX, 404]


def sample_records(count: int, seed: int = 7) -> list[CrawlUrl]:
    """Records mixing nulls, non-BMP text, long strings and every extreme."""
    rnd = random.Random(seed)
    records = [
        CrawlUrl(),
        CrawlUrl(ori_url="http://example.com/"),
        CrawlUrl(*(["\U0001F600"] * 2 + [INT_MIN] * 3 + ["\x00"] * 3 + [INT_MIN, "", INT_MIN, SAFE_MS_MIN * 1_000_000,
                                                                      -(1 << 63), "", "", [], INT_MIN])),
        CrawlUrl("a", "b", INT_MAX, INT_MAX, INT_MAX, "c", "d", "e", INT_MAX, "f", INT_MAX,
                 LONG_MAX // 1000 * 1_000_000_000 + 807_999_999, LONG_MAX, "g", "h", [None, "", "i"], INT_MAX),
        CrawlUrl(last_update_time=-1, time_to_live=-1, url_references=[None]),
    ]
    for _ in range(count - len(records)):
        records.append(CrawlUrl(
            rnd.choice(TEXTS), rnd.choice(TEXTS), rnd.choice(INTS), rnd.choice(INTS), rnd.randint(0, 10**6),
            rnd.choice(TEXTS), rnd.choice(TEXTS), rnd.choice(TEXTS), rnd.choice(INTS), rnd.choice(TEXTS),
            rnd.randint(INT_MIN, INT_MAX),
            rnd.choice([None, rnd.randint(-10**18, 10**18) * 1000 + rnd.randint(0, 999), 0]),
            rnd.choice([None, rnd.randint(SAFE_MS_MIN, LONG_MAX)]),
            rnd.choice(TEXTS), rnd.choice(TEXTS),
            rnd.choice([None, [], [rnd.choice(TEXTS) for _ in range(rnd.randint(1, 5))]]),
            rnd.randint(0, 20)))
    return records


def frontier_records(count: int, seed: int = 7) -> list[CrawlUrl]:
    """:func:`sample_records` with a distinct, non-empty ``ori_url`` each (a TODO entry's key)."""
    records = sample_records(count, seed)
    for i, record in enumerate(records):
        record.ori_url = f"http://h{i % 13}.example/{i}/{(record.ori_url or '')[:40]}"
    return records


def in_datetime_range(record: CrawlUrl) -> bool:
    """Whether the record's times fit Python's datetime (years 1..9999), as the book's layout needs."""
    low, high = -62135596800, 253402300799  # 0001-01-01 and 9999-12-31T23:59:59, in seconds
    return all(value is None or low <= value // unit <= high
               for value, unit in ((record.last_update_time, 10**9), (record.time_to_live, 1000)))
