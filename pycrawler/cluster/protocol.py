"""The one thing a crawl worker needs from the rest of the cluster: the exchange of links.

A lone crawl decides by itself that a discovered URL is new and puts it in its JE frontier.
With several workers two more questions arise: is the URL new *cluster-wide*, and which worker
fetches it (per-host politeness must hold across the cluster)? A `LinkExchange` answers both.
It has the shape of Heritrix's `UriUniqFilter`: links are added (buffered, sent in batches),
flushed at the worker's commit points, and delivered to the worker that must crawl them.

Delivery is at least once: a worker acknowledges a delivery only after the URLs are committed in
its own JE frontier, so a worker killed between receiving and committing gets them again, and its
frontier's seen table drops the repeat. Nothing acknowledged is lost when a worker dies.

Implementations: host splitting (Mercator's host splitter, the default) and seed 003's central
de-duplication protocol (`--dedupe central`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol


class Delivery(NamedTuple):
    """URLs another part of the cluster assigned to this worker, and how to acknowledge them."""

    urls: list[str]
    token: object


class LinkExchange(Protocol):
    def add(self, urls: Sequence[str]) -> list[str]:
        """Take links this worker discovered (its own seen table has already dropped the ones it
        knew); return those it keeps for itself at once, and queue the rest for the cluster."""

    def flush(self) -> None:
        """Send everything `add` queued; called before the worker commits its fetches to JE, so
        a fetch is never acknowledged while the links it found exist only in memory."""

    def receive(self, max_urls: int, block_ms: int = 0) -> list[Delivery]:
        """URLs new cluster-wide that this worker must crawl; waits up to `block_ms`."""

    def ack(self, deliveries: Sequence[Delivery]) -> None:
        """The deliveries' URLs are committed in this worker's JE frontier: never redeliver them."""

    def close(self) -> None:
        """Leave the cluster cleanly (a worker that dies instead is noticed by its lease)."""
