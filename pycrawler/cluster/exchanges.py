"""The link exchanges a crawl can use, by name (``pycrawler crawl --dedupe NAME``).

Each entry names the module and the factory, imported only when chosen: a mode's own
dependencies load only for the crawls that use it. A factory takes the worker's
:class:`~.membership.Membership`, the sending cache (or None) and the seconds of stable
membership to wait for at the start (None: its default), and returns a started
:class:`~.protocol.LinkExchange`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import BadInput

if TYPE_CHECKING:  # membership needs the redis package, an extra: the command line imports this module always
    from ..seen.cache import UrlCache  # (these two numpy, which the command line loads without)
    from .membership import Membership
    from .protocol import LinkExchange

EXCHANGES = {
    "split": ("pycrawler.cluster.hostsplit", "open_exchange"),    # Mercator's host splitter (default)
    "central": ("pycrawler.cluster.central", "open_exchange"),    # seed 003's central de-duplication
}
DEFAULT = "split"


def exchange_factory(name: str) -> Callable[[Membership, UrlCache | None, float | None], LinkExchange]:
    """The factory of mode ``name``, imported now: a mode missing from this version is refused
    before the worker touches the cluster."""
    if name not in EXCHANGES:
        raise BadInput(f"--dedupe is one of {', '.join(EXCHANGES)}, not {name!r}")
    module_name, factory = EXCHANGES[name]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name != module_name:
            raise
        raise BadInput(f"--dedupe {name} is not available in this version of pycrawler") from None
    return getattr(module, factory)
