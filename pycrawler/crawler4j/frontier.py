"""A crawler4j frontier folder, opened read-only: its databases, pending URLs in crawl order, docids.

``Crawler4jFrontier.open(DIR)`` takes the ``frontier`` folder of a crawl's
``crawlStorageFolder`` (or the storage folder itself). Before JE opens it, the log version in
the first ``.jdb`` file's header says whether any JE reads it; once open, the environment must
hold crawler4j's ``DocIDs`` and ``PendingURLsDB``. The store is opened read-only: not a byte of
the folder changes.

**Pending, in crawl order.** crawler4j hands URLs out in key order (priority, depth, docid:
:mod:`.records`) from ``PendingURLsDB``; a resumable crawl also keeps the URLs handed out to
its threads and not finished in ``InProcessPagesDB``, under the same keys, and on resume puts
them back in ``PendingURLsDB``. :meth:`Crawler4jFrontier.pending` therefore merges the two
databases by key: the order the crawl would go on in, each URL marked ``in_process`` or not.

**Done.** ``DocIDs`` holds every URL crawler4j gave a docid, i.e. every URL it scheduled
(``WebCrawler`` asks for a docid only for a URL it schedules). :meth:`Crawler4jFrontier.done`
yields those that are no longer pending nor in process: fetched (or failed, or refused by
robots.txt after scheduling), or dropped by ``maxPagesToFetch``.

Everything streams: records come in pages (one JNI call each); only :meth:`done` holds
something per URL, a 64-bit fingerprint of each pending one.
"""

from __future__ import annotations

import bisect
import heapq
import struct
from collections import Counter
from collections.abc import Iterator
from itertools import islice
from pathlib import Path
from typing import Any

from .. import store
from ..errors import BadInput
from ..keys.fingerprint import fingerprints64
from ..store import logfile
from ..store.packing import as_list, np
from .records import DOC_ID_SIZE, STATISTICS_SIZE, big_endian, decode_weburl, parse_key, url_text

DOC_IDS = "DocIDs"
PENDING = "PendingURLsDB"
IN_PROCESS = "InProcessPagesDB"
STATISTICS = "Statistics"
REQUIRED = (DOC_IDS, PENDING)
QUEUES = (PENDING, IN_PROCESS)
BATCH = 4096
FRONTIER_FOLDER = "frontier"


class Crawler4jFrontier:
    """A crawler4j frontier open for reading; close it (or use ``with``) when done."""

    def __init__(self, path: Path, env):
        self.path = path
        self.env = env
        self._databases: dict[str, Any] = {}

    @classmethod
    def open(cls, path) -> Crawler4jFrontier:
        """The frontier in the folder ``path`` (see the module docstring)."""
        path = Path(path)
        if not path.is_dir():
            raise BadInput(f"{path} is not a crawler4j frontier: "
                           + ("it does not exist" if not path.exists() else "not a directory"))
        home = next((p for p in (path, path / FRONTIER_FOLDER) if logfile.jdb_files(p)), None)
        if home is None:
            raise BadInput(f"{path} is not a crawler4j frontier: it holds no JE log files (.jdb); give the crawl's "
                           f"crawlStorageFolder/{FRONTIER_FOLDER} folder")
        frontier = cls(home, store.open(home, read_only=True))
        names = frontier.database_names()
        if not all(name in names for name in REQUIRED):
            frontier.close()
            raise BadInput(f"{home} is a JE environment but not a crawler4j frontier: it has no "
                           f"{' and '.join(n for n in REQUIRED if n not in names)} database "
                           f"(its databases: {', '.join(names) or 'none'})")
        return frontier

    # -- facts ---------------------------------------------------------------------------------
    @property
    def log_version(self) -> int:
        return self.env.log_version

    @property
    def resumable(self) -> bool:
        """Whether crawler4j kept this frontier for a resume (``InProcessPagesDB`` exists)."""
        return IN_PROCESS in self.database_names()

    def database_names(self) -> list[str]:
        return self.env.database_names()

    def database(self, name: str):
        if name not in self._databases:
            self._databases[name] = self.env.open_database(name)
        return self._databases[name]

    def count(self, name: str) -> int:
        """Records in ``name`` (0 when the frontier has no such database)."""
        return self.database(name).count() if name in self.database_names() else 0

    def counts(self) -> dict[str, int]:
        return {name: self.count(name) for name in self.database_names()}

    def statistics(self) -> dict[str, int]:
        """crawler4j's counters (``Statistics``: resumable crawls only)."""
        if STATISTICS not in self.database_names():
            return {}
        return {url_text(k): big_endian(v, STATISTICS_SIZE, STATISTICS) for k, v in self.database(STATISTICS).items()}

    def queue_census(self) -> tuple[Counter, Counter]:
        """(URLs per depth, URLs per priority) of the pending and in-process URLs, from their
        keys alone (depths past 127 are counted at 127, where the keys hold them)."""
        depths: Counter = Counter()
        priorities: Counter = Counter()
        keys = (key for name in QUEUES if name in self.database_names()
                for key in self.database(name).keys(page_records=BATCH * 16))
        for key in keys:
            fields = parse_key(key)
            depths[fields.depth] += 1
            priorities[fields.priority] += 1
        return depths, priorities

    # -- pending ---------------------------------------------------------------------------------
    def pending(self) -> Iterator[dict[str, Any]]:
        """Every pending URL in crawl order, in process or not (see the module docstring): the
        fields of its record and ``in_process``."""
        streams = [self._queue(name) for name in QUEUES if name in self.database_names()]
        for key, value, in_process in heapq.merge(*streams, key=lambda record: record[0]):
            row = decode_weburl(value)
            if row["docid"] != parse_key(key).docid:
                raise BadInput(f"{self.path}: a work-queue key names docid {parse_key(key).docid} but its record "
                               f"{row['docid']}: not a crawler4j WebURL record")
            row["in_process"] = in_process
            yield row

    def _queue(self, name: str) -> Iterator[tuple[bytes, bytes, bool]]:
        in_process = name == IN_PROCESS
        for key, value in self.database(name).items(page_records=BATCH):
            yield key, value, in_process

    def pending_fingerprints(self) -> np.ndarray:
        """The 64-bit fingerprints (:func:`~pycrawler.keys.fingerprint.fingerprints64`) of the
        pending and in-process URLs, sorted: 8 bytes a URL, to tell done URLs from pending ones."""
        rows = self.pending()
        chunks = [fingerprints64([row["url"] for row in batch]) for batch in iter(lambda: list(islice(rows, BATCH)), [])]
        if np is None:
            return sorted(key for chunk in chunks for key in chunk)
        return np.sort(np.concatenate(chunks)) if chunks else np.empty(0, dtype=np.uint64)

    # -- docids ----------------------------------------------------------------------------------
    def doc_ids(self) -> Iterator[tuple[list[str], np.ndarray]]:
        """``DocIDs`` in batches, in its key order (the URLs' bytes): (URLs, their docids)."""
        records = self.database(DOC_IDS).items(page_records=BATCH)
        while batch := list(islice(records, BATCH)):
            values = b"".join(v for _, v in batch)
            if len(values) != DOC_ID_SIZE * len(batch):
                bad = next(v for _, v in batch if len(v) != DOC_ID_SIZE)
                big_endian(bad, DOC_ID_SIZE, DOC_IDS)  # raises, naming the record
            yield [url_text(k) for k, _ in batch], _docids(values)

    def done(self) -> Iterator[dict[str, Any]]:
        """The ``DocIDs`` URLs neither pending nor in process, in ``DocIDs`` order: ``url``, ``docid``.
        Told apart by URL, not by docid: a crawler4j that ran again without resuming numbered
        its URLs from 1 again, so one docid may name several URLs."""
        pending = self.pending_fingerprints()
        for urls, docids in self.doc_ids():
            held = _members(fingerprints64(urls), pending)
            for url, docid, is_pending in zip(urls, as_list(docids), as_list(held)):
                if not is_pending:
                    yield {"url": url, "docid": docid}

    # -- life cycle ------------------------------------------------------------------------------
    def close(self) -> None:
        self._databases.clear()
        self.env.close()

    def __enter__(self) -> Crawler4jFrontier:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if np is None:
    def _docids(values: bytes) -> list[int]:
        """``DocIDs``' values (big-endian int32 each) as ints."""
        return list(struct.unpack(f">{len(values) // DOC_ID_SIZE}i", values))

    def _members(values: list[int], sorted_set: list[int]) -> list[bool]:
        """For each of ``values``: is it in the sorted list ``sorted_set``?"""
        positions = (bisect.bisect_left(sorted_set, value) for value in values)
        return [at < len(sorted_set) and sorted_set[at] == value for at, value in zip(positions, values)]
else:
    def _docids(values: bytes) -> np.ndarray:
        """``DocIDs``' values (big-endian int32 each) as an int32 array."""
        return np.frombuffer(values, dtype=">i4").astype(np.int32)

    def _members(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
        """For each of ``values``: is it in the sorted array ``sorted_set``?"""
        if not len(sorted_set):
            return np.zeros(len(values), dtype=bool)
        positions = np.minimum(np.searchsorted(sorted_set, values), len(sorted_set) - 1)
        return sorted_set[positions] == values
