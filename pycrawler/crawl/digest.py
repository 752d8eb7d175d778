"""The payload digest both crawl.log and WARC records carry: ``sha1:`` + base32 of the body's SHA-1.

Computed on the payload as received (still content-encoded), as Heritrix and the WARC
standard do, so the two outputs agree and deduplication tools can match them.
"""

from __future__ import annotations

import base64
import hashlib


def payload_digest(payload: bytes) -> str:
    """``sha1:`` followed by the base32 SHA-1 of ``payload`` (WARC-Payload-Digest's form)."""
    return "sha1:" + base64.b32encode(hashlib.sha1(payload).digest()).decode("ascii")
