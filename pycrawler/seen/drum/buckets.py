"""DRUM's buckets: per key range, an in-RAM buffer of operations and a pair of disk files.

A bucket's operations reach disk as *chunks* appended to two files of one *generation*:
``NNNN.GGGGGGGG.kv`` (keys, operation codes, values) and ``NNNN.GGGGGGGG.aux`` (aux data, never
stored in the repository, read back only when a dispatcher needs it). Each chunk starts
with a header (magic, operation count, flags, payload length, CRC-32 of the payload), so a
chunk cut short by a crash is recognised and dropped. The aux chunk is written before its
kv chunk; recovery keeps the chunks present in both files.

The repository's merge marker names the last generation merged into it (committed in the
same JE transaction as the merge); files of that generation or older are merged and
deleted, files of the next generation are replayed.
"""

from __future__ import annotations

import os
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ... import failpoints
from .blobs import Blobs

HEADER = struct.Struct("<4sIBBQI")  # magic, count, flags, uniform op, payload bytes, crc32
KV_MAGIC = b"DRKV"
AUX_MAGIC = b"DRAX"
HAS_OPS = 1  # per-operation codes follow the keys (else every operation is the uniform one)
HAS_VALUES = 2  # value lengths (uint32) and bytes follow (else every value is empty)
HAS_AUX = 4


@dataclass
class Operations:
    """A run of operations in arrival order: keys (n, words) uint64, codes, values, aux."""

    keys: np.ndarray
    ops: np.ndarray | int  # uint8 per operation, or one code for all
    values: Blobs | None  # None: every value empty
    aux: Blobs | None  # None: no aux

    def __len__(self) -> int:
        return len(self.keys)

    def op_codes(self) -> np.ndarray:
        if isinstance(self.ops, np.ndarray):
            return self.ops
        return np.full(len(self.keys), self.ops, dtype=np.uint8)

    @classmethod
    def concat(cls, parts: list[Operations]) -> Operations:
        if len(parts) == 1:
            return parts[0]
        uniform = {p.ops for p in parts if not isinstance(p.ops, np.ndarray)}
        if len(uniform) == 1 and all(not isinstance(p.ops, np.ndarray) for p in parts):
            ops = uniform.pop()
        else:
            ops = np.concatenate([p.op_codes() for p in parts])
        values = None
        if any(p.values is not None for p in parts):
            values = Blobs.concat([p.values if p.values is not None else Blobs.empty(len(p)) for p in parts])
        aux = None
        if any(p.aux is not None for p in parts):
            aux = Blobs.concat([p.aux if p.aux is not None else Blobs.empty(len(p)) for p in parts])
        return cls(np.concatenate([p.keys for p in parts]), ops, values, aux)


def _write_chunk(f, magic: bytes, count: int, flags: int, op: int, parts: list) -> int:
    """Append one chunk with a single ``writev`` (the files are unbuffered: a persist at every
    crawl flush writes two chunks into each of the 64 buckets, and a buffered write and flush
    each cost more than the data)."""
    parts = [np.ascontiguousarray(part) for part in parts]
    crc = size = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
        size += part.nbytes
    buffers = [HEADER.pack(magic, count, flags, op, size, crc), *parts]
    total = HEADER.size + size
    written = os.writev(f.fileno(), buffers)
    if written != total:  # a short write (a full disk, a signal): the rest, as one buffer
        rest = memoryview(b"".join(bytes(b) for b in buffers))[written:]
        while rest:
            rest = rest[os.write(f.fileno(), rest):]
    return total


def _chunks(data: bytes, magic: bytes):
    """(offset after, count, flags, op, payload) of each intact chunk, stopping at a torn one."""
    at = 0
    while at + HEADER.size <= len(data):
        got, count, flags, op, size, crc = HEADER.unpack_from(data, at)
        body = at + HEADER.size
        if got != magic or body + size > len(data):
            return
        payload = memoryview(data)[body:body + size]
        if zlib.crc32(payload) != crc:
            return
        at = body + size
        yield at, count, flags, op, payload


def _blob_parts(blobs: Blobs) -> list[np.ndarray]:
    """A chunk's lengths (uint32) and bytes of ``blobs``, contiguous (a slice's data is shared)."""
    return [blobs.lengths().astype("<u4"), blobs.payload()]


def _blobs(payload: memoryview, at: int, count: int) -> Blobs:
    lengths = np.frombuffer(payload, dtype="<u4", count=count, offset=at).astype(np.int64)
    return Blobs.from_lengths(lengths, np.frombuffer(payload, dtype=np.uint8, offset=at + 4 * count))


class DiskBucket:
    """One bucket's pair of files of the generation being written."""

    def __init__(self, folder: Path, index: int, words: int, merged_generation: int):
        self.folder = folder
        self.index = index
        self.words = words
        for path in folder.glob(f"{index:04d}.*"):
            if int(path.name.split(".")[1]) <= merged_generation:
                path.unlink()  # merged: the marker committed with the merge says so
        self.generation = merged_generation + 1
        self._kv = self._aux = None
        self.size = self._recover()

    def _path(self, kind: str) -> Path:
        return self.folder / f"{self.index:04d}.{self.generation:08d}.{kind}"

    def _recover(self) -> int:
        """Cut both files back to the chunks present, intact, in both; returns the kv size."""
        kv_path, aux_path = self._path("kv"), self._path("aux")
        if not kv_path.exists():
            aux_path.unlink(missing_ok=True)
            return 0
        kv_ends = [end for end, *_ in _chunks(kv_path.read_bytes(), KV_MAGIC)]
        aux_ends = [end for end, *_ in _chunks(aux_path.read_bytes(), AUX_MAGIC)] if aux_path.exists() else []
        keep = min(len(kv_ends), len(aux_ends))
        for path, ends in ((kv_path, kv_ends), (aux_path, aux_ends)):
            if path.exists():
                os.truncate(path, ends[keep - 1] if keep else 0)
        return kv_ends[keep - 1] if keep else 0

    def append(self, ops: Operations) -> None:
        """Write one chunk (aux first, so a kv chunk on disk always has its aux)."""
        if self._kv is None:
            self._aux = open(self._path("aux"), "ab", buffering=0)
            self._kv = open(self._path("kv"), "ab", buffering=0)
        n = len(ops)
        if ops.aux is None:
            _write_chunk(self._aux, AUX_MAGIC, n, 0, 0, [])
        else:
            _write_chunk(self._aux, AUX_MAGIC, n, HAS_AUX, 0, _blob_parts(ops.aux))
        failpoints.hit("drum.bucket.aux_appended")
        flags, op, parts = 0, 0, [ops.keys.astype("<u8", copy=False)]
        if isinstance(ops.ops, np.ndarray):
            flags |= HAS_OPS
            parts.append(ops.ops.astype(np.uint8, copy=False))
        else:
            op = ops.ops
        if ops.values is not None and ops.values.nbytes:
            flags |= HAS_VALUES
            parts += _blob_parts(ops.values)
        self.size += _write_chunk(self._kv, KV_MAGIC, n, flags, op, parts)

    def sync(self) -> None:
        """fsync both files (for durability against power loss, not needed against kill -9)."""
        for f in (self._aux, self._kv):
            if f is not None:
                os.fsync(f.fileno())

    def read(self) -> Operations:
        """Every operation of this generation, in arrival order (aux is read by :meth:`read_aux`)."""
        parts = []
        path = self._path("kv")
        data = path.read_bytes() if path.exists() else b""
        for _, count, flags, op, payload in _chunks(data[:self.size], KV_MAGIC):
            keys = np.frombuffer(payload, dtype="<u8", count=count * self.words).reshape(count, self.words)
            at = keys.nbytes
            ops: np.ndarray | int = op
            if flags & HAS_OPS:
                ops = np.frombuffer(payload, dtype=np.uint8, count=count, offset=at)
                at += count
            values = _blobs(payload, at, count) if flags & HAS_VALUES else None
            parts.append(Operations(keys, ops, values, None))
        if not parts:
            return Operations(np.zeros((0, self.words), dtype=np.uint64), 0, None, None)
        return Operations.concat(parts)

    def read_aux(self, count: int) -> Blobs | None:
        """The aux data of this generation's first ``count`` operations (None: none given)."""
        path = self._path("aux")
        parts, any_aux = [], False
        for _, n, flags, _, payload in _chunks(path.read_bytes() if path.exists() else b"", AUX_MAGIC):
            if count <= 0:
                break
            any_aux |= bool(flags & HAS_AUX)
            parts.append(_blobs(payload, 0, n) if flags & HAS_AUX else Blobs.empty(n))
            count -= n
        return Blobs.concat(parts) if any_aux else None

    def rotate(self) -> None:
        """After a merge committed this generation: delete its files, start the next one."""
        self.retire()()

    def retire(self):
        """After a merge of this generation: start the next one, and return what deletes this
        one's files, to be called once the merge is committed (until then they are the only
        copy of its operations). Reopening before that commit replays this generation only,
        so nothing may be appended to the next one in between."""
        self.close()
        kv, aux = self._path("kv"), self._path("aux")
        self.generation += 1
        self.size = 0

        def delete() -> None:
            failpoints.hit("drum.merge.committed")
            kv.unlink(missing_ok=True)
            failpoints.hit("drum.merge.kv_removed")
            aux.unlink(missing_ok=True)

        return delete

    def close(self) -> None:
        for f in (self._aux, self._kv):
            if f is not None:
                f.close()
        self._kv = self._aux = None
