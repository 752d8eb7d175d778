"""IRLbot's other DRUMs: a per-host record cache (robots.txt rules, DNS answers).

The key is the host's 64-bit fingerprint, the value its record (bytes, e.g. the robots.txt
body or a packed address). Lookups are asynchronous like every DRUM check: the receiver
gets ``receiver(hosts, records, aux)`` per merge, ``records[i]`` None where the host has no
record yet (the caller then fetches it and :meth:`store_many`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...keys import fingerprints64
from .dispatcher import Dispatcher
from .engine import Drum
from .visited import decode_payload, encode_payloads

CacheReceiver = Callable[[list[Any], list[bytes | None], list[Any]], None]


class _Lookups(Dispatcher):
    def __init__(self, cache: HostCache):
        self.cache = cache

    def unique_key_check(self, keys, aux):
        self.cache._answer(aux, [None] * len(keys))

    def duplicate_key_check(self, keys, values, aux):
        self.cache._answer(aux, values.tolist())


class HostCache:
    """Records per host on a :class:`Drum` in folder ``path`` (``drum_options`` go to Drum)."""

    def __init__(self, path, receiver: CacheReceiver, **drum_options):
        self.receiver = receiver
        self.drum = Drum(path, _Lookups(self), **drum_options)

    def lookup_many(self, hosts: Sequence[str], aux: Sequence[Any] | None = None) -> None:
        """Queue lookups; the receiver gets ``(hosts, records, aux)`` (aux defaults to None each)."""
        hosts = list(hosts)
        payloads = [(h, None if aux is None else aux[i]) for i, h in enumerate(hosts)]
        self.drum.check_many(fingerprints64(hosts), aux=encode_payloads(payloads))

    def store_many(self, hosts: Sequence[str], records: Sequence[bytes]) -> None:
        """Queue (over)writes of the hosts' records; later lookups see them."""
        self.drum.update_many(fingerprints64(list(hosts)), list(records))

    def _answer(self, aux, records: list[bytes | None]) -> None:
        pairs = [decode_payload(raw) for raw in aux]
        self.receiver([h for h, _ in pairs], records, [a for _, a in pairs])

    def flush(self) -> None:
        self.drum.synchronize()

    def close(self) -> None:
        self.drum.close()

    def __enter__(self) -> HostCache:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
