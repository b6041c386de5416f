"""A sweep in a background thread: progress with real counts and time left, cancellable.

A UI starts a ``SweepJob`` and polls it: ``progress()`` gives the share done (points
finished plus the running point's own (chunk x method) units) and a line with the counts
and an estimate of the time left (elapsed time scaled by the share still to do: rough
while the first point runs, since late chunking's later points only pool); ``cancel.set()``
stops it between two progress events. The sweep is saved after every point (``on_point``)
so a stopped job is resumed by starting it again with the saved sweep as ``resume``.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.errors import ChunkscopeError
from core.evaluate.cost import duration
from core.tune.sweep import SweepCancelled, run_sweep
from core.tune.sweep_records import Sweep


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


@dataclass(slots=True, kw_only=True)
class SweepJob:
    """One sweep run: ``arguments`` are ``run_sweep``'s (without the hooks)."""

    arguments: dict[str, Any]
    on_point: Callable[[Sweep], None] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)
    latest: tuple[int, int, int, int] | None = None
    result: Sweep | None = None
    stopped: Sweep | None = None
    error: str | None = None
    started: float = 0.0
    announced: bool = False
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    def start(self) -> None:
        self.started = time.perf_counter()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        """The sweep itself (in the calling thread); never raises."""
        try:
            self.result = run_sweep(
                **self.arguments,
                progress=self._note,
                cancelled=self.cancel.is_set,
                on_point=self.on_point,
            )
        except SweepCancelled as stop:
            self.stopped = stop.sweep
        except ChunkscopeError as exc:
            self.error = str(exc)
        except Exception as exc:  # a bug: its traceback to the log, one line to the UI
            traceback.print_exc()
            self.error = f"the sweep failed: {type(exc).__name__}: {exc}"

    def _note(self, point: int, points: int, done: int, total: int) -> None:
        self.latest = (point, points, done, total)

    def share(self) -> float:
        if self.latest is None:
            return 0.0
        point, points, done, total = self.latest
        return min(1.0, (point + (done / total if total else 0.0)) / max(points, 1))

    def progress(self) -> tuple[float, str]:
        """Share done (0-1) and a line with the real counts and the time left."""
        if self.latest is None:
            return 0.0, "Starting: parsing and chunking the documents…"
        point, points, done, total = self.latest
        share = self.share()
        elapsed = time.perf_counter() - self.started
        # the estimate's own unit (``core.evaluate.cost.duration``: 40 s, 3 min, 1 h 5 min),
        # so the time left reads as the cost estimate before the sweep did
        left = f" · about {duration(elapsed * (1 - share) / share)} left" if share > 0 else ""
        key = self.arguments["grid"][point].policy.key
        return share, (
            f"Point {point + 1} of {points} ({key}): {done:,} of {total:,} chunk × method "
            f"units · {_duration(elapsed)} so far{left}"
        )

    def summary(self) -> tuple[str, str]:
        """``(level, line)`` once the job has ended: success, warning (stopped) or error."""
        if self.error:
            return "error", self.error
        if self.stopped is not None:
            n = len(self.stopped.points)
            return "warning", f"Stopped after {n} point(s); start it again to resume."
        sweep = self.result
        assert sweep is not None
        return "success", (
            f"Swept {len(sweep.points)} points × {len(sweep.methods)} methods in "
            f"{_duration(sweep.timings.get('total_s', 0.0))}."
        )
