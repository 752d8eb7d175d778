"""A synthetic link trace with the ingredients Broder, Najork and Wiener name for real crawls:
Zipf-like popularity, host locality, and a steady stream of new URLs.

The model, per request (one extracted link), seeded so a trace replays exactly:

- pages are fetched one after another; each page lies on a host drawn by Zipf-like
  popularity over the hosts (exponent ``host_skew``) and yields ``links_per_page`` links;
- a link is **new** with probability ``new_fraction``: the next unseen URL of the page's host;
- else it is **local** with probability ``locality``: a URL of the page's own host, its rank
  among the host's URLs drawn Zipf-like (exponent ``url_skew``: a site's navigation, index
  and top pages are linked from nearly every page);
- else it is **global**: a host drawn by popularity, then a URL of it by the same rank law
  (the popular pages of popular sites, linked from everywhere).

A URL is (host, rank on the host), its key ``mix(host << 40 | rank)``: distinct URLs get
distinct keys. Zipf draws are truncated to the URLs a host has so far, by inverting the
continuous power law (``floor`` of ``((n^(1-s) - 1) u + 1)^(1/(1-s))``), so early URLs of a
host, its front pages, are the most linked, as in a crawl.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from ..lazy_jit import compiled
from ..seen import cache_kernel

mix = compiled(cache_kernel).mix


@dataclasses.dataclass(frozen=True)
class SyntheticModel:
    """The knobs of the model (see the module docstring); defaults give ~9% new URLs."""

    hosts: int = 100_000
    host_skew: float = 1.1
    url_skew: float = 1.2
    links_per_page: int = 60
    new_fraction: float = 0.09
    locality: float = 0.8
    seed: int = 1


@numba.njit(cache=True, inline="always")
def _zipf_rank(u, n, s):
    """A rank in [0, n) drawn by a power law of exponent ``s`` (continuous inversion)."""
    if n <= 1:
        return 0
    if abs(s - 1.0) < 1e-9:
        x = n ** u
    else:
        x = ((n ** (1.0 - s) - 1.0) * u + 1.0) ** (1.0 / (1.0 - s))
    rank = int(x) - 1
    return min(max(rank, 0), n - 1)


@numba.njit(cache=True)
def _generate(out, start, urls_per_host, host_cdf, url_skew, links_per_page, new_fraction, locality, rng_state):
    """Fill ``out`` with the requests from request number ``start`` on; ``urls_per_host`` and
    the random state carry over between calls."""
    np.random.seed(rng_state[0])
    host = rng_state[1]
    for i in range(out.shape[0]):
        if (start + i) % links_per_page == 0:
            host = np.searchsorted(host_cdf, np.random.random())
        u = np.random.random()
        if u < new_fraction or urls_per_host[host] == 0:
            target, rank = host, urls_per_host[host]
            urls_per_host[host] += 1
        else:
            target = host if u < new_fraction + locality * (1.0 - new_fraction) else np.searchsorted(
                host_cdf, np.random.random())
            if urls_per_host[target] == 0:
                urls_per_host[target] = 1
            rank = _zipf_rank(np.random.random(), urls_per_host[target], url_skew)
        out[i] = mix((np.uint64(target) << np.uint64(40)) | np.uint64(rank))
    rng_state[0] = np.random.randint(0, 2**31 - 1)
    rng_state[1] = host


def synthetic_trace(requests: int, model: SyntheticModel = SyntheticModel(), *, chunk: int = 1 << 22):
    """Yield the trace's 64-bit keys in chunks (uint64 arrays), ``requests`` in all."""
    ranks = np.arange(1, model.hosts + 1, dtype=np.float64)
    weights = ranks ** -model.host_skew
    host_cdf = np.cumsum(weights) / weights.sum()
    host_cdf[-1] = 1.0
    urls_per_host = np.zeros(model.hosts, dtype=np.int64)
    rng_state = np.array([model.seed, 0], dtype=np.int64)
    for start in range(0, requests, chunk):
        out = np.empty(min(chunk, requests - start), dtype=np.uint64)
        _generate(out, start, urls_per_host, host_cdf, model.url_skew, model.links_per_page, model.new_fraction,
                  model.locality, rng_state)
        yield out
