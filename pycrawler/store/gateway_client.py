"""A served environment (``pycrawler serve``) with the store layer's API, through py4j.

:class:`RemoteEnvironment` stands where an :class:`~pycrawler.store.Environment` does; its
databases and transactions are the ordinary :class:`~pycrawler.store.Database` and
:class:`~pycrawler.store.Transaction`, driven through :class:`RemoteAccess`. Every batch goes
over the socket as one framed byte string (:func:`~pycrawler.store.packing.frame`), one
round trip each; single-record calls are one round trip each, so hot paths use the batches.
"""

from __future__ import annotations

import base64
import contextlib

import numpy as np

from ..errors import PycrawlerError
from . import gateway_address
from .access import DUPLICATES, Census
from .environment_base import EnvironmentBase
from .packing import frame, unframe


class GatewayGone(PycrawlerError):
    """The gateway could not be reached, refused this client, or went away mid-call."""


@contextlib.contextmanager
def gateway_errors(where: str):
    """Run a block of py4j calls, turning Java and network errors into one-line errors."""
    from py4j.protocol import Py4JError, Py4JJavaError, Py4JNetworkError

    from .java_errors import translate

    try:
        yield
    except Py4JJavaError as exc:
        raise translate(exc.java_exception, where) from None
    except Py4JNetworkError as exc:
        raise GatewayGone(f"{where}: the gateway went away ({_cause(exc)})") from None
    except Py4JError as exc:
        raise GatewayGone(f"{where}: {_cause(exc)}") from None


def _cause(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _bytes(answer: str) -> bytes:
    """An answer's bytes: the server sends them as base64 text (``Served.answer`` says why)."""
    return base64.b64decode(answer)


def _flags(answer: str) -> np.ndarray:
    return np.frombuffer(_bytes(answer), dtype=np.uint8).astype(bool)


class RemoteAccess:
    """The JE of a served environment: handles are numbers the server hands out."""

    local = False

    def __init__(self, served):
        self._served = served

    errors = staticmethod(gateway_errors)

    def je_version(self) -> str:
        return str(self._served.jeVersion())

    def stored_key_prefixing(self, names: list[str]) -> dict[str, bool]:
        return {name: bool(self._served.keyPrefixing(name)) for name in names}

    def open_database(self, name: str, *, create: bool, read_only: bool, transactional: bool,
                      sorted_duplicates: bool | None, key_prefixing: bool):
        return self._served.openDatabase(name, create, read_only, DUPLICATES[sorted_duplicates], key_prefixing)

    def sorted_duplicates(self, db) -> bool:
        return bool(self._served.sortedDuplicates(db))

    def close_database(self, db) -> None:
        self._served.closeDatabase(db)

    def count(self, db) -> int:
        return int(self._served.count(db))

    def begin(self):
        return self._served.begin()

    def commit(self, txn) -> None:
        self._served.commit(txn)

    def abort(self, txn) -> None:
        self._served.abort(txn)

    # One record is a batch of one: one round trip either way.
    def get(self, db, txn, key: bytes) -> bytes | None:
        values, found = self.get_many(db, txn, _one(key))
        return values[0] if found[0] else None

    def put(self, db, txn, key: bytes, value: bytes) -> None:
        self.put_many(db, txn, _one(key), _one(value))

    def put_if_absent(self, db, txn, key: bytes, value: bytes) -> bool:
        return bool(self.put_if_absent_many(db, txn, _one(key), _one(value))[0])

    def delete(self, db, txn, key: bytes) -> bool:
        return bool(self.delete_many(db, txn, _one(key))[0])

    def put_many(self, db, txn, keys, values) -> int:
        return int(self._served.put(db, txn or 0, frame(keys, values)))

    def put_if_absent_many(self, db, txn, keys, values) -> np.ndarray:
        if values is None:
            return _flags(self._served.addKeys(db, txn or 0, frame(keys)))
        return _flags(self._served.putNoOverwrite(db, txn or 0, frame(keys, values)))

    def contains_many(self, db, txn, keys) -> np.ndarray:
        return _flags(self._served.contains(db, txn or 0, frame(keys)))

    def delete_many(self, db, txn, keys) -> np.ndarray:
        return _flags(self._served.delete(db, txn or 0, frame(keys)))

    def get_many(self, db, txn, keys) -> tuple[list[bytes], np.ndarray]:
        values, found = unframe(_bytes(self._served.get(db, txn or 0, frame(keys))), 2)
        return values, np.frombuffer(found[0], dtype=np.uint8).astype(bool)

    def delete_range(self, db, txn, start: bytes | None, stop: bytes | None) -> int:
        return int(self._served.deleteRange(db, txn or 0, start, stop))

    def scan(self, db, txn, position, resume_value, inclusive, bound, reverse, records, max_bytes, keys_only):
        keys, values = unframe(_bytes(self._served.scan(db, txn or 0, position, resume_value, inclusive, bound, reverse,
                                                        records, max_bytes, keys_only)), 2)
        return keys, values

    def census(self, db) -> Census:
        prefixes, numbers = unframe(_bytes(self._served.census(db)), 2)
        figures = np.frombuffer(numbers[0], dtype=">i8").tolist()
        return Census(prefixes, figures[:-2], figures[-2], figures[-1])


def _one(record: bytes) -> tuple[bytes, np.ndarray]:
    return bytes(record), np.array([0, len(record)], dtype=np.int32)


class RemoteEnvironment(EnvironmentBase):
    """The environment served at ``address`` (``py4j://HOST:PORT``), with the methods of
    :class:`~pycrawler.store.Environment`. ``token``: py4j's auth token; by default the one the
    server wrote for this address (:mod:`~pycrawler.store.gateway_address`). ``read_only``
    opens databases read-only (the server keeps the environment writable for others); an
    environment served read-only (``pycrawler serve --read-only``) is read-only whatever it says."""

    def __init__(self, address: str, *, token: str | None = None, read_only: bool = False):
        from py4j.java_gateway import GatewayParameters, JavaGateway
        from py4j.protocol import Py4JAuthenticationError, Py4JNetworkError

        host, port = gateway_address.parse(address)
        facts = gateway_address.read(address) if token is None else {"token": token}
        self.path = address
        self.read_only = read_only
        self.home = facts.get("home")
        self.log_version = facts.get("log_version")
        self._databases: list = []
        params = GatewayParameters(address=host, port=port, auth_token=facts["token"], auto_field=False,
                                   auto_convert=False, eager_load=False)
        self._gateway = JavaGateway(gateway_parameters=params)
        try:
            served = self._gateway.entry_point
            self.transactional = bool(served.transactional())
            self.read_only = read_only or bool(served.readOnly())
        except Py4JAuthenticationError:
            self._gateway.close()
            raise GatewayGone(f"{address} refused the connection: wrong token, or a peer address it does not "
                              "accept (its log says which)") from None
        except Py4JNetworkError as exc:
            self._gateway.close()
            raise GatewayGone(f"{address}: no gateway answers there ({_cause(exc)})") from None
        self.access = RemoteAccess(served)
        self._served = served

    def database_names(self) -> list[str]:
        with gateway_errors(self.path):
            return [name.decode() for name in unframe(_bytes(self._open_handle().databaseNames()), 1)[0]]

    def remove_database(self, name: str) -> None:
        with gateway_errors(f"{self.path} database {name!r}"):
            self._open_handle().removeDatabase(name)

    def sync(self) -> None:
        with gateway_errors(self.path):
            self._open_handle().sync()

    def _handle(self):
        return self._served

    def close(self) -> None:
        """Close this client's databases and connections (the server and its environment stay)."""
        if self._served is None:
            return
        try:
            for db in self._databases:
                with contextlib.suppress(PycrawlerError):
                    db.close()
        finally:
            self._databases.clear()
            self._served = None
            self._gateway.close()

    def __repr__(self) -> str:
        return f"<RemoteEnvironment {self.path!r} {'closed' if self.closed else 'open'}>"
