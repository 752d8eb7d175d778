"""DRUM: IRLbot's Disk Repository with Update Management, on a JE repository.

>>> class Fresh(Dispatcher):
...     def unique_key_update(self, keys, values, aux):
...         print(keys.tolist(), aux.tolist())
>>> with Drum("state/seen", Fresh()) as drum:
...     drum.check_update_many(np.array([7, 9, 7], dtype=np.uint64), aux=[b"a", b"b", b"c"])
[7, 9] [b'a', b'b']
"""

from .blobs import Blobs
from .dispatcher import Collector, Dispatcher
from .engine import Drum
from .host_cache import HostCache
from .visited import DrumVisited

__all__ = ["Drum", "Dispatcher", "Collector", "Blobs", "DrumVisited", "HostCache"]
