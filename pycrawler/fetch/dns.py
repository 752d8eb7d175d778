"""The fetcher's DNS cache: each host name resolved once per ``ttl``, failures remembered too.

A crawler connects to the same few hosts again and again, and a resolver round trip per
connection would cost more than a loopback fetch. :class:`CachingResolver` sits between
aiohttp's connector and a real resolver (aiohttp's default unless given): answers are kept
``ttl`` seconds, failures ``failure_ttl`` seconds (so a dead name does not cost a lookup per
URL), and concurrent lookups of one name share one query. :meth:`CachingResolver.address`
tells which address a host name went to, for the CrawlUrl's IP form of the URL.
"""

from __future__ import annotations

import asyncio
import dataclasses
import socket
import time

import aiohttp
from aiohttp.abc import AbstractResolver


@dataclasses.dataclass(slots=True)
class _Answer:
    expires: float
    addresses: list[dict] | None = None
    error: OSError | None = None


class CachingResolver(AbstractResolver):
    """An ``aiohttp`` resolver that caches ``inner``'s answers (see the module docstring)."""

    def __init__(self, inner: AbstractResolver | None = None, *, ttl: float = 300.0, failure_ttl: float = 60.0,
                 clock=time.monotonic):
        self.inner = inner if inner is not None else aiohttp.DefaultResolver()
        self.ttl, self.failure_ttl, self.clock = ttl, failure_ttl, clock
        self.lookups = 0  # queries that reached the inner resolver
        self._answers: dict[tuple[str, int, int], _Answer] = {}
        self._addresses: dict[str, str] = {}  # host name -> first address of its latest answer
        self._pending: dict[tuple[str, int, int], asyncio.Future] = {}

    async def resolve(self, host: str, port: int = 0, family: int = socket.AF_INET) -> list[dict]:
        key = (host, port, family)
        answer = self._answers.get(key)
        if answer is None or answer.expires <= self.clock():
            if key in self._pending:
                answer = await asyncio.shield(self._pending[key])
            else:
                answer = await self._query(key)
        if answer.error is not None:
            raise answer.error
        return answer.addresses

    async def _query(self, key: tuple[str, int, int]) -> _Answer:
        future = self._pending[key] = asyncio.get_running_loop().create_future()
        self.lookups += 1
        try:
            addresses = await self.inner.resolve(*key)
            answer = _Answer(self.clock() + self.ttl, addresses=addresses)
            if addresses:
                self._addresses[key[0]] = addresses[0]["host"]
        except OSError as exc:
            answer = _Answer(self.clock() + self.failure_ttl, error=exc)
        except BaseException as exc:  # cancelled: waiters must not hang, and nothing is cached
            future.set_exception(exc)
            future.exception()
            raise
        finally:
            del self._pending[key]
        self._answers[key] = answer
        future.set_result(answer)
        return answer

    def address(self, host: str) -> str | None:
        """The first address ``host`` last resolved to, or None."""
        return self._addresses.get(host)

    async def close(self) -> None:
        await self.inner.close()
