"""The end of a cluster crawl: done when every live worker is idle and nothing is in transit, and
cheap to ask while the last workers finish.

Real Redis (tests/test_cluster.py's fixture), three `Membership`s in this process standing for
three workers; the queues a mode checks are one Redis list here.
"""

from __future__ import annotations

import redis
from test_cluster import local_redis  # noqa: F401 (a fixture)

from pycrawler.cluster.membership import Membership

QUEUE = "pycrawler:c:queue"


def workers(url: str, count: int = 3) -> list[Membership]:
    members = [Membership(redis.Redis.from_url(url), "c", f"w{i}", lease=5.0, heartbeat=1.0) for i in range(count)]
    for member in members:
        member.join()
    for member in members:
        member.beat()  # every view holds every member
    return members


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
    late = Membership(redis.Redis.from_url(local_redis.url), "c", "w3", lease=5.0, heartbeat=1.0)
    late.join()
    for member in (first, second, third):
        member.beat()
    assert not second.cluster_done(queue_length) and not first.cluster_done(queue_length)
    assert not late.cluster_done(queue_length)  # shows its flag; the first member checks again
    assert first.cluster_done(queue_length) and late.cluster_done(queue_length)
