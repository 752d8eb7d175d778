"""What the known classes' ``writeObject`` data mean: the ``java.util`` collections, boxed
numbers, ``BigInteger``/``BigDecimal``, ``UUID``, dates and timestamps become plain Python
without their code being run. The decoder (:mod:`.decoder`) looks a class up in
:data:`KNOWN_CLASSES`; any other keeps its fields and ``"@data"``."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID

from .stream import EPOCH, S32, S64, BlockData, JavaObject, JavaSet, JavaTimestamp, merge_class_data


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
    merged = merge_class_data(target, slices)
    for name in ("sm", "nm", "m", "ss", "ns", "s", "list", "c"):
        if name in merged:
            return merged[name]
    return merged


def _value_field(convert=lambda v: v):
    return _Known(lambda target, slices: convert(merge_class_data(target, slices)["value"]))


def _date_millis(slices: dict) -> int | None:
    data = slices.get("java.util.Date", {}).get("@data") or []
    if data and isinstance(data[0], BlockData) and len(data[0]) >= 8:
        return S64.unpack_from(data[0])[0]
    return None


def _date(target: JavaObject, slices: dict):
    millis = _date_millis(slices)
    try:
        return EPOCH + timedelta(milliseconds=millis)
    except (TypeError, ArithmeticError):  # no time in the data, or beyond datetime's years 1-9999
        return merge_class_data(target, slices)


def _timestamp(target: JavaObject, slices: dict):
    millis = _date_millis(slices)
    nanos = slices.get("java.sql.Timestamp", {}).get("nanos")
    try:
        # Java keeps whole seconds in Date's time and the fraction in nanos.
        return JavaTimestamp(millis // 1000, nanos)
    except (TypeError, ArithmeticError, ValueError):
        return merge_class_data(target, slices)


def _big_integer(target: JavaObject, slices: dict):
    fields = merge_class_data(target, slices)
    magnitude, signum = fields.get("magnitude"), fields.get("signum")
    if not isinstance(magnitude, bytes) or signum not in (-1, 0, 1):
        return fields
    return signum * int.from_bytes(magnitude, "big")


def _big_decimal(target: JavaObject, slices: dict):
    fields = merge_class_data(target, slices)
    if not isinstance(fields.get("intVal"), int) or not isinstance(fields.get("scale"), int):
        return fields
    return Decimal(fields["intVal"]).scaleb(-fields["scale"])


def _string_builder(target: JavaObject, slices: dict):
    fields = merge_class_data(target, slices)
    chars = fields.get("value") or next((x for x in _objects(fields) if isinstance(x, list)), None)
    count = fields.get("count")
    if count is None:
        block = next((x for x in fields.get("@data", ()) if isinstance(x, BlockData)), b"")
        count = S32.unpack_from(block)[0] if len(block) >= 4 else len(chars or ())
    return "".join(chars[:count]) if isinstance(chars, list) else fields


def _singleton_map(target: JavaObject, slices: dict) -> dict:
    fields = merge_class_data(target, slices)
    return {_hashable(fields["k"]): fields["v"]}


def _uuid(target: JavaObject, slices: dict) -> UUID:
    fields = merge_class_data(target, slices)
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
    return merge_class_data(target, slices)


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
        "java.util.Collections$SingletonList": _Known(lambda t, s: [merge_class_data(t, s)["element"]]),
        "java.util.Collections$SingletonSet": _Known(lambda t, s: JavaSet([_hashable(merge_class_data(t, s)["element"])])),
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
