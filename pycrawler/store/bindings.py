"""Named bindings: how a key or value of a JE database turns into a Python value and back.

A binding is a pair of functions ``encode(value) -> bytes`` and ``decode(bytes) -> value``
under a name the command line and :class:`~pycrawler.store.mapping.SortedMap` accept
(``store dump --key string --value long``). The tuple bindings write exactly what the JE
class named in :attr:`Binding.java_class` writes, so a database filled by Java through
``StringBinding`` / ``LongBinding`` / ... reads here with ``string`` / ``long`` / ..., and the
reverse.

Decoding is strict where Java is lenient: an entry must be exactly one value, since a
``LongBinding`` entry with 16 bytes is more likely another format than a long (Java would
read the first 8 bytes and ignore the rest).

Other modules add bindings (a serial binding, say) with :func:`register_binding`. Tools
that do not know a database's bindings guess: :func:`fixed_width_integer` reads the 4- and
8-byte entries that are not text as the integers they most likely are.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..errors import BadInput
from .tuple import decode_field, encode_field


@dataclass(frozen=True)
class Binding:
    """How one kind of entry is encoded and decoded."""

    name: str
    encode: Callable[[Any], bytes]
    decode: Callable[[bytes], Any]
    description: str
    java_class: str | None = None
    """The Java binding that reads and writes the same bytes, where there is one."""

    def __repr__(self) -> str:
        return f"<Binding {self.name}>"


_REGISTRY: dict[str, Binding] = {}


def register_binding(binding: Binding, *, replace: bool = False) -> Binding:
    """Make ``binding`` available under its name; a second binding of the same name is an
    error unless ``replace``."""
    if binding.name in _REGISTRY and not replace:
        raise ValueError(f"a binding named {binding.name!r} is already registered")
    _REGISTRY[binding.name] = binding
    return binding


def binding_names() -> list[str]:
    return list(_REGISTRY)


def get_binding(name: str | Binding) -> Binding:
    """The binding called ``name`` (a :class:`Binding` is returned as it is)."""
    if isinstance(name, Binding):
        return name
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise BadInput(f"unknown binding {name!r} (valid: {', '.join(_REGISTRY)})") from None


def _raw_bytes(value) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise BadInput(f"the bytes binding needs bytes, got {value!r}")
    return bytes(value)


def _from_hex(text: str) -> bytes:
    try:
        return bytes.fromhex(text)
    except (ValueError, TypeError):
        raise BadInput(f"the hex binding needs a string of hex digits, got {text!r}") from None


register_binding(Binding("bytes", _raw_bytes, bytes, "the entry's bytes as they are"))
register_binding(Binding("hex", _from_hex, bytes.hex, "the entry's bytes as a hex string"))

_TUPLE_BINDINGS = (
    ("string", "StringBinding", "a str (None: Java null) in JE's UTF, zero-terminated"),
    ("long", "LongBinding", "a 64-bit signed integer, big-endian, sign bit flipped"),
    ("int", "IntegerBinding", "a 32-bit signed integer, big-endian, sign bit flipped"),
    ("short", "ShortBinding", "a 16-bit signed integer, big-endian, sign bit flipped"),
    ("byte", "ByteBinding", "an 8-bit signed integer, sign bit flipped"),
    ("char", "CharacterBinding", "one UTF-16 code unit (a one-character str), big-endian"),
    ("boolean", "BooleanBinding", "a bool as one byte, 1 or 0"),
    ("float", "FloatBinding", "a 32-bit IEEE float, raw bits big-endian (not sortable)"),
    ("double", "DoubleBinding", "a 64-bit IEEE double, raw bits big-endian (not sortable)"),
    ("sorted_float", "SortedFloatBinding", "a 32-bit IEEE float whose bytes sort numerically"),
    ("sorted_double", "SortedDoubleBinding", "a 64-bit IEEE double whose bytes sort numerically"),
    ("big_integer", "BigIntegerBinding", "an integer of any size, as JE's TupleOutput.writeBigInteger"),
    ("packed_int", None, "a 32-bit signed integer in 1..5 bytes (TupleOutput.writePackedInt)"),
    ("packed_long", None, "a 64-bit signed integer in 1..9 bytes (TupleOutput.writePackedLong)"),
)


def _tuple_binding(kind: str, java_class: str | None, description: str) -> Binding:
    return Binding(kind, partial(encode_field, kind), partial(decode_field, kind), description,
                   java_class and f"com.sleepycat.bind.tuple.{java_class}")


for _row in _TUPLE_BINDINGS:
    register_binding(_tuple_binding(*_row))


def fixed_width_integer(data: bytes) -> int | None:
    """The integer that 4 or 8 bytes which are not text most likely hold; None for other
    bytes, and for text (printable UTF-8, as ``"abcd"``).

    Two writers of such integers are common: JE's ``IntegerBinding`` / ``LongBinding``
    (big-endian, sign bit flipped, so that keys sort numerically) and Java's
    ``DataOutput.writeInt`` / ``writeLong`` (plain big-endian; crawler4j's document IDs and
    counters). Stored integers are mostly small (IDs, counts), so the reading of smaller
    magnitude wins: ``80 00 00 01`` is 1 (``IntegerBinding``), and so is ``00 00 00 01``.
    """
    if len(data) not in (4, 8) or _printable_text(data):
        return None
    plain = int.from_bytes(data, "big", signed=True)
    flipped = int.from_bytes(bytes([data[0] ^ 0x80]) + data[1:], "big", signed=True)
    return min(plain, flipped, key=abs)


def _printable_text(data: bytes) -> bool:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(char.isprintable() or char in "\t\n\r" for char in text)
