"""A cluster worker's outbox: links Redis did not take, kept in the state folder until it does.

A crawl finishes a page only once the links it found are durable (the commit order of
:class:`~pycrawler.crawl.flush.Committer`). For a cluster worker the links to other workers'
hosts are durable once they are in Redis; while Redis does not answer they wait in the
exchange's memory, so they are written here instead, in the same JE transaction as the
completions of the pages that found them (a flush between two crawl flushes, a retry or a
handover, commits its own before any of those completions): a kill -9 during the outage loses
none. The next run adds them to the exchange again, and the outbox is emptied in the commit that
follows the first flush Redis took. With Redis up nothing is written here.
"""

from __future__ import annotations

import struct

from ..cluster.protocol import Link, decode_links, encode_links
from ..store import Environment

OUTBOX = "outbox"
_KEY = struct.Struct(">Q")


class Outbox:
    """The ``outbox`` database: one record per flush whose links Redis did not take; key a
    64-bit big-endian counter, value the links in :func:`~pycrawler.cluster.protocol.encode_links`'s
    form (UTF-8)."""

    def __init__(self, env: Environment):
        self.db = env.open_database(OUTBOX, create=True)
        keys = list(self.db.keys())
        self.records = len(keys)
        self._next = _KEY.unpack(keys[-1])[0] + 1 if keys else 0

    def __len__(self) -> int:
        return self.records

    def links(self) -> list[Link]:
        """Every link the outbox holds: what earlier flushes could not send."""
        return [link for value in self.db.values() for link in decode_links(value.decode())]

    def update(self, unsent: list[Link] | None, txn) -> None:
        """Record a flush's outcome in ``txn``: ``unsent`` None (everything queued reached
        Redis) empties the outbox; a list is written as one record."""
        if unsent is None:
            if self.records:
                self.db.delete_range(txn=txn)
                self.records = 0
        elif unsent:
            self.db.put(_KEY.pack(self._next), encode_links(unsent).encode(), txn=txn)
            self.records += 1
            self._next += 1
