"""A one-line text progress bar on stderr, fed by ``progress(done, total)`` callbacks.

The bar is redrawn in place with a carriage return and ends its line when ``done``
reaches ``total`` (or on :meth:`ProgressBar.close`), so the command's own output on stdout
stays clean. Redraws are throttled to whole-percent changes. It is always written, TTY or
not: a log then shows the final state of each bar on its own line.
"""

from __future__ import annotations

import sys
from typing import TextIO

BAR_WIDTH = 30


class ProgressBar:
    """``bar(done, total)`` redraws ``label [#####.....] done/total``."""

    def __init__(self, label: str = "", *, stream: TextIO | None = None, width: int = BAR_WIDTH):
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self._last: tuple[int, int] | None = None
        self._open = False

    def __call__(self, done: int, total: int) -> None:
        total = max(int(total), 0)
        done = min(max(int(done), 0), total) if total else 0
        percent = 100 * done // total if total else 100
        state = (percent, total)
        finished = done >= total
        if state == self._last and not finished:
            return
        if finished and self._last is not None and self._last == (100, total) and not self._open:
            return
        self._last = state
        filled = self.width * done // total if total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        prefix = f"{self.label} " if self.label else ""
        self.stream.write(f"\r{prefix}[{bar}] {done}/{total}")
        self._open = True
        if finished:
            self.close()
        else:
            self.stream.flush()

    def close(self) -> None:
        """End the bar's line (idempotent)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
