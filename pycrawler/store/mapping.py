"""A JE database as a typed, sorted ``MutableMapping``: Python's face of ``StoredSortedMap``.

``SortedMap(db, "string", "long")`` reads and writes exactly the records that Java's
``new StoredSortedMap(db, new StringBinding(), new LongBinding(), true)`` reads and writes:
each key and value is one tuple-bound value (see :mod:`~pycrawler.store.bindings`), and the
map's order is JE's order, the unsigned byte order of the encoded keys. That order is numeric
for ``long``/``int``/``sorted_double``... (their sign bit is flipped) and, for ``string``, the
order of JE's UTF bytes (code-unit order, except that U+0000 sorts after U+007F).

Iteration, ``items()``, ``values()``, ``len()`` of a sub-map and ``clear()`` run as batched
scans in Java; ``update()`` writes through ``Database.put_many`` in batches. A sub-map view
(:meth:`SortedMap.sub_map`, :meth:`~SortedMap.head_map`, :meth:`~SortedMap.tail_map`) shares
the database and sees only its key range; writing a key outside it is an error, as in Java.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, MutableMapping, ValuesView
from itertools import chain, islice

from ..errors import BadInput
from .bindings import Binding, get_binding
from .tuple import TupleFormatError

UPDATE_BATCH = 10_000
"""Records per ``put_many`` call of :meth:`SortedMap.update` (one JNI crossing and one
transaction each)."""


def _just_after(key: bytes) -> bytes:
    """The smallest byte string greater than ``key`` in JE's order."""
    return key + b"\x00"


class SortedMap(MutableMapping):
    """A JE database seen as a sorted mapping through a key binding and a value binding.

    ``key_binding`` / ``value_binding``: a :class:`~pycrawler.store.bindings.Binding` or its
    name. ``txn``: a :class:`~pycrawler.store.Transaction` every operation runs in (by
    default each write, or each batch of :meth:`update`, commits on its own).
    """

    def __init__(self, db, key_binding: str | Binding, value_binding: str | Binding, *, txn=None,
                 _bounds: tuple[bytes | None, bytes | None] = (None, None)) -> None:
        self.db = db
        self.key_binding = get_binding(key_binding)
        self.value_binding = get_binding(value_binding)
        self.txn = txn
        self._lower, self._upper = _bounds  # encoded keys: lower <= key < upper; None: open

    # -- encoding ----------------------------------------------------------------------------
    def _in_range(self, key: bytes) -> bool:
        return (self._lower is None or key >= self._lower) and (self._upper is None or key < self._upper)

    def _key_bytes(self, key) -> bytes:
        return self.key_binding.encode(key)

    def _key_for_write(self, key) -> bytes:
        encoded = self._key_bytes(key)
        if not self._in_range(encoded):
            raise BadInput(f"key {key!r} is outside the key range of this view of {self.db.name!r}")
        return encoded

    def _decode(self, binding: Binding, data: bytes, role: str, key: bytes):
        try:
            return binding.decode(data)
        except TupleFormatError as exc:
            raise TupleFormatError(f"{self.db.name!r}: the {role} of key {key.hex()} is not a "
                                   f"{binding.name}: {exc}") from None

    def _scan(self, *, reverse: bool = False, keys_only: bool = False, page_records: int | None = None):
        if self._lower is not None and self._upper is not None and self._lower >= self._upper:
            return iter(())
        extra = {} if page_records is None else {"page_records": page_records}
        return self.db.items(self._lower, self._upper, reverse=reverse, keys_only=keys_only, txn=self.txn, **extra)

    def _keys(self, reverse: bool = False) -> Iterator:
        for key, _ in self._scan(reverse=reverse, keys_only=True):
            yield self._decode(self.key_binding, key, "key", key)

    def _values(self, reverse: bool = False) -> Iterator:
        for key, value in self._scan(reverse=reverse):
            yield self._decode(self.value_binding, value, "value", key)

    def _items(self, reverse: bool = False) -> Iterator[tuple]:
        for key, value in self._scan(reverse=reverse):
            yield (self._decode(self.key_binding, key, "key", key),
                   self._decode(self.value_binding, value, "value", key))

    # -- Mapping -----------------------------------------------------------------------------
    def __getitem__(self, key):
        encoded = self._key_bytes(key)
        value = self.db.get(encoded, txn=self.txn) if self._in_range(encoded) else None
        if value is None:
            raise KeyError(key)
        return self._decode(self.value_binding, value, "value", encoded)

    def __contains__(self, key) -> bool:
        encoded = self._key_bytes(key)
        return self._in_range(encoded) and self.db.get(encoded, txn=self.txn) is not None

    def __setitem__(self, key, value) -> None:
        self.db.put(self._key_for_write(key), self.value_binding.encode(value), txn=self.txn)

    def __delitem__(self, key) -> None:
        encoded = self._key_bytes(key)
        if not (self._in_range(encoded) and self.db.delete(encoded, txn=self.txn)):
            raise KeyError(key)

    def __iter__(self) -> Iterator:
        return self._keys()

    def __reversed__(self) -> Iterator:
        return self._keys(reverse=True)

    def __len__(self) -> int:
        if self._lower is None and self._upper is None:
            return self.db.count()
        return sum(1 for _ in self._scan(keys_only=True))

    def keys(self) -> SortedKeysView:
        return SortedKeysView(self)

    def values(self) -> SortedValuesView:
        return SortedValuesView(self)

    def items(self) -> SortedItemsView:
        return SortedItemsView(self)

    # -- batched writes ----------------------------------------------------------------------
    def update(self, other: Mapping | Iterable[tuple] = (), /, **kwargs) -> None:
        """Write every pair of ``other`` (a mapping or (key, value) pairs) and ``kwargs``,
        ``UPDATE_BATCH`` records per JNI crossing."""
        pairs = other.items() if isinstance(other, Mapping) else other
        records = ((self._key_for_write(k), self.value_binding.encode(v))
                   for k, v in chain(pairs, kwargs.items()))
        while batch := list(islice(records, UPDATE_BATCH)):
            keys, values = zip(*batch)
            self.db.put_many(list(keys), list(values), txn=self.txn)

    def clear(self) -> None:
        """Delete every record of this view's range in one batched call."""
        if self._lower is not None and self._upper is not None and self._lower >= self._upper:
            return
        self.db.delete_range(self._lower, self._upper, txn=self.txn)

    # -- sorted views --------------------------------------------------------------------------
    def first_key(self):
        """The smallest key (KeyError when the view is empty), like Java's ``firstKey()``."""
        return self._end_key(reverse=False)

    def last_key(self):
        """The largest key (KeyError when the view is empty), like Java's ``lastKey()``."""
        return self._end_key(reverse=True)

    def _end_key(self, reverse: bool):
        for key, _ in self._scan(reverse=reverse, keys_only=True, page_records=1):
            return self._decode(self.key_binding, key, "key", key)
        raise KeyError(f"{'last' if reverse else 'first'} key of an empty map")

    def sub_map(self, from_key, to_key, *, from_inclusive: bool = True, to_inclusive: bool = False) -> SortedMap:
        """The view of keys from ``from_key`` to ``to_key`` (Java's ``subMap``); by default
        ``from_key`` is in and ``to_key`` is out, like Java's and Python's ranges."""
        return self._view(self._bound(from_key, from_inclusive, lower=True),
                          self._bound(to_key, to_inclusive, lower=False))

    def head_map(self, to_key, *, inclusive: bool = False) -> SortedMap:
        """The view of keys below ``to_key`` (and ``to_key`` itself when ``inclusive``)."""
        return self._view(None, self._bound(to_key, inclusive, lower=False))

    def tail_map(self, from_key, *, inclusive: bool = True) -> SortedMap:
        """The view of keys from ``from_key`` on (without it unless ``inclusive``)."""
        return self._view(self._bound(from_key, inclusive, lower=True), None)

    def _bound(self, key, inclusive: bool, *, lower: bool) -> bytes:
        encoded = self._key_bytes(key)
        return encoded if inclusive == lower else _just_after(encoded)

    def _view(self, lower: bytes | None, upper: bytes | None) -> SortedMap:
        """A view on the intersection of this view's range and [lower, upper)."""
        if self._lower is not None:
            lower = self._lower if lower is None else max(lower, self._lower)
        if self._upper is not None:
            upper = self._upper if upper is None else min(upper, self._upper)
        return SortedMap(self.db, self.key_binding, self.value_binding, txn=self.txn, _bounds=(lower, upper))

    def __repr__(self) -> str:
        bounds = "" if self._lower is None and self._upper is None else \
            f" range [{'' if self._lower is None else self._lower.hex()}, " \
            f"{'' if self._upper is None else self._upper.hex()})"
        return (f"<SortedMap {self.key_binding.name}->{self.value_binding.name} "
                f"on {self.db.name!r}{bounds}>")


class SortedKeysView(KeysView):
    """Keys in JE order; ``reversed()`` scans backwards in Java."""

    def __reversed__(self) -> Iterator:
        return self._mapping._keys(reverse=True)


class SortedValuesView(ValuesView):
    """Values in key order from one batched scan (not one lookup per key)."""

    def __iter__(self) -> Iterator:
        return self._mapping._values()

    def __reversed__(self) -> Iterator:
        return self._mapping._values(reverse=True)


class SortedItemsView(ItemsView):
    """(key, value) pairs in key order from one batched scan (not one lookup per key)."""

    def __iter__(self) -> Iterator[tuple]:
        return self._mapping._items()

    def __reversed__(self) -> Iterator[tuple]:
        return self._mapping._items(reverse=True)
