"""The collector pause around text building is counted across holders and threads."""

from __future__ import annotations

import gc
import threading

from core.ingest.gc_pause import paused_gc


def test_the_last_holder_switches_the_collector_back_on() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer holder still holds it
    assert gc.isenabled()


def test_overlapping_threads_leave_it_as_it_was() -> None:
    entered, release = threading.Barrier(3), threading.Event()

    def hold() -> None:
        with paused_gc():
            entered.wait()
            release.wait(5)

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for t in threads:
        t.start()
    entered.wait()
    assert not gc.isenabled()
    release.set()
    for t in threads:
        t.join(5)
    assert gc.isenabled()


def test_a_collector_switched_off_before_stays_off() -> None:
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_inside_still_ends_the_pause() -> None:
    try:
        with paused_gc():
            raise RuntimeError("bad page")
    except RuntimeError:
        pass
    assert gc.isenabled()
