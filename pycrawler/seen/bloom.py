"""A sized Bloom filter Visited table, persisted in a memory-mapped file.

Two layouts, told apart by the file's format version:

**Blocked (format 2, every new filter).** The bit array is cut into 512-bit blocks, one
64-byte cache line each; a key picks one block and sets its k bits inside it, so a check or
an add costs one cache miss however large the filter (the classic layout pays up to k). The
price is a slightly higher false-positive rate for the same bits, because blocks fill
unevenly; sizing makes up for it: the number of blocks is the smallest for which the blocked
filter's exact expected rate (keys per block Poisson-distributed, see
:func:`blocked_false_positive_rate`) is at most the target, with k the best for that size
(about 6% more bits than a classic filter at p = 1%).

**Classic (format 1, still read and written in place).** ``m = -n ln p / (ln 2)^2`` bits
(rounded up to whole 64-bit words) and ``k = (m / n) ln 2`` probes anywhere in the array:
9.6 bits and 7 probes per key at p = 1%.

Hashing is stable across processes, machines and versions (Python's ``hash()`` is not, which
is why rbloom and friends cannot persist). A 64-bit key is mixed with the splitmix64
finaliser into h1, h1 again into h2; ``reduce`` maps the top 32 bits of a 64-bit value onto
[0, r) with Lemire's multiply-shift while r <= 2^32 and falls back to ``% r`` beyond.

- Blocked: the block is ``reduce(h1)`` over the blocks; probe i is bit ``(w >> 9 (i mod 7))
  & 511`` of the block, where w is h2 for probes 0-6 and is mixed again for each further 7.
- Classic: probe i is bit ``reduce(h1 + i * (h2 | 1))`` of the array, the
  Kirsch-Mitzenmacher double hashing.

The mixer makes arbitrary keys (counters, Heritrix keys) as good as random ones.

URL forms (``add_many_urls``, ``contains_urls``, ``add_urls``) need a 64-bit key per URL. A
format-2 filter uses XXH64 of the URL's bytes (:mod:`pycrawler.keys.xxh64`, ~10x faster than
MD5); a format-1 filter keeps the MD5 fingerprint it was filled with
(:func:`pycrawler.keys.fingerprints64`). ``url_keys(urls)`` gives the keys a filter uses, and
those are also the keys a receiver gets from ``add_urls``. So do not mix the two forms on one
filter: a URL added by string is found by string or by ``url_keys``, not by its MD5
fingerprint (the exact and DRUM tables' key). The Bloom filter never stores keys, so its URL
key need not match theirs, only stay the same for the life of a file.

The trade-off: a false positive tells the crawler a *new* URL was already seen, and the URL
is silently dropped, never fetched. At p = 1% one new URL in a hundred is lost once the filter
is full, and more beyond its capacity (the measured rate is in ``false_positive_rate()``).
Use the exact JE set (or DRUM) where every page matters; a Bloom filter where memory does.

File format (all integers little-endian), 64-byte header then the bit array:

====== ====== ==========================================================
offset size   field
====== ====== ==========================================================
0      8      magic ``b"PYCBLOOM"``
8      4      format version: 1 classic + MD5 URL keys; 2 blocked + XXH64 URL keys
12     4      k, probes per key
16     8      m, bits (a multiple of 64; of 512 in format 2)
24     8      capacity n the filter was sized for
32     8      count: keys added that were new to the filter
40     8      target false-positive rate p (IEEE 754 double)
48     16     zero
64     m/8    bits: bit i is bit ``i & 7`` (least significant first) of byte ``i >> 3``
====== ====== ==========================================================

The byte-wise bit order makes the file the same on every machine (the blocked kernels read it
as little-endian 64-bit words, the same bits). A version this code does not know is refused.
One process writes a file at a time; :meth:`BloomFilter.flush` updates the header,
:meth:`BloomFilter.close` also writes the pages back to disk.

A filter never grows: it is sized once, at creation. A new file appears whole or not at all
(written under a temporary name, then renamed), and with every byte allocated on disk, here and
on each writable open: a full disk is then an error at creation, never a SIGBUS when the
mapping first touches a page.
"""

from __future__ import annotations

import math
import os
import struct
from pathlib import Path

from .. import failpoints
from ..atomic_write import replacing
from ..errors import BadInput, as_disk_full
from ..jvm import RUNTIME
from ..keys import fingerprints64
from ..keys.xxh64 import xxh64_urls
from ..store.packing import np
from .protocol import as_keys
from .synchronous import SynchronousVisited

if np is not None:
    from . import bloom_numpy as bit_ops
elif RUNTIME == "graalpy":  # the same bits, set in Java one call a batch (the JVM compiles it)
    from . import bloom_java as bit_ops
else:  # CPython without numpy: the same bits, set by plain Python on bytes
    from . import bloom_python as bit_ops

MAGIC = b"PYCBLOOM"
CLASSIC, BLOCKED = 1, 2
"""The two format versions (layout and URL key, see the module docstring)."""
VERSION = BLOCKED
"""The format new filters are created in."""
BLOCK_BITS = 512
MAX_BLOCKED_K = 24
HEADER = struct.Struct("<8sIIQQQd16x")
HEADER_SIZE = 64
assert HEADER.size == HEADER_SIZE


def _check_sizing(capacity: int, fpr: float) -> None:
    if capacity < 1 or not 0.0 < fpr < 1.0:
        raise BadInput(f"a Bloom filter needs capacity >= 1 and 0 < fpr < 1 (got {capacity}, {fpr})")


def optimal_parameters(capacity: int, fpr: float) -> tuple[int, int]:
    """(m bits, k hashes) of the smallest classic filter holding ``capacity`` keys at rate ``fpr``."""
    _check_sizing(capacity, fpr)
    bits = math.ceil(-capacity * math.log(fpr) / math.log(2) ** 2)
    bits = -(-bits // 64) * 64
    return bits, max(1, round(bits / capacity * math.log(2)))


if np is None:
    def blocked_false_positive_rate(capacity: int, blocks: int, k: int) -> float:
        """Expected false-positive rate of a blocked filter of ``blocks`` 512-bit blocks holding
        ``capacity`` keys with ``k`` probes (as below, in plain floats)."""
        mean = capacity / blocks
        return sum(math.exp(j * math.log(mean) - mean - math.lgamma(j + 1))
                   * (1.0 - (1.0 - 1.0 / BLOCK_BITS) ** (k * j)) ** k
                   for j in range(int(mean + 12 * math.sqrt(mean) + 30)))
else:
    def blocked_false_positive_rate(capacity: int, blocks: int, k: int) -> float:
        """Expected false-positive rate of a blocked filter of ``blocks`` 512-bit blocks holding
        ``capacity`` keys with ``k`` probes: the keys in a block are Poisson(capacity / blocks), and
        a block holding j keys answers yes with probability (1 - (1 - 1/512)^(k j))^k."""
        mean = capacity / blocks
        j = np.arange(0, int(mean + 12 * math.sqrt(mean) + 30))
        log_poisson = j * math.log(mean) - mean - np.array([math.lgamma(x + 1) for x in j])
        per_block = (1.0 - (1.0 - 1.0 / BLOCK_BITS) ** (k * j)) ** k
        return float(np.sum(np.exp(log_poisson) * per_block))


def blocked_parameters(capacity: int, fpr: float) -> tuple[int, int]:
    """(m bits, k hashes) of the smallest blocked filter whose expected rate at ``capacity``
    keys is at most ``fpr`` (m a multiple of 512; k the best for that m)."""
    _check_sizing(capacity, fpr)

    def best(blocks: int) -> tuple[float, int]:
        # The optimum is near the classic k; past ~20 probes a 512-bit block gains nothing.
        guess = min(MAX_BLOCKED_K, max(1, round(blocks * BLOCK_BITS / capacity * math.log(2))))
        return min((blocked_false_positive_rate(capacity, blocks, k), k)
                   for k in range(max(1, guess - 2), min(MAX_BLOCKED_K, guess + 2) + 1))

    # A classic filter's size is a lower bound; grow by doubling, then bisect.
    low = max(1, math.ceil(optimal_parameters(capacity, fpr)[0] / BLOCK_BITS))
    high = low
    while best(high)[0] > fpr:
        low, high = high, high * 2
    while low < high:
        middle = (low + high) // 2
        if best(middle)[0] <= fpr:
            high = middle
        else:
            low = middle + 1
    return high * BLOCK_BITS, best(high)[1]


def _known(version: int, what: str) -> int:
    if version not in (CLASSIC, BLOCKED):
        raise BadInput(f"{what} Bloom filter format {version}; this pycrawler reads formats {CLASSIC} and {BLOCKED}")
    return version


def _parameters(version: int, capacity: int, fpr: float) -> tuple[int, int]:
    return (blocked_parameters if version == BLOCKED else optimal_parameters)(capacity, fpr)


def _reserve(fd: int, size: int, path: Path) -> None:
    """Give the file open as ``fd`` (the filter ``path``) its ``size`` bytes on disk now.

    The bits are a shared mapping of the file, and a page of a mapping learns that the disk is
    full only when it is first written: as SIGBUS, which kills the process (and the JVM in it)
    without a word. With every byte allocated up front (``posix_fallocate``), a full disk is
    :class:`~pycrawler.errors.DiskFull` here instead, the crawl's usual stop."""
    try:
        _allocate(fd, 0, size)
    except OSError as exc:
        if full := as_disk_full(OSError(exc.errno, exc.strerror, str(path))):
            raise full from None
        raise


def _write_zeros(fd: int, offset: int, size: int) -> None:
    """``posix_fallocate`` where the os module has none (GraalPy): zeros written from the file's
    end to ``offset + size``. A new filter's bytes are all written so; holes an existing file
    has below its end stay holes."""
    end, position = offset + size, os.lseek(fd, 0, os.SEEK_CUR)
    at = os.lseek(fd, max(offset, os.fstat(fd).st_size), os.SEEK_SET)
    zeros = bytes(1 << 20)
    while at < end:
        at += os.write(fd, zeros[:end - at])
    os.lseek(fd, position, os.SEEK_SET)  # the caller writes on from where it was, as after posix_fallocate


_allocate = getattr(os, "posix_fallocate", _write_zeros)


class BloomFilter(SynchronousVisited):
    """A Bloom filter of 64-bit keys; URL forms key URLs by :meth:`url_keys`.

    ``BloomFilter(capacity, fpr)`` lives in memory; :meth:`create` and :meth:`open` keep it in
    a memory-mapped file. New filters are blocked (format 2); ``version=CLASSIC`` makes a
    format-1 filter, as earlier releases did.
    """

    def __init__(self, capacity: int, fpr: float = 0.01, *, version: int = VERSION):
        self._setup(version, *_parameters(_known(version, "requested"), capacity, fpr), capacity, fpr, 0)
        self.path: Path | None = None
        self._map = None
        self._writable = False
        self._bits = bit_ops.zeroed(self.m // 8)

    def _setup(self, version: int, m: int, k: int, capacity: int, fpr: float, count: int) -> None:
        self.version, self.m, self.k, self.capacity, self.fpr, self.count = version, m, k, capacity, fpr, count

    @classmethod
    def create(cls, path: str | os.PathLike, capacity: int, fpr: float = 0.01, *,
               version: int = VERSION) -> BloomFilter:
        """A new empty filter in a new file (BadInput if it exists; DiskFull if its filesystem
        cannot hold it).

        The file appears whole or not at all (:func:`~pycrawler.atomic_write.replacing`): it is
        written beside ``path`` as ``NAME.part``, every byte reserved (:func:`_reserve`), synced,
        renamed to ``path`` and its folder synced. A creation killed before the rename leaves
        only the ``.part`` file, which the next creation overwrites."""
        path = Path(path)
        m, k = _parameters(_known(version, "requested"), capacity, fpr)
        if path.exists():
            raise BadInput(f"{path} exists; open it with BloomFilter.open")
        with replacing(path, binary=True) as partial:
            _reserve(partial.fileno(), HEADER_SIZE + m // 8, path)
            partial.write(HEADER.pack(MAGIC, version, k, m, capacity, 0, fpr))
            partial.flush()
            failpoints.hit("bloom.create.written")
        failpoints.hit("bloom.create.renamed")
        return cls.open(path)

    @classmethod
    def open(cls, path: str | os.PathLike, *, read_only: bool = False) -> BloomFilter:
        """A filter saved by :meth:`create` (BadInput unless the file is one, whole)."""
        path = Path(path)
        if not path.is_file():
            raise BadInput(f"{path} is not a file")
        with open(path, "rb") as f:
            head = f.read(HEADER_SIZE)
        if len(head) < HEADER_SIZE or head[:8] != MAGIC:
            raise BadInput(f"{path} is not a pycrawler Bloom filter (bad magic or short header)")
        _, version, k, m, capacity, count, fpr = HEADER.unpack(head)
        _known(version, f"{path} is")
        unit = BLOCK_BITS if version == BLOCKED else 64
        if m == 0 or m % unit or not 1 <= k <= 64:
            raise BadInput(f"{path} has a corrupt header (m={m}, k={k})")
        size, expected = path.stat().st_size, HEADER_SIZE + m // 8
        if size != expected:
            raise BadInput(f"{path} holds {size} bytes; its header says {expected} (truncated or not a filter)")
        if not read_only:  # a filter made sparse (by an earlier release, or copied so) gets its bytes now
            with open(path, "r+b") as f:
                _reserve(f.fileno(), size, path)
        self = cls.__new__(cls)
        self._setup(version, m, k, capacity, fpr, count)
        self.path = path
        self._map, self._bits = bit_ops.mapped(path, HEADER_SIZE, read_only)
        self._writable = not read_only
        return self

    # -- the table ---------------------------------------------------------------------------
    def add_many(self, keys) -> np.ndarray:
        new, added = bit_ops.resolve(self._live_bits(), self.version == BLOCKED, self.m, self.k, as_keys(keys), True)
        self.count += added
        return new

    def contains_many(self, keys) -> np.ndarray:
        return bit_ops.resolve(self._live_bits(), self.version == BLOCKED, self.m, self.k, as_keys(keys), False)[0]

    # -- URL forms: this filter's URL key ------------------------------------------------------
    def url_keys(self, urls) -> np.ndarray:
        """The 64-bit keys this filter's URL forms use: XXH64 of the URL (format 2) or its
        MD5 fingerprint (format 1); see the module docstring."""
        urls = urls if isinstance(urls, list) else list(urls)
        return xxh64_urls(urls) if self.version == BLOCKED else fingerprints64(urls)

    def add_urls(self, urls, aux=None) -> None:
        urls = list(urls)
        self.add_batch(self.url_keys(urls), urls if aux is None else aux)

    def add_many_urls(self, urls) -> np.ndarray:
        return self.add_many(self.url_keys(urls))

    def contains_urls(self, urls) -> np.ndarray:
        return self.contains_many(self.url_keys(urls))

    def false_positive_rate(self) -> float:
        """The expected rate now, from the fraction of bits set (``fill ** k``)."""
        return (bit_ops.ones(self._live_bits()) / self.m) ** self.k

    def figures(self) -> dict:
        """What the operator's console shows, estimated from the count of keys added instead of
        a scan of the bits (:meth:`false_positive_rate` reads them all): the keys against the
        capacity the filter was sized for (``fill``), the expected share of bits set
        (``1 - e^(-kn/m)``) and the expected false-positive rate at this count, beside the
        rate it was sized for."""
        n = self.count
        bits_set = 1.0 - math.exp(-self.k * n / self.m)
        if self.version == BLOCKED:
            expected = blocked_false_positive_rate(n, self.m // BLOCK_BITS, self.k) if n else 0.0
        else:
            expected = bits_set ** self.k
        return {"keys": n, "capacity": self.capacity, "fill": n / self.capacity, "bits_set": bits_set,
                "false_positive_rate": expected, "target_false_positive_rate": self.fpr}

    def __len__(self) -> int:
        """Keys added that were new to the filter (false positives are not counted)."""
        return self.count

    # -- persistence -------------------------------------------------------------------------
    def flush(self, txn=None) -> None:
        """Write the count into the header (the bits are already in the mapping)."""
        if self._map is not None and self._writable:
            bit_ops.write_header(self._map, HEADER.pack(MAGIC, self.version, self.k, self.m, self.capacity,
                                                        self.count, self.fpr))

    def close(self) -> None:
        if self._map is not None:
            self.flush()
            bit_ops.sync(self._map)
            self._map = None
        self._bits = None

    def _live_bits(self) -> np.ndarray:
        if self._bits is None:
            raise BadInput(f"Bloom filter {self.path or ''} is closed".replace("  ", " "))
        return self._bits

    def __repr__(self) -> str:
        where = f" at {str(self.path)!r}" if self.path else ""
        return f"<BloomFilter format {self.version} m={self.m} k={self.k} capacity={self.capacity} fpr={self.fpr} count={self.count}{where}>"
