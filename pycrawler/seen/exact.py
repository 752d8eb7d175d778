"""The exact Visited set on JE, in the manner of Heritrix's ``BdbUriUniqFilter``.

One JE database whose keys are the 8-byte big-endian form of the 64-bit keys, with empty
values; a check+update is JE's put-if-absent (``putNoOverwrite``). It never forgets and never
errs, at the price of a B-tree lookup per key: the baseline DRUM must beat.

Every batch crosses into the JVM once (``Database.put_if_absent_many`` /
``contains_many`` with fixed-width packed keys) and runs in one transaction of its own when
the environment is transactional. Within one batch the first occurrence of a key is new and
later ones are duplicates, because the Java loop inserts in order within that transaction.

``long_binding=True`` stores keys as JE's ``LongBinding`` (big-endian with the sign bit
flipped, the layout of Heritrix's ``alreadySeenUrl``), for keys that are Heritrix's own.
"""

from __future__ import annotations

from ..store.packing import np, pack, pack_fixed, u64_keys
from .protocol import as_keys
from .synchronous import SynchronousVisited

if np is not None:
    SIGN_BIT = np.uint64(1 << 63)


class ExactVisited(SynchronousVisited):
    """A Visited set of 64-bit keys in database ``name`` of a JE environment.

    ``batch`` bounds how many keys go to the JVM (and into one transaction) at a time.
    Closing the table closes its database, not the environment.
    """

    def __init__(self, env, name: str = "visited", *, create: bool = True, read_only: bool | None = None,
                 long_binding: bool = False, batch: int = 100_000):
        self.db = env.open_database(name, create=create, read_only=read_only)
        self.long_binding = long_binding
        self.batch = batch

    if np is None:  # GraalPy: keys are lists of ints, 8 bytes each with int.to_bytes
        def _packed(self, keys: list[int]):
            sign = 1 << 63 if self.long_binding else 0
            return pack([(key ^ sign).to_bytes(8, "big") for key in keys])

        def _per_batch(self, operation, keys, txn=None) -> list[bool]:
            keys = as_keys(keys)
            out = []
            for start in range(0, len(keys), self.batch):
                out += operation(self._packed(keys[start:start + self.batch]), txn=txn)
            return out
    else:
        def _packed(self, keys: np.ndarray):
            if self.long_binding:
                keys = keys ^ SIGN_BIT
            return pack_fixed(u64_keys(keys))

        def _per_batch(self, operation, keys, txn=None) -> np.ndarray:
            keys = as_keys(keys)
            out = np.empty(len(keys), dtype=bool)
            for start in range(0, len(keys), self.batch):
                chunk = keys[start:start + self.batch]
                out[start:start + len(chunk)] = operation(self._packed(chunk), txn=txn)
            return out

    def add_many(self, keys, txn=None) -> np.ndarray:
        """Check+update ``keys`` (True: was new); with ``txn`` (a transaction of this table's
        environment), as part of it, so that the caller's other writes and these commit together."""
        return self._per_batch(self.db.put_if_absent_many, keys, txn)

    def contains_many(self, keys) -> np.ndarray:
        return self._per_batch(self.db.contains_many, keys)

    def joins_transactions_of(self, env) -> bool:
        return self.db.env is env

    def __len__(self) -> int:
        return self.db.count()

    def close(self) -> None:
        self.db.close()

    def __repr__(self) -> str:
        return f"<ExactVisited {self.db.name!r} of {str(self.db.env.path)!r}>"
