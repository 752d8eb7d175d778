"""What Scrapy's engine still holds of the requests a scheduler handed it, and how to wake it.

Scrapy's engine takes a request from the scheduler, downloads it, runs its callback or errback
and schedules what that yields; the request is *processed* when all of that is done. The
engine keeps such requests in its slot's ``inprogress`` set, from the moment it takes one from
the scheduler until its output has been handled (redirects and retries included: their new
requests are scheduled first). Scrapy has no signal for that moment, so the scheduler looks at
the set: a request it handed out that the set no longer holds is processed.

Both are the engine's internals (``engine.slot`` up to Scrapy 2.12, ``engine._slot`` after),
read here and nowhere else; the tests run on the oldest and the newest Scrapy supported.
"""

from __future__ import annotations

from ..errors import SetupError


class EngineView:
    """The in-progress requests of a crawler's engine, and its next-call wake-up."""

    def __init__(self, crawler):
        self.crawler = crawler

    def _slot(self):
        attributes = vars(self.crawler.engine)
        slot = attributes.get("_slot") or attributes.get("slot")
        if slot is None or not hasattr(slot, "inprogress"):
            import scrapy

            raise SetupError(f"pycrawler.scrapy cannot see which requests Scrapy {scrapy.__version__}'s engine "
                             "holds (no engine slot with 'inprogress'); use Scrapy 2.11 to 2.19")
        return slot

    def in_progress(self) -> set:
        """The requests the engine took from its scheduler and has not finished processing."""
        return self._slot().inprogress

    def wake_in(self, seconds: float) -> None:
        """Have the engine ask the scheduler for requests again in ``seconds``."""
        self._slot().nextcall.schedule(seconds)
