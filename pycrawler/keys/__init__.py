"""URL keys: the book's MD5 key and the 64-bit fingerprints the Visited tables use.

>>> md5_key("http://example.com/")
'a6bf1757fff057f266b697df9cf176fd'
>>> hex(fingerprint64("http://example.com/"))
'0xa6bf1757fff057f2'

Batch forms (:func:`md5_keys`, :func:`fingerprints64`) hash whole lists in compiled code.
None, non-str and empty URLs raise :class:`pycrawler.errors.BadInput`.
"""

from .fingerprint import fingerprint64, fingerprints64
from .md5 import md5_key, md5_keys
from .urls import packed_utf8, url_bytes

__all__ = ["md5_key", "md5_keys", "fingerprint64", "fingerprints64", "packed_utf8", "url_bytes"]
