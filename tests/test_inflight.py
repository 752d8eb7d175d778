"""The crawl's slots (pycrawler/crawl/inflight.py): a URL holds one from the poll until the flush
that commits it, whether it was fetched, refused or handed over; ``max_pages`` counts the URLs
done and in process."""

from pycrawler.crawl.inflight import Finished, InFlight
from pycrawler.fetch import status
from pycrawler.frontier.politeness import FAILURE, RETRY, SUCCESS, Outcome
from pycrawler.records.crawl_url import CrawlUrl, decode


def test_a_url_holds_its_slot_until_its_flush_and_max_pages_counts_the_done_and_the_started():
    in_flight = InFlight(concurrency=12, max_pages=30, flush_pages=2)
    assert in_flight.idle and in_flight.room(done=0) == 12
    for _ in range(3):
        in_flight.start()
    assert in_flight.room(done=0) == 9
    in_flight.abandon()  # cancelled: back in the frontier, for the next run
    assert in_flight.room(done=0) == 10 and in_flight.room(done=28) == 0  # 30 - 28 done - 2 started

    refused = Finished.failed(CrawlUrl(ori_url="http://a/", layer=1), "L", status.ROBOTS_PRECLUDED)
    assert not in_flight.finish(refused)
    handed = Finished.handed_over(CrawlUrl(ori_url="http://b/", layer=2), forwarded=True)
    in_flight.finish_unfetched(handed)  # polled and over without a fetch: a slot too
    again = Finished.retry(CrawlUrl(ori_url="http://c/", layer=1), "L", status.TIMEOUT)
    assert in_flight.finish(again)  # flush_pages wait

    flush = in_flight.take_finished()
    assert flush == [refused, handed, again] and not in_flight.waiting
    assert in_flight.room(done=0) == 9  # taken for a flush, not committed yet
    in_flight.flushed(flush)
    assert in_flight.idle and in_flight.room(done=0) == 12
    assert [f.outcome.kind for f in flush] == [FAILURE, SUCCESS, RETRY]
    assert refused.outcome.status_code == status.ROBOTS_PRECLUDED and refused.links == ()
    assert handed.record is None and handed.forwarded and not refused.forwarded


def test_a_flush_is_due_once_a_quarter_of_the_slots_wait_for_one_or_flush_pages_if_fewer():
    def finished_until_due(in_flight: InFlight) -> int:
        for count in range(1, in_flight.concurrency + 1):
            in_flight.start()
            if in_flight.finish(Finished.retry(CrawlUrl(ori_url=f"http://a/{count}", layer=1), "L", status.TIMEOUT)):
                return count
        raise AssertionError("no flush was due with every slot waiting")

    assert finished_until_due(InFlight(concurrency=32, max_pages=None, flush_pages=256)) == 8
    assert finished_until_due(InFlight(concurrency=32, max_pages=None, flush_pages=5)) == 5
    assert finished_until_due(InFlight(concurrency=2, max_pages=None, flush_pages=256)) == 1  # every page


def test_a_fetch_carries_its_links_as_url_and_hop_pairs_and_its_record_encoded():
    record = CrawlUrl(ori_url="http://a/", layer=3, status_code=200)
    links = [("http://a/next", "L"), ("http://a/style.css", "E"), ("http://b/", "R")]
    fetched = Finished.fetched(record, "LLL", links, Outcome.success(status_code=200))
    assert (fetched.url, fetched.layer, fetched.hop_path, fetched.links) == ("http://a/", 3, "LLL", links)
    assert decode(fetched.record).status_code == 200 and not fetched.forwarded
