"""Where a served environment is and how its owner's processes get in.

An address reads ``py4j://HOST:PORT``. The server writes py4j's auth token for it to a file
only its user can read (``0600``, in a ``0700`` folder), named by the address, so that a
client run by the same user finds it from the address alone. The folder is
``$PYCRAWLER_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/pycrawler``, else
``~/.cache/pycrawler/run``. The file also holds what a client shows about the store (its
folder and JE log version); the server removes it when it stops.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

from ..atomic_write import write_atomically
from ..errors import BadInput, SetupError

SCHEME = "py4j://"
_ADDRESS = re.compile(r"^py4j://(?P<host>[^:/\[\]]+|\[[0-9a-fA-F:]+\]):(?P<port>\d{1,5})/?$")


def is_address(target) -> bool:
    return isinstance(target, str) and target.startswith(SCHEME)


def parse(address: str) -> tuple[str, int]:
    """(host, port) of ``py4j://HOST:PORT``."""
    match = _ADDRESS.match(address)
    if not match or not 0 < int(match["port"]) < 65536:
        raise BadInput(f"{address!r} is not a gateway address (py4j://HOST:PORT, as pycrawler serve prints it)")
    return match["host"].strip("[]"), int(match["port"])


def format_address(host: str, port: int) -> str:
    return f"{SCHEME}[{host}]:{port}" if ":" in host else f"{SCHEME}{host}:{port}"


def runtime_dir() -> Path:
    if os.environ.get("PYCRAWLER_RUNTIME_DIR"):
        return Path(os.environ["PYCRAWLER_RUNTIME_DIR"])
    if os.environ.get("XDG_RUNTIME_DIR"):
        return Path(os.environ["XDG_RUNTIME_DIR"]) / "pycrawler"
    return Path.home() / ".cache" / "pycrawler" / "run"


def token_file(address: str) -> Path:
    host, port = parse(address)
    return runtime_dir() / f"gateway-{host.replace(':', '_')}-{port}.json"


def _private_dir() -> Path:
    folder = runtime_dir()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise SetupError(f"{folder} must belong to this user and be private (chmod 700) to hold gateway tokens")
    return folder


def write(address: str, facts: dict) -> Path:
    """Write ``facts`` (with the token) for ``address``, readable by this user only."""
    path = token_file(address)
    _private_dir()
    write_atomically(path, json.dumps(facts), private=True)
    return path


def read(address: str) -> dict:
    """What the server of ``address`` wrote; one clear line when there is nothing to read."""
    path = token_file(address)
    try:
        info = path.stat()
        if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
            raise SetupError(f"{path} is readable by other users or not ours: refusing its token")
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise BadInput(f"{address}: no token file ({path}): is `pycrawler serve` running there as this user?") from None
    except (OSError, ValueError) as exc:
        raise BadInput(f"{address}: cannot read its token file {path}: {exc}") from None


def remove(address: str, token: str) -> None:
    """Remove the token file of ``address`` if it is still this server's (a later server on the
    same port may have replaced it)."""
    path = token_file(address)
    try:
        if json.loads(path.read_text()).get("token") == token:
            path.unlink()
    except (OSError, ValueError):
        pass
