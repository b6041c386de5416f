"""What a loader of ``core.ingest`` is given: the bytes and what was computed once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadRequest:
    """What a loader gets: the bytes, the file name (for messages), the display source,
    the ids computed once by the dispatcher, and a password (PDF only)."""

    data: bytes
    name: str
    source: str
    doc_id: str
    sha256: str
    stem: str
    password: str | None = None
    # PDF only: the OCR policy (None: the one in force) and who is told of each OCR'd
    # page, ``(page, pages)`` (``core.ingest.ocr``).
    ocr: str | None = None
    ocr_progress: Callable[[int, int], None] | None = None

    @property
    def ids(self) -> tuple[str, str, str]:
        return (self.doc_id, self.sha256, self.stem)
