"""Citations: a quoted span of one document version, rendered and verified.

A citation is checkable on its own: it names the document (``doc_id``), the exact bytes it
was made from (``doc_sha256``) and a half-open character span with the quoted text. A
citation of a transcript also carries the time range of its cues in seconds
(``start_s``/``end_s``) and renders it: ``lecture-3, 00:12:31-00:13:05, chars a-b``.
Verifying never re-points a citation: if the document changed, the citation is ``stale``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from core.provenance.serial import Fields, as_int
from core.provenance.types import Document

# A span repeats an earlier one of the same document version when more than this share of
# its characters lies inside it (``core.evaluate.metrics.duplicate_flags``,
# ``core.retrieve.rerank``).
DUPLICATE_SHARE = 0.5


class SpanLike(Protocol):
    """A half-open span of one document version's canonical text, with its text."""

    @property
    def doc_id(self) -> str: ...
    @property
    def doc_sha256(self) -> str: ...
    @property
    def char_start(self) -> int: ...
    @property
    def char_end(self) -> int: ...
    @property
    def text(self) -> str: ...


class CitedSpan(SpanLike, Protocol):
    """What a citation is made of: a chunk's provenance fields (a ``Chunk``, a stored hit)."""

    @property
    def pages(self) -> tuple[int, ...]: ...
    @property
    def start_s(self) -> float | None: ...
    @property
    def end_s(self) -> float | None: ...


class CitationStatus(StrEnum):
    OK = "ok"
    MISMATCH = "mismatch"  # same document bytes, but the offsets do not hold the quote
    STALE = "stale"  # the document with this id now has other bytes
    MISSING = "missing"  # no document with this id is loaded


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    doc_id: str
    doc_sha256: str
    char_start: int
    char_end: int
    quote: str
    pages: tuple[int, ...] = ()
    start_s: float | None = None
    end_s: float | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.char_start <= self.char_end:
            raise ValueError(f"Citation: bad span [{self.char_start}, {self.char_end})")
        if len(self.quote) != self.char_end - self.char_start:
            raise ValueError("Citation: quote length differs from its span")

    @classmethod
    def of_span(cls, doc: Document, char_start: int, char_end: int) -> Citation:
        """Cite ``doc.text[char_start:char_end]`` exactly."""
        if not 0 <= char_start <= char_end <= len(doc.text):
            raise ValueError(f"span [{char_start}, {char_end}) outside {doc.doc_id}")
        time = doc.time_range(char_start, char_end)
        return cls(
            doc_id=doc.doc_id,
            doc_sha256=doc.sha256,
            char_start=char_start,
            char_end=char_end,
            quote=doc.text[char_start:char_end],
            pages=doc.pages_of(char_start, char_end),
            start_s=None if time is None else time[0],
            end_s=None if time is None else time[1],
        )

    @classmethod
    def of_chunk(cls, chunk: CitedSpan) -> Citation:
        """The citation of a chunk, or of anything that carries a chunk's provenance
        fields (a stored hit): the one place a citation is made from them."""
        return cls(
            doc_id=chunk.doc_id,
            doc_sha256=chunk.doc_sha256,
            char_start=chunk.char_start,
            char_end=chunk.char_end,
            quote=chunk.text,
            pages=chunk.pages,
            start_s=chunk.start_s,
            end_s=chunk.end_s,
        )

    def render(self, printed: Mapping[int, str] | None = None) -> str:
        """``doc_id, p. N, chars a-b`` (``pp. N-M`` across pages; no page for reflowable;
        ``HH:MM:SS-HH:MM:SS`` in place of the page for a transcript). ``printed``: the
        labels the pages print on themselves (``core.ingest.page_labels``), shown beside
        the indices that have one: ``p. 49 (printed 46)``."""
        parts = [self.doc_id]
        marks = printed or {}
        first, last = (self.pages[0], self.pages[-1]) if self.pages else (0, 0)
        if len(self.pages) == 1:
            own = f" (printed {marks[first]})" if first in marks else ""
            parts.append(f"p. {first}{own}")
        elif self.pages:
            own = (
                f" (printed {marks[first]} to {marks[last]})"
                if first in marks and last in marks
                else ""
            )
            parts.append(f"pp. {first}-{last}{own}")
        if self.start_s is not None and self.end_s is not None:
            parts.append(clock_range(self.start_s, self.end_s))
        parts.append(f"chars {self.char_start}-{self.char_end}")
        return ", ".join(parts)

    def verify(self, doc: Document | None) -> CitationStatus:
        if doc is None or doc.doc_id != self.doc_id:
            return CitationStatus.MISSING
        if doc.sha256 != self.doc_sha256:
            return CitationStatus.STALE
        if doc.text[self.char_start : self.char_end] != self.quote:
            return CitationStatus.MISMATCH
        return CitationStatus.OK

    def verify_in(self, docs: Mapping[str, Document]) -> CitationStatus:
        return self.verify(docs.get(self.doc_id))

    def to_dict(self) -> dict[str, object]:
        return {
            "doc_id": self.doc_id,
            "doc_sha256": self.doc_sha256,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "pages": list(self.pages),
            "quote": self.quote,
            "citation": self.render(),
            **({} if self.start_s is None else {"start_s": self.start_s, "end_s": self.end_s}),
        }

    @classmethod
    def from_dict(cls, data: object, where: str = "citation") -> Citation:
        fields = Fields(data, where)
        return cls(
            doc_id=fields.string("doc_id"),
            doc_sha256=fields.string("doc_sha256"),
            char_start=fields.integer("char_start"),
            char_end=fields.integer("char_end"),
            quote=fields.string("quote"),
            pages=tuple(fields.list_of("pages", as_int, required=False)),
            start_s=fields.optional_number("start_s"),
            end_s=fields.optional_number("end_s"),
        )

    @classmethod
    def read(cls, data: object, where: str) -> Citation:
        return cls.from_dict(data, where)


def format_clock(seconds: float) -> str:
    """``HH:MM:SS`` of a time in seconds (rounded down to the second)."""
    whole = max(0, int(seconds))
    return f"{whole // 3600:02d}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def clock_range(start_s: float, end_s: float | None) -> str:
    """``HH:MM:SS-HH:MM:SS`` of a time range in seconds."""
    return f"{format_clock(start_s)}-{format_clock(end_s if end_s is not None else start_s)}"


def merge_citations(citations: Iterable[Citation]) -> list[Citation]:
    """Merge overlapping or touching citations of the same document version.

    The merged quote is rebuilt from the parts, so no document is needed; citations of
    different versions (other ``doc_sha256``) never merge. Output is sorted by
    (doc_id, doc_sha256, char_start).
    """
    ordered = sorted(citations, key=lambda c: (c.doc_id, c.doc_sha256, c.char_start, c.char_end))
    merged: list[Citation] = []
    for cit in ordered:
        last = merged[-1] if merged else None
        same_doc = last is not None and (last.doc_id, last.doc_sha256) == (
            cit.doc_id,
            cit.doc_sha256,
        )
        if last is not None and same_doc and cit.char_start <= last.char_end:
            if cit.char_end > last.char_end:
                tail = cit.quote[last.char_end - cit.char_start :]
                merged[-1] = Citation(
                    doc_id=last.doc_id,
                    doc_sha256=last.doc_sha256,
                    char_start=last.char_start,
                    char_end=cit.char_end,
                    quote=last.quote + tail,
                    pages=tuple(sorted(set(last.pages) | set(cit.pages))),
                    start_s=_min_time(last.start_s, cit.start_s),
                    end_s=_max_time(last.end_s, cit.end_s),
                )
            continue
        merged.append(cit)
    return merged


def _min_time(a: float | None, b: float | None) -> float | None:
    return b if a is None else (a if b is None else min(a, b))


def _max_time(a: float | None, b: float | None) -> float | None:
    return b if a is None else (a if b is None else max(a, b))
