"""pycrawler inside Scrapy: a crash-tolerant scheduler and duplicate filter on JE.

Two settings turn a Scrapy project's queue and seen set into pycrawler's::

    SCHEDULER = "pycrawler.scrapy.Scheduler"
    PYCRAWLER_STATE = "crawls/myspider"               # JE state folder; the same folder resumes
    DUPEFILTER_CLASS = "pycrawler.scrapy.DupeFilter"  # for Scrapy's own scheduler

Rooms: :mod:`.settings` (the ``PYCRAWLER_*`` settings), :mod:`.requests` (Scrapy's request
serialization, stored in the frontier's records), :mod:`.fingerprints` (request fingerprints
as Visited keys), :mod:`.engine_view` (which requests Scrapy's engine still holds),
:mod:`.scheduler`, :mod:`.dupefilter`. Scrapy is an optional dependency (the ``scrapy``
extra): importing :mod:`pycrawler` never imports it, and this package imports it only when
one of its classes is first read.
"""

from ..lazy import lazy_attributes

_HOMES = {"Scheduler": "scheduler", "DupeFilter": "dupefilter"}

__all__ = list(_HOMES)
__getattr__ = lazy_attributes(__name__, _HOMES)
