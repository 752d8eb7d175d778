"""Sites and servers the tests and benchmarks crawl; nothing in the product imports this package.

- :mod:`.synthetic_web`, :mod:`.synthetic_kernels`, :mod:`.synthetic_server`: a web of millions
  of pages computed from a seed and served on loopback, with its ground truth;
- :mod:`.multihost`: a generated site on many loopback hosts that records every request;
- :mod:`.local_redis`: a private redis-server for a cluster's workers.

tests/ and scripts/bench/ import it; that no product module does is held by
tests/test_product_imports.py.
The site the demo serves and checks its crawl against is product code: :mod:`pycrawler.static_site`.
"""
