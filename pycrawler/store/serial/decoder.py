"""The decoder: a ``SerialBinding`` value (or a whole ``ObjectOutputStream``) turned into
plain Python from the class descriptors alone, no Java class of the record ever loaded or
run (see :mod:`pycrawler.store.serial`). The descriptors a value names by class ID come from
a class catalog (:mod:`pycrawler.store.catalog`); what the known classes' ``writeObject``
data mean, from :mod:`.known_classes`."""

from __future__ import annotations

import dataclasses
import struct
from typing import Any

from ...errors import BadInput
from .known_classes import KNOWN_CLASSES
from .modified_utf8 import decode_modified_utf8
from .stream import (BASE_WIRE_HANDLE, MAX_CLASS_ID_BYTES, PRIMITIVES, S8, S16, S32, S64, SC_BLOCK_DATA,
                     SC_EXTERNALIZABLE, SC_SERIALIZABLE, SC_WRITE_METHOD, STREAM_HEADER, TC_ARRAY,
                     TC_BLOCKDATA, TC_BLOCKDATALONG, TC_CLASS, TC_CLASSDESC, TC_ENDBLOCKDATA, TC_ENUM,
                     TC_EXCEPTION, TC_LONGSTRING, TC_NULL, TC_OBJECT, TC_PROXYCLASSDESC, TC_REFERENCE, TC_RESET,
                     TC_STRING, U16, U64, BlockData, CatalogMissing, ClassDesc, FieldDesc, JavaObject,
                     UnresolvedClassDesc, merge_class_data)


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
        size = self.unpack(U64 if long else U16)[0]
        return decode_modified_utf8(self.take(size), self.where)

    @property
    def left(self) -> int:
        return len(self.data) - self.pos


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
        (wire,) = self.input.unpack(S32)
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
            (count,) = self.input.unpack(S32)
            if not 0 <= count <= self.input.left // 2:
                raise self.input.fail(f"a proxy class with {count} interfaces")
            interfaces = tuple(self.input.utf() for _ in range(count))
            desc = ClassDesc(f"$Proxy[{', '.join(interfaces)}]", 0, SC_SERIALIZABLE, interfaces=interfaces)
        elif self.catalog is not None:
            (size,) = self.input.unpack(S8)
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
        suid, flags, count = self.input.unpack(S64)[0], self.input.u8(), self.input.unpack(S16)[0]
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
                size = self.input.u8() if tc == TC_BLOCKDATA else self.input.unpack(S32)[0]
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
            value = merge_class_data(target, slices)
        else:
            try:
                value = known.finish(target, slices)
            except (KeyError, IndexError, TypeError, ValueError, ArithmeticError):
                # Not what the JDK writes for this class: keep the data as a plain object.
                value = merge_class_data(JavaObject(desc.name), slices)
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
        (size,) = self.input.unpack(S32)
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
        """One stored value as plain Python (see :mod:`pycrawler.store.serial`)."""
        return _decode(value, self.catalog, where, self._resolved)

    def decode_record(self, key: bytes, value: bytes) -> tuple[Any, Any]:
        """A record whose key and value are both ``SerialBinding``-bound (the book's layout)."""
        return self.decode(key, "serial key"), self.decode(value, f"serial value of key {bytes(key[:40]).hex()}")
