"""Heritrix crawl state: its URL keys and canonical forms (and, beside them, its stores).

``create_key(canonicalize(url))`` is the key under which Heritrix 3 records ``url`` in its
``alreadySeenUrl`` database (stored as a JE ``LongBinding``). The keys and canonical rules live
with pycrawler's own URL keys (:mod:`pycrawler.keys.heritrix_fp`,
:mod:`pycrawler.keys.heritrix_canon`), which frontiers use without this package; they are
re-exported here beside the stores they are the keys of.
"""

from ..keys.heritrix_canon import (
    DEFAULT_RULES,
    canonicalize,
    canonicalize_many,
    fixup_query_string,
    lowercase,
    strip_session_cfids,
    strip_session_ids,
    strip_userinfo,
    strip_wwwn,
)
from ..keys.heritrix_fp import (
    STD24,
    STD40,
    STD64,
    RabinFingerprinter,
    create_key,
    create_keys,
    fp24,
    fp40,
    fp64,
    scheme_authority,
)

__all__ = [
    "DEFAULT_RULES",
    "STD24",
    "STD40",
    "STD64",
    "RabinFingerprinter",
    "canonicalize",
    "canonicalize_many",
    "create_key",
    "create_keys",
    "fixup_query_string",
    "fp24",
    "fp40",
    "fp64",
    "lowercase",
    "scheme_authority",
    "strip_session_cfids",
    "strip_session_ids",
    "strip_userinfo",
    "strip_wwwn",
]
