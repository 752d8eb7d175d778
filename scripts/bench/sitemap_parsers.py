#!/usr/bin/env python3
"""Benchmark the ways a sitemap's URLs could be read, on one generated sitemap of --urls URLs.

    .venv/bin/python scripts/bench/sitemap_parsers.py --urls 50000 --rounds 5

Each reader takes the ``<loc>`` of every ``<url>`` entry of the same bytes (a urlset in the
protocol's namespace, each entry with a ``<lastmod>``, ``<changefreq>`` and ``<priority>``, as
sitemaps in the wild have), plain and gzipped, and must find all of them:

- ``pycrawler``: :func:`pycrawler.parse.sitemap.read_sitemap` (lxml's iterparse, only
  ``<loc>`` elements reported, entities and DTDs off, the place check included);
- ``lxml_all``: lxml's iterparse reporting every element's end, as the textbook loop does;
- ``etree``: the standard library's ``xml.etree.ElementTree.iterparse`` (expat, which
  expands internal entities: a billion laughs would run);
- ``defusedxml``: defusedxml's ``iterparse`` over the same expat, refusing entities (it comes with
  Scrapy, in the bench extra).

The median of ``--rounds`` runs each, the rounds interleaved, in CPU seconds of this process
(the work is one thread's, and CPU time stands still while a shared machine runs others).
The last line is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import gzip
import io
import statistics
import time
import xml.etree.ElementTree as ElementTree
import zlib

from lxml import etree

from pycrawler.parse.sitemap import read_sitemap

LOC = "{http://www.sitemaps.org/schemas/sitemap/0.9}loc"


def sitemap(urls: int) -> bytes:
    entries = "".join(f"<url><loc>http://example.com/shop/item-{i}.html</loc><lastmod>2024-05-01</lastmod>"
                      f"<changefreq>weekly</changefreq><priority>0.5</priority></url>\n" for i in range(urls))
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{entries}</urlset>\n").encode()


def gunzip(body: bytes) -> bytes:
    return zlib.decompress(body, wbits=31) if body[:2] == b"\x1f\x8b" else body


def with_pycrawler(body: bytes) -> int:
    return len(read_sitemap(body, ("http://example.com/",)).urls)


def count_locs(events) -> int:
    """The ``<loc>`` elements an ``iterparse`` gives, each ``<url>`` cleared once read: the loop
    every parser below is timed on, so that only the parser differs."""
    found = 0
    for _, element in events:
        if element.tag == LOC:
            found += 1
        elif element.tag.endswith("}url"):
            element.clear()
    return found


def with_lxml_all(body: bytes) -> int:
    return count_locs(etree.iterparse(io.BytesIO(gunzip(body)), events=("end",), resolve_entities=False,
                                      no_network=True))


def with_etree(body: bytes) -> int:
    return count_locs(ElementTree.iterparse(io.BytesIO(gunzip(body)), events=("end",)))


def with_defusedxml(body: bytes) -> int:
    from defusedxml.ElementTree import iterparse

    return count_locs(iterparse(io.BytesIO(gunzip(body)), events=("end",)))


READERS = {"pycrawler": with_pycrawler, "lxml_all": with_lxml_all, "etree": with_etree,
           "defusedxml": with_defusedxml}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    plain = sitemap(args.urls)
    bodies = {"plain": plain, "gzip": gzip.compress(plain)}
    times: dict[str, list[float]] = {f"{name}_{kind}": [] for name in READERS for kind in bodies}
    for _ in range(args.rounds):
        for name, read in READERS.items():
            for kind, body in bodies.items():
                start = time.process_time()
                found = read(body)
                times[f"{name}_{kind}"].append(time.process_time() - start)
                assert found == args.urls, (name, kind, found)
    print(f"sitemap: {args.urls:,} URLs, {len(plain) / 1e6:.1f} MB plain, {len(bodies['gzip']) / 1e6:.2f} MB gzipped")
    for key, runs in times.items():
        print(f"{key:<20} median {statistics.median(runs):.3f} CPU s  ({args.urls / statistics.median(runs):,.0f} URLs/s)")
    print(" ".join(f"{key}_cpu_s={statistics.median(runs):.3f}" for key, runs in times.items()))


if __name__ == "__main__":
    main()
