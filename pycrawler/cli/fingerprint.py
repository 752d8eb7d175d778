"""``pycrawler fingerprint URL...``: the canonical forms and keys of URLs, to see why one counts as seen.

A Visited table holds numbers, not URLs: two URLs are the same to a crawl when their keys
are. For each URL (the arguments, or with none each non-blank line of stdin) this prints:

==============  ==========================================================================
``web``         the ``web`` canonical form, the one a new crawl keys on and requests: the
                URL's RFC 3986 normal form without userinfo or session ids
                (:mod:`pycrawler.keys.canon`)
``safe``        the ``safe`` canonical form, the normal form alone: what a crawl state made
                before ``web`` keys on
``heritrix``    Heritrix's canonical form of the URL as given (:mod:`pycrawler.keys.heritrix_canon`)
``md5``         the book's MD5 key of the web form (32 hex digits)
``fp64``        the 64-bit fingerprint of the web form: the ``md5`` seen key, the first 16
                hex digits of ``md5``
``create_key``  Heritrix's ``createKey`` of the heritrix form: the ``heritrix`` seen key, and
                the key in a Heritrix crawl's ``alreadySeenUrl``
==============  ==========================================================================

``--format text`` (the default) writes the URL, then one indented ``name: value`` line per
key (``create_key`` also as the signed long Java prints); ``--format jsonl`` one JSON object
per URL with those names, keys as lowercase hex strings (JSON numbers lose 64-bit precision
in many readers). A URL that is not absolute (``scheme://host...``), or a stdin line that is
not UTF-8, is bad input named by its argument or stdin line, and ends the output there.
"""

from __future__ import annotations

import argparse
import sys
from itertools import islice

from ..errors import BadInput
from .frontier import url_sources
from .jsonl import json_line
from .plain import first_line

BATCH = 10_000
FORMATS = ("text", "jsonl")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("fingerprint", help="canonical forms, MD5 key and 64-bit keys of URLs (arguments or stdin)",
                       description=first_line(__doc__))
    p.add_argument("urls", nargs="*", metavar="URL", help="URLs to key; none: read stdin, one per line")
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default: a URL, then one line per key) or jsonl (one JSON object per URL)")
    p.set_defaults(run=run_fingerprint)


def fingerprints(urls: list[str]) -> list[dict[str, str]]:
    """The canonical forms and keys of each URL (see the module docstring), computed as one
    batch, up to the first URL that is not absolute (so all of them, usually)."""
    from ..keys import fingerprints64, md5_keys
    from ..keys.canon import canonicalize_many
    from ..keys.heritrix_canon import canonicalize_many as heritrix_forms
    from ..keys.heritrix_fp import create_keys

    web = canonicalize_many(urls, "web")
    safe = canonicalize_many(urls, "safe")
    if None in web or None in safe:
        valid = next(i for i, (w, s) in enumerate(zip(web, safe)) if w is None or s is None)
        urls, web, safe = urls[:valid], web[:valid], safe[:valid]
    heritrix = heritrix_forms(urls)
    return [{"url": url, "web": w, "safe": s, "heritrix": h, "md5": md5, "fp64": f"{fp:016x}",
             "create_key": f"{key:016x}"}
            for url, w, s, h, md5, fp, key in zip(urls, web, safe, heritrix, md5_keys(web),
                                                  fingerprints64(web).tolist(), create_keys(heritrix).tolist())]


def _text(row: dict[str, str]) -> str:
    key = int(row["create_key"], 16)
    java_long = key - (1 << 64) if key >> 63 else key
    return (f"{row['url']}\n  web: {row['web']}\n  safe: {row['safe']}\n  heritrix: {row['heritrix']}\n"
            f"  md5: {row['md5']}\n  fp64: {row['fp64']}\n  create_key: {row['create_key']} ({java_long})\n")


def run_fingerprint(args: argparse.Namespace) -> int:
    show = json_line if args.format == "jsonl" else _text
    sources = url_sources(args.urls)
    while batch := list(islice(sources, BATCH)):
        rows = fingerprints([url for _, url in batch])
        sys.stdout.write("".join(map(show, rows)))
        if len(rows) < len(batch):
            sys.stdout.flush()
            where, url = batch[len(rows)]
            raise BadInput(f"{where}: not an absolute URL (scheme://host...): {url[:80]!r}")
    sys.stdout.flush()
    return 0
