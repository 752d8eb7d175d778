"""The synthetic web's facts, compiled with numba: one implementation for the server and the truth.

:class:`~pycrawler.testing.synthetic_web.SyntheticWeb` answers every question (is page ``i`` a
redirect, what are its links) through these kernels. The server asks about one page at a time in
the crawl's order, which jumps across the id space: array code paid ~0.5 ms of numpy call
overhead per page (or a block of 1,024 pages computed for one), which made the server the
bottleneck of a 1M-page crawl. Here a page's facts cost microseconds whether asked one at a time
or 100,000 at once, and the ground truth walks exactly the function the server serves, floating
point included.

Every fact is a hash of (seed, page id, index, salt) through splitmix64's finaliser; ``spec`` is
a :data:`Spec` holding the web's size and :class:`~pycrawler.testing.synthetic_web.WebShape`.
"""

from __future__ import annotations

import collections

import numba
import numpy as np

Spec = collections.namedtuple("Spec", "pages hosts seed tree_fanout orphan_share min_links max_links degree_alpha "
                                      "locality rank_skew missing_share redirect_share duplicate_share "
                                      "median_bytes size_sigma")

PAGE, REDIRECT, MISSING = 0, 1, 2
VARIANTS = 3

_M1, _M2 = np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_KIND, _LINK, _TARGET, _REDIRECT = 1, 2, 3, 4     # salts: one independent hash stream per purpose
_LOW16, _LOW26, _LOW32 = np.uint64(0xFFFF), np.uint64((1 << 26) - 1), np.uint64(0xFFFFFFFF)


@numba.njit(cache=True)
def mix(x):
    """splitmix64's finaliser (wrapping uint64 arithmetic, as intended)."""
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


@numba.njit(cache=True)
def page_hash(seed, page, index, salt):
    x = np.uint64(page) * _GOLDEN + np.uint64(index) * _M2 + np.uint64(salt)
    return mix(mix(x ^ seed))


@numba.njit(cache=True)
def unit(h):
    """A uniform float in [0, 1) from the top 53 bits of a hash."""
    return np.float64(h >> np.uint64(11)) * 2.0 ** -53


@numba.njit(cache=True)
def host_pages(spec, host):
    """How many pages host ``host`` holds (ids ``host``, ``host + H``, ...)."""
    return (spec.pages - host + spec.hosts - 1) // spec.hosts


@numba.njit(cache=True)
def is_redirect(spec, page):
    """Whether the page answers a redirect (a root never does)."""
    u = np.float64(page_hash(spec.seed, page, 0, _KIND) & _LOW32) / 2.0 ** 32
    return page >= spec.hosts and u < spec.redirect_share


@numba.njit(cache=True)
def is_orphan(spec, page):
    """Whether the page is left out of its host's tree (a root never is)."""
    u = np.float64(page_hash(spec.seed, page, 0, _KIND) >> np.uint64(32)) / 2.0 ** 32
    return page >= spec.hosts and u < spec.orphan_share


@numba.njit(cache=True)
def degree(spec, page):
    """Random links of the page (tree links come on top): Pareto, at least ``min_links``."""
    u = 1.0 - unit(page_hash(spec.seed, page, 1, _KIND))   # (0, 1]
    return np.int64(min(spec.max_links, np.floor(spec.min_links * u ** (-1.0 / spec.degree_alpha))))


@numba.njit(cache=True)
def size(spec, page):
    """Bytes of text the page carries besides its links: log-normal around ``median_bytes``."""
    h = page_hash(spec.seed, page, 2, _KIND)
    # Box-Muller from two 26-bit halves: a normal deviate without a generator object.
    u1 = (np.float64(h >> np.uint64(38)) + 1.0) / 2.0 ** 26
    u2 = np.float64((h >> np.uint64(12)) & _LOW26) / 2.0 ** 26
    z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
    return np.int64(min(500_000.0, max(200.0, spec.median_bytes * np.exp(spec.size_sigma * z))))


@numba.njit(cache=True)
def redirect_target(spec, page):
    """The page a redirect page points to: a random page that is not itself a redirect (the next
    id along when it is: ~1/redirect_share tries at most, in practice one or two)."""
    target = np.int64(page_hash(spec.seed, page, 0, _REDIRECT) % np.uint64(spec.pages))
    while is_redirect(spec, target):
        target = (target + 1) % spec.pages
    return target


@numba.njit(cache=True)
def tree_child(spec, page, c):
    """The page's ``c``-th child (1 to ``tree_fanout``) in its host's tree, or -1 when the host
    has no such page or the child is left out of the tree."""
    host = page % spec.hosts
    child_local = page // spec.hosts * spec.tree_fanout + c
    child = host + spec.hosts * child_local
    if child_local < host_pages(spec, host) and not is_orphan(spec, child):
        return child
    return -1


@numba.njit(cache=True)
def link_count(spec, page):
    """Tree links plus random links of the page."""
    count = degree(spec, page)
    for c in range(1, spec.tree_fanout + 1):
        if tree_child(spec, page, c) >= 0:
            count += 1
    return count


@numba.njit(cache=True)
def links(spec, ids):
    """(source, kind, target, variant) of every link of the pages ``ids``, page by page in the
    order given, each page's tree links first."""
    total = 0
    for i in range(ids.shape[0]):
        total += link_count(spec, ids[i])
    source = np.empty(total, np.int64)
    kind = np.empty(total, np.int8)
    target = np.empty(total, np.int64)
    variant = np.empty(total, np.int8)
    n = 0
    for i in range(ids.shape[0]):
        page = ids[i]
        host = page % spec.hosts
        for c in range(1, spec.tree_fanout + 1):
            child = tree_child(spec, page, c)
            if child >= 0:
                source[n], target[n], variant[n] = page, child, 0
                kind[n] = REDIRECT if is_redirect(spec, child) else PAGE
                n += 1
        for j in range(degree(spec, page)):
            a = page_hash(spec.seed, page, j, _LINK)
            b = page_hash(spec.seed, page, j, _TARGET)
            u_missing = np.float64(a & _LOW16) / 65536.0
            u_local = np.float64((a >> np.uint64(16)) & _LOW16) / 65536.0
            u_duplicate = np.float64((a >> np.uint64(32)) & _LOW16) / 65536.0
            if u_local < spec.locality:
                to_host = host
            else:
                to_host = np.int64(a >> np.uint64(48)) % spec.hosts
            source[n] = page
            if u_missing < spec.missing_share:
                kind[n], target[n] = MISSING, np.int64(b % np.uint64(spec.pages))
            else:
                rank = np.int64(np.floor(host_pages(spec, to_host) * unit(b) ** spec.rank_skew))
                target[n] = to_host + spec.hosts * rank
                kind[n] = REDIRECT if is_redirect(spec, target[n]) else PAGE
            if u_duplicate < spec.duplicate_share:
                variant[n] = 1 + np.int64(a >> np.uint64(60)) % VARIANTS
            else:
                variant[n] = 0
            n += 1
    return source, kind, target, variant


@numba.njit(cache=True)
def page_facts(spec, ids):
    """(is_redirect, is_orphan, degree, size, redirect_target) of each page of ``ids``."""
    redirect = np.empty(ids.shape[0], np.bool_)
    orphan = np.empty(ids.shape[0], np.bool_)
    degrees = np.empty(ids.shape[0], np.int64)
    sizes = np.empty(ids.shape[0], np.int64)
    targets = np.empty(ids.shape[0], np.int64)
    for i in range(ids.shape[0]):
        page = ids[i]
        redirect[i], orphan[i] = is_redirect(spec, page), is_orphan(spec, page)
        degrees[i], sizes[i] = degree(spec, page), size(spec, page)
        targets[i] = redirect_target(spec, page)
    return redirect, orphan, degrees, sizes, targets
