"""Seen-key schemes: the 64-bit number a frontier's Visited table holds for a canonical URL.

A Visited table (Bloom, DRUM, exact set) stores numbers, not URLs; the scheme says how a URL
becomes that number. A table is only as good as the agreement between who wrote it and who
reads it, so a frontier records its scheme when it is created and keeps it.

=============  =====================================================  ==================
scheme         key of a canonical URL                                 canonicaliser
=============  =====================================================  ==================
``md5``        bytes 0..7 of the MD5 of its UTF-8, big-endian         any (default
(default)      (:func:`pycrawler.keys.fingerprints64`)                ``web``)
``heritrix``   Heritrix's ``createKey``: a Rabin fingerprint of the   ``heritrix`` only
               scheme and authority in the top 24 bits, one of the
               whole URL below (:func:`.heritrix_fp.create_keys`)
=============  =====================================================  ==================

``heritrix`` keys are the ones in a Heritrix crawl's ``alreadySeenUrl`` database, so a frontier
keyed this way dedupes against an imported Heritrix seen set. Heritrix computes them over its
own canonical form of the URL, hence the scheme's fixed canonicaliser: any other form would
give keys Heritrix never wrote, and every URL would look new.

Both compute whole batches in numpy (compiled loops for large MD5 batches), no Python loop
per URL.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import BadInput


def _md5_keys(canonical: Sequence[str]) -> np.ndarray:
    from .fingerprint import fingerprints64

    return fingerprints64(canonical)


def _heritrix_keys(canonical: Sequence[str]) -> np.ndarray:
    from .heritrix_fp import create_keys

    return create_keys(canonical)


@dataclasses.dataclass(frozen=True)
class SeenKeyScheme:
    """A named way of keying canonical URLs: ``keys(canonical_urls)`` -> uint64 array;
    ``canonicalizer``: the one canonical form the keys are defined over (None: any)."""

    name: str
    keys: Callable[[Sequence[str]], np.ndarray]
    canonicalizer: str | None = None

    def canonicalizer_for(self, requested: str | None) -> str:
        """The canonicaliser to use with this scheme when ``requested`` (None: the scheme's own,
        else :data:`~.canon.DEFAULT_CANON`); BadInput when the scheme is defined over another form."""
        if self.canonicalizer is None:
            from .canon import DEFAULT_CANON

            return requested or DEFAULT_CANON
        if requested not in (None, self.canonicalizer):
            raise BadInput(f"seen key {self.name!r} is defined over the {self.canonicalizer!r} canonical form; "
                           f"canonicalizer {requested!r} would key URLs as no {self.name} store does")
        return self.canonicalizer


SEEN_KEY_SCHEMES = {
    "md5": SeenKeyScheme("md5", _md5_keys),
    "heritrix": SeenKeyScheme("heritrix", _heritrix_keys, "heritrix"),
}
DEFAULT_SEEN_KEY = "md5"


def get_seen_key_scheme(name: str | SeenKeyScheme) -> SeenKeyScheme:
    """A scheme by name (``md5`` or ``heritrix``)."""
    if isinstance(name, SeenKeyScheme):
        return name
    try:
        return SEEN_KEY_SCHEMES[name]
    except KeyError:
        raise BadInput(f"seen key must be one of {', '.join(SEEN_KEY_SCHEMES)}, not {name!r}") from None
