"""The end of a cluster crawl: done when every live worker is idle and nothing is in transit,
cheap to ask while the last workers finish, and reached: no link is left for ever in a
worker's stream after a kill -9 or a Redis restart, and no worker stays busy for ever.

Real Redis (tests/test_cluster.py's fixture); `Membership`s and exchanges in this process
stand for the workers, and the test drives them step by step (no heartbeat threads). The
queues `cluster_done` checks are one Redis list in the first tests.
"""

from __future__ import annotations

import redis

from pycrawler.cluster.central import CentralExchange
from pycrawler.cluster.central.layout import WORKER_GROUP
from pycrawler.cluster.hostsplit import HostSplitExchange
from pycrawler.cluster.membership import Membership, weight
from pycrawler.cluster.protocol import Link, encode_links

QUEUE = "pycrawler:c:queue"


def membership(url: str, worker: str) -> Membership:
    return Membership(redis.Redis.from_url(url), "c", worker, lease=5.0, heartbeat=1.0)


def workers(url: str, count: int = 3) -> list[Membership]:
    members = [membership(url, f"w{i}") for i in range(count)]
    for member in members:
        member.join()
    for member in members:
        member.beat()  # every view holds every member
    return members


def exchange(url: str, worker: str) -> HostSplitExchange:
    """A host-splitting worker, joined, without its heartbeat thread: the test beats for it."""
    joined = HostSplitExchange(membership(url, worker), settle=0)
    joined._ensure_group()
    joined.membership.join()
    return joined


def address_of_w1() -> str:
    """An address whose host (port 80) rendezvous hashing gives w1 rather than w0."""
    return next(f"10.0.0.{i}" for i in range(1, 99) if weight("w1", f"10.0.0.{i}:80") > weight("w0", f"10.0.0.{i}:80"))


def read(worker: HostSplitExchange) -> list:
    """The next deliveries for ``worker`` (its first read after a start looks at what a previous
    life left pending, which may be nothing)."""
    for _ in range(3):
        if deliveries := worker.receive(100):
            return deliveries
    return []


def urls(deliveries) -> list[str]:
    return [link.url for delivery in deliveries for link in delivery.links]


def queue_length(pipe) -> None:
    pipe.llen(QUEUE)


def commands_during(client: redis.Redis, step) -> tuple[object, int]:
    """What ``step()`` returns, and how many commands Redis ran for it (less the first INFO,
    which the second counts)."""
    before = client.info("stats")["total_commands_processed"]
    answer = step()
    return answer, client.info("stats")["total_commands_processed"] - before - 1


def test_the_cluster_is_done_only_when_every_worker_is_idle_and_nothing_is_in_transit(local_redis):
    first, second, third = workers(local_redis.url)
    assert not first.cluster_done(queue_length)  # the others have not said they are idle
    assert not second.cluster_done(queue_length) and not third.cluster_done(queue_length)
    first.redis.rpush(QUEUE, "a link in transit")
    assert not first.cluster_done(queue_length)
    first.redis.delete(QUEUE)
    assert first.cluster_done(queue_length)
    assert second.cluster_done(queue_length) and third.cluster_done(queue_length)


def test_only_the_first_member_checks_and_the_others_ask_with_one_command(local_redis):
    first, second, third = workers(local_redis.url)
    client = first.redis
    for member in (second, third):
        assert not member.cluster_done(queue_length)  # shows its idle flag, reads no answer yet
    assert commands_during(client, lambda: second.cluster_done(queue_length)) == (False, 1)
    assert first.cluster_done(queue_length)
    for member in (second, third):
        assert commands_during(client, lambda: member.cluster_done(queue_length)) == (True, 1)


def test_new_work_clears_the_idle_flag_and_only_the_worker_sets_it_again(local_redis):
    first, second, third = workers(local_redis.url)
    for member in (second, third):
        member.cluster_done(queue_length)
    pipe = second.redis.pipeline(transaction=True)
    second.busy(pipe)  # in the transaction that acknowledges the work
    pipe.execute()
    second.beat({"pages": 7})  # a heartbeat carries figures, never the flag
    assert not first.cluster_done(queue_length)
    assert second.cluster_done(queue_length) is False  # idle again: flag shown, the answer is not in yet
    assert first.cluster_done(queue_length)


def test_a_worker_that_joins_withdraws_the_answer_until_it_is_idle_too(local_redis):
    first, second, third = workers(local_redis.url, 3)
    for member in (second, third, first):
        member.cluster_done(queue_length)
    late = membership(local_redis.url, "w3")
    late.join()
    for member in (first, second, third):
        member.beat()
    assert not second.cluster_done(queue_length) and not first.cluster_done(queue_length)
    assert not late.cluster_done(queue_length)  # shows its flag; the first member checks again
    assert first.cluster_done(queue_length) and late.cluster_done(queue_length)


def test_a_worker_back_whose_read_links_were_rerouted_reads_new_ones_and_ends(local_redis):
    """A worker killed after reading links, before acknowledging them, leaves them pending in its
    stream's group; a survivor re-routes them. Back, the worker finds those entries gone: it must
    clear them at once, or it would read nothing new and never be idle."""
    first, second = exchange(local_redis.url, "w0"), exchange(local_redis.url, "w1")
    first.membership.beat()
    ip = address_of_w1()
    first.add([Link(f"http://{ip}/read-then-killed")])
    first.flush()
    assert urls(read(second)) == [f"http://{ip}/read-then-killed"]
    second.membership.leave()  # its lease ran out: the survivor re-routes its stream
    first.membership.beat()
    first._reclaim()

    back = exchange(local_redis.url, "w1")
    first.membership.beat()
    first.add([Link(f"http://{ip}/sent-after-the-return")])
    first.flush()
    new = read(back)  # not the entry it read before: that went to the survivor
    assert urls(new) == [f"http://{ip}/sent-after-the-return"]
    back.ack(new)
    rerouted = read(first)
    assert urls(rerouted) == [f"http://{ip}/read-then-killed"]
    first.ack(rerouted)
    back.report(0, 0, idle=True)
    assert first.report(1, 0, idle=True)
    assert back.report(1, 0, idle=True)


def test_an_acknowledgement_redis_did_not_take_is_sent_again_by_an_idle_worker(local_redis):
    """Links committed in the worker's frontier, their acknowledgement lost to a Redis restart:
    with no page left to flush, the worker's idle report sends it again, and the crawl ends."""
    first, second = exchange(local_redis.url, "w0"), exchange(local_redis.url, "w1")
    first.membership.beat()
    ip = address_of_w1()
    first.add([Link(f"http://{ip}/")])
    first.flush()
    deliveries = read(second)
    assert urls(deliveries) == [f"http://{ip}/"]
    local_redis.stop()
    second.ack(deliveries)  # the links are committed; Redis is away
    local_redis.start()
    assert not second.report(1, 0, idle=True)  # acknowledges, shows its flag
    assert first.report(0, 0, idle=True)
    assert second.report(1, 0, idle=True)


def test_links_redis_handed_out_in_a_read_whose_answer_was_lost_are_read_again(local_redis):
    """Redis may run a read (the entries are then this worker's, pending) and go down before its
    answer leaves: a read of new entries never returns those again, so after a failed read the
    worker reads its pending entries first, or the links would sit in its stream for ever."""
    first, second = exchange(local_redis.url, "w0"), exchange(local_redis.url, "w1")
    first.membership.beat()
    ip = address_of_w1()
    assert read(second) == []  # past the start's look at what a previous life left pending
    first.add([Link(f"http://{ip}/answer-lost")])
    first.flush()
    stream = second.stream("w1")
    assert redis.Redis.from_url(local_redis.url).xreadgroup("workers", "w1", {stream: ">"})  # the read Redis ran
    local_redis.stop()
    assert second.receive(100) == []  # the read that saw Redis go
    local_redis.start()
    delivered = read(second)
    assert urls(delivered) == [f"http://{ip}/answer-lost"]
    second.ack(delivered)
    assert not second.report(1, 0, idle=True)
    assert first.report(0, 0, idle=True) and second.report(1, 0, idle=True)


def test_seed_003s_task_pool_is_read_again_after_a_read_whose_answer_was_lost(local_redis):
    """The same for the URLs a central host allocated to a worker (`--dedupe central`)."""
    client = redis.Redis.from_url(local_redis.url)
    worker = CentralExchange(membership(local_redis.url, "w0"), background=False)
    assert worker.receive(100) == []  # past the start's look at what a previous life left pending
    task_pool = worker.layout.task_pool("w0")
    client.xadd(task_pool, {"urls": encode_links([Link("http://10.0.0.1/answer-lost")])})
    assert client.xreadgroup(WORKER_GROUP, "w0", {task_pool: ">"})  # the read Redis ran
    local_redis.stop()
    assert worker.receive(100) == []
    local_redis.start()
    assert urls(worker.receive(100)) == ["http://10.0.0.1/answer-lost"]


def test_a_report_while_redis_is_away_leaves_the_unsent_forwards_to_the_crawls_flush(local_redis):
    """A URL forwarded between two crawl flushes while Redis is away: the reports in between
    (every 0.1 s) try to send it and fail, and the crawl's next flush still returns it, for the
    commit that finishes it in this worker's frontier to write it to the outbox."""
    first, _ = exchange(local_redis.url, "w0"), exchange(local_redis.url, "w1")
    first.membership.beat()
    handed = Link(f"http://{address_of_w1()}/moved", 2, "LL", "http://10.0.0.200/")
    local_redis.stop()
    assert first.forward([handed]) == []  # its host is the other worker's
    assert not first.report(0, 1, idle=False)
    assert first.flush() == [handed]
    local_redis.start()
    assert first.flush() is None  # Redis took it
