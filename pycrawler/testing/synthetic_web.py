"""A synthetic web: N pages over H loopback hosts, every page computed from a seed, never stored.

Benchmarks at a million pages and more need a web that costs neither disk (10M pages as files
are tens of GB) nor the crawler's CPU. Here every fact about a page is a hash of (seed, page
id): which host it is on, whether it is a page or a redirect, its size, its out-degree and each
of its links. :mod:`pycrawler.testing.synthetic_server` serves it; :meth:`SyntheticWeb.truth` walks
the same link function to give the crawl's ground truth. Everything is compiled
(:mod:`.synthetic_kernels`), so a page costs microseconds to serve and 10M pages take seconds
per level to walk.

The shape, with the knobs of :class:`WebShape`:

- page ``i`` lives on host ``i % H`` (``127.0.0.(h+1)``); the first page of each host is its
  root ``/``, the others ``/pI.html``;
- every host's pages form a ``tree_fanout``-ary tree under its root (a breadth-first crawl walks
  it in waves), except that ``orphan_share`` of the pages get no tree link: they are reached by
  random links or not at all, which is what makes the ground truth a walk and not a count;
- out-degrees are Pareto (``min_links``, ``degree_alpha``, at most ``max_links``), sizes
  log-normal (median ``median_bytes``);
- each random link stays on the page's host with probability ``locality``; its target's rank on
  that host is ``u ** rank_skew`` of the host's pages, so in-links follow a power law (roots and
  early pages collect most of them);
- ``missing_share`` of the links point to ``/mK.html``, which answers 404;
- ``redirect_share`` of the pages answer ``301`` to another page (never to a redirect: chains
  are one hop);
- ``duplicate_share`` of the links are written in a form that canonicalises to the target's URL
  (``HTTP://`` in capitals, a ``%70``-encoded ``p``, a ``#fragment``): one page, several spellings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import numpy as np

from ..errors import BadInput
from . import synthetic_kernels as kernels
from .synthetic_kernels import MISSING, PAGE, REDIRECT, VARIANTS

__all__ = ["MISSING", "PAGE", "REDIRECT", "VARIANTS", "Links", "SyntheticWeb", "Truth", "WebShape"]

BFS_CHUNK = 100_000
"""Pages whose links are computed at once by :meth:`SyntheticWeb.truth` (~60 MB of arrays)."""


@dataclasses.dataclass(frozen=True)
class WebShape:
    """The distributions a synthetic web is drawn from (see the module docstring)."""

    tree_fanout: int = 8
    orphan_share: float = 0.01
    min_links: int = 8
    max_links: int = 200
    degree_alpha: float = 1.8
    locality: float = 0.8
    rank_skew: float = 3.0
    missing_share: float = 0.02
    redirect_share: float = 0.03
    duplicate_share: float = 0.05
    median_bytes: int = 6000
    size_sigma: float = 0.8


@dataclasses.dataclass(frozen=True)
class Links:
    """The links of some pages, flattened: link ``n`` is on page ``source[n]``."""

    source: np.ndarray     # page id of the linking page
    kind: np.ndarray       # PAGE, REDIRECT or MISSING
    target: np.ndarray     # page id (PAGE, REDIRECT) or missing number (MISSING)
    variant: np.ndarray    # 0: canonical spelling, 1..VARIANTS: a duplicate spelling


@dataclasses.dataclass(frozen=True)
class Truth:
    """What a perfect crawl from every host's root fetches."""

    pages: np.ndarray      # sorted ids of the reachable pages (answered 200)
    redirects: np.ndarray  # sorted ids of the reachable redirect pages (answered 301)
    missing: np.ndarray    # sorted numbers of the reachable missing pages (answered 404)

    @property
    def fetches(self) -> int:
        """URLs a perfect crawl fetches once each (robots.txt left out)."""
        return len(self.pages) + len(self.redirects) + len(self.missing)


class SyntheticWeb:
    """``SyntheticWeb(pages, hosts, seed)``: the web's facts, computed on demand
    (:mod:`.synthetic_kernels`).

    URLs need the port the web is served on (:meth:`url`, :meth:`link_url`); page ids, links
    and the ground truth do not."""

    def __init__(self, pages: int, hosts: int = 1, seed: int = 24, shape: WebShape = WebShape()):
        if pages < 1:
            raise BadInput("a synthetic web needs at least one page")
        if not 1 <= hosts <= min(pages, 254):
            raise BadInput("hosts must be in 1..254 (127.0.0.1 to 127.0.0.254) and at most the pages")
        self.pages, self.hosts, self.seed, self.shape = pages, hosts, seed, shape
        mixed = kernels.mix(np.uint64(seed & (2 ** 64 - 1)))
        self.spec = kernels.Spec(np.int64(pages), np.int64(hosts), mixed, np.int64(shape.tree_fanout),
                                 float(shape.orphan_share), np.int64(shape.min_links), np.int64(shape.max_links),
                                 float(shape.degree_alpha), float(shape.locality), float(shape.rank_skew),
                                 float(shape.missing_share), float(shape.redirect_share),
                                 float(shape.duplicate_share), float(shape.median_bytes), float(shape.size_sigma))

    # -- pages ------------------------------------------------------------------------------------
    def _facts(self, ids: np.ndarray, which: int) -> np.ndarray:
        return kernels.page_facts(self.spec, np.asarray(ids, dtype=np.int64))[which]

    def is_redirect(self, ids: np.ndarray) -> np.ndarray:
        """Whether each page answers a redirect (a root never does)."""
        return self._facts(ids, 0)

    def is_orphan(self, ids: np.ndarray) -> np.ndarray:
        """Whether each page is left out of its host's tree (a root never is)."""
        return self._facts(ids, 1)

    def degree(self, ids: np.ndarray) -> np.ndarray:
        """Random links of each page (tree links come on top): Pareto, at least ``min_links``."""
        return self._facts(ids, 2)

    def size(self, ids: np.ndarray) -> np.ndarray:
        """Bytes of text each page carries besides its links: log-normal around ``median_bytes``."""
        return self._facts(ids, 3)

    def redirect_target(self, ids: np.ndarray) -> np.ndarray:
        """The page each redirect page points to: a random page that is not itself a redirect."""
        return self._facts(ids, 4)

    # -- links ------------------------------------------------------------------------------------
    def links(self, ids: np.ndarray) -> Links:
        """Every link of the given (non-redirect) pages, in each page's order: tree links first."""
        return Links(*kernels.links(self.spec, np.asarray(ids, dtype=np.int64)))

    # -- URLs -------------------------------------------------------------------------------------
    @staticmethod
    def address(host: int) -> str:
        """Host ``host``'s address: 127.0.0.(host+1)."""
        return f"127.0.0.{host + 1}"

    def path(self, kind: int, target: int) -> str:
        if kind == MISSING:
            return f"/m{target}.html"
        return "/" if target < self.hosts else f"/p{target}.html"

    def url(self, port: int, kind: int, target: int) -> str:
        """The canonical URL of a page, redirect page or missing page (missing pages sit on the
        host of their number)."""
        return f"http://{self.address(target % self.hosts)}:{port}{self.path(kind, target)}"

    def link_url(self, port: int, kind: int, target: int, variant: int) -> str:
        """A link's ``href``, spelt as ``variant`` says: 0 canonical, 1 ``HTTP://`` in
        capitals, 2 the ``p`` of the file name percent-encoded, 3 with a fragment."""
        url = self.url(port, kind, target)
        if variant == 1:
            return "HTTP" + url[4:]
        if variant == 2 and "/p" in url:
            return url.replace("/p", "/%70", 1)
        if variant in (2, 3):
            return url + "#s"
        return url

    def seeds(self, port: int) -> list[str]:
        """Every host's root."""
        return [self.url(port, PAGE, h) for h in range(self.hosts)]

    def resolve(self, host: int, path: str) -> tuple[int, int] | None:
        """(kind, id) that ``path`` (decoded, without query) names on ``host``; None for a
        path the web does not have (answered 404 too, but never linked)."""
        if path == "/":
            return PAGE, host
        if not (path.endswith(".html") and len(path) > 7 and path[1] in "pm" and path[2:-5].isdigit()):
            return None
        number = int(path[2:-5])
        if number >= self.pages or number % self.hosts != host:
            return None
        if path[1] == "m":
            return MISSING, number
        if number < self.hosts:
            return None  # a root is only ever '/'
        ids = np.array([number], dtype=np.int64)
        return (REDIRECT if self.is_redirect(ids)[0] else PAGE), number

    # -- ground truth -----------------------------------------------------------------------------
    def truth(self) -> Truth:
        """The pages, redirects and missing pages reachable from the roots, breadth first over
        :meth:`links` (redirects followed, one hop; missing pages are ends)."""
        reached = np.zeros(self.pages, dtype=bool)
        redirect_seen = np.zeros(self.pages, dtype=bool)
        missing: list[np.ndarray] = []
        level = np.arange(self.hosts, dtype=np.int64)
        reached[level] = True
        while len(level):
            found = []
            for chunk in _chunks(level, BFS_CHUNK):
                links = self.links(chunk)
                missing.append(links.target[links.kind == MISSING])
                redirects = np.unique(links.target[links.kind == REDIRECT])
                redirects = redirects[~redirect_seen[redirects]]
                redirect_seen[redirects] = True
                pages = np.concatenate([links.target[links.kind == PAGE], self.redirect_target(redirects)])
                pages = np.unique(pages)
                pages = pages[~reached[pages]]
                reached[pages] = True
                found.append(pages)
            level = np.concatenate(found) if found else np.empty(0, dtype=np.int64)
        return Truth(np.flatnonzero(reached), np.flatnonzero(redirect_seen),
                     np.unique(np.concatenate(missing)) if missing else np.empty(0, dtype=np.int64))


def _chunks(array: np.ndarray, size: int) -> Iterator[np.ndarray]:
    for start in range(0, len(array), size):
        yield array[start:start + size]
