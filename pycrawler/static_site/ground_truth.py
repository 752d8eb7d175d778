"""What a perfect crawl of a static site fetches: the HTML pages reachable from a seed page.

The crawl benchmark's coverage is measured against this set. It is computed from the files,
not over HTTP: starting at the seed, each HTML file is parsed with the crawler's own link
extractor (:func:`pycrawler.parse.extract`, so the truth and the crawl agree on what a link
is: ``a``/``area``/``link`` hrefs, ``frame``/``iframe`` sources, ``<base href>``, meta
refreshes), every link is resolved against the page's URL, and links are followed when they
stay on the seed's host (scheme, host and port) and name a file under the served root.

A URL maps to a file as a static server (nginx, :mod:`http.server`) maps it: the path is
percent-decoded, the query and fragment do not matter (``a.html?x#y`` is ``a.html``), a
folder is its ``index.html`` (a request for ``/dir`` is redirected to ``/dir/``, which a
crawler follows). Pages are files whose name says HTML (``.html``, ``.htm``, ``.xhtml``):
the servers label those ``text/html``, and only those are parsed for links.
"""

from __future__ import annotations

import posixpath
import sys
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..errors import BadInput
from .. import parse

SITE_URL = "http://127.0.0.1/"
"""The base URL pages are resolved against when no served URL is given (any one host will do:
only relative links and links to the seed's own host are followed)."""

HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
INDEX_FILE = "index.html"
_HTML_HEADERS = {"content-type": "text/html"}  # what both servers send for an .html file


def is_html_path(path: str) -> bool:
    """Whether a served file of this name is an HTML page (by its suffix, as the server types it)."""
    return posixpath.splitext(path)[1].lower() in HTML_SUFFIXES


def url_path(url: str, base_url: str = SITE_URL) -> str | None:
    """The '/'-separated path under the served root that ``url`` requests; None when ``url`` is
    on another scheme, host or port, or outside ``base_url``'s path.

    ``''`` is the root itself; a path ending in ``/`` asks for the folder's index page.
    """
    parts, base = urlsplit(url), urlsplit(base_url)
    if parts.scheme.lower() != base.scheme.lower() or parts.netloc.lower() != base.netloc.lower():
        return None
    prefix = base.path if base.path.endswith("/") else base.path + "/"
    path = unquote(parts.path or "/")
    if not path.startswith(prefix):
        return None
    # urljoin already removed dot segments; a raw '..' left in an absolute link stays inside
    # the root, as a server clamps it.
    relative = posixpath.normpath("/" + path[len(prefix):]).lstrip("/")
    if relative == ".":
        relative = ""
    return relative + "/" if path.endswith("/") and relative else relative


def file_for(root: Path, path: str) -> str | None:
    """The file under ``root`` a server answers ``path`` (from :func:`url_path`) with, or None.

    Folders are answered with their ``index.html`` (after a redirect to the trailing slash).
    """
    candidate = root / path if path else root
    if candidate.is_dir():
        candidate = candidate / INDEX_FILE
        path = posixpath.join(path, INDEX_FILE)
    elif path.endswith("/"):  # 'page.html/' names no folder: the server answers 404
        return None
    return path if candidate.is_file() else None


def page_for_url(root: Path, url: str, base_url: str = SITE_URL) -> str | None:
    """The HTML page (path under ``root``) a fetch of ``url`` returns; None for anything else."""
    path = url_path(url, base_url)
    if path is None:
        return None
    found = file_for(root, path)
    return found if found is not None and is_html_path(found) else None


def reachable_pages(root: str | Path, seed: str = INDEX_FILE, *, base_url: str = SITE_URL) -> set[str]:
    """Paths (under ``root``, '/'-separated) of the HTML pages reachable from ``seed`` by links.

    ``seed`` is a path under ``root``; ``base_url`` is where ``root`` is served (only its host
    matters for absolute links, see :data:`SITE_URL`). Every link of every reachable page is
    followed (no per-page cap), breadth first.
    """
    root = Path(root)
    if not base_url.endswith("/"):
        base_url += "/"
    start = page_for_url(root, base_url + seed.lstrip("/"), base_url)
    if start is None:
        raise BadInput(f"seed {seed!r} is not an HTML page under {root}")
    found = {start}
    queue = deque([start])
    pages_of_urls: dict[str, str | None] = {}  # the same links recur on page after page
    while queue:
        page = queue.popleft()
        document = parse.extract((root / page).read_bytes(), base_url + page, _HTML_HEADERS, embeds=False,
                           max_outlinks=sys.maxsize)
        for outlink in document.outlinks:
            url = outlink.url
            if url in pages_of_urls:
                continue
            target = pages_of_urls[url] = page_for_url(root, url, base_url)
            if target is not None and target not in found:
                found.add(target)
                queue.append(target)
    return found


def coverage(fetched: Iterable[str], truth: set[str], root: str | Path, base_url: str) -> tuple[float, int]:
    """(share of ``truth`` among the pages that the ``fetched`` URLs returned, how many of them).

    ``truth`` comes from :func:`reachable_pages` with the same ``root`` and ``base_url``.
    """
    root = Path(root)
    pages = {page for url in fetched if (page := page_for_url(root, url, base_url)) is not None}
    hit = len(pages & truth)
    return (hit / len(truth) if truth else 1.0), hit
