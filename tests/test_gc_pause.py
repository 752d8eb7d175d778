"""gc_paused holds the cyclic collector off for a batch and gives back the state it found."""

import gc
import threading

import pytest

from pycrawler.jvm.gc_pause import gc_paused


@pytest.fixture(autouse=True)
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


def test_the_collector_is_off_inside_and_on_again_after():
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_nested_pauses_turn_it_back_on_only_at_the_outermost_end():
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_callers_own_disable_is_kept():
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_an_exception_still_turns_it_back_on():
    with pytest.raises(ValueError):
        with gc_paused():
            raise ValueError
    assert gc.isenabled()


def test_overlapping_pauses_in_threads_end_with_the_collector_on():
    entered, release = threading.Barrier(2), threading.Event()

    def pause():
        with gc_paused():
            entered.wait()
            release.wait()

    worker = threading.Thread(target=pause)
    worker.start()
    with gc_paused():
        entered.wait()
        release.set()
        worker.join()
        assert not gc.isenabled()  # the worker's pause ended, ours has not
    assert gc.isenabled()
