"""Java serialization as JE's ``SerialBinding`` stores it, read and written in pure Python.

``com.sleepycat.bind.serial.SerialBinding`` writes a value with ``ObjectOutputStream``
(stream protocol version 2, the java.io "Object Serialization Stream Protocol") with two
changes, both undone here:

* the 4-byte stream header (``AC ED 00 05``) is dropped from every stored value;
* a class descriptor is not written inline: after ``TC_CLASSDESC`` comes one byte (the
  length of the class ID) and the class ID, then the usual end of the (empty) class
  annotations and the superclass descriptor. The ID names a record of the class catalog
  (:mod:`pycrawler.store.catalog`), which holds the descriptor as an ordinary stream.

The decoder turns a value into plain Python *from the descriptors alone*: no Java class of
the record is ever loaded or run, so values from other people's stores are safe to read.
Objects become :class:`JavaObject` (a dict of field name -> value with an ``"@class"``
entry), arrays lists (``byte[]`` bytes), strings ``str``, boxed primitives numbers, enums
their constant's name, ``java.util.Date`` an aware UTC ``datetime`` and
``java.sql.Timestamp`` a :class:`JavaTimestamp` (which keeps the nanoseconds). The common
``java.util`` collections become lists, dicts and sets (:class:`JavaSet`, in the stream's
order), decoded from what their ``writeObject`` methods write. Whatever else a ``writeObject`` method wrote stays under the
key ``"@data"``: a list of :class:`BlockData` (its primitive writes) and decoded objects.

The encoder writes the few shapes pycrawler needs to create stores that Java programs
read with ``SerialBinding``: ``String`` values, and objects of a flat class whose fields
are primitives, ``String``, ``java.util.Date``, ``java.sql.Timestamp`` or ``String[]``
(:func:`java_class` describes such a class exactly as ``java.io.ObjectStreamClass`` does).
"""

from __future__ import annotations

import dataclasses
import functools
import re
import struct
from collections.abc import Callable, Iterable, Mapping, MutableSet, Sequence
from datetime import datetime, timedelta, UTC
from decimal import Decimal
from typing import Any
from uuid import UUID

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
_PRIMITIVE_CODE = {java: code for code, (_, java) in PRIMITIVES.items()}
_S8, _U16, _S16, _S32, _S64, _U64 = (struct.Struct(f) for f in (">b", ">H", ">h", ">i", ">q", ">Q"))
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


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
        moment = _EPOCH + timedelta(seconds=seconds, microseconds=nanos // 1000)
        self = super().__new__(cls, moment.year, moment.month, moment.day, moment.hour, moment.minute,
                               moment.second, moment.microsecond, UTC)
        self.nanos = nanos
        return self

    def __reduce_ex__(self, protocol):
        return (JavaTimestamp, ((self - _EPOCH) // timedelta(seconds=1), self.nanos))

    def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
        if timespec != "auto" or self.nanos % 1000 == 0:
            return super().isoformat(sep, timespec)
        text = super().isoformat(sep, "seconds")
        return f"{text[:19]}.{self.nanos:09d}{text[19:]}"

    def __str__(self) -> str:
        return self.isoformat(" ")


# -- modified UTF-8 (DataOutput.writeUTF; JE's UtfOps writes the same bytes) -------------------
_SURROGATES = re.compile("[\ud800-\udfff]")
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def decode_modified_utf8(raw: bytes, where: str = "string") -> str:
    if raw.isascii():
        return raw.decode("ascii")
    try:
        text = raw.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise BadInput(f"{where}: not modified UTF-8 ({exc.reason} at byte {exc.start})") from None
    if _SURROGATES.search(text):
        # Java writes a supplementary character as its two UTF-16 surrogates: pair them up.
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return text


def encode_modified_utf8(text: str) -> bytes:
    if text.isascii() and "\x00" not in text:
        return text.encode("ascii")
    units = _ASTRAL.sub(lambda m: _surrogate_pair(m.group()), text)
    return units.encode("utf-8", "surrogatepass").replace(b"\x00", b"\xc0\x80")


def _surrogate_pair(char: str) -> str:
    code = ord(char) - 0x10000
    return chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF))


def _java_order(name: str) -> bytes:
    """Sort key equal to Java's ``String.compareTo`` (UTF-16 code units)."""
    return name.encode("utf-16-be", "surrogatepass")


# -- decoding ---------------------------------------------------------------------------------
class _Input:
    """Bytes with a read position; running off the end is a BadInput, never an IndexError."""

    __slots__ = ("data", "pos", "where")

    def __init__(self, data: bytes, where: str):
        self.data, self.pos, self.where = bytes(data), 0, where

    def fail(self, message: str) -> BadInput:
        return BadInput(f"{self.where}: {message} (at byte {self.pos} of {len(self.data)})")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"truncated: needs {n} bytes, {len(self.data) - self.pos} left")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def unpack(self, fmt: struct.Struct):
        if self.pos + fmt.size > len(self.data):
            raise self.fail(f"truncated: needs {fmt.size} bytes, {len(self.data) - self.pos} left")
        values = fmt.unpack_from(self.data, self.pos)
        self.pos += fmt.size
        return values

    def u8(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("truncated: the stream ends where more was expected")
        self.pos += 1
        return self.data[self.pos - 1]

    def peek(self) -> int:
        if self.pos >= len(self.data):
            raise self.fail("truncated: the stream ends where more was expected")
        return self.data[self.pos]

    def utf(self, long: bool = False) -> str:
        size = self.unpack(_U64 if long else _U16)[0]
        return decode_modified_utf8(self.take(size), self.where)

    @property
    def left(self) -> int:
        return len(self.data) - self.pos


def _field_layout(fields: tuple[FieldDesc, ...]):
    """How a class's field values lie in the stream: one struct for the primitives (all of
    them first), their names, the names of the chars among them, then the object fields'
    names; None when a primitive follows an object field (Java refuses that descriptor too)."""
    prims = [f for f in fields if f.primitive]
    if any(f.primitive for f in fields[len(prims):]):
        return None
    return (struct.Struct(">" + "".join(PRIMITIVES[f.typecode][0] for f in prims)), [f.name for f in prims],
            [f.name for f in prims if f.typecode == "C"], [f.name for f in fields[len(prims):]])


class _Reader:
    """One stream being decoded: its position, its handle table and the class catalog."""

    def __init__(self, data: bytes, catalog, where: str, resolved: dict | None = None):
        self.input = _Input(data, where)
        self.catalog = catalog
        self.handles: list = []
        # (catalog descriptor, superclass descriptor) -> the two joined, shared across values
        self.resolved = {} if resolved is None else resolved
        # Why a class of the stream is unknown (no catalog), raised once the stream reads whole.
        self.missing: CatalogMissing | None = None

    # handles -------------------------------------------------------------------------
    def assign(self, value) -> int:
        self.handles.append(value)
        return len(self.handles) - 1

    def reference(self):
        (wire,) = self.input.unpack(_S32)
        index = wire - BASE_WIRE_HANDLE
        if not 0 <= index < len(self.handles):
            raise self.input.fail(f"reference 0x{wire & 0xFFFFFFFF:08x} to an object not yet read")
        return self.handles[index]

    # contents ------------------------------------------------------------------------
    def content(self):
        """One object (or class descriptor) of the stream, as Python."""
        tc = self.input.u8()
        while tc == TC_RESET:
            self.handles.clear()
            tc = self.input.u8()
        if tc == TC_NULL:
            return None
        if tc == TC_REFERENCE:
            return self.reference()
        if tc in (TC_STRING, TC_LONGSTRING):
            text = self.input.utf(long=tc == TC_LONGSTRING)
            self.assign(text)
            return text
        if tc == TC_OBJECT:
            return self.ordinary_object()
        if tc == TC_ARRAY:
            return self.array()
        if tc == TC_ENUM:
            return self.enum_constant()
        if tc == TC_CLASS:
            value = JavaObject("java.lang.Class", {"name": self.class_desc(required=True).name})
            self.assign(value)
            return value
        if tc in (TC_CLASSDESC, TC_PROXYCLASSDESC):
            return self.new_class_desc(tc)
        if tc == TC_EXCEPTION:
            self.handles.clear()
            failure = self.content()
            name = failure.get("@class", "?") if isinstance(failure, dict) else type(failure).__name__
            raise self.input.fail(f"the writer failed while writing this value ({name})")
        if tc in (TC_BLOCKDATA, TC_BLOCKDATALONG, TC_ENDBLOCKDATA):
            raise self.input.fail(f"block data (0x{tc:02x}) where an object was expected")
        raise self.input.fail(f"unknown type code 0x{tc:02x}: not a Java serialization stream")

    def class_desc(self, required: bool = False) -> ClassDesc | None:
        tc = self.input.u8()
        if tc == TC_NULL:
            desc = None
        elif tc == TC_REFERENCE:
            desc = self.reference()
        elif tc in (TC_CLASSDESC, TC_PROXYCLASSDESC):
            desc = self.new_class_desc(tc)
        else:
            raise self.input.fail(f"type code 0x{tc:02x} where a class descriptor was expected")
        if desc is not None and not isinstance(desc, ClassDesc):
            raise self.input.fail("a reference to a non-class where a class descriptor was expected")
        if desc is None and required:
            raise self.input.fail("a null class descriptor")
        return desc

    def new_class_desc(self, tc: int) -> ClassDesc:
        handle = self.assign(None)
        if tc == TC_PROXYCLASSDESC:
            # Dynamic proxies' descriptors are always inline (no catalog hook exists for them).
            (count,) = self.input.unpack(_S32)
            if not 0 <= count <= self.input.left // 2:
                raise self.input.fail(f"a proxy class with {count} interfaces")
            interfaces = tuple(self.input.utf() for _ in range(count))
            desc = ClassDesc(f"$Proxy[{', '.join(interfaces)}]", 0, SC_SERIALIZABLE, interfaces=interfaces)
        elif self.catalog is not None:
            (size,) = self.input.unpack(_S8)
            if not 1 <= size <= MAX_CLASS_ID_BYTES:
                raise self.input.fail(f"a class ID of {size} bytes")
            class_id = self.input.take(size)
            try:
                desc = self.catalog.descriptor(class_id)
            except CatalogMissing as missing:
                self.missing = missing
                desc = UnresolvedClassDesc(f"(class ID {class_id.hex()})", 0, 0, missing=missing)
        else:
            desc = self.inline_class_desc()
        self.handles[handle] = desc
        self.annotations()  # a class annotation (none, from a plain ObjectOutputStream) is skipped
        superclass = self.class_desc()
        joined = self.resolved.get((desc, superclass))
        if joined is None:
            joined = self.resolved[desc, superclass] = dataclasses.replace(desc, superclass=superclass)
        self.handles[handle] = joined
        return joined

    def inline_class_desc(self) -> ClassDesc:
        name = self.input.utf()
        suid, flags, count = self.input.unpack(_S64)[0], self.input.u8(), self.input.unpack(_S16)[0]
        if count < 0:
            raise self.input.fail(f"class {name} claims {count} fields")
        fields = []
        for _ in range(count):
            code = chr(self.input.u8())
            fname = self.input.utf()
            if code in PRIMITIVES:
                fields.append(FieldDesc(code, fname))
            elif code in "L[":
                signature = self.content()
                if not isinstance(signature, str):
                    raise self.input.fail(f"field {name}.{fname} has no type name")
                fields.append(FieldDesc(code, fname, signature))
            else:
                raise self.input.fail(f"field {name}.{fname} has the unknown type code {code!r}")
        return ClassDesc(name, suid, flags, tuple(fields))

    def annotations(self) -> list:
        """Block data and objects up to ``TC_ENDBLOCKDATA``; adjacent blocks are joined (their
        boundaries carry no meaning)."""
        items: list = []
        while True:
            tc = self.input.peek()
            if tc == TC_ENDBLOCKDATA:
                self.input.pos += 1
                return items
            if tc in (TC_BLOCKDATA, TC_BLOCKDATALONG):
                self.input.pos += 1
                size = self.input.u8() if tc == TC_BLOCKDATA else self.input.unpack(_S32)[0]
                chunk = self.input.take(size)
                if items and isinstance(items[-1], BlockData):
                    items[-1] = BlockData(items[-1] + chunk)
                else:
                    items.append(BlockData(chunk))
            else:
                items.append(self.content())

    # objects -------------------------------------------------------------------------
    def ordinary_object(self):
        desc = self.class_desc(required=True)
        known = KNOWN_CLASSES.get(desc.name)
        target = known.container() if known and known.container else JavaObject(desc.name)
        handle = self.assign(target)
        slices = self.class_data(desc)
        if known is None:
            value = _flatten(target, slices)
        else:
            try:
                value = known.finish(target, slices)
            except (KeyError, IndexError, TypeError, ValueError, ArithmeticError):
                # Not what the JDK writes for this class: keep the data as a plain object.
                value = _flatten(JavaObject(desc.name), slices)
        self.handles[handle] = value
        return value

    def class_data(self, desc: ClassDesc) -> dict[str, dict]:
        """Per class of the object, topmost first: its field values, and under ``"@data"``
        what its writeObject method wrote after them."""
        for cls in desc.hierarchy():
            _require_resolved(cls)
        if desc.flags & SC_EXTERNALIZABLE:
            if not desc.flags & SC_BLOCK_DATA:
                raise self.input.fail(f"{desc.name} is Externalizable in protocol version 1, which "
                                      "cannot be read without the class's code")
            return {desc.name: {"@data": self.annotations()}}
        slices = {}
        for cls in desc.hierarchy():
            values = self.field_values(cls)
            if cls.flags & SC_WRITE_METHOD:
                values["@data"] = self.annotations()
            slices[cls.name] = values
        return slices

    def field_values(self, cls: ClassDesc) -> dict:
        layout = cls.field_layout
        if layout is None:
            raise self.input.fail(f"class {cls.name}: a primitive field after an object field")
        prims, prim_names, char_names, object_names = layout
        values = dict(zip(prim_names, self.input.unpack(prims)))
        for name in char_names:
            values[name] = chr(values[name])
        for name in object_names:
            values[name] = self.content()
        return values

    def array(self):
        desc = self.class_desc(required=True)
        _require_resolved(desc)
        (size,) = self.input.unpack(_S32)
        element = desc.name[1:2]
        if not desc.name.startswith("[") or size < 0:
            raise self.input.fail(f"an array of class {desc.name!r} with {size} elements")
        if element == "B":
            value = self.input.take(size)
            self.assign(value)
            return value
        if element in PRIMITIVES:
            code = PRIMITIVES[element][0]
            raw = self.input.take(size * struct.calcsize(code))
            value = list(struct.unpack(f">{size}{code}", raw))
            if element == "C":
                value = [chr(c) for c in value]
            self.assign(value)
            return value
        if size > self.input.left:  # every element takes at least one byte
            raise self.input.fail(f"an array of {size} elements in {self.input.left} bytes")
        value = []
        self.assign(value)
        for _ in range(size):
            value.append(self.content())
        return value

    def enum_constant(self) -> str:
        self.class_desc(required=True)
        handle = self.assign(None)
        name = self.content()
        if not isinstance(name, str):
            raise self.input.fail("an enum constant without a name")
        self.handles[handle] = name
        return name


def _require_resolved(desc: ClassDesc) -> None:
    if isinstance(desc, UnresolvedClassDesc):
        raise desc.missing


def _flatten(target: JavaObject, slices: dict[str, dict]) -> JavaObject:
    """Merge the per-class values into one object; a name a subclass declares again keeps the
    superclass's value as ``"<superclass>.<name>"``. Each class's ``"@data"`` is also kept
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


def _decode(data: bytes, catalog, where: str, resolved: dict | None = None):
    reader = _Reader(data, catalog, where, resolved)
    try:
        value = reader.content()
    except RecursionError:
        raise BadInput(f"{where}: objects nested too deeply to decode") from None
    if reader.input.left:
        raise reader.input.fail(f"{reader.input.left} bytes after the value")
    if reader.missing is not None:
        raise reader.missing
    return value


def decode_stream(data: bytes, where: str = "serialized stream"):
    """Decode a whole ordinary Java serialization stream (header included) holding one object:
    what ``ObjectOutputStream.writeObject`` writes, e.g. a catalog's class descriptor."""
    if data[:4] != STREAM_HEADER:
        raise BadInput(f"{where}: no Java serialization header (starts {bytes(data[:4]).hex() or 'empty'})")
    return _decode(data[4:], None, where)


class _NotSerial:
    def __repr__(self) -> str:
        return "NOT_SERIAL"


NOT_SERIAL = _NotSerial()


class SerialDecoder:
    """Decodes values written by ``SerialBinding`` with a :class:`~pycrawler.store.catalog.ClassCatalog`.

    Calling the decoder (``decoder(data)``) is the guessing form for tools that do not know a
    database's bindings: the decoded value, or :data:`NOT_SERIAL` when the bytes are not a
    value this catalog can decode.
    """

    NOT_SERIAL = NOT_SERIAL

    def __init__(self, catalog):
        self.catalog = catalog
        self._resolved: dict = {}

    def __call__(self, data: bytes):
        try:
            return self.decode(data)
        except BadInput:
            return NOT_SERIAL

    def decode(self, value: bytes, where: str = "serial value"):
        """One stored value as plain Python (see the module's docstring)."""
        return _decode(value, self.catalog, where, self._resolved)

    def decode_record(self, key: bytes, value: bytes) -> tuple[Any, Any]:
        """A record whose key and value are both ``SerialBinding``-bound (the book's layout)."""
        return self.decode(key, "serial key"), self.decode(value, f"serial value of key {bytes(key[:40]).hex()}")


def catalog_decoder(env, name: str | None = None) -> SerialDecoder | None:
    """A decoder through the class catalog database ``name`` of ``env`` (BadInput when it
    holds no catalog); None: through the catalog the environment has, found by its name or
    its content (see :meth:`ClassCatalog.find`), or None when it has none."""
    from ..catalog import ClassCatalog

    catalog = ClassCatalog.find(env) if name is None else ClassCatalog.named(env, name)
    return None if catalog is None else SerialDecoder(catalog)


# -- what the known classes' writeObject data mean -----------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Known:
    """How a class whose code is not run still decodes to plain Python: ``container`` (if any)
    is made before the class data are read, so references back to the object (cycles) get it;
    ``finish(target, slices)`` fills it (or returns the value that replaces the object)."""

    finish: Callable[[Any, dict], Any]
    container: Callable[[], Any] | None = None


def _objects(values: dict | None) -> list:
    return [x for x in (values or {}).get("@data", ()) if not isinstance(x, BlockData)]


def _hashable(value):
    """A decoded value usable as a dict key or set member (lists become tuples)."""
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if type(value) is dict:
        return tuple((k, _hashable(v)) for k, v in value.items())
    return value


def _list_of(owner: str, field: str | None = None):
    def finish(target: list, slices: dict) -> list:
        values = slices.get(owner, {})
        items = (values.get(field) or []) if field else _objects(values)
        count = values.get("elementCount")  # a Vector's array is longer than its contents
        target.extend(items if count is None else items[:count])
        return target
    return _Known(finish, list)


def _map_of(owner: str, null_ends: bool = False):
    def finish(target: dict, slices: dict) -> dict:
        items = _objects(slices.get(owner))
        for key, value in zip(items[0::2], items[1::2]):
            if key is None and null_ends:
                break
            target[_hashable(key)] = value
        return target
    return _Known(finish, dict)


def _set_of(owner: str, skip: int = 0, field: str | None = None):
    def finish(target: JavaSet, slices: dict) -> JavaSet:
        values = slices.get(owner, {})
        items = values.get(field) if field else _objects(values)[skip:]
        target |= map(_hashable, items or ())  # a set backed by a map field: its keys
        return target
    return _Known(finish, JavaSet)


def _wrapped(target: JavaObject, slices: dict):
    """Collections.unmodifiableX / synchronizedX / checkedX: the collection they wrap."""
    merged = _flatten(target, slices)
    for name in ("sm", "nm", "m", "ss", "ns", "s", "list", "c"):
        if name in merged:
            return merged[name]
    return merged


def _value_field(convert=lambda v: v):
    return _Known(lambda target, slices: convert(_flatten(target, slices)["value"]))


def _date_millis(slices: dict) -> int | None:
    data = slices.get("java.util.Date", {}).get("@data") or []
    if data and isinstance(data[0], BlockData) and len(data[0]) >= 8:
        return _S64.unpack_from(data[0])[0]
    return None


def _date(target: JavaObject, slices: dict):
    millis = _date_millis(slices)
    try:
        return _EPOCH + timedelta(milliseconds=millis)
    except (TypeError, ArithmeticError):  # no time in the data, or beyond datetime's years 1-9999
        return _flatten(target, slices)


def _timestamp(target: JavaObject, slices: dict):
    millis = _date_millis(slices)
    nanos = slices.get("java.sql.Timestamp", {}).get("nanos")
    try:
        # Java keeps whole seconds in Date's time and the fraction in nanos.
        return JavaTimestamp(millis // 1000, nanos)
    except (TypeError, ArithmeticError, ValueError):
        return _flatten(target, slices)


def _big_integer(target: JavaObject, slices: dict):
    fields = _flatten(target, slices)
    magnitude, signum = fields.get("magnitude"), fields.get("signum")
    if not isinstance(magnitude, bytes) or signum not in (-1, 0, 1):
        return fields
    return signum * int.from_bytes(magnitude, "big")


def _big_decimal(target: JavaObject, slices: dict):
    fields = _flatten(target, slices)
    if not isinstance(fields.get("intVal"), int) or not isinstance(fields.get("scale"), int):
        return fields
    return Decimal(fields["intVal"]).scaleb(-fields["scale"])


def _string_builder(target: JavaObject, slices: dict):
    fields = _flatten(target, slices)
    chars = fields.get("value") or next((x for x in _objects(fields) if isinstance(x, list)), None)
    count = fields.get("count")
    if count is None:
        block = next((x for x in fields.get("@data", ()) if isinstance(x, BlockData)), b"")
        count = _S32.unpack_from(block)[0] if len(block) >= 4 else len(chars or ())
    return "".join(chars[:count]) if isinstance(chars, list) else fields


def _singleton_map(target: JavaObject, slices: dict) -> dict:
    fields = _flatten(target, slices)
    return {_hashable(fields["k"]): fields["v"]}


def _uuid(target: JavaObject, slices: dict) -> UUID:
    fields = _flatten(target, slices)
    return UUID(int=(fields["mostSigBits"] % 2**64) << 64 | fields["leastSigBits"] % 2**64)


def _immutable_collection(target: JavaObject, slices: dict):
    """java.util.CollSer, the serial form of List.of / Set.of / Map.of."""
    values = slices.get("java.util.CollSer", {})
    items = _objects(values)
    kind = (values.get("tag") or 0) & 0xFF
    if kind == 1:
        return items
    if kind == 2:
        return JavaSet(map(_hashable, items))
    if kind == 3:
        return {_hashable(k): v for k, v in zip(items[0::2], items[1::2])}
    return _flatten(target, slices)


def _known_classes() -> dict[str, _Known]:
    known = {
        "java.util.ArrayList": _list_of("java.util.ArrayList"),
        "java.util.LinkedList": _list_of("java.util.LinkedList"),
        "java.util.ArrayDeque": _list_of("java.util.ArrayDeque"),
        "java.util.PriorityQueue": _list_of("java.util.PriorityQueue"),
        "java.util.concurrent.CopyOnWriteArrayList": _list_of("java.util.concurrent.CopyOnWriteArrayList"),
        "java.util.Vector": _list_of("java.util.Vector", "elementData"),
        "java.util.Stack": _list_of("java.util.Vector", "elementData"),
        "java.util.Arrays$ArrayList": _list_of("java.util.Arrays$ArrayList", "a"),
        "java.util.HashMap": _map_of("java.util.HashMap"),
        "java.util.LinkedHashMap": _map_of("java.util.HashMap"),
        "java.util.TreeMap": _map_of("java.util.TreeMap"),
        "java.util.Hashtable": _map_of("java.util.Hashtable"),
        "java.util.Properties": _map_of("java.util.Hashtable"),
        "java.util.IdentityHashMap": _map_of("java.util.IdentityHashMap"),
        "java.util.EnumMap": _map_of("java.util.EnumMap"),
        "java.util.concurrent.ConcurrentHashMap": _map_of("java.util.concurrent.ConcurrentHashMap", null_ends=True),
        "java.util.concurrent.ConcurrentSkipListMap": _map_of("java.util.concurrent.ConcurrentSkipListMap",
                                                              null_ends=True),
        "java.util.HashSet": _set_of("java.util.HashSet"),
        "java.util.LinkedHashSet": _set_of("java.util.HashSet"),
        "java.util.TreeSet": _set_of("java.util.TreeSet", skip=1),  # after the comparator
        "java.util.concurrent.ConcurrentSkipListSet": _set_of("java.util.concurrent.ConcurrentSkipListSet", field="m"),
        "java.util.concurrent.CopyOnWriteArraySet": _set_of("java.util.concurrent.CopyOnWriteArraySet", field="al"),
        "java.util.EnumSet$SerializationProxy": _set_of("java.util.EnumSet$SerializationProxy", field="elements"),
        "java.util.Collections$EmptyList": _Known(lambda t, s: []),
        "java.util.Collections$EmptySet": _Known(lambda t, s: JavaSet()),
        "java.util.Collections$EmptyMap": _Known(lambda t, s: {}),
        "java.util.Collections$SingletonList": _Known(lambda t, s: [_flatten(t, s)["element"]]),
        "java.util.Collections$SingletonSet": _Known(lambda t, s: JavaSet([_hashable(_flatten(t, s)["element"])])),
        "java.util.Collections$SingletonMap": _Known(_singleton_map),
        "java.util.CollSer": _Known(_immutable_collection),
        "java.lang.Boolean": _value_field(bool),
        "java.lang.Byte": _value_field(), "java.lang.Short": _value_field(),
        "java.lang.Integer": _value_field(), "java.lang.Long": _value_field(),
        "java.lang.Float": _value_field(), "java.lang.Double": _value_field(),
        "java.lang.Character": _value_field(),
        "java.math.BigInteger": _Known(_big_integer),
        "java.math.BigDecimal": _Known(_big_decimal),
        "java.lang.StringBuilder": _Known(_string_builder),
        "java.lang.StringBuffer": _Known(_string_builder),
        "java.util.UUID": _Known(_uuid),
        "java.util.Date": _Known(_date),
        "java.sql.Date": _Known(_date),
        "java.sql.Time": _Known(_date),
        "java.sql.Timestamp": _Known(_timestamp),
    }
    for kind in ("Collection", "List", "RandomAccessList", "Set", "SortedSet", "NavigableSet",
                 "Map", "SortedMap", "NavigableMap"):
        for wrapper in ("Unmodifiable", "Synchronized", "Checked"):
            known[f"java.util.Collections${wrapper}{kind}"] = _Known(_wrapped)
    return known


KNOWN_CLASSES: dict[str, _Known] = _known_classes()


# -- encoding ---------------------------------------------------------------------------------
def type_signature(type_name: str) -> str:
    """The JVM signature of a Java type written as in source: ``int``, ``java.lang.String``,
    ``java.lang.String[]``."""
    dims = 0
    while type_name.endswith("[]"):
        type_name, dims = type_name[:-2], dims + 1
    if type_name in _PRIMITIVE_CODE:
        base = _PRIMITIVE_CODE[type_name]
    elif type_name and "/" not in type_name and not type_name.startswith("["):
        base = "L" + type_name.replace(".", "/") + ";"
    else:
        raise BadInput(f"not a Java type name: {type_name!r}")
    return "[" * dims + base


def java_class(name: str, serial_version_uid: int, fields: Sequence[tuple[str, str]], *,
               flags: int = SC_SERIALIZABLE, superclass: ClassDesc | None = None) -> ClassDesc:
    """The descriptor Java computes for a Serializable class with these fields, given in any
    order as ``(name, type)`` with source-style types (``int``, ``java.sql.Timestamp``,
    ``java.lang.String[]``). Like ``ObjectStreamClass``, it lists primitive fields first, then
    the others, each group by name."""
    described = []
    for field_name, type_name in fields:
        signature = type_signature(type_name)
        described.append(FieldDesc(signature, field_name) if len(signature) == 1
                         else FieldDesc(signature[0], field_name, signature))
    if len({f.name for f in described}) != len(described):
        raise BadInput(f"class {name}: a field name appears twice")
    described.sort(key=lambda f: (not f.primitive, _java_order(f.name)))
    return ClassDesc(name, serial_version_uid, flags, tuple(described), superclass)


# The JDK's descriptors of the classes the encoder writes field values of.
DATE_CLASS = ClassDesc("java.util.Date", 7523967970034938905, SC_SERIALIZABLE | SC_WRITE_METHOD)
TIMESTAMP_CLASS = ClassDesc("java.sql.Timestamp", 2745179027874758501, SC_SERIALIZABLE,
                            (FieldDesc("I", "nanos"),), DATE_CLASS)
STRING_ARRAY_CLASS = ClassDesc("[Ljava.lang.String;", -5921575005990323385, SC_SERIALIZABLE)
_DEFAULTS = {"B": 0, "C": "\x00", "D": 0.0, "F": 0.0, "I": 0, "J": 0, "S": 0, "Z": False}
_RANGES = {"B": 8, "S": 16, "I": 32, "J": 64}


class _Writer:
    """One stream being written. With a catalog, descriptors become catalog IDs (what
    ``SerialOutput`` writes); without one they are written inline (``ObjectOutputStream``)."""

    def __init__(self, catalog=None):
        self.catalog = catalog
        self.out = bytearray()
        self.handles = 0
        self.desc_handles: dict[str, int] = {}
        self.string_handles: dict[str, int] = {}

    def new_handle(self) -> int:
        self.handles += 1
        return BASE_WIRE_HANDLE + self.handles - 1

    def utf(self, text: str) -> None:
        raw = encode_modified_utf8(text)
        if len(raw) > 0xFFFF:
            raise BadInput(f"a name of {len(raw)} bytes (at most 65535)")
        self.out += _U16.pack(len(raw)) + raw

    def string(self, text: str, shared: bool = False) -> None:
        """A String object; ``shared`` reuses an equal one already written, as Java does for
        the interned type names of a descriptor."""
        if shared and text in self.string_handles:
            self.out += bytes([TC_REFERENCE]) + _S32.pack(self.string_handles[text])
            return
        raw = encode_modified_utf8(text)
        if len(raw) <= 0xFFFF:
            self.out += bytes([TC_STRING]) + _U16.pack(len(raw)) + raw
        else:
            self.out += bytes([TC_LONGSTRING]) + _U64.pack(len(raw)) + raw
        self.string_handles.setdefault(text, self.new_handle())

    def class_desc(self, desc: ClassDesc | None) -> None:
        if desc is None:
            self.out.append(TC_NULL)
            return
        if desc.name in self.desc_handles:
            self.out += bytes([TC_REFERENCE]) + _S32.pack(self.desc_handles[desc.name])
            return
        self.out.append(TC_CLASSDESC)
        self.desc_handles[desc.name] = self.new_handle()
        if self.catalog is not None:
            class_id = self.catalog.register(desc)
            self.out += _S8.pack(len(class_id)) + class_id
        else:
            self.utf(desc.name)
            self.out += _S64.pack(desc.serial_version_uid) + bytes([desc.flags]) + _S16.pack(len(desc.fields))
            for field in desc.fields:
                self.out.append(ord(field.typecode))
                self.utf(field.name)
                if not field.primitive:
                    self.string(field.signature, shared=True)
        self.out.append(TC_ENDBLOCKDATA)
        self.class_desc(desc.superclass)

    def object(self, desc: ClassDesc, values: Mapping[str, Any]) -> None:
        unknown = set(values) - {f.name for f in desc.fields} - {"@class"}
        if unknown:
            raise BadInput(f"class {desc.name} has no field {', '.join(sorted(unknown))}")
        if desc.superclass is not None or desc.flags != SC_SERIALIZABLE:
            raise BadInput(f"encoding {desc.name}: only flat Serializable classes without writeObject are supported")
        self.out.append(TC_OBJECT)
        self.class_desc(desc)
        self.new_handle()
        for field in desc.fields:
            value = values.get(field.name)
            if field.primitive:
                self.primitive(desc, field, _DEFAULTS[field.typecode] if value is None else value)
            else:
                self.field_object(desc, field, value)

    def primitive(self, desc: ClassDesc, field: FieldDesc, value) -> None:
        code = field.typecode
        where = f"{desc.name}.{field.name}"
        if code == "Z":
            if not isinstance(value, bool):
                raise BadInput(f"{where} is a boolean, not {value!r}")
        elif code == "C":
            if not (isinstance(value, str) and len(value) == 1 and ord(value) <= 0xFFFF):
                raise BadInput(f"{where} is a char (one UTF-16 unit), not {value!r}")
            value = ord(value)
        elif code in _RANGES:
            bits = _RANGES[code]
            if isinstance(value, bool) or not isinstance(value, int) or not -2**(bits - 1) <= value < 2**(bits - 1):
                raise BadInput(f"{where} is a {bits}-bit integer, not {value!r}")
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            raise BadInput(f"{where} is a {PRIMITIVES[code][1]}, not {value!r}")
        self.out += struct.pack(">" + PRIMITIVES[code][0], value)

    def field_object(self, desc: ClassDesc, field: FieldDesc, value) -> None:
        where = f"{desc.name}.{field.name}"
        if value is None:
            self.out.append(TC_NULL)
        elif field.signature == "Ljava/lang/String;" and isinstance(value, str):
            self.string(value)
        elif field.signature in ("Ljava/util/Date;", "Ljava/sql/Timestamp;") and isinstance(value, datetime):
            self.date(value, timestamp=field.signature == "Ljava/sql/Timestamp;")
        elif field.signature == "[Ljava/lang/String;" and isinstance(value, (list, tuple)) \
                and all(v is None or isinstance(v, str) for v in value):
            self.out.append(TC_ARRAY)
            self.class_desc(STRING_ARRAY_CLASS)
            self.new_handle()
            self.out += _S32.pack(len(value))
            for item in value:
                self.out.append(TC_NULL) if item is None else self.string(item)
        elif field.signature not in ("Ljava/lang/String;", "Ljava/util/Date;", "Ljava/sql/Timestamp;",
                                     "[Ljava/lang/String;"):
            raise BadInput(f"{where}: encoding fields of type {field.signature} is not supported")
        else:
            raise BadInput(f"{where} ({field.signature}) cannot hold {type(value).__name__} {value!r}")

    def date(self, moment: datetime, timestamp: bool) -> None:
        """A java.util.Date (milliseconds) or java.sql.Timestamp (whole seconds + nanos);
        a naive datetime is taken as UTC."""
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        micros = (moment - _EPOCH) // timedelta(microseconds=1)
        self.out.append(TC_OBJECT)
        self.class_desc(TIMESTAMP_CLASS if timestamp else DATE_CLASS)
        self.new_handle()
        if timestamp:
            seconds, fraction = divmod(micros, 1_000_000)
            nanos = moment.nanos if isinstance(moment, JavaTimestamp) else fraction * 1000
            millis = seconds * 1000
        else:
            millis = micros // 1000
        # Date.writeObject: its time as one long of block data.
        self.out += bytes([TC_BLOCKDATA, 8]) + _S64.pack(millis) + bytes([TC_ENDBLOCKDATA])
        if timestamp:
            self.out += _S32.pack(nanos)


def descriptor_bytes(desc: ClassDesc) -> bytes:
    """What ``new ObjectOutputStream(out).writeObject(objectStreamClass)`` writes for ``desc``
    (header, descriptor, its superclasses'): a class catalog's stored format."""
    writer = _Writer()
    writer.class_desc(desc)
    return STREAM_HEADER + bytes(writer.out)


class SerialEncoder:
    """Writes ``SerialBinding`` bytes, registering descriptors in a writable
    :class:`~pycrawler.store.catalog.ClassCatalog` the way Java's ``StoredClassCatalog`` does."""

    def __init__(self, catalog):
        self.catalog = catalog

    def encode_string(self, text: str) -> bytes:
        """A ``SerialBinding<String>`` key or value."""
        writer = _Writer(self.catalog)
        writer.string(text)
        return bytes(writer.out)

    def encode_object(self, desc: ClassDesc, values: Mapping[str, Any]) -> bytes:
        """An instance of ``desc`` (from :func:`java_class`); ``values`` maps field names to
        Python values (missing fields are Java's defaults: 0, false, null). Supported field
        types: primitives, String, java.util.Date, java.sql.Timestamp (datetime, or
        :class:`JavaTimestamp` for nanoseconds), String[] (list of str)."""
        writer = _Writer(self.catalog)
        writer.object(desc, values)
        return bytes(writer.out)
