"""JSON lines as the command line writes them: one JSON document a line, text in UTF-8.

Every JSON-lines output (``store dump``, ``frontier pop``, ``heritrix export --pending``,
``fingerprint``) goes through :func:`json_line`, so they agree:

- non-ASCII text is written as itself in UTF-8, not as ``\\u`` escapes (a Chinese title
  reads as Chinese); standard output is UTF-8 whatever the locale (see
  :func:`utf8_stdout`);
- a lone UTF-16 surrogate, which a Java string may hold (a string cut between the two
  halves of a pair) and which has no UTF-8 form, is written as JSON's escape of that code
  unit (``"\\ud800"``): the line stays valid UTF-8 and valid JSON, and JSON readers give
  back the same code unit;
- values beyond JSON's types (bytes, dates, sets, decoded Java objects) become JSON by
  :func:`to_json`; bytes inside a value (a Java ``byte[]`` field) are text when they are
  UTF-8, else ``{"@hex": "..."}``, never a bare ``null`` (which is Java's null);
- a value that contains itself (a decoded Java object graph with a cycle) is written as a
  tree whose back edges are JSON references, ``{"$ref": "#/value/items/0"}``: a JSON
  Pointer, from the line's top, to the enclosing object already written.
"""

from __future__ import annotations

import datetime
import io
import json
import re
import sys
from collections.abc import Set as AbstractSet
from typing import Any

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogate(match: re.Match) -> str:
    return f"\\u{ord(match.group()):04x}"


def to_json(value: Any) -> Any:
    """JSON for what decoders return beyond JSON's types: bytes as UTF-8 text or
    ``{"@hex": ...}``, dates as ISO 8601 text, sets and tuples as lists, objects as their
    attributes, anything else as its text."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            return {"@hex": bytes(value).hex()}
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (AbstractSet, tuple)):
        return list(value)
    if hasattr(value, "__dict__"):
        return vars(value)
    return str(value)


def _pointer_token(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _json_key(key: Any) -> Any:
    """A dict key as JSON takes it: text and numbers as they are, others as their JSON text."""
    if key is None or isinstance(key, (str, int, float, bool)):
        return key
    return json.dumps(_acyclic(key, "#", {}), ensure_ascii=False, separators=(",", ":"))


def _acyclic(value: Any, path: str, enclosing: dict[int, str]) -> Any:
    """``value`` made JSON-ready (as :func:`to_json`) with every edge back to an enclosing
    container replaced by ``{"$ref": pointer}``. Shared, non-cyclic parts are written in
    full at each place, as ``json.dumps`` writes them."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if id(value) in enclosing:
        return {"$ref": enclosing[id(value)]}
    if not isinstance(value, (dict, list)):
        converted = to_json(value)
        if converted is value or isinstance(converted, str):
            return converted
        # A set, tuple or object's attributes: a new container standing for ``value``.
        enclosing[id(value)] = path
        try:
            return _acyclic(converted, path, enclosing)
        finally:
            del enclosing[id(value)]
    enclosing[id(value)] = path
    try:
        if isinstance(value, dict):
            return {_json_key(k): _acyclic(v, f"{path}/{_pointer_token(str(_json_key(k)))}", enclosing)
                    for k, v in value.items()}
        return [_acyclic(item, f"{path}/{i}", enclosing) for i, item in enumerate(value)]
    finally:
        del enclosing[id(value)]


def json_line(value: Any) -> str:
    """``value`` as one line of JSON (newline included), as the module docstring says."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=to_json)
    except (ValueError, TypeError):
        # A cycle, or a dict key JSON has no form for: the slower walk that handles both.
        text = json.dumps(_acyclic(value, "#", {}), ensure_ascii=False)
    if not text.isascii():
        # Only strings hold non-ASCII characters, so an escape written in place stays inside one.
        text = _LONE_SURROGATE.sub(_escape_surrogate, text)
    return text + "\n"


def utf8_stdout() -> None:
    """Make standard output UTF-8 whatever the locale says, showing a character that has no
    UTF-8 form (a lone surrogate in text output) as a backslash escape rather than failing
    in the middle of the output."""
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(encoding="utf-8", errors="backslashreplace")
