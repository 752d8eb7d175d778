#!/usr/bin/env python3
"""Benchmark the two HTML parsers the link extractor could use: selectolax (lexbor) and lxml.

    .venv/bin/python scripts/bench/html_parsers.py --pages 2000

Both do the same work on the same pages, read into memory before the clock starts (the
JDK 17 API docs Debian's openjdk-17-doc installs, or ``--docs DIR``): parse the bytes,
take the title and every ``href``/``src`` of a, area, link, frame, iframe, img and script.
Then each parses a page whose one link sits under ``--depth`` nested ``<div>``s, to show
what a hostile page does to it (time, and whether the link is still found). The last line
is ``key=value`` figures.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import lxml.html
from selectolax.lexbor import LexborHTMLParser

DOCS = Path("/usr/share/doc/openjdk-17-doc/api")
SELECTOR = "a[href], area[href], link[href], frame[src], iframe[src], img[src], script[src]"
XPATH = "//a[@href] | //area[@href] | //link[@href] | //frame[@src] | //iframe[@src] | //img[@src] | //script[@src]"


def with_selectolax(body: bytes) -> tuple[str | None, list[str]]:
    tree = LexborHTMLParser(body.decode("utf-8", "replace"))
    title = tree.css_first("title")
    links = [n.attributes.get("href") or n.attributes.get("src") for n in tree.css(SELECTOR)]
    return (title.text() if title else None), links


def with_lxml(body: bytes) -> tuple[str | None, list[str]]:
    root = lxml.html.document_fromstring(body.decode("utf-8", "replace"))
    title = root.find(".//title")
    links = [e.get("href") or e.get("src") for e in root.xpath(XPATH)]
    return (title.text if title is not None else None), links


PARSERS = {"selectolax": with_selectolax, "lxml": with_lxml}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=Path, default=DOCS)
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--depth", type=int, default=10_000)
    args = parser.parse_args()

    bodies = [p.read_bytes() for p, _ in zip(sorted(args.docs.rglob("*.html")), range(args.pages))]
    megabytes = sum(map(len, bodies)) / 1e6
    deep = ("<html><body>" + "<div>" * args.depth + "<a href='/deep'>deep</a>").encode()
    figures = {}
    for name, run in PARSERS.items():
        start = time.perf_counter()
        links = sum(len(run(body)[1]) for body in bodies)
        elapsed = time.perf_counter() - start
        start = time.perf_counter()
        found = run(deep)[1]
        deep_s = time.perf_counter() - start
        print(f"{name}: {len(bodies) / elapsed:,.0f} pages/s, {megabytes / elapsed:.1f} MB/s, {links:,} links; "
              f"{args.depth} nested divs: {deep_s:.3f} s, deep link found: {found == ['/deep']}")
        figures.update({f"{name}_pages_per_s": f"{len(bodies) / elapsed:.0f}",
                        f"{name}_mb_per_s": f"{megabytes / elapsed:.1f}",
                        f"{name}_links": links, f"{name}_deep_s": f"{deep_s:.3f}",
                        f"{name}_deep_found": int(found == ["/deep"])})
    print(" ".join(f"{k}={v}" for k, v in figures.items()))


if __name__ == "__main__":
    main()
