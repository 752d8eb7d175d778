"""Serve an open environment to other processes through py4j's ``GatewayServer``.

The gateway runs in the JVM that already holds the environment (JPype's, in this process):
py4j's server threads call ``org.pycrawler.bridge.Served``, which applies each batch with
``Bulk`` as an in-process batch is applied. Three gates keep others out: the server listens on
loopback unless told otherwise, refuses peers other than ``127.0.0.1``/``::1`` before reading
a byte (``PeerFilter``), and wants py4j's auth token, which only this user can read (see
:mod:`~pycrawler.store.gateway_address`). A client is trusted with the JVM once in: py4j
lets it call any Java class, so the token is as good as this user's shell.
"""

from __future__ import annotations

import ipaddress
import secrets
import sys
from pathlib import Path

from .. import jvm
from ..errors import BadInput, SetupError
from . import gateway_address, logfile
from .access import database_config

LOOPBACK_PEERS = ("127.0.0.1", "::1")
"""The peers a loopback-bound gateway accepts: the addresses a process on this host connects
from by default. Other loopback aliases (127.0.0.2 ...) are refused too, so the rule reads the
same whatever the bind address."""
IDLE_TIMEOUT = 60.0
"""Seconds a transaction may wait between calls before the server aborts it (its client is
taken for dead, and its locks are released)."""


def _note(line) -> None:
    print(f"pycrawler serve: {line}", file=sys.stderr, flush=True)


class Gateway:
    """``env`` served at :attr:`address` until :meth:`close` (the environment stays open).
    An environment open read-only is served read-only: its clients see it read-only too."""

    def __init__(self, env, *, host: str = "127.0.0.1", port: int = 0, idle_timeout: float = IDLE_TIMEOUT,
                 allow_remote: bool = False):
        try:
            loopback = ipaddress.ip_address(host).is_loopback
        except ValueError:
            raise BadInput(f"--bind {host!r} is not an IP address") from None
        if not loopback and not allow_remote:
            raise BadInput(f"--bind {host} is not a loopback address: other hosts could reach the store; "
                           "add --allow-remote to mean it")
        jvm.start()
        self.env = env
        self.token = secrets.token_urlsafe(32)
        self._served = jvm.jclass("org.pycrawler.bridge.Served")(
            env.java, database_config, lambda name: env.access.stored_key_prefixing([str(name)])[str(name)],
            int(idle_timeout * 1000))
        allowed = None
        if not allow_remote:
            InetAddress = jvm.jclass("java.net.InetAddress")
            allowed = jvm.jclass("java.util.HashSet")()
            for peer in LOOPBACK_PEERS:
                allowed.add(InetAddress.getByName(peer))
        builder = jvm.jclass("py4j.GatewayServer$GatewayServerBuilder")(self._served)
        self._server = (builder.javaPort(int(port)).javaAddress(jvm.jclass("java.net.InetAddress").getByName(host))
                        .authToken(self.token)
                        .serverSocketFactory(jvm.jclass("org.pycrawler.bridge.PeerFilter")(allowed, _note))
                        .build())
        try:
            self._server.start(True)
        except jvm.JavaException as exc:
            self._served.close()
            raise SetupError(f"cannot serve on {host}:{port}: {jvm.throwable(exc).getMessage()}") from None
        self.address = gateway_address.format_address(host, int(self._server.getListeningPort()))
        files = logfile.jdb_files(env.path)
        try:
            gateway_address.write(self.address, {"token": self.token, "home": str(Path(env.path).resolve()),
                                                 "log_version": logfile.log_version(env.path) if files else None})
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Stop listening, abort what clients left open, and remove the token file."""
        if self._server is None:
            return
        server, self._server = self._server, None
        gateway_address.remove(self.address, self.token)
        server.shutdown()
        self._served.close()

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
