"""DRUM's persistent repository: sorted key blocks in JE, merged one bucket per JNI call.

The layout and the merge live in Java (``org.pycrawler.bridge.DrumRepository``); this
module opens the databases, checks that a reopened repository has the shape it was
created with, and keeps the per-bucket merge markers (the generation of the bucket files
last merged, committed in the same JE transaction as the blocks of that merge).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass

import numpy as np

from ... import jvm
from ...errors import BadInput
from ...store.java_errors import je_errors
from .blobs import Blobs

CHECK, UPDATE, CHECK_UPDATE = 0, 1, 2
MARKER = struct.Struct(">q")
CONFIG_KEY = b"config"


@dataclass
class MergeResult:
    found: np.ndarray  # bool per operation, arrival order: the key existed before it
    checked_values: Blobs | None  # stored values of the checks that found their key
    added: int  # keys new to the repository


class Repository:
    """The ``<name>.blocks`` and ``<name>.meta`` databases of a JE environment."""

    def __init__(self, env, name: str, *, key_bytes: int, num_buckets: int, block_keys: int):
        self.env = env
        self.words = -(-key_bytes // 8)
        self._where = f"{env.path} DRUM {name!r}"
        self.blocks = env.open_database(f"{name}.blocks", create=True)
        self.meta = env.open_database(f"{name}.meta", create=True)
        self._check_config({"key_bytes": key_bytes, "num_buckets": num_buckets})
        with je_errors(self._where):
            self.java = jvm.jclass("org.pycrawler.bridge.DrumRepository")(
                env.java, self.blocks.java, self.meta.java, self.words, block_keys)
        self._longs = jvm.long_array
        self._bytes = jvm.byte_array
        self._ints = jvm.int_array

    def _check_config(self, config: dict) -> None:
        stored = self.meta.get(CONFIG_KEY)
        if stored is None:
            self.meta.put(CONFIG_KEY, json.dumps(config, sort_keys=True).encode())
        elif json.loads(stored) != config:
            raise BadInput(f"{self._where} was created with {json.loads(stored)}, not {config}")

    @staticmethod
    def _marker_key(bucket: int) -> bytes:
        return b"merged:%04d" % bucket

    def merged_generation(self, bucket: int) -> int:
        """The last generation of ``bucket``'s files merged into the repository (0: none)."""
        with je_errors(self._where):
            raw = self.java.marker(self._bytes(self._marker_key(bucket)))
        return 0 if raw is None else MARKER.unpack(jvm.to_bytes(raw))[0]

    def merge(self, bucket: int, generation: int, keys: np.ndarray, ops: np.ndarray | int,
              values: Blobs | None, want_values: bool, txn=None) -> MergeResult:
        """Merge one bucket generation's operations (arrival order) and commit its marker; with
        ``txn`` (a transaction of the repository's environment), write both in it instead,
        so they commit with the caller's own writes."""
        words = np.ascontiguousarray(keys, dtype=np.uint64).view(np.int64).ravel()
        uniform = isinstance(ops, int)
        vals = voff = None
        if values is not None and values.nbytes:
            vals = self._bytes(values.payload().tobytes())
            voff = self._ints((values.offsets - values.offsets[0]).astype(np.int32))
        with je_errors(self._where):
            arguments = (self._longs(words), None if uniform else self._bytes(ops.view(np.int8)), ops if uniform else 0,
                         vals, voff, want_values, self._bytes(self._marker_key(bucket)),
                         self._bytes(MARKER.pack(generation)))
            result = self.java.merge(*arguments) if txn is None else self.java.mergeIn(txn.java, *arguments)
        found = np.asarray(result.found).view(np.bool_)
        checked = None
        if want_values:
            packed = result.checkedValues
            checked = Blobs(np.asarray(packed.data).view(np.uint8), np.asarray(packed.offsets))
        return MergeResult(found, checked, int(result.added))

    def timings(self) -> dict[str, int]:
        """Cumulative merge figures from the Java side (``DrumRepository.Timing``): nanoseconds
        sorting, reading blocks, merging, writing blocks and committing; blocks read and
        written; bytes written."""
        names = [str(t.name()).lower() for t in jvm.jclass("org.pycrawler.bridge.DrumRepository$Timing").values()]
        with je_errors(self._where):
            return dict(zip(names, (int(v) for v in self.java.timings())))

    def keys(self) -> int:
        """Keys stored, as the merges counted them (a repository from before they did is
        counted block by block, once)."""
        with je_errors(self._where):
            return int(self.java.keys())

    def count(self) -> int:
        """Keys stored (reads every block)."""
        with je_errors(self._where):
            return int(self.java.count())

    def close(self) -> None:
        self.meta.close()
        self.blocks.close()
