"""Open whichever TODO store a directory holds, by looking at its databases.

=============  ====================================================  =========================
layout         databases                                             orders
=============  ====================================================  =========================
``pycrawler``  ``todo_by_url`` or ``todo_fifo`` (:mod:`.todo`)        ``key``, ``fifo``
``book``       ``java_class_catalog`` + ``URL`` (:mod:`.book`)        ``key`` (the book's)
=============  ====================================================  =========================

A directory with none of these is refused (BadInput) rather than guessed at. Another
frontier joins by adding a row here; the command line only sees :class:`TodoFrontier`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import BadInput
from .. import store
from ..store import Environment, gateway_address
from ..store.logfile import jdb_files
from .protocol import TodoFrontier
from .todo import JE_CONFIG, ORDERS, JeTodoFrontier

LAYOUTS = {"pycrawler": tuple(ORDERS), "book": ("key",)}
"""Layout name -> the orders it offers, the first being the default."""


def detect_layout(database_names: list[str]) -> tuple[str, str] | None:
    """(layout, order) of a store with these databases; None when it holds no TODO store."""
    from .book import is_book_layout  # here: its record codec (store.serial, decimal) would load with every command

    if is_book_layout(database_names):
        return "book", "key"
    orders = [order for order, name in ORDERS.items() if name in database_names]
    if len(orders) > 1:
        raise BadInput(f"the store holds TODO databases of several orders ({', '.join(orders)}); "
                       "pycrawler keeps one per directory")
    return ("pycrawler", orders[0]) if orders else None


def open_frontier(path: str | os.PathLike, *, layout: str | None = None, order: str | None = None,
                  create: bool = False, read_only: bool = False, durability: str = "write_no_sync") -> TodoFrontier:
    """The TODO store at ``path``, its layout and order detected. ``create`` makes a new one
    (``layout``/``order``, by default pycrawler's in key order) where there is no store yet;
    a ``layout``/``order`` that contradicts an existing store is an error. Closing the
    frontier closes the environment."""
    if layout is not None and layout not in LAYOUTS:
        raise BadInput(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    if order is not None and order not in LAYOUTS[layout or "pycrawler"]:
        raise BadInput(f"the {layout or 'pycrawler'} layout has orders {', '.join(LAYOUTS[layout or 'pycrawler'])}, "
                       f"not {order!r}")
    if gateway_address.is_address(str(path)):
        env = store.open(str(path), read_only=read_only)  # served: its server chose durability and settings
    else:
        path = Path(path)
        if not create and not (path.is_dir() and jdb_files(path)):
            raise BadInput(f"{path} holds no TODO store" + ("" if path.exists() else " (it does not exist)"))
        env = Environment(path, create=create, read_only=read_only, durability=None if read_only else durability,
                          config=JE_CONFIG)
    try:
        frontier = _frontier_in(env, layout, order, create)
    except BaseException:
        env.close()
        raise
    frontier._owns_env = True
    return frontier


def _frontier_in(env: Environment, layout: str | None, order: str | None, create: bool) -> TodoFrontier:
    names = env.database_names()
    found = detect_layout(names)
    if found is None:
        if not create or names:
            raise BadInput(f"{env.path} holds no TODO store of a known layout ({', '.join(LAYOUTS)}); "
                           f"its databases: {', '.join(names) or 'none'}")
        layout = layout or "pycrawler"
        order = order or LAYOUTS[layout][0]
    elif (layout or found[0], order or found[1]) != found:
        raise BadInput(f"{env.path} holds a {found[0]}-layout frontier in {found[1]} order, not "
                       f"{layout or found[0]}/{order or found[1]}: leave out --layout/--order or use another directory")
    else:
        layout, order = found
    writable = create and not env.read_only
    if layout == "book":
        from .book import BookFrontier

        return BookFrontier(env, create=writable)
    return JeTodoFrontier(env, order, create=writable)
