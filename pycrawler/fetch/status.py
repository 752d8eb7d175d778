"""Fetch status codes: HTTP's for an answer, Heritrix's negative codes for everything else.

The numbers are Heritrix's ``FetchStatusCodes``, so a pycrawler crawl.log and CrawlUrl
records read the same as a Heritrix crawl's (``grep ' -4 '`` finds the timeouts in both).
Only the codes pycrawler produces are here.
"""

UNATTEMPTED = 0
"""Never tried (the CrawlUrl default)."""
DOMAIN_UNRESOLVABLE = -1
"""DNS lookup failed."""
CONNECT_FAILED = -2
"""No TCP connection: refused, unreachable, or the connect timed out."""
CONNECT_LOST = -3
"""The connection broke, or the server sent no valid HTTP response, after connecting."""
TIMEOUT = -4
"""Connected, but no response headers within the read or total timeout."""
RUNTIME_EXCEPTION = -5
"""An unexpected error while fetching (a bug: the error text says which)."""
UNFETCHABLE_URI = -7
"""A URL that cannot be fetched (bad syntax, unsupported scheme)."""
ROBOTS_PREREQUISITE_FAILURE = -61
"""robots.txt is unreachable (no answer; or 5xx or 429, as RFC 9309 reads them), so the host's
URLs are not tried: each try is logged with it while they wait, and they end with it when
robots.txt has failed as many times in a row as a page may."""
ROBOTS_PRECLUDED = -9998
"""robots.txt disallows the URL."""

NAMES = {
    UNATTEMPTED: "unattempted",
    DOMAIN_UNRESOLVABLE: "domain unresolvable",
    CONNECT_FAILED: "connect failed",
    CONNECT_LOST: "connection lost",
    TIMEOUT: "timeout",
    RUNTIME_EXCEPTION: "runtime exception",
    UNFETCHABLE_URI: "unfetchable URI",
    ROBOTS_PREREQUISITE_FAILURE: "robots.txt prerequisite failed",
    ROBOTS_PRECLUDED: "precluded by robots.txt",
}

