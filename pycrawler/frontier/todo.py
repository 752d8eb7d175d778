"""pycrawler's TODO frontier: CrawlUrl records in one JE database, in key or FIFO order.

Two orders, one database each (the name says which, so a store's order is never guessed):

``key`` (database ``todo_by_url``)
    The book's order. The key is the record's ``ori_url`` in ``StringBinding`` form (JE's UTF,
    zero-terminated), so ``get_next`` returns the smallest URL in JE's byte order (code-unit
    order; U+0000 sorts after U+007F). Putting a URL that is already waiting replaces its
    record (the book's ``StoredMap.put``): this order is also a set of pending URLs.
``fifo`` (database ``todo_fifo``)
    First in, first out. The key is a sequence number in ``LongBinding`` form; the counter is
    recovered at open from the last key, so order holds across restarts. Every put is a new
    entry, duplicates included (pair it with a URL-seen filter).

Values are :mod:`pycrawler.records.crawl_url`'s format (``CrawlUrlBinding``), so Java reads
either database as ``StoredSortedMap<String, CrawlUrl>`` / ``StoredSortedMap<Long, CrawlUrl>``.

Durability: each ``put_urls`` and each ``get_next_batch`` is one JE transaction (one JNI
crossing for the writes). When it returns, the batch is committed; with the default
``write_no_sync`` the commit is in the operating system's hands and survives kill -9 of this
process, and ``durability="sync"`` also survives a power cut (fsync per commit, much slower).
``get_next`` hands records out at most once: a record returned is gone from the store even if
the caller dies before crawling it, as in the book.

One object per store: JE lets one process write an environment, and the object's lock makes
concurrent ``put``/``get`` calls from several threads safe.
"""

from __future__ import annotations

import abc
import os
import threading
from collections.abc import Callable, Iterable, Iterator

from .. import jvm
from ..errors import BadInput
from ..records.crawl_url import CrawlUrl, decode_packed, encode_many
from ..store import Environment
from ..store.java_errors import je_errors
from ..store.java_worker import JavaWorker
from ..store.mapping import SortedMap
from ..store.packing import np, pack, pack_fixed, unpack
from ..store.tuple import java_utf
from .protocol import TodoFrontier

ORDERS = {"key": "todo_by_url", "fifo": "todo_fifo"}
"""Order name -> the database holding a frontier of that order."""
KEY_BINDINGS = {"key": "string", "fifo": "long"}
"""Order name -> the tuple binding of its keys (see :mod:`pycrawler.store.bindings`)."""

JE_CONFIG = {
    # A checkpoint writes every dirty tree node, and key-order puts dirty nodes all over the
    # tree: checkpointing every 200 MB of log instead of JE's 20 MB writes far less per put.
    # The price: recovery after a crash replays up to that much log.
    "je.checkpointer.bytesInterval": str(200 << 20),
    # A queue deletes everything it stores, so JE's cleaner rewrites log files all the time;
    # letting utilisation fall to 30% (JE: 50%) before cleaning, in 100 MB files (JE: 10 MB),
    # cut its share of the CPU (key order at 300k records: get 25-28k -> 39-42k records per
    # CPU second, put 41-48k -> 51-53k). The price: up to ~3x the live data on disk.
    "je.cleaner.minUtilization": "30",
    "je.log.fileMax": str(100 << 20),
}
"""JE settings of the environments a frontier opens for itself."""


def require_url(record: CrawlUrl) -> str:
    """The record's ``ori_url``, the URL a TODO entry stands for; BadInput when missing."""
    url = getattr(record, "ori_url", None)
    if not isinstance(url, str) or not url:
        raise BadInput(f"a TODO entry needs a non-empty ori_url, got {record!r:.200}")
    return url


def _url_key(record: CrawlUrl) -> bytes:
    """``StringBinding`` bytes of the record's URL."""
    return java_utf(require_url(record)) + b"\x00"


if np is None:
    def _sequence_keys(first: int, count: int) -> tuple:
        """``LongBinding`` bytes of ``first .. first+count-1``, packed for one JNI crossing."""
        return pack([(number ^ (1 << 63)).to_bytes(8, "big") for number in range(first, first + count)])
else:
    _LONG_SIGN = np.uint64(1 << 63)

    def _sequence_keys(first: int, count: int) -> tuple:
        """``LongBinding`` bytes of ``first .. first+count-1``, packed for one JNI crossing."""
        numbers = np.arange(first, first + count, dtype=np.uint64) ^ _LONG_SIGN
        return pack_fixed(numbers.astype(">u8"))


def _sequence_number(key: bytes) -> int:
    return int.from_bytes(key, "big") - (1 << 63)


def sorted_entry_chunks(keys: list[bytes], records: list, encode: Callable[[list], list[bytes]],
                        size: int) -> Iterator[tuple[tuple, tuple]]:
    """Packed (keys, values) chunks of at most ``size`` records, in ascending key order
    overall; ``encode`` turns a chunk's records into their values, chunk by chunk, so the
    encoding can overlap with the writes. JE inserts a sorted batch several times faster
    (neighbouring tree nodes). The sort is stable, so of a key given twice the later value
    is written last and wins, as it would one at a time."""
    by_key = sorted(range(len(keys)), key=keys.__getitem__)
    for start in range(0, len(by_key), size):
        chunk = by_key[start:start + size]
        yield pack([keys[i] for i in chunk]), pack(encode([records[i] for i in chunk]))


class JeFrontier(TodoFrontier):
    """What every JE-backed TODO store shares: a put is one transaction, a pop takes the head
    of the database in key order (cursor walks in Java that read and delete, in one
    transaction). Subclasses say how records become entries and back.

    A batch crosses into the JVM once per ``CHUNK`` records, and those crossings run on a
    :class:`~pycrawler.store.java_worker.JavaWorker` thread while this one encodes the next
    chunk (put) or decodes the last page (pop): the JE half and the Python half of a large
    batch overlap on two cores."""

    CHUNK = 2500

    def __init__(self, env: Environment, db):
        self.env = env
        self.db = db
        self._owns_env = False
        self._lock = threading.Lock()
        # Every live record's key is >= this (None: unknown, as after opening). Pops start
        # their walk here instead of stepping over the slots of records already popped.
        self._resume_from: bytes | None = None
        self._java = JavaWorker()

    @classmethod
    def _open_env(cls, path, *, create: bool, read_only: bool, durability: str, cache_size: int | None,
                  make: Callable[[Environment], JeFrontier]) -> JeFrontier:
        env = Environment(path, create=create, read_only=read_only, durability=None if read_only else durability,
                          cache_size=cache_size, config=JE_CONFIG)
        try:
            frontier = make(env)
        except BaseException:
            env.close()
            raise
        frontier._owns_env = True
        return frontier

    @abc.abstractmethod
    def _entry_chunks(self, records: list[CrawlUrl]) -> Iterator[tuple[tuple, tuple]]:
        """Packed (keys, values) of ``records``, in chunks of at most ``CHUNK`` records and
        ascending key order overall; runs under the lock."""

    @abc.abstractmethod
    def _records(self, values: list[bytes]) -> list[CrawlUrl]:
        """The records stored as ``values``."""

    def _records_packed(self, data, offsets) -> list[CrawlUrl]:
        """The records of a packed page of values (as the bridge returns them)."""
        return self._records(unpack(data, offsets))

    def _stored(self, count: int) -> None:
        """Called under the lock once ``count`` records are committed."""

    def _require_writable(self) -> None:
        if self.env.read_only:
            raise BadInput(f"{self.env.path} is open read-only: a TODO store changes on every put and pop")

    def put_urls(self, batch: Iterable[CrawlUrl]) -> int:
        self._require_writable()
        records = list(batch)
        if not records:
            return 0
        with self._lock:
            with self.env.begin() as txn:
                chunks = self._entry_chunks(records)
                if len(records) <= self.CHUNK:  # nothing to overlap: no hop to the worker thread
                    firsts = [self._write(entry, txn) for entry in chunks]
                else:
                    firsts = self._java.pipeline(chunks, lambda entry: self._write(entry, txn))
            self._stored(len(records))
            if self._resume_from is not None and firsts[0] < self._resume_from:
                self._resume_from = firsts[0]
        return len(records)

    def _write(self, entry: tuple[tuple, tuple], txn) -> bytes:
        """Write one chunk; returns its first (smallest) key."""
        keys, values = entry
        self.db.put_many(keys, values, txn=txn)
        return bytes(keys[0][keys[1][0]:keys[1][1]])

    def get_next_batch(self, n: int) -> list[CrawlUrl]:
        self._require_writable()
        if n <= 0:
            return []
        if not self.db.in_process:
            raise BadInput(f"{self.env.path}: taking URLs runs in Java beside JE (TodoQueue.takeFirst), so it "
                           "needs the store in this process, not served")
        take_first, jbytes = jvm.jclass("org.pycrawler.bridge.TodoQueue").takeFirst, jvm.byte_array
        copy_range = jvm.jclass("java.util.Arrays").copyOfRange
        records: list[CrawlUrl] = []

        def take(request: tuple[bytes | None, int]):
            """Pop one page; name the next request (None: nothing more to take)."""
            start, wanted = request
            limit = min(wanted, self.CHUNK)
            with je_errors(f"{self.env.path} database {self.db.name!r}"):
                keys, values = take_first(self.db.java, txn.java, None if start is None else jbytes(start), limit)
            got = len(keys.offsets) - 1
            if not got:
                return (None, values), None
            offsets = keys.offsets  # only the last key is needed: where the next pop starts
            following = jvm.to_bytes(copy_range(keys.data, offsets[got - 1], offsets[got])) + b"\x00"
            return (following, values), (following, wanted - got) if got == limit < wanted else None

        with self._lock:  # the resume point is read and moved under the lock puts lower it under
            resume_from = self._resume_from
            with self.env.begin() as txn:
                for following, values in self._java.pages(take, (resume_from, n)):
                    # Decoded inside the transaction: a damaged record raises, and the abort
                    # puts the whole batch back (and the resume point stays where it was).
                    records.extend(self._records_packed(jvm.to_bytes(values.data), values.offsets))
                    resume_from = following or resume_from
            self._resume_from = resume_from
        return records

    def __len__(self) -> int:
        return self.db.count()

    def close(self) -> None:
        self._java.close()
        if self._owns_env:
            self.env.close()
        else:
            self.db.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.layout} layout, {self.order} order, in {str(self.env.path)!r}>"


class JeTodoFrontier(JeFrontier):
    """pycrawler's TODO frontier on a JE database of an open
    :class:`~pycrawler.store.Environment`.

    ``order``: "key" or "fifo" (see the module docstring). ``create`` makes the database
    when absent. Use :meth:`open` to let the frontier own its environment.
    """

    layout = "pycrawler"

    def __init__(self, env: Environment, order: str = "key", *, create: bool = False):
        if order not in ORDERS:
            raise BadInput(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
        super().__init__(env, env.open_database(ORDERS[order], create=create))
        self.order = order
        self._next_sequence = self._recover_sequence() if order == "fifo" else None

    @classmethod
    def open(cls, path: str | os.PathLike, order: str = "key", *, create: bool = False, read_only: bool = False,
             durability: str = "write_no_sync", cache_size: int | None = None) -> JeTodoFrontier:
        """Open (``create``: or make) the frontier in the environment at ``path``; closing the
        frontier closes the environment."""
        return cls._open_env(path, create=create, read_only=read_only, durability=durability, cache_size=cache_size,
                             make=lambda env: cls(env, order, create=create and not read_only))

    def _recover_sequence(self) -> int:
        for key in self.db.keys(reverse=True, page_records=1):
            return _sequence_number(key) + 1
        return 0

    @property
    def mapping(self) -> SortedMap:
        """The records as a sorted mapping (URL or sequence number -> CrawlUrl), the view a
        Java ``StoredSortedMap`` has of the same database; for reading and inspection."""
        return SortedMap(self.db, KEY_BINDINGS[self.order], "crawl_url")

    def _entry_chunks(self, records: list[CrawlUrl]) -> Iterator[tuple[tuple, tuple]]:
        if self.order == "key":
            return sorted_entry_chunks([_url_key(r) for r in records], records, encode_many, self.CHUNK)
        for record in records:
            require_url(record)
        return ((_sequence_keys(self._next_sequence + start, len(chunk)), pack(encode_many(chunk)))
                for start in range(0, len(records), self.CHUNK) for chunk in [records[start:start + self.CHUNK]])

    def _records(self, values: list[bytes]) -> list[CrawlUrl]:
        return self._records_packed(*pack(values))

    def _records_packed(self, data, offsets) -> list[CrawlUrl]:
        return decode_packed(data, offsets)  # straight from the page: no bytes object per record

    def _stored(self, count: int) -> None:
        if self._next_sequence is not None:
            self._next_sequence += count
