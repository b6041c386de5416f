"""The panel of a background job (indexing, a sweep): a progress bar with real counts and
a stop button while it runs, polled twice a second by a fragment; then its summary once,
in place, and one rerun so the page shows what the job made."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

import streamlit as st

from workbench import _ui

POLL_S = 0.5


class BackgroundJob(Protocol):
    """What ``core.index_job.IndexJob`` and ``core.tune.job.SweepJob`` both offer."""

    cancel: threading.Event
    announced: bool

    @property
    def running(self) -> bool: ...

    def progress(self) -> tuple[float, str]: ...

    def summary(self) -> tuple[str, str]: ...


def job_panel(job: Any, *, stop_label: str, on_done: Callable[[Any], None] | None = None) -> None:
    """The panel of ``job`` (a ``BackgroundJob``; nothing when None); ``on_done(job)``
    runs once, when the finished job's summary is first shown, before the rerun."""
    if job is not None:
        run_every = POLL_S if job.running else None
        st.fragment(_job_body, run_every=run_every)(job, stop_label, on_done)


def _job_body(job: BackgroundJob, stop_label: str, on_done: Callable[[Any], None] | None) -> None:
    if job.running:
        share, line = job.progress()
        st.progress(share, text=line)
        st.button(stop_label, icon=":material/cancel:", on_click=job.cancel.set)
        return
    level, line = job.summary()
    {"success": st.success, "warning": st.warning, "error": st.error}[level](_ui.md(line))
    if not job.announced:
        job.announced = True
        if on_done is not None:
            on_done(job)
        st.rerun()
