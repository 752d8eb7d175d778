"""A cluster worker's forwarded set: the URLs it handed to another worker, kept in the state folder.

A worker that polls a URL whose host moved to another worker forwards it there and finishes it
in its own frontier without a fetch (:meth:`~pycrawler.cluster.protocol.LinkExchange.forward`).
Its seen table still knows the URL. Should the URL come back (the worker it went to died
before committing it and its stream or task pool went to the host's owner, this one again; or
Redis was away, the forward waited in the outbox and the host is this worker's again when the
next run sends it), the seen table would drop it and nobody would crawl it.

So the forwarded URLs are written to the JE database ``forwarded`` in the same transaction as
the completions that finish them, and a link to one of them that reaches this worker again is
scheduled past the seen table, once (:meth:`Forwarded.came_back`). Invariant: every URL this
worker's frontier finished because it forwarded it, and that has not come back since, is in
the set; a kill -9 at any point keeps it so. A chain of forwards (A to B, B to C) leaves the URL
in A's set and in B's: whichever of them it comes back to knows it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..cluster.protocol import Link
from ..store import Environment

FORWARDED = "forwarded"


class Forwarded:
    """The ``forwarded`` database: key a forwarded URL (UTF-8), value empty."""

    def __init__(self, env: Environment):
        self.db = env.open_database(FORWARDED, create=True)
        self._any = self._holds_any()

    def _holds_any(self) -> bool:
        return next(self.db.keys(page_records=1), None) is not None

    def mark(self, urls: Sequence[str], txn) -> None:
        """Record in ``txn`` (the one that finishes them in the frontier) URLs handed over."""
        if urls:
            self.db.put_many([url.encode() for url in urls], [b""] * len(urls), txn=txn)
            self._any = True

    def came_back(self, links: Sequence[Link]) -> list[Link]:
        """Of ``links`` that reached this worker, those to URLs it forwarded, one per URL (the
        shallowest): the caller schedules them past its seen table, then calls :meth:`forget`.
        One JE call per batch, none while the set is empty (the normal case)."""
        if not self._any or not links:
            return []
        known = self.db.contains_many([link.url.encode() for link in links])
        back: dict[str, Link] = {}
        for link, hit in zip(links, known.tolist()):
            if hit and (link.url not in back or link.layer < back[link.url].layer):
                back[link.url] = link
        return list(back.values())

    def forget(self, links: Sequence[Link]) -> None:
        """``links`` (from :meth:`came_back`) are scheduled: later links to them meet the seen
        table. Called after the schedule's commit: a kill -9 in between makes them come back
        again (their delivery is not acknowledged yet), a repeat rather than a loss."""
        if links:
            self.db.delete_many([link.url.encode() for link in links])
            self._any = self._holds_any()
