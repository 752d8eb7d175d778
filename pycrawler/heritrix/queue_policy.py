"""Which pycrawler queue policy reproduces a Heritrix crawl's queues, read from their class keys.

An import (:mod:`.migrate`), a journal's recovery (:mod:`.recovered`) and a rescue
(:mod:`.rescue`) all place Heritrix's URLs in the queues of the policy Heritrix used, so the
queues come over unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .pending import cap_queue, is_cap_key, parse_key

if TYPE_CHECKING:
    from .state import HeritrixState


def detect_queue_policy(class_keys: list[str]) -> str:
    """The pycrawler policy that reproduces the class keys of Heritrix's queues: ``surt`` when
    they are SURT authorities (``com,example,www,``), else ``heritrix-host`` (Heritrix's
    default ``HostnameQueueAssignmentPolicy``)."""
    surt_like = sum(1 for key in class_keys if key.partition("#")[0].partition("@")[0].endswith(","))
    return "surt" if class_keys and surt_like * 2 >= len(class_keys) else "heritrix-host"


def heritrix_class_keys(state: HeritrixState) -> list[str]:
    """The class keys of the state's queues (read from the keys of ``pending``)."""
    keys: dict[str, None] = {}
    for key, _ in state.pending_records(keys_only=True):
        keys.setdefault(cap_queue(key) if is_cap_key(key) else parse_key(key).queue)
    return list(keys)
