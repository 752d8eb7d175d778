"""A JE ``StoredClassCatalog`` database, read and written without Java serialization code.

``com.sleepycat.bind.serial.StoredClassCatalog`` keeps the class descriptors that
``SerialBinding`` values refer to by ID, in an ordinary JE database (the book calls it
``java_class_catalog``, Heritrix ``classCatalog``) with three kinds of records:

=================================  ==============================================================
key                                value
=================================  ==============================================================
``00``                             the last class ID handed out (``BigInteger.toByteArray``;
                                   ``00`` in a new catalog, so the first ID is ``01``)
``01`` + class ID                  the class's descriptor: ``ObjectOutputStream.writeObject``
                                   of its ``ObjectStreamClass`` (header and superclasses included)
``02`` + class name (modified      one byte, the ID's length, then the ID: the class's current
UTF-8, as JE's ``UtfOps``)         descriptor
=================================  ==============================================================

A class whose descriptor changes (new fields, say) gets a new ID; old values keep naming
the old one, which is why values are decoded by ID, never by name.
"""

from __future__ import annotations

import contextlib

from ..errors import BadInput
from .serial.decoder import SerialDecoder, decode_stream
from .serial.encoder import descriptor_bytes
from .serial.modified_utf8 import decode_modified_utf8, encode_modified_utf8
from .serial.stream import MAX_CLASS_ID_BYTES, STREAM_HEADER, TC_CLASSDESC, CatalogMissing, ClassDesc

LAST_CLASS_ID_KEY = b"\x00"
CLASS_FORMAT_PREFIX = b"\x01"
CLASS_INFO_PREFIX = b"\x02"
# The names programs give their catalog database: the seed book, then Heritrix. Others
# (classDb, _ClassCatalog, db_catalog.db ...) are found by their content.
CATALOG_DATABASE_NAMES = ("java_class_catalog", "classCatalog")


def next_class_id(last: bytes) -> bytes:
    """The ID after ``last``, as ``new BigInteger(last).add(ONE).toByteArray()``."""
    value = int.from_bytes(last, "big", signed=True) + 1
    return value.to_bytes(value.bit_length() // 8 + 1, "big", signed=True)


def holds_catalog(db) -> bool:
    """Whether ``db``'s records are a ``StoredClassCatalog``'s: a last class ID of a few bytes
    under key ``00``, and a serialized class descriptor under the first ``01`` + ID key. Two
    reads, whatever the database's size."""
    last = db.get(LAST_CLASS_ID_KEY)
    if last is None or not 1 <= len(last) <= MAX_CLASS_ID_BYTES:
        return False
    first = next(db.items(prefix=CLASS_FORMAT_PREFIX, page_records=1), None)
    return first is not None and first[1].startswith(STREAM_HEADER + bytes([TC_CLASSDESC]))


class NoCatalog:
    """The class catalog of an environment that has none (one database moved alone, through
    ``db_dump``/``db_load`` say). ``SerialBinding`` values that name no class (a ``String``,
    a null) decode without one; any other names a class ID, which raises
    :class:`CatalogMissing`."""

    def descriptor(self, class_id: bytes) -> ClassDesc:
        raise CatalogMissing(
            f"a serialized Java object of class ID {bytes(class_id).hex() or '(empty)'}, whose class descriptor "
            "is in a class catalog (a StoredClassCatalog database) this environment does not have")


class ClassCatalog:
    """The class catalog in a :class:`~pycrawler.store.Database`; descriptors are read when
    first needed and cached. Writing (:meth:`register`) needs a writable database."""

    def __init__(self, db):
        self.db = db
        self._formats: dict[bytes, ClassDesc] = {}
        self._registered: dict[str, tuple[ClassDesc, bytes]] = {}

    @classmethod
    def find(cls, env) -> ClassCatalog | None:
        """The environment's class catalog, if it has one: the database the book's code or
        Heritrix names so, else the first whose records are a catalog's (:func:`holds_catalog`),
        whatever its name."""
        names = env.database_names()
        named = [name for name in CATALOG_DATABASE_NAMES if name in names]
        if named:
            return cls(env.open_database(named[0]))
        for name in names:
            db = env.open_database(name)
            if holds_catalog(db):
                return cls(db)
            db.close()
        return None

    @classmethod
    def named(cls, env, name: str) -> ClassCatalog:
        """The catalog in the database ``name``; BadInput when its records are not a catalog's."""
        db = env.open_database(name)
        if not holds_catalog(db):
            db.close()
            raise BadInput(f"{env.path} database {name!r} is not a class catalog (a StoredClassCatalog database "
                           "holds key 00 and class descriptors under keys 01 + class ID)")
        return cls(db)

    @property
    def _where(self) -> str:
        return f"class catalog {getattr(self.db, 'name', '')!r}"

    # -- reading ---------------------------------------------------------------------------
    def descriptor(self, class_id: bytes) -> ClassDesc:
        """The descriptor stored under ``class_id`` (BadInput when there is none)."""
        class_id = bytes(class_id)
        desc = self._formats.get(class_id)
        if desc is None:
            raw = self.db.get(CLASS_FORMAT_PREFIX + class_id)
            if raw is None:
                raise BadInput(f"{self._where} has no class with ID {class_id.hex() or '(empty)'}: "
                               "the value was written with another catalog, or is not serial-bound")
            desc = decode_stream(raw, f"{self._where}, class ID {class_id.hex()}")
            if not isinstance(desc, ClassDesc):
                raise BadInput(f"{self._where}: the record of class ID {class_id.hex()} is not a class descriptor")
            self._formats[class_id] = desc
        return desc

    def class_id(self, name: str) -> bytes | None:
        """The ID of the class's current descriptor, or None if the catalog never saw it."""
        info = self.db.get(CLASS_INFO_PREFIX + encode_modified_utf8(name))
        return None if info is None else self._parse_info(info, name)

    def class_ids(self) -> dict[str, bytes]:
        """Every class name in the catalog -> the ID of its current descriptor."""
        ids = {}
        for key, info in self.db.items(prefix=CLASS_INFO_PREFIX):
            name = decode_modified_utf8(key[1:], self._where)
            ids[name] = self._parse_info(info, name)
        return ids

    def last_class_id(self) -> bytes | None:
        return self.db.get(LAST_CLASS_ID_KEY)

    def _parse_info(self, info: bytes, name) -> bytes:
        if not info or info[0] + 1 != len(info) or info[0] > 127:
            raise BadInput(f"{self._where}: the record of class {name!r} is damaged ({bytes(info[:16]).hex()})")
        return bytes(info[1:])

    # -- writing ---------------------------------------------------------------------------
    def register(self, desc: ClassDesc) -> bytes:
        """The class ID of ``desc``, adding it as ``StoredClassCatalog.getClassID`` would: an
        existing ID when the stored descriptor is byte-for-byte the same, else the next ID
        (the last-ID, descriptor and name records written in one transaction)."""
        cached = self._registered.get(desc.name)
        if cached is not None and cached[0] is desc:
            return cached[1]
        wanted = descriptor_bytes(desc)
        name_key = CLASS_INFO_PREFIX + encode_modified_utf8(desc.name)
        with self._transaction() as txn:
            info = self.db.get(name_key, txn=txn)
            class_id = None if info is None else self._parse_info(info, desc.name)
            if class_id is None or self.db.get(CLASS_FORMAT_PREFIX + class_id, txn=txn) != wanted:
                # A catalog Java opened for writing starts with last ID 00; so does a new one here.
                class_id = next_class_id(self.db.get(LAST_CLASS_ID_KEY, txn=txn) or b"\x00")
                self.db.put(LAST_CLASS_ID_KEY, class_id, txn=txn)
                self.db.put(CLASS_FORMAT_PREFIX + class_id, wanted, txn=txn)
                self.db.put(name_key, bytes([len(class_id)]) + class_id, txn=txn)
        self._registered[desc.name] = (desc, class_id)
        self._formats.pop(class_id, None)
        return class_id

    @contextlib.contextmanager
    def _transaction(self):
        env = getattr(self.db, "env", None)
        if env is not None and env.transactional:
            with env.begin() as txn:
                yield txn
        else:
            yield None


def catalog_decoder(env, name: str | None = None) -> SerialDecoder | None:
    """A decoder through the class catalog database ``name`` of ``env`` (BadInput when it
    holds no catalog); None: through the catalog the environment has, found by its name or
    its content (see :meth:`ClassCatalog.find`), or None when it has none."""
    catalog = ClassCatalog.find(env) if name is None else ClassCatalog.named(env, name)
    return None if catalog is None else SerialDecoder(catalog)
