"""Who may read the console and who may act on the crawl.

- **Where it listens.** ``--console PORT`` listens on 127.0.0.1; ``HOST:PORT`` on another
  address only with ``--console-public`` too (the console speaks plain HTTP: its token and
  figures cross the network in clear), with a warning; then every read wants the token too
  (``/metrics`` included: Prometheus sends it as a bearer token).
- **The token.** A random one for each run, in ``STATE/console.token``, readable by the
  crawl's user only (``0600``, as the gateway's token files); removed when the console stops.
  Each action (a POST) carries it in the ``X-Pycrawler-Token`` header (or ``Authorization:
  Bearer``); a wrong or missing one is refused before anything is done. A stopped crawl's
  console has no actions and writes nothing into its folder: off loopback its token lives in
  memory only, printed once with the console's address. A running crawl's console writes its
  address and its process's id beside the token (``STATE/console.address``), so that
  ``pycrawler console STATE`` points at it while the crawl runs.
- **No other web page can act.** A token in a header, never a cookie or a form field: a page
  from another origin cannot set that header without a CORS preflight, which the console
  never grants; a POST whose ``Origin`` is not the console's own is refused as well. The
  ``Host`` header must name the console's own address, so a DNS name rebound to 127.0.0.1
  cannot read the console from a page of its own.
"""

from __future__ import annotations

import contextlib
import hmac
import ipaddress
import secrets
import socket
from pathlib import Path

from aiohttp import web

from ..atomic_write import write_atomically
from ..errors import BadInput

DEFAULT_HOST = "127.0.0.1"
TOKEN_FILE = "console.token"
ADDRESS_FILE = "console.address"
TOKEN_HEADER = "X-Pycrawler-Token"


def parse_listen(text: str) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[V6]:PORT`` -> (host, port); port 0 takes a free one."""
    host, sep, port = text.rpartition(":")
    host = host.strip("[]") if sep else DEFAULT_HOST
    if not port.isdigit() or not 0 <= int(port) < 65536 or (sep and not host):
        raise BadInput(f"--console wants [HOST:]PORT (e.g. 8765 or 0.0.0.0:8765), got {text!r}")
    return host, int(port)


def parse_public_listen(text: str, public: bool, flag: str) -> tuple[str, int]:
    """:func:`parse_listen`, refusing an address off loopback unless the user said ``flag``
    (``public``): the console speaks plain HTTP, so what it serves there crosses the network
    in clear."""
    host, port = parse_listen(text)
    if not public and not is_loopback(host):
        raise BadInput(f"{text} is off loopback, where the console's plain HTTP (its token included) crosses the "
                       f"network in clear: add {flag} to mean it, or listen on 127.0.0.1 and use an SSH tunnel")
    return host, port


def plain_http_warning(host: str, port: int) -> str | None:
    """The warning a console off loopback prints (:func:`parse_public_listen`); None on loopback."""
    if is_loopback(host):
        return None
    return (f"warning: the console listens on {host}:{port}, off loopback, over plain HTTP: its token and "
            f"figures cross the network in clear (an SSH tunnel to 127.0.0.1 does not)")


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback one (127.0.0.0/8, ::1)."""
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return all(ipaddress.ip_address(info[4][0].partition("%")[0]).is_loopback for info in infos)


class RunFile:
    """A file a running console writes into the state folder, and removes when it stops if it
    still holds what this one wrote (a later run may have written its own)."""

    def __init__(self, path: Path, value: str, *, private: bool):
        self.path, self.value = Path(path), value
        write_atomically(self.path, value + "\n", private=private)

    def remove(self) -> None:
        with contextlib.suppress(OSError):
            if self.path.read_text().strip() == self.value:
                self.path.unlink()


def live_console_address(state: Path, pid: int) -> str | None:
    """The address of the console the crawl of ``state`` running as process ``pid`` serves, if
    it has one. The file names the process that wrote it: one a killed crawl left behind is
    not taken for the console of the crawl resumed since."""
    try:
        address, writer = (Path(state) / ADDRESS_FILE).read_text().split()
    except (OSError, ValueError):
        return None
    return address if writer == str(pid) else None


class Token:
    """The console's token (module docstring): in ``path`` (0600) when given, else in memory only."""

    def __init__(self, path: Path | None):
        self.path = None if path is None else Path(path)
        self.value = secrets.token_urlsafe(32)
        self._file = None if self.path is None else RunFile(self.path, self.value, private=True)

    @classmethod
    def for_state(cls, state: Path) -> Token:
        """A running crawl's token, in its state folder (:data:`TOKEN_FILE`)."""
        return cls(Path(state) / TOKEN_FILE)

    @property
    def where(self) -> str:
        return str(self.path) if self.path is not None else "the address the console printed (#token=...)"

    def matches(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.value.encode())

    def remove(self) -> None:
        """Remove the file if it still holds this token (a later run may have written its own)."""
        if self._file is not None:
            self._file.remove()


def given_token(request: web.Request) -> str | None:
    """The token a request carries in its header, if any."""
    if TOKEN_HEADER in request.headers:
        return request.headers[TOKEN_HEADER]
    scheme, _, value = request.headers.get("Authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" else None


class Gate:
    """Decides, per request, whether it is let in (module docstring)."""

    def __init__(self, token: Token, host: str, port: int):
        self.token, self.port = token, port
        self.open_reads = is_loopback(host)
        names = {host, f"[{host}]"} | ({"localhost", "127.0.0.1", "[::1]"} if self.open_reads else set())
        self.hosts = {f"{name}:{port}" for name in names}

    def bind(self, port: int) -> None:
        """The port the console listens on, once known (``--console 0`` takes a free one)."""
        self.hosts = {name.rpartition(":")[0] + f":{port}" for name in self.hosts}
        self.port = port

    def check(self, request: web.Request, *, action: bool, reads_data: bool = True) -> None:
        """Raise the HTTP error that refuses ``request``, if it is refused."""
        if self.open_reads and request.host not in self.hosts:
            raise web.HTTPMisdirectedRequest(text=f"this console answers to {sorted(self.hosts)}, not {request.host}\n")
        if action:
            origin = request.headers.get("Origin")
            if origin is not None and origin != f"{request.scheme}://{request.host}":
                raise web.HTTPForbidden(text="cross-origin actions are refused\n")
        if (action or (reads_data and not self.open_reads)) and not self.token.matches(given_token(request)):
            raise web.HTTPUnauthorized(text=f"wrong or missing token: send the one in {self.token.where} "
                                            f"in the {TOKEN_HEADER} header\n")
