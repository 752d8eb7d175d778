"""Heritrix's Rabin fingerprints and the keys of its ``alreadySeenUrl`` database.

Heritrix keeps the URLs it has seen as 64-bit keys made by ``BdbUriUniqFilter.createKey``
from Rabin fingerprints (``st.ata.util.FPGenerator``)::

    createKey(url) = std24.fp(scheme + authority) | (std40.fp(url) >>> 24)

so URLs of one host sort next to each other in the database. To read or extend Heritrix
crawl state we must compute exactly those numbers; this module does, from the mathematics
of the fingerprint (it is not a port of Heritrix's code):

- A fingerprint of degree ``d`` is a polynomial over GF(2) of degree < ``d``, reduced
  modulo an irreducible polynomial ``P`` of degree ``d``. It is stored in a 64-bit word
  with the coefficient of ``x^0`` in the *most* significant bit, so a ``d``-bit
  fingerprint fills the top ``d`` bits of the word (``std24.fp`` values end in ten zero
  hex digits). ``P`` is written the same way, its ``x^d`` term included when ``d < 64``.
- The fingerprint of the empty string is ``x^64 mod P``.
- Strings are fingerprinted one UTF-16 code unit at a time, all 16 bits of it (as Java's
  ``fp(CharSequence)`` does): ``f <- (f + c(x)) * x^16 mod P``, where the unit's bit ``b``
  (counted from its least significant bit) is the coefficient of ``x^(63-b)``.

Unrolled, a string of ``n`` units ``c_0 .. c_{n-1}`` has the fingerprint::

    x^(64 + 16n)  +  sum_i  c_i(x) * x^(16 (n - i))      (mod P)

Every term depends only on a unit and its distance from the end of the string. The batch
functions use that: one table lookup per code unit (a row per distance, 256 entries per
byte value) and an XOR-reduction per string, all in numpy. The scalar functions use the
word-at-a-time recurrence instead, so the two forms check each other.

Values are returned unsigned (0 <= v < 2**64); Java prints the same bits as a signed
``long``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property

from ..errors import BadInput
from ..jvm import RUNTIME
from .urls import np, utf16_units

# Without numpy, the batch functions run in one Java call a batch under GraalPy (the JVM
# compiles it; GraalPy's Python ints do not come near), and one Python call per string on
# CPython (figures in docs/store.md, "Without numpy (GraalPy)").
if np is None and RUNTIME == "graalpy":
    from . import java_keys
else:
    java_keys = None

_WORD = (1 << 64) - 1
_X_TO_THE_0 = 1 << 63

# Rows of distance-from-the-end in the batch tables. Longer strings are cut into blocks of
# this many units whose sums are then multiplied by x^(16 * BLOCK * q); see RabinFingerprinter.fold.
_BLOCK_BITS = 9
_BLOCK = 1 << _BLOCK_BITS

# Strings per batch step of the many-string functions (see _in_chunks).
CHUNK = 512

_SLASH = ord("/")
_COLON = ord(":")


def _byte_table(bit_values: list[int]) -> list[int]:
    """:func:`_byte_tables` of one row of 8 values, in plain ints (the scalar path's tables)."""
    table = [0] * 256
    for byte in range(1, 256):
        low_bit = byte & -byte
        table[byte] = table[byte ^ low_bit] ^ bit_values[low_bit.bit_length() - 1]
    return table


def _byte_tables(bit_values) -> np.ndarray:
    """For rows of 8 per-bit values (..., 8), the XOR of the chosen ones for each byte 0..255.

    Fingerprinting is linear over GF(2), so the value a byte adds is the XOR of what its set
    bits add; this turns 8 numbers into a 256-entry lookup table.
    """
    bit_values = np.asarray(bit_values, dtype=np.uint64)
    table = np.zeros(bit_values.shape[:-1] + (256,), dtype=np.uint64)
    byte = np.arange(256)
    for bit in range(8):
        has_bit = ((byte >> bit) & 1).astype(bool)
        table[..., has_bit] ^= bit_values[..., bit, None]
    return table


def _apply_linear_maps(tables: np.ndarray, which: np.ndarray, values: np.ndarray) -> np.ndarray:
    """GF(2)-linear maps of 64-bit values, each map given as 8 byte tables (byte 0 = lowest).

    ``tables`` has shape (maps, 8, 256); ``values[k]`` goes through map ``which[k]``.
    """
    flat = tables.reshape(-1)
    base = which.astype(np.intp) * (8 * 256)
    result = np.zeros_like(values)
    for i in range(8):
        byte = ((values >> np.uint64(8 * i)) & np.uint64(0xFF)).astype(np.intp)
        result ^= flat.take(base + (i * 256) + byte)
    return result


class Scratch:
    """Work arrays reused from one batch to the next.

    A batch step needs arrays of a few bytes per code unit; allocating them afresh for every
    chunk makes the operating system hand over (and zero) new pages each time, which cost
    more than the fingerprinting itself. One Scratch serves the chunks of one call in turn.
    """

    def __init__(self) -> None:
        self._buffers: dict[type, np.ndarray] = {}

    def array(self, dtype, size: int) -> np.ndarray:
        """A work array of ``size`` elements (contents undefined), valid until the next call."""
        buffer = self._buffers.get(dtype)
        if buffer is None or buffer.size < size:
            grown = size if buffer is None else max(size, 2 * buffer.size)
            buffer = self._buffers[dtype] = np.empty(grown, dtype)
        return buffer[:size]


class RabinFingerprinter:
    """Fingerprints of one degree and irreducible polynomial, as ``FPGenerator`` makes them."""

    def __init__(self, polynomial: int, degree: int):
        if not 8 <= degree <= 64 or degree % 8:
            # Heritrix's generators are of degree 24, 40 and 64; whole bytes keep reduction simple.
            raise ValueError(f"degree must be a multiple of 8 in 8..64, not {degree}")
        self.polynomial = polynomial
        self.degree = degree
        self.empty = self._powers[64]
        self._multipliers: np.ndarray | None = None  # grown by _block_multipliers

    def __repr__(self) -> str:
        return f"RabinFingerprinter(0x{self.polynomial:016X}, {self.degree})"

    @cached_property
    def _powers(self) -> list[int]:
        """x^e mod P for e in [0, 16 * BLOCK + 80): all the batch and scalar tables need."""
        top_coefficient = _X_TO_THE_0 >> (self.degree - 1)  # where x^(degree-1) sits
        powers = []
        value = _X_TO_THE_0
        for _ in range(16 * _BLOCK + 80):
            powers.append(value)
            overflow = value & top_coefficient
            value >>= 1
            if overflow:
                value ^= self.polynomial
        return powers

    # -- one string at a time -------------------------------------------------------------

    @cached_property
    def _scalar_tables(self):
        p = self._powers
        # After f ^= unit, multiplying by x^16 pushes the word's low 16 bits (x^63 .. x^48)
        # out as x^79 .. x^64: these tables give their reduced values, low byte and high byte.
        shifted_out_low = _byte_table([p[79 - b] for b in range(8)])
        shifted_out_high = _byte_table([p[71 - b] for b in range(8)])
        # The final reduction folds the coefficients of x^degree .. x^63 (the low bytes).
        low_bytes = (64 - self.degree) // 8
        reduce = [_byte_table([p[63 - 8 * i - b] for b in range(8)]) for i in range(low_bytes)]
        keep = (_WORD << (64 - self.degree)) & _WORD
        return shifted_out_low, shifted_out_high, reduce, keep

    def fp(self, text: str) -> int:
        """Fingerprint of all 16 bits of each UTF-16 code unit of ``text`` (``fp(CharSequence)``)."""
        shifted_out_low, shifted_out_high, reduce, keep = self._scalar_tables
        data = _utf16le(text)
        f = self.empty
        for low, high in zip(data[0::2], data[1::2]):
            f ^= low | (high << 8)
            f = (f >> 16) ^ shifted_out_low[f & 0xFF] ^ shifted_out_high[(f >> 8) & 0xFF]
        result = f & keep
        for table in reduce:
            result ^= table[f & 0xFF]
            f >>= 8
        return result

    # -- many strings at once -------------------------------------------------------------

    @cached_property
    def _unit_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """What a unit's low and high byte add at each distance from the end (flat, row*256+byte).

        A unit at distance k (0 = last) contributes c(x) * x^(16(k+1)); its low byte's bit b
        is x^(63-b) and its high byte's bit j is x^(55-j).
        """
        powers = np.array(self._powers, dtype=np.uint64)
        shift = 16 * (np.arange(_BLOCK)[:, None] + 1)
        bit = np.arange(8)[None, :]
        low = _byte_tables(powers[63 - bit + shift]).ravel()
        high = _byte_tables(powers[55 - bit + shift]).ravel()
        return low, high

    def _block_multipliers(self, count: int) -> np.ndarray:
        """Byte tables (count, 8, 256): map q multiplies by x^(16 * BLOCK * q) mod P."""
        tables = self._multipliers
        if tables is None:
            powers = np.array(self._powers, dtype=np.uint64)
            # Map q sends bit 8i+b of a word, x^(63-8i-b), to x^(63-8i-b + 16 BLOCK q) mod P:
            # maps 0 and 1 come straight from the powers.
            exponent = 63 - np.arange(64).reshape(8, 8)
            identity = _byte_tables(powers[exponent])
            tables = np.stack([identity, _byte_tables(powers[exponent + 16 * _BLOCK])])
        while len(tables) < count:
            # x^(16 BLOCK q) = x^(16 BLOCK) * x^(16 BLOCK (q-1)): send the images of the single
            # bits under the one-block map through the last map made.
            one_block_basis = tables[1][:, 1 << np.arange(8)].reshape(-1)
            last = np.full(64, len(tables) - 1)
            basis = _apply_linear_maps(tables, last, one_block_basis)
            tables = np.concatenate([tables, _byte_tables(basis.reshape(1, 8, 8))])
        self._multipliers = tables
        return tables

    def _times_block_powers(self, values: np.ndarray, blocks: np.ndarray) -> np.ndarray:
        """values[i] * x^(16 * BLOCK * blocks[i]) mod P (values reduced)."""
        scaled = np.flatnonzero(blocks)
        if scaled.size == 0:
            return values
        tables = self._block_multipliers(int(blocks.max()) + 1)
        values = values.copy()
        values[scaled] = _apply_linear_maps(tables, blocks[scaled], values[scaled])
        return values

    def length_terms(self, lengths: np.ndarray) -> np.ndarray:
        """x^(64 + 16n) mod P for each length n: the empty fingerprint carried along n units."""
        lengths = np.asarray(lengths, dtype=np.int64)
        terms = self._length_powers.take(lengths & (_BLOCK - 1))
        if lengths.size and int(lengths.max()) >= _BLOCK:
            terms = self._times_block_powers(terms, lengths >> _BLOCK_BITS)
        return terms

    @cached_property
    def _length_powers(self) -> np.ndarray:
        """x^(64 + 16r) mod P for r in [0, BLOCK)."""
        return np.array(self._powers[64 : 64 + 16 * _BLOCK : 16], dtype=np.uint64)

    def fold(
        self, units: np.ndarray, lengths: np.ndarray, scratch: Scratch | None = None
    ) -> np.ndarray:
        """Fingerprints of strings laid end to end in ``units`` (UTF-16 code units: uint16,
        or uint8 when all are below 256).

        ``lengths[i]`` is the number of units of string i; they add up to ``units.size``.
        Returns a uint64 array, one fingerprint per string. ``scratch`` lends work arrays.
        """
        scratch = scratch or Scratch()
        lengths = np.asarray(lengths, dtype=np.int64)
        fingerprints = self.length_terms(lengths)
        if units.size == 0:
            return fingerprints
        filled = np.flatnonzero(lengths) if int(lengths.min()) == 0 else slice(None)
        filled_lengths = lengths[filled]
        starts = np.cumsum(filled_lengths) - filled_lengths
        long_strings = int(filled_lengths.max()) > _BLOCK
        # Indexes stay below (BLOCK * 256) or the longest length: int32 unless a string is huge.
        index_type = np.int32 if int(filled_lengths.max()) < 2**31 // 256 else np.int64

        # Each unit's distance from the end of its string: a count down that restarts at
        # every string's first unit. Without long strings it is scaled at once into a row
        # offset (distance * 256) of the tables.
        row_size = 1 if long_strings else 256
        index = scratch.array(index_type, units.size)
        index.fill(-row_size)
        index[starts] = (filled_lengths - 1) * row_size
        np.cumsum(index, out=index)
        if long_strings:
            blocks = index >> _BLOCK_BITS
            index &= _BLOCK - 1
            index <<= 8

        low_table, high_table = self._unit_tables
        contributions = scratch.array(np.uint64, units.size)
        wide = np.flatnonzero(units > 0xFF) if units.dtype != np.uint8 else ()
        if len(wide):
            index += units & 0xFF
            low_table.take(index, out=contributions)
            high_index = (index[wide] & ~0xFF) + (units[wide] >> 8)
            contributions[wide] ^= high_table.take(high_index)
        else:
            index += units
            low_table.take(index, out=contributions)

        if long_strings:
            # Sum each block of BLOCK units (they share a power of x^(16 BLOCK)), scale the
            # block sums by that power, then sum the blocks of each string.
            block_first = (index >> 8) == _BLOCK - 1
            block_first[starts] = True
            block_starts = np.flatnonzero(block_first)
            sums = np.bitwise_xor.reduceat(contributions, block_starts)
            sums = self._times_block_powers(sums, blocks[block_starts])
            sums = np.bitwise_xor.reduceat(sums, np.searchsorted(block_starts, starts))
        else:
            sums = np.bitwise_xor.reduceat(contributions, starts)
        fingerprints[filled] ^= sums
        return fingerprints

    if java_keys is not None:
        def fp_many(self, texts: Iterable[str]) -> list[int]:
            """:meth:`fp` of each string, in one Java call (GraalPy)."""
            return java_keys.fingerprints(self.polynomial, self.degree, texts)
    elif np is None:
        def fp_many(self, texts: Iterable[str]) -> list[int]:
            """:meth:`fp` of each string, one by one (no numpy)."""
            return [self.fp(text) for text in texts]
    else:
        def fp_many(self, texts: Iterable[str]) -> np.ndarray:
            """:meth:`fp` of each string, as a numpy uint64 array, computed in batches."""
            return _in_chunks(lambda chunk, scratch: self.fold(*utf16_units(chunk), scratch), texts)


# The generators Heritrix uses (FPGenerator.std24 / std40 / std64).
STD24 = RabinFingerprinter(0x8E375B8000000000, 24)
STD40 = RabinFingerprinter(0x8643FFF621800000, 40)
STD64 = RabinFingerprinter(0xD74307D3FD3382DB, 64)


def fp24(text: str) -> int:
    """``FPGenerator.std24.fp(text)``: 24 bits, in the top of the word."""
    return STD24.fp(text)


def fp40(text: str) -> int:
    """``FPGenerator.std40.fp(text)``: 40 bits, in the top of the word."""
    return STD40.fp(text)


def fp64(text: str) -> int:
    """``FPGenerator.std64.fp(text)``."""
    return STD64.fp(text)


def _require_text(text: str) -> str:
    if not isinstance(text, str):
        raise BadInput(f"expected a string to fingerprint, got {type(text).__name__}")
    return text


def _utf16le(text: str) -> bytes:
    _require_text(text)
    # surrogatepass: a lone surrogate is a valid Java char and is fingerprinted as one.
    return text.encode("utf-16-le", "surrogatepass")


def scheme_authority(url: str) -> str:
    """The part of ``url`` whose std24 fingerprint leads its key, cut as Heritrix cuts it.

    Up to (not including) the first ``/`` after the first ``://``; the whole URL when it has
    no ``://`` or no ``/`` after it (``dns:archive.org``, ``http://host``); and nothing at
    all when ``://`` opens the URL (Heritrix only looks further when it is found past 0).
    """
    separator = _require_text(url).find("://")
    if separator == -1:
        return url
    if separator == 0:
        return ""
    slash = url.find("/", separator + 3)
    return url if slash == -1 else url[:slash]


def create_key(url: str) -> int:
    """``BdbUriUniqFilter.createKey(url)``: the key of ``url`` in Heritrix's alreadySeenUrl."""
    return STD24.fp(scheme_authority(url)) | (STD40.fp(url) >> 24)


def _scheme_authority_lengths(
    units: np.ndarray, starts: np.ndarray, lengths: np.ndarray
) -> np.ndarray:
    """:func:`scheme_authority`'s length (in units) for each string laid end to end in units."""
    ends = starts + lengths
    cut = ends.copy()  # no '://', or no '/' after it: the whole URL
    slashes = np.flatnonzero(units == _SLASH)
    # Every "://" of the chunk: a ':' before two adjacent '/'. One may straddle two strings;
    # the test against the string's end below drops it.
    pairs = slashes[:-1][(slashes[1:] == slashes[:-1] + 1) & (slashes[:-1] > 0)]
    separators = pairs[units[pairs - 1] == _COLON] - 1
    # Each string's first "://" at or after its start (Java's indexOf), if it lies inside it.
    first = np.searchsorted(separators, starts)
    if separators.size:
        candidate = separators[np.minimum(first, separators.size - 1)]
    else:
        candidate = starts
    found = (first < separators.size) & (candidate + 3 <= ends)
    at_start = found & (candidate == starts)
    cut[at_start] = starts[at_start]
    later = found & ~at_start
    # Then the first '/' after the "://" (indexOf('/', index + 3)), if inside the string.
    after = np.searchsorted(slashes, candidate[later] + 3)
    slash = slashes[np.minimum(after, slashes.size - 1)]
    inside = (after < slashes.size) & (slash < ends[later])
    cut[np.flatnonzero(later)[inside]] = slash[inside]
    return cut - starts


def _gather_segments(units: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """units[starts[i] : starts[i] + lengths[i]] for every i, concatenated."""
    filled = np.flatnonzero(lengths)
    filled_starts, filled_lengths = starts[filled], lengths[filled]
    total = int(filled_lengths.sum())
    # Positions count up by one, jumping to the next segment's start at each segment boundary.
    step = np.ones(total, dtype=np.int64)
    first = np.cumsum(filled_lengths) - filled_lengths
    previous_last = np.concatenate(([0], (filled_starts + filled_lengths - 1)[:-1]))
    step[first] = filled_starts - previous_last
    return units[np.cumsum(step)]


def _create_keys_of_chunk(urls: list[str], scratch: Scratch) -> np.ndarray:
    units, lengths = utf16_units(urls)
    starts = np.cumsum(lengths) - lengths
    prefix_lengths = _scheme_authority_lengths(units, starts, lengths)
    prefixes = _gather_segments(units, starts, prefix_lengths)
    host_part = STD24.fold(prefixes, prefix_lengths, scratch)
    return host_part | (STD40.fold(units, lengths, scratch) >> np.uint64(24))


if java_keys is not None:
    create_keys = java_keys.create_keys
elif np is None:
    def create_keys(urls: Iterable[str]) -> list[int]:
        """:func:`create_key` of each URL, one by one (no numpy)."""
        return [create_key(url) for url in urls]
else:
    def create_keys(urls: Iterable[str]) -> np.ndarray:
        """:func:`create_key` of each URL, as a numpy uint64 array, computed in batches."""
        return _in_chunks(_create_keys_of_chunk, urls)


def _in_chunks(compute, texts: Iterable[str]) -> np.ndarray:
    """compute(chunk, scratch) over chunks of CHUNK strings, concatenated.

    The work arrays of a chunk (a few bytes to 8 per code unit) then stay in the processor's
    cache, and are reused from chunk to chunk; one pass over a million URLs at once is
    several times slower.
    """
    texts = texts if isinstance(texts, list) else list(texts)
    scratch = Scratch()
    if len(texts) <= CHUNK:
        return compute(texts, scratch)
    chunks = range(0, len(texts), CHUNK)
    return np.concatenate([compute(texts[i : i + CHUNK], scratch) for i in chunks])
