"""The encoder: the few shapes pycrawler writes for Java programs to read with
``SerialBinding``: ``String`` values, and objects of a flat class whose fields are
primitives, ``String``, ``java.util.Date``, ``java.sql.Timestamp`` or ``String[]``
(:func:`java_class` describes such a class exactly as ``java.io.ObjectStreamClass`` does).
With a class catalog (:mod:`pycrawler.store.catalog`), descriptors are registered in it and
written as IDs, as ``StoredClassCatalog`` does."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from ...errors import BadInput
from .modified_utf8 import encode_modified_utf8
from .stream import (BASE_WIRE_HANDLE, EPOCH, PRIMITIVES, S8, S16, S32, S64, SC_SERIALIZABLE, SC_WRITE_METHOD,
                     STREAM_HEADER, TC_ARRAY, TC_BLOCKDATA, TC_CLASSDESC, TC_ENDBLOCKDATA, TC_LONGSTRING, TC_NULL,
                     TC_OBJECT, TC_REFERENCE, TC_STRING, U16, U64, ClassDesc, FieldDesc, JavaTimestamp)

_PRIMITIVE_CODE = {java: code for code, (_, java) in PRIMITIVES.items()}


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


def _java_order(name: str) -> bytes:
    """Sort key equal to Java's ``String.compareTo`` (UTF-16 code units)."""
    return name.encode("utf-16-be", "surrogatepass")


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
        self.out += U16.pack(len(raw)) + raw

    def string(self, text: str, shared: bool = False) -> None:
        """A String object; ``shared`` reuses an equal one already written, as Java does for
        the interned type names of a descriptor."""
        if shared and text in self.string_handles:
            self.out += bytes([TC_REFERENCE]) + S32.pack(self.string_handles[text])
            return
        raw = encode_modified_utf8(text)
        if len(raw) <= 0xFFFF:
            self.out += bytes([TC_STRING]) + U16.pack(len(raw)) + raw
        else:
            self.out += bytes([TC_LONGSTRING]) + U64.pack(len(raw)) + raw
        self.string_handles.setdefault(text, self.new_handle())

    def class_desc(self, desc: ClassDesc | None) -> None:
        if desc is None:
            self.out.append(TC_NULL)
            return
        if desc.name in self.desc_handles:
            self.out += bytes([TC_REFERENCE]) + S32.pack(self.desc_handles[desc.name])
            return
        self.out.append(TC_CLASSDESC)
        self.desc_handles[desc.name] = self.new_handle()
        if self.catalog is not None:
            class_id = self.catalog.register(desc)
            self.out += S8.pack(len(class_id)) + class_id
        else:
            self.utf(desc.name)
            self.out += S64.pack(desc.serial_version_uid) + bytes([desc.flags]) + S16.pack(len(desc.fields))
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
            self.out += S32.pack(len(value))
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
            moment = moment.replace(tzinfo=timezone.utc)
        micros = (moment - EPOCH) // timedelta(microseconds=1)
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
        self.out += bytes([TC_BLOCKDATA, 8]) + S64.pack(millis) + bytes([TC_ENDBLOCKDATA])
        if timestamp:
            self.out += S32.pack(nanos)


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
