"""Seed 003's de-duplication frame: a URL set, the sender's address, a cluster-unique number, a flag.

The paper's data frame, encoded as the paper says: JSON, the URL set a JSON object whose keys are
the URL strings and whose values are 0 (not known) or 1 (known somewhere). One frame carries a
batch of URLs (the protocol's unit of de-duplication), so a worker crosses the network once per
batch, never once per URL.

One field is this implementation's, not the paper's: a set to de-duplicate (flag 1) carries
``found``, each URL's depth, hop path and via (:func:`~..protocol.discovery_of`), which the
central host keeps with the set and writes into the allocated URLs' task_pool entries, so the
crawling worker schedules a URL as its finder would have. Requests and answers leave it out.
"""

from __future__ import annotations

import json
from enum import IntEnum
from typing import NamedTuple


class Flag(IntEnum):
    DEDUPE = 1  # a local host's set to de-duplicate, sent to its network's central host
    REQUEST = 2  # a de-duplication request, broadcast to hosts or sent to another network
    ANSWER = 3  # the set with 1 against each URL the answerer knows


class FrameError(ValueError):
    """Bytes that are not a seed 003 frame."""


class Frame(NamedTuple):
    url_set: dict[str, int]
    ip: str  # the address of the host (or central host) the frame speaks for
    number: int  # unique across the cluster: which network, which host, which request
    flag: Flag
    found: dict[str, str] | None = None  # URL -> its depth, hop path and via (flag 1 only)

    def known(self) -> set[str]:
        """URLs marked 1: some host already has them."""
        return {url for url, mark in self.url_set.items() if mark}


def encode(frame: Frame) -> bytes:
    body = {"URL_set": frame.url_set, "IP": frame.ip, "number": frame.number, "flag": int(frame.flag)}
    if frame.found:
        body["found"] = frame.found
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode()


def decode(data: bytes) -> Frame:
    try:
        body = json.loads(data)
        url_set, ip, number, flag = body["URL_set"], body["IP"], body["number"], Flag(body["flag"])
        found = body.get("found")
    except (ValueError, TypeError, KeyError) as err:
        raise FrameError(f"not a de-duplication frame: {err}") from None
    if not isinstance(url_set, dict) or not isinstance(ip, str) or type(number) is not int:
        raise FrameError("not a de-duplication frame: URL_set must be an object, IP a string, number an integer")
    if any(mark not in (0, 1) for mark in url_set.values()):
        raise FrameError("not a de-duplication frame: URL_set values must be 0 or 1")
    if found is not None and not isinstance(found, dict):
        raise FrameError("not a de-duplication frame: found must be an object")
    return Frame(url_set, ip, number, flag, found)
