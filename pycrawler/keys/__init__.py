"""URL keys: the book's MD5 key, the 64-bit fingerprints the Visited tables use, Heritrix's
``createKey`` and canonical rules (:mod:`.heritrix_fp`, :mod:`.heritrix_canon`), and the
seen-key schemes a frontier chooses between (:mod:`.schemes`).

>>> md5_key("http://example.com/")
'a6bf1757fff057f266b697df9cf176fd'
>>> hex(fingerprint64("http://example.com/"))
'0xa6bf1757fff057f2'

Batch forms (:func:`md5_keys`, :func:`fingerprints64`) hash whole lists (large ones in
compiled code, see :mod:`.md5`).
None, non-str and empty URLs raise :class:`pycrawler.errors.BadInput`.
"""

from ..lazy import lazy_attributes

# Loaded on first use: the hashing modules bring numpy (and numba for large batches), which
# processes that only need ``keys.canon`` (the crawl's page workers) never use.
_HOMES = {"md5_key": "md5", "md5_keys": "md5", "fingerprint64": "fingerprint", "fingerprints64": "fingerprint",
          "packed_utf8": "urls", "url_bytes": "urls", "SeenKeyScheme": "schemes", "SEEN_KEY_SCHEMES": "schemes",
          "get_seen_key_scheme": "schemes"}

__all__ = list(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
