"""JE's tuple format (``com.sleepycat.bind.tuple``, JE 3.3), byte for byte, in pure Python.

A tuple is a sequence of fields written one after another with no field names and no
lengths other than the ones each field carries itself. This is what every ``TupleBinding``
of JE writes (``LongBinding``, ``StringBinding``...), so keys and values that Java programs
stored that way decode here without starting the JVM, and what Python writes here Java
reads back with the same bindings.

The formats, as JE 3.3.98's ``TupleOutput`` writes them:

========================  ======================================================================
field kind                bytes
========================  ======================================================================
``string``                JE's UTF: each UTF-16 code unit on its own (so a character outside
                          the BMP is two 3-byte surrogates), U+0000 as ``C0 80``, then ``00``;
                          ``None`` (Java null) is ``FF 00``
``long`` / ``int`` /      big-endian two's complement with the sign bit flipped (8/4/2/1
``short`` / ``byte``      bytes), so unsigned byte order is numeric order
``char``                  the UTF-16 code unit, 2 bytes big-endian
``boolean``               ``01`` or ``00``
``float`` / ``double``    IEEE bits big-endian; every NaN is written as Java's canonical NaN
``sorted_float`` /        IEEE bits with the sign bit flipped (positive) or all bits flipped
``sorted_double``         (negative), so byte order is numeric order
``packed_int`` /          JE's ``PackedInteger``: -119..119 in one byte, otherwise a length
``packed_long``           byte (120+n or -(119+n)) and n little-endian bytes of the magnitude
``big_integer``           length of Java's ``toByteArray()`` as a ``short`` (negated for a
                          negative number), its first byte as a ``byte``, the rest raw
``unsigned_byte`` /       plain big-endian, 1/2/4 bytes
``unsigned_short`` /
``unsigned_int``
========================  ======================================================================

Reading follows JE's ``TupleInput``: its UTF decoder accepts the overlong forms Java's does,
and a ``read_*`` that runs off the end raises :class:`TupleFormatError` (Java's
``IndexOutOfBoundsException``). Java's ``char`` is a UTF-16 code unit; in Python a string is
handed over as its UTF-16 code units (``surrogatepass``), so a lone surrogate survives both
ways and a surrogate pair read back becomes one character.

Use :class:`TupleOutput` / :class:`TupleInput` for records of several fields (their
``write_*`` methods return the output, so calls chain like Java's), :class:`TupleFormat` for a
fixed list of field kinds, and :func:`encode_field` / :func:`decode_field` for one value.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Sequence
from operator import index

from ..errors import BadInput


class TupleFormatError(BadInput, ValueError):
    """A value does not fit its tuple field, or bytes are not a valid tuple field."""


NULL_STRING = b"\xff\x00"
"""How ``TupleOutput.writeString(null)`` stores Java's null string."""

_SIGN8, _SIGN16, _SIGN32, _SIGN64 = 1 << 7, 1 << 15, 1 << 31, 1 << 63
_U8, _U16, _U32, _U64 = (struct.Struct(f">{c}") for c in "BHIQ")
_F32, _F64 = struct.Struct(">f"), struct.Struct(">d")
_NAN_FLOAT = _U32.pack(0x7FC00000)  # Float.floatToIntBits(NaN), whatever the NaN's payload
_NAN_DOUBLE = _U64.pack(0x7FF8000000000000)  # Double.doubleToLongBits(NaN)
_INF_FLOAT = {False: _F32.pack(math.inf), True: _F32.pack(-math.inf)}
_PACKED_SMALL = 119  # PackedInteger stores -119..119 in its single length byte

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_SPLIT = re.compile("([\ud800-\udfff])")


# -- JE's UTF (com.sleepycat.util.UtfOps) ------------------------------------------------------

def _as_surrogate_pair(match: re.Match) -> str:
    offset = ord(match.group()) - 0x10000
    return chr(0xD800 | offset >> 10) + chr(0xDC00 | offset & 0x3FF)


if "\ud83d\ude00".encode("utf-8", "surrogatepass") == b"\xed\xa0\xbd\xed\xb8\x80":
    def _each_unit_utf8(text: str) -> bytes:
        """UTF-8 of each code point, a surrogate alone as 3 bytes (``surrogatepass``), like Java."""
        return text.encode("utf-8", "surrogatepass")
else:
    def _each_unit_utf8(text: str) -> bytes:
        """As above, where ``surrogatepass`` joins a high and a low surrogate into one 4-byte
        sequence (GraalPy, whose strings are Java's): each surrogate is encoded alone."""
        return b"".join(part.encode("utf-8", "surrogatepass") for part in _SURROGATE_SPLIT.split(text) if part)


def java_utf(text: str) -> bytes:
    """``text`` in JE's UTF encoding, without the terminating zero.

    Each UTF-16 code unit is encoded on its own (1..3 bytes; U+0000 as ``C0 80``), which
    for every BMP character is plain UTF-8 and for others is CESU-8.
    """
    if text.isascii():
        data = text.encode("ascii")
    else:
        if _ASTRAL.search(text):
            text = _ASTRAL.sub(_as_surrogate_pair, text)
        data = _each_unit_utf8(text)
    return data.replace(b"\x00", b"\xc0\x80") if b"\x00" in data else data


def _code_units_to_str(units: bytes) -> str:
    """UTF-16BE code units to a str: pairs join into one character, lone surrogates stay."""
    return units.decode("utf-16-be", "surrogatepass")


def java_utf_decode(data: bytes) -> str:
    """Decode JE's UTF (no terminator) as ``UtfOps.bytesToString`` does, including the
    overlong forms it tolerates; raises :class:`TupleFormatError` where Java throws."""
    if data.isascii():
        return data.decode("ascii")
    if max(data) < 0xF0:  # Python's UTF-8 would accept 4-byte forms, which Java rejects
        try:
            # Python's strict UTF-8 is a subset of Java's grammar with the same meaning,
            # once Java's two-byte NUL is folded back; anything else takes the exact path.
            text = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            pass
        else:
            if _SURROGATE.search(text):
                text = _code_units_to_str(text.encode("utf-16-be", "surrogatepass"))
            return text
    return _code_units_to_str(_java_utf_units(data))


def _java_utf_units(data: bytes) -> bytes:
    """UtfOps.bytesToChars, lead byte by lead byte, as UTF-16BE code units."""
    units = bytearray()
    pos, end = 0, len(data)
    while pos < end:
        lead = data[pos]
        kind = lead >> 4
        if kind < 8:
            unit, width = lead, 1
        elif kind in (12, 13) and pos + 1 < end and data[pos + 1] & 0xC0 == 0x80:
            unit, width = (lead & 0x1F) << 6 | data[pos + 1] & 0x3F, 2
        elif (kind == 14 and pos + 2 < end and data[pos + 1] & 0xC0 == 0x80
              and data[pos + 2] & 0xC0 == 0x80):
            unit, width = (lead & 0x0F) << 12 | (data[pos + 1] & 0x3F) << 6 | data[pos + 2] & 0x3F, 3
        else:
            raise TupleFormatError(f"invalid JE UTF byte sequence at offset {pos}: {data[pos:pos + 3].hex()}")
        units += _U16.pack(unit)
        pos += width
    return bytes(units)


# -- helpers shared by the writers --------------------------------------------------------------

def _fixed_writer(codec: struct.Struct, bias: int, kind: str):
    """A ``TupleOutput.write_<kind>`` storing ``value + bias`` unsigned big-endian in
    ``codec.size`` bytes (a bias of 2**(bits-1) is Java's flipped sign bit)."""
    pack = codec.pack
    low, high = -bias, (1 << codec.size * 8) - 1 - bias

    def write(self: TupleOutput, value: int) -> TupleOutput:
        try:
            self._buf += pack(index(value) + bias)
        except (struct.error, TypeError):
            raise TupleFormatError(f"{kind} field needs an integer in [{low}, {high}], got {value!r}") from None
        return self

    write.__name__ = write.__qualname__ = f"write_{kind}"
    return write


def _fixed_reader(codec: struct.Struct, bias: int, kind: str):
    """The ``TupleInput.read_<kind>`` matching :func:`_fixed_writer` (bias 0: the value as
    ``codec`` unpacks it)."""
    unpack_from, size = codec.unpack_from, codec.size

    def read(self: TupleInput):
        try:
            value = unpack_from(self._data, self._pos)[0]
        except struct.error:
            raise self._truncated(kind, size) from None
        self._pos += size
        return value - bias if bias else value

    read.__name__ = read.__qualname__ = f"read_{kind}"
    return read


def _float_bytes(value: float) -> bytes:
    """Float.floatToIntBits((float) value), big-endian: NaN canonical, overflow to infinity."""
    if value != value:
        return _NAN_FLOAT
    try:
        return _F32.pack(value)
    except OverflowError:  # Java's (float) rounds a too-large double to infinity
        return _INF_FLOAT[value < 0]
    except (struct.error, TypeError):
        raise TupleFormatError(f"float field needs a number, got {value!r}") from None


def _double_bytes(value: float) -> bytes:
    if value != value:
        return _NAN_DOUBLE
    try:
        return _F64.pack(value)
    except (struct.error, TypeError):
        raise TupleFormatError(f"double field needs a number, got {value!r}") from None


def _sortable(bits: int, sign: int) -> int:
    """Java's sorted-float bit twiddle: flip the sign bit of a positive, every bit of a negative."""
    return bits ^ (2 * sign - 1) if bits & sign else bits ^ sign


def _packed(value: int, bits: int, kind: str) -> bytes:
    """PackedInteger.writeInt/writeLong, with Java's wrap-around for the most negative value."""
    limit = 1 << bits - 1
    try:
        fits = -limit <= index(value) < limit
    except TypeError:
        fits = False
    if not fits:
        raise TupleFormatError(f"{kind} field needs an integer in [{-limit}, {limit - 1}], got {value!r}")
    value = index(value)
    if -_PACKED_SMALL <= value <= _PACKED_SMALL:
        return _U8.pack(value & 0xFF)
    negative = value < 0
    magnitude = (-value - _PACKED_SMALL if negative else value - _PACKED_SMALL) & ((1 << bits) - 1)
    width = max(1, (magnitude.bit_length() + 7) // 8)
    lead = -(_PACKED_SMALL + width) & 0xFF if negative else _PACKED_SMALL + width
    return bytes((lead,)) + magnitude.to_bytes(width, "little")


def _java_byte_array(value: int) -> bytes:
    """BigInteger.toByteArray(): the shortest two's complement, big-endian."""
    return value.to_bytes(((~value if value < 0 else value).bit_length() // 8) + 1, "big", signed=True)


class TupleOutput:
    """Builds one tuple, field by field, like JE's ``TupleOutput``.

    >>> TupleOutput().write_string("a").write_long(-1).to_bytes().hex()
    '61007fffffffffffffff'
    """

    __slots__ = ("_buf",)

    def __init__(self) -> None:
        self._buf = bytearray()

    def to_bytes(self) -> bytes:
        return bytes(self._buf)

    def __len__(self) -> int:
        return len(self._buf)

    def write_raw(self, data: bytes) -> TupleOutput:
        """Append bytes as they are (Java's ``write(byte[])``)."""
        self._buf += data
        return self

    def write_string(self, value: str | None) -> TupleOutput:
        """JE's UTF and a terminating zero; None is Java's null string (``FF 00``)."""
        if value is None:
            self._buf += NULL_STRING
            return self
        try:
            self._buf += java_utf(value)
        except AttributeError:
            raise TupleFormatError(f"string field needs a str or None, got {value!r}") from None
        self._buf.append(0)
        return self

    def write_chars(self, value: str) -> TupleOutput:
        """Each UTF-16 code unit as 2 bytes, no terminator (Java's ``writeChars(String)``)."""
        self._buf += value.encode("utf-16-be", "surrogatepass")
        return self

    def write_bytes(self, value: str) -> TupleOutput:
        """The low 8 bits of each UTF-16 code unit, no terminator (Java's ``writeBytes(String)``)."""
        self._buf += value.encode("utf-16-be", "surrogatepass")[1::2]
        return self

    def write_char(self, value: str) -> TupleOutput:
        """One UTF-16 code unit, given as a one-character str (a BMP character or a lone surrogate)."""
        if not isinstance(value, str) or len(value) != 1 or ord(value) > 0xFFFF:
            raise TupleFormatError(f"char field needs one UTF-16 code unit as a str, got {value!r}")
        self._buf += _U16.pack(ord(value))
        return self

    def write_boolean(self, value: bool) -> TupleOutput:
        self._buf.append(1 if value else 0)
        return self

    write_byte = _fixed_writer(_U8, _SIGN8, "byte")
    write_short = _fixed_writer(_U16, _SIGN16, "short")
    write_int = _fixed_writer(_U32, _SIGN32, "int")
    write_long = _fixed_writer(_U64, _SIGN64, "long")
    write_unsigned_byte = _fixed_writer(_U8, 0, "unsigned_byte")
    write_unsigned_short = _fixed_writer(_U16, 0, "unsigned_short")
    write_unsigned_int = _fixed_writer(_U32, 0, "unsigned_int")

    def write_float(self, value: float) -> TupleOutput:
        """``value`` rounded to a 32-bit float, as Java's ``(float)`` cast does."""
        self._buf += _float_bytes(value)
        return self

    def write_double(self, value: float) -> TupleOutput:
        self._buf += _double_bytes(value)
        return self

    def write_sorted_float(self, value: float) -> TupleOutput:
        self._buf += _U32.pack(_sortable(_U32.unpack(_float_bytes(value))[0], _SIGN32))
        return self

    def write_sorted_double(self, value: float) -> TupleOutput:
        self._buf += _U64.pack(_sortable(_U64.unpack(_double_bytes(value))[0], _SIGN64))
        return self

    def write_packed_int(self, value: int) -> TupleOutput:
        self._buf += _packed(value, 32, "packed_int")
        return self

    def write_packed_long(self, value: int) -> TupleOutput:
        self._buf += _packed(value, 64, "packed_long")
        return self

    def write_big_integer(self, value: int) -> TupleOutput:
        try:
            value = index(value)
        except TypeError:
            raise TupleFormatError(f"big_integer field needs an integer, got {value!r}") from None
        magnitude = _java_byte_array(value)
        if len(magnitude) > 0x7FFF:
            raise TupleFormatError("big_integer field holds at most 0x7fff bytes of two's complement")
        self.write_short(-len(magnitude) if value < 0 else len(magnitude))
        self._buf.append(magnitude[0] ^ 0x80)
        self._buf += magnitude[1:]
        return self


class TupleInput:
    """Reads one tuple field by field, like JE's ``TupleInput``.

    >>> TupleInput(bytes.fromhex("61007fffffffffffffff")).read_string()
    'a'
    """

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes, offset: int = 0) -> None:
        self._data = bytes(data)
        self._pos = offset

    @property
    def offset(self) -> int:
        """Where the next field starts."""
        return self._pos

    def available(self) -> int:
        """Bytes not read yet."""
        return len(self._data) - self._pos

    def _truncated(self, kind: str, size: int) -> TupleFormatError:
        return TupleFormatError(f"{kind} field needs {size} bytes at offset {self._pos}, "
                                f"only {len(self._data) - self._pos} left")

    def _take(self, size: int, kind: str) -> int:
        """Advance over a field of ``size`` bytes; returns where it starts."""
        start = self._pos
        if start + size > len(self._data):
            raise self._truncated(kind, size)
        self._pos = start + size
        return start

    def read_raw(self, size: int) -> bytes:
        start = self._take(size, "raw")
        return self._data[start:self._pos]

    def read_string(self) -> str | None:
        data, start = self._data, self._pos
        if data[start:start + 2] == NULL_STRING:
            self._pos = start + 2
            return None
        end = data.find(0, start)
        if end < 0:
            raise TupleFormatError(f"string field at offset {start} has no terminating zero")
        self._pos = end + 1
        return java_utf_decode(data[start:end])

    def read_chars(self, count: int) -> str:
        """``count`` UTF-16 code units of 2 bytes each (Java's ``readChars(int)``)."""
        start = self._take(2 * count, "chars")
        return _code_units_to_str(self._data[start:self._pos])

    def read_bytes(self, count: int) -> str:
        """``count`` bytes, each one character U+0000..U+00FF (Java's ``readBytes(int)``)."""
        start = self._take(count, "bytes")
        return self._data[start:self._pos].decode("latin-1")

    def read_char(self) -> str:
        return chr(_U16.unpack_from(self._data, self._take(2, "char"))[0])

    def read_boolean(self) -> bool:
        return self._data[self._take(1, "boolean")] != 0

    read_byte = _fixed_reader(_U8, _SIGN8, "byte")
    read_short = _fixed_reader(_U16, _SIGN16, "short")
    read_int = _fixed_reader(_U32, _SIGN32, "int")
    read_long = _fixed_reader(_U64, _SIGN64, "long")
    read_unsigned_byte = _fixed_reader(_U8, 0, "unsigned_byte")
    read_unsigned_short = _fixed_reader(_U16, 0, "unsigned_short")
    read_unsigned_int = _fixed_reader(_U32, 0, "unsigned_int")
    read_float = _fixed_reader(_F32, 0, "float")
    read_double = _fixed_reader(_F64, 0, "double")

    def read_sorted_float(self) -> float:
        stored = _U32.unpack_from(self._data, self._take(4, "sorted_float"))[0]
        return _F32.unpack(_U32.pack(_unsortable(stored, _SIGN32)))[0]

    def read_sorted_double(self) -> float:
        stored = _U64.unpack_from(self._data, self._take(8, "sorted_double"))[0]
        return _F64.unpack(_U64.pack(_unsortable(stored, _SIGN64)))[0]

    def _read_packed(self, bits: int, kind: str) -> int:
        """PackedInteger.readInt/readLong: Java reads at most 4/8 magnitude bytes but skips
        as many as the length byte says, and wraps around like Java's int/long."""
        lead = self._data[self._take(1, kind)]
        lead = lead - 256 if lead & 0x80 else lead
        if -_PACKED_SMALL <= lead <= _PACKED_SMALL:
            return lead
        negative = lead < 0
        width = -lead - _PACKED_SMALL if negative else lead - _PACKED_SMALL
        start = self._take(width, kind)
        mask = (1 << bits) - 1
        magnitude = int.from_bytes(self._data[start:start + min(width, bits // 8)], "little")
        value = (-magnitude - _PACKED_SMALL if negative else magnitude + _PACKED_SMALL) & mask
        return value - (1 << bits) if value >> (bits - 1) else value

    def read_packed_int(self) -> int:
        return self._read_packed(32, "packed_int")

    def read_packed_long(self) -> int:
        return self._read_packed(64, "packed_long")

    def read_big_integer(self) -> int:
        length = abs(self.read_short())
        if length == 0:
            raise TupleFormatError(f"big_integer field at offset {self._pos - 2} has length 0")
        first = self.read_byte() & 0xFF
        start = self._take(length - 1, "big_integer")
        return int.from_bytes(bytes((first,)) + self._data[start:self._pos], "big", signed=True)


def _unsortable(stored: int, sign: int) -> int:
    """Undo :func:`_sortable` (a set sign bit marks a number that was positive)."""
    return stored ^ sign if stored & sign else stored ^ (2 * sign - 1)


FIELD_KINDS: dict[str, tuple] = {
    kind: (getattr(TupleOutput, f"write_{kind}"), getattr(TupleInput, f"read_{kind}"))
    for kind in ("string", "long", "int", "short", "byte", "char", "boolean", "float", "double",
                 "sorted_float", "sorted_double", "packed_int", "packed_long", "big_integer",
                 "unsigned_byte", "unsigned_short", "unsigned_int")
}
"""Every self-delimiting field kind: name -> (TupleOutput writer, TupleInput reader)."""


def _field_kind(kind: str) -> tuple:
    try:
        return FIELD_KINDS[kind]
    except KeyError:
        raise BadInput(f"unknown tuple field kind {kind!r} (valid: {', '.join(FIELD_KINDS)})") from None


class TupleFormat:
    """A fixed sequence of field kinds, packed and unpacked in one call.

    >>> fmt = TupleFormat("string", "long", "boolean")
    >>> fmt.unpack(fmt.pack(("a", 7, True)))
    ('a', 7, True)
    """

    __slots__ = ("kinds", "_writers", "_readers")

    def __init__(self, *kinds: str) -> None:
        self.kinds = kinds
        self._writers = tuple(_field_kind(kind)[0] for kind in kinds)
        self._readers = tuple(_field_kind(kind)[1] for kind in kinds)

    def write(self, out: TupleOutput, values: Sequence) -> TupleOutput:
        """Append one value per field kind to ``out``."""
        if len(values) != len(self._writers):
            raise TupleFormatError(f"{len(self.kinds)} fields ({', '.join(self.kinds)}) but {len(values)} values")
        for write, value in zip(self._writers, values):
            write(out, value)
        return out

    def read(self, source: TupleInput) -> tuple:
        """Read one value per field kind from ``source``, leaving it after the last field."""
        return tuple([read(source) for read in self._readers])

    def pack(self, values: Sequence) -> bytes:
        return self.write(TupleOutput(), values).to_bytes()

    def unpack(self, data: bytes) -> tuple:
        """The fields of ``data``, which must hold exactly these fields (Java would ignore
        trailing bytes; here they mean the data is not of this format)."""
        source = TupleInput(data)
        values = self.read(source)
        _no_trailing(source, " + ".join(self.kinds))
        return values

    def __repr__(self) -> str:
        return f"TupleFormat{self.kinds!r}"


def _no_trailing(source: TupleInput, what: str) -> None:
    if source.available():
        raise TupleFormatError(f"{source.available()} bytes left after the {what} field(s) "
                               f"(record of {source.offset + source.available()} bytes)")


def encode_field(kind: str, value) -> bytes:
    """One value as the whole entry, as JE's binding for that kind writes it
    (``encode_field("long", 1)`` equals ``LongBinding.longToEntry(1L, entry)``)."""
    out = TupleOutput()
    _field_kind(kind)[0](out, value)
    return out.to_bytes()


def decode_field(kind: str, data: bytes):
    """The one value of ``kind`` that makes up ``data``; trailing bytes are an error."""
    source = TupleInput(data)
    value = _field_kind(kind)[1](source)
    _no_trailing(source, kind)
    return value
