"""A background job's panel holds the heap frozen while the job runs: Streamlit collects
garbage over the whole heap after every script run (fragment polls included), with the GIL
held, which starved the job's own thread; frozen objects are skipped by collections."""

from __future__ import annotations

import gc
import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from workbench.engine import jobs


class _Job:
    """Runs until ``done`` is set."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.cancel = threading.Event()
        self.announced = False

    @property
    def running(self) -> bool:
        return not self.done.is_set()

    def progress(self) -> tuple[float, str]:
        return 0.5, "half way"

    def summary(self) -> tuple[str, str]:
        return "success", "done"


def _released(timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while gc.get_freeze_count() and time.monotonic() < deadline:
        time.sleep(0.05)
    return gc.get_freeze_count() == 0


@pytest.fixture
def unfrozen():
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_a_collection_while_a_job_runs_walks_only_what_is_new_and_the_end_releases_it(unfrozen):
    walked_before = len(gc.get_objects())  # what a full collection traverses
    job = _Job()
    try:
        jobs.hold_heap(job)
        assert gc.get_freeze_count() >= 0.9 * walked_before
        assert len(gc.get_objects()) < walked_before / 10
        frozen = gc.get_freeze_count()
        jobs.hold_heap(job)  # the next poll of the same job freezes nothing more
        assert gc.get_freeze_count() - frozen < walked_before / 10
    finally:
        job.done.set()
    assert _released()


def test_the_heap_stays_frozen_until_the_last_of_two_jobs_ends(unfrozen):
    first, second = _Job(), _Job()
    try:
        jobs.hold_heap(first)
        jobs.hold_heap(second)
        first.done.set()
        time.sleep(3 * jobs.POLL_S)
        assert gc.get_freeze_count() > 0
    finally:
        first.done.set()
        second.done.set()
    assert _released()


def test_an_ended_job_freezes_nothing(unfrozen):
    job = _Job()
    job.done.set()
    jobs.hold_heap(job)
    assert gc.get_freeze_count() == 0


def _page() -> None:
    import streamlit as st

    from workbench.engine import jobs

    jobs.job_panel(st.session_state["job"], stop_label="Stop")


def test_the_job_panel_holds_the_heap_while_its_job_runs(unfrozen):
    job = _Job()
    at = AppTest.from_function(_page, default_timeout=60)
    at.session_state["job"] = job
    try:
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert gc.get_freeze_count() > 0
    finally:
        job.done.set()
    assert _released()
