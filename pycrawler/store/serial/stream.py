"""What a Java serialization stream holds: the protocol's constants (``java.io.ObjectStreamConstants``),
class descriptors, and the Python values its objects decode to (:class:`JavaObject`,
:class:`JavaSet`, :class:`BlockData`, :class:`JavaTimestamp`). The decoder
(:mod:`.decoder`), the known classes' meanings (:mod:`.known_classes`) and the encoder
(:mod:`.encoder`) all speak in these terms."""

from __future__ import annotations

import dataclasses
import functools
import struct
from collections.abc import Iterable, Mapping, MutableSet
from datetime import datetime, timedelta, timezone
from typing import Any

from ...errors import BadInput

# -- the stream protocol's constants (java.io.ObjectStreamConstants) ------------------------
STREAM_HEADER = b"\xac\xed\x00\x05"
TC_NULL, TC_REFERENCE, TC_CLASSDESC, TC_OBJECT, TC_STRING, TC_ARRAY, TC_CLASS = range(0x70, 0x77)
TC_BLOCKDATA, TC_ENDBLOCKDATA, TC_RESET, TC_BLOCKDATALONG, TC_EXCEPTION = range(0x77, 0x7C)
TC_LONGSTRING, TC_PROXYCLASSDESC, TC_ENUM = range(0x7C, 0x7F)
BASE_WIRE_HANDLE = 0x7E0000
MAX_CLASS_ID_BYTES = 8
"""``StoredClassCatalog`` numbers classes from 1 (``BigInteger.toByteArray``): a longer ID
would be more than 2**63 classes, so such bytes are something else."""
SC_WRITE_METHOD, SC_SERIALIZABLE, SC_EXTERNALIZABLE, SC_BLOCK_DATA, SC_ENUM = 0x01, 0x02, 0x04, 0x08, 0x10

# Field type codes of primitives -> (struct code, Java name).
PRIMITIVES = {"B": ("b", "byte"), "C": ("H", "char"), "D": ("d", "double"), "F": ("f", "float"),
              "I": ("i", "int"), "J": ("q", "long"), "S": ("h", "short"), "Z": ("?", "boolean")}

# The stream's numbers, big-endian as DataOutput writes them.
S8, U16, S16, S32, S64, U64 = (struct.Struct(f) for f in (">b", ">H", ">h", ">i", ">q", ">Q"))
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


# -- the model --------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class FieldDesc:
    """One serializable field of a class descriptor: its type code (``I``, ``L``, ``[`` ...),
    name, and for object fields the JVM type signature (``Ljava/lang/String;``)."""

    typecode: str
    name: str
    signature: str | None = None

    @property
    def primitive(self) -> bool:
        return self.typecode in PRIMITIVES


@dataclasses.dataclass(frozen=True, eq=False)
class ClassDesc:
    """A class descriptor (``java.io.ObjectStreamClass``): what a stream says of a class.

    ``fields`` are in stream order (primitives first, then by name); ``superclass`` is the
    descriptor of the nearest serializable superclass, or None. A dynamic proxy class has
    ``interfaces`` instead of a name the JVM would know.
    """

    name: str
    serial_version_uid: int
    flags: int
    fields: tuple[FieldDesc, ...] = ()
    superclass: ClassDesc | None = None
    interfaces: tuple[str, ...] | None = None

    def hierarchy(self) -> list[ClassDesc]:
        """This descriptor and its superclasses', the topmost first (the order of class data)."""
        chain, desc = [], self
        while desc is not None:
            chain.append(desc)
            desc = desc.superclass
        return chain[::-1]

    @functools.cached_property
    def field_layout(self):
        return _field_layout(self.fields)

    def same_format(self, other: ClassDesc) -> bool:
        return (self.name, self.serial_version_uid, self.flags, self.fields, self.interfaces) == \
            (other.name, other.serial_version_uid, other.flags, other.fields, other.interfaces)


@dataclasses.dataclass(frozen=True, eq=False)
class UnresolvedClassDesc(ClassDesc):
    """A class descriptor a stream names by a class ID its environment has no catalog for.
    The stream's structure reads on past it (bytes that only look serialized fail there);
    the values of its objects cannot be read, and decoding them raises ``missing``."""

    missing: BadInput | None = None


class CatalogMissing(BadInput):
    """A ``SerialBinding`` value names a class, and its environment has no class catalog."""


class JavaObject(dict):
    """A Java object decoded without its class: field name -> value, and ``"@class"``.

    A field a superclass declares under the same name as a subclass's is kept as
    ``"<superclass>.<name>"``; so is the ``"@data"`` a superclass's ``writeObject`` wrote when
    a subclass wrote some too. Which class an ``"@data"`` entry belongs to thus depends on
    the rest of the hierarchy: code that needs one class's data asks :meth:`written_by`.
    Hashing is by identity, as for a Java object that does not override ``hashCode``, so
    decoded objects can be set members and map keys.
    """

    __hash__ = object.__hash__

    def __init__(self, class_name: str, fields: Mapping[str, Any] = ()):
        super().__init__({"@class": class_name})
        self.update(fields)
        self._written: dict[str, list] = {}

    @property
    def class_name(self) -> str:
        return self["@class"]

    def written_by(self, class_name: str) -> list | None:
        """What ``class_name``'s own ``writeObject`` (or ``writeExternal``) wrote after its
        fields, or None when that class of the object's hierarchy wrote nothing of its own."""
        return self._written.get(class_name)


class JavaSet(MutableSet):
    """A decoded Java set (``HashSet``, ``TreeSet``, ``Set.of``...): a set, iterated in the order
    the stream holds its elements, which is the order the Java set iterated them in when it was
    written. A Python set would iterate in an order that follows ``PYTHONHASHSEED``, and so would
    every output made from it. Hashed by its elements, as Java's ``AbstractSet.hashCode`` is, so
    that a set can be a map key or a member of another set as it can in Java."""

    __slots__ = ("_elements",)

    def __init__(self, elements: Iterable = ()):
        self._elements = dict.fromkeys(elements)

    def __contains__(self, element) -> bool:
        return element in self._elements

    def __iter__(self):
        return iter(self._elements)

    def __len__(self) -> int:
        return len(self._elements)

    def add(self, element) -> None:
        self._elements[element] = None

    def discard(self, element) -> None:
        self._elements.pop(element, None)

    __hash__ = MutableSet._hash

    def __repr__(self) -> str:
        return f"JavaSet({list(self._elements)!r})"


class BlockData(bytes):
    """Primitive data a ``writeObject``/``writeExternal`` method wrote (kept raw: without the
    class's code nobody knows what the bytes mean)."""


class JavaTimestamp(datetime):
    """A ``java.sql.Timestamp``: an aware UTC datetime that also keeps Java's ``nanos``
    (0..999,999,999; a datetime holds microseconds only). ``isoformat()`` shows all nine
    digits when the nanoseconds need them."""

    nanos: int

    def __new__(cls, seconds: int, nanos: int):
        moment = EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
        self = super().__new__(cls, moment.year, moment.month, moment.day, moment.hour, moment.minute,
                               moment.second, moment.microsecond, timezone.utc)
        self.nanos = nanos
        return self

    def __reduce_ex__(self, protocol):
        return (JavaTimestamp, ((self - EPOCH) // timedelta(seconds=1), self.nanos))

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        if timespec != "auto" or self.nanos % 1000 == 0:
            return super().isoformat(sep, timespec)
        text = super().isoformat(sep, "seconds")
        return f"{text[:19]}.{self.nanos:09d}{text[19:]}"

    def __str__(self) -> str:
        return self.isoformat(" ")


def _field_layout(fields: tuple[FieldDesc, ...]):
    """How a class's field values lie in the stream: one struct for the primitives (all of
    them first), their names, the names of the chars among them, then the object fields'
    names; None when a primitive follows an object field (Java refuses that descriptor too)."""
    prims = [f for f in fields if f.primitive]
    if any(f.primitive for f in fields[len(prims):]):
        return None
    return (struct.Struct(">" + "".join(PRIMITIVES[f.typecode][0] for f in prims)), [f.name for f in prims],
            [f.name for f in prims if f.typecode == "C"], [f.name for f in fields[len(prims):]])


def merge_class_data(target: JavaObject, slices: dict[str, dict]) -> JavaObject:
    """``target`` filled with the values of each class of its hierarchy (``slices``: class name ->
    field values, topmost class first); a name a subclass declares again keeps the superclass's value as ``"<superclass>.<name>"``. Each class's ``"@data"`` is also kept
    under its class's name (:meth:`JavaObject.written_by`)."""
    owner: dict[str, str] = {}
    for class_name, values in slices.items():
        for name, value in values.items():
            if name in owner:
                target[f"{owner[name]}.{name}"] = target.pop(name)
            target[name] = value
            owner[name] = class_name
        if "@data" in values:
            target._written[class_name] = values["@data"]
    return target
