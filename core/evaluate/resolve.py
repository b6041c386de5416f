"""Evidence text -> an exact span of the canonical text, or an honest "unresolved".

Two steps, on one page's slice of ``doc.text`` (the whole text when no page is given):

1. **exact**: the evidence with all whitespace removed is searched in a whitespace-free
   view of the page. The view keeps, for each of its characters, the canonical offset it
   came from, so the span is read from that map (never from a position in the view). A
   match counts only on word boundaries (see ``core.align.exact``): ``he said`` never
   matches the end of ``the said``, nor ``note book`` ``notebook``. Of several whole-word
   matches the first on the page is taken.
2. **aligned**: the evidence's words are aligned on the page's words
   (``core.align.window``: a multiset match, so reordered table cells still match, the
   tightest run holding at least ``threshold`` of them). Below the threshold the label is
   unresolved, with the best coverage seen; it is never guessed.

Evidence that starts on its page and runs on into the next (a paragraph cut by a page
break) is searched the same way over the two pages once its own page has failed; a span
found there must start on the labelled page.

Words and their comparison form are defined in ``core.align.words`` (hyphenation
joined, ligatures expanded, case and punctuation ignored); their offsets are those of the
regex match on ``doc.text`` itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from core.align.exact import View, exact_match, whitespace_free_view
from core.align.window import align_words
from core.align.words import Word, words_of
from core.errors import LabelError
from core.evaluate.labels import Evidence, GoldSpan, LabelledQuery
from core.provenance.types import Document

DEFAULT_THRESHOLD = 0.95
_RegionKey = tuple[str, int, int]  # (document sha256, char_start, char_end)


@dataclass(frozen=True, slots=True, kw_only=True)
class Resolution:
    """Outcome for one evidence text: ``span`` set when resolved, else ``reason``.

    ``coverage`` is the share of evidence words inside the span (or, unresolved, the best
    share any nearby run of page words reached).
    """

    span: GoldSpan | None
    coverage: float
    reason: str = ""

    @property
    def resolved(self) -> bool:
        return self.span is not None


def check_threshold(threshold: float) -> float:
    """``threshold`` if it is a share in (0, 1]; else a ``LabelError`` saying so."""
    if not 0 < threshold <= 1:
        raise LabelError(
            f"the alignment threshold is a share in (0, 1], got {threshold}: pass e.g. 0.95"
        )
    return threshold


class Resolver:
    """Resolves evidence against loaded documents; caches each page's view and words."""

    def __init__(self, *, threshold: float = DEFAULT_THRESHOLD) -> None:
        self.threshold = check_threshold(threshold)
        self._views: dict[_RegionKey, View] = {}
        self._words: dict[_RegionKey, list[Word]] = {}

    def region(self, doc: Document, page: int | None) -> tuple[int, int]:
        """``[char_start, char_end)`` searched for evidence on ``page`` (1-based)."""
        if page is None:
            return 0, len(doc.text)
        if not doc.is_paged:
            raise LabelError(f"{doc.doc_id} has no pages: give its evidence with page null")
        for entry in doc.pages:
            if entry.number == page:
                return entry.char_start, entry.char_end
        raise LabelError(f"{doc.doc_id} has no page {page} (it has {len(doc.pages)})")

    def resolve(self, doc: Document, evidence: Evidence) -> Resolution:
        """Resolve one evidence text on its page of ``doc``; see the module docstring."""
        if not evidence.text.split():
            return Resolution(span=None, coverage=0.0, reason="evidence is empty")
        start, end = self.region(doc, evidence.page)
        keys = [(doc.sha256, start, end)]
        spill = self._spill_end(doc, evidence.page)
        if spill is not None:
            keys.append((doc.sha256, start, spill))
        for key in keys:
            found = self._exact(doc, evidence, key)
            if found is not None and found.span is not None and found.span.char_start < end:
                return found
        first = self._align(doc, evidence, keys[0])
        if first.resolved or len(keys) == 1:
            return first
        wider = self._align(doc, evidence, keys[1])
        if wider.span is not None and wider.span.char_start < end:
            return wider
        return first

    @staticmethod
    def _spill_end(doc: Document, page: int | None) -> int | None:
        """End of the page after ``page``: evidence that starts on its page may run on."""
        if page is None or page >= len(doc.pages):
            return None
        return doc.pages[page].char_end  # pages are numbered 1..n in order

    def _exact(self, doc: Document, evidence: Evidence, key: _RegionKey) -> Resolution | None:
        start, end = key[1], key[2]
        view = self._views.get(key) or self._views.setdefault(
            key, whitespace_free_view(doc.text, start, end)
        )
        found = exact_match(doc.text, view, evidence.text.split(), (start, end))
        if found is None:
            return None
        first, last = found
        span = GoldSpan(
            char_start=first,
            char_end=last,
            text=doc.text[first:last],
            method="exact",
            coverage=1.0,
            page=evidence.page,
        )
        return Resolution(span=span, coverage=1.0)

    def _align(self, doc: Document, evidence: Evidence, key: _RegionKey) -> Resolution:
        page_words = self._words.get(key) or self._words.setdefault(
            key, words_of(doc.text, key[1], key[2])
        )
        if not words_of(evidence.text):
            return Resolution(span=None, coverage=0.0, reason="evidence has no words")
        found = align_words(doc.text, page_words, evidence.text, self.threshold)
        if found.char_start is None or found.char_end is None:
            where = f"page {evidence.page}" if evidence.page else doc.doc_id
            return Resolution(
                span=None,
                coverage=found.coverage,
                reason=f"best word coverage {found.coverage:.0%} on {where} is under "
                f"{self.threshold:.0%}",
            )
        first, last = found.char_start, found.char_end
        span = GoldSpan(
            char_start=first,
            char_end=last,
            text=doc.text[first:last],
            method="aligned",
            coverage=found.coverage,
            page=evidence.page,
        )
        return Resolution(span=span, coverage=found.coverage)


class DocumentIndex:
    """Finds a document by ``doc_id``, source file name, or file name without extension."""

    def __init__(self, docs: Sequence[Document]) -> None:
        self.docs = list(docs)
        self._names: dict[str, list[Document]] = {}
        for doc in self.docs:
            source = PurePath(doc.source)
            for name in {doc.doc_id, source.name, source.stem}:
                if name:
                    self._names.setdefault(name, []).append(doc)

    def find(self, name: str) -> Document | None:
        """The one document called ``name``; ``LabelError`` if several share the name."""
        for key in (name, PurePath(name).name, PurePath(name).stem):
            found = {id(d): d for d in self._names.get(key, [])}
            if len(found) > 1:
                ids = ", ".join(sorted(d.doc_id for d in found.values()))
                raise LabelError(f"{name!r} names several documents ({ids}): use a doc_id")
            if found:
                return next(iter(found.values()))
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedQuery:
    """A query whose gold is exact canonical spans of one loaded document."""

    query: LabelledQuery
    doc_id: str
    doc_sha256: str
    gold: tuple[GoldSpan, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Unresolved:
    """A query left out of the evaluation, and why (``coverage``: best word coverage)."""

    query_id: str
    doc: str
    reason: str
    coverage: float | None = None

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"id": self.query_id, "doc": self.doc, "reason": self.reason}
        if self.coverage is not None:
            out["coverage"] = round(self.coverage, 4)
        return out


def _check_given(doc: Document, gold: GoldSpan) -> str:
    if gold.char_end > len(doc.text):
        return f"gold span [{gold.char_start}, {gold.char_end}) is past the end of the text"
    if gold.text is not None and doc.text[gold.char_start : gold.char_end] != gold.text:
        return f"gold text at [{gold.char_start}, {gold.char_end}) differs from the document"
    return ""


def resolve_query(
    query: LabelledQuery, index: DocumentIndex, resolver: Resolver
) -> ResolvedQuery | Unresolved:
    """Resolve one query. Given gold wins (evidence beside it is only a record); else every
    evidence text must resolve, or the whole query is unresolved."""
    doc = index.find(query.doc)
    if doc is None:
        return Unresolved(query_id=query.id, doc=query.doc, reason="document not loaded")
    if query.doc_sha256 and query.doc_sha256 != doc.sha256:
        return Unresolved(
            query_id=query.id, doc=query.doc, reason="document changed since labelled"
        )
    if query.gold:
        for gold in query.gold:
            problem = _check_given(doc, gold)
            if problem:
                return Unresolved(query_id=query.id, doc=query.doc, reason=problem)
        return ResolvedQuery(query=query, doc_id=doc.doc_id, doc_sha256=doc.sha256, gold=query.gold)
    spans: list[GoldSpan] = []
    for number, evidence in enumerate(query.evidence, start=1):
        try:
            outcome = resolver.resolve(doc, evidence)
        except LabelError as exc:
            return Unresolved(query_id=query.id, doc=query.doc, reason=f"evidence {number}: {exc}")
        if outcome.span is None:
            reason = f"evidence {number}: {outcome.reason}"
            return Unresolved(
                query_id=query.id, doc=query.doc, reason=reason, coverage=outcome.coverage
            )
        spans.append(outcome.span)
    return ResolvedQuery(query=query, doc_id=doc.doc_id, doc_sha256=doc.sha256, gold=tuple(spans))


def resolve_queries(
    queries: Sequence[LabelledQuery],
    docs: Sequence[Document],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> tuple[list[ResolvedQuery], list[Unresolved]]:
    """Resolve a query set against loaded documents, in input order."""
    index = DocumentIndex(docs)
    resolver = Resolver(threshold=threshold)
    resolved: list[ResolvedQuery] = []
    unresolved: list[Unresolved] = []
    for query in queries:
        outcome = resolve_query(query, index, resolver)
        if isinstance(outcome, ResolvedQuery):
            resolved.append(outcome)
        else:
            unresolved.append(outcome)
    return resolved, unresolved


def pin_labels(resolved: Sequence[ResolvedQuery]) -> list[LabelledQuery]:
    """Resolved queries as query-set lines with exact gold (method, coverage and text kept),
    pinned to the document version by ``doc_sha256``; evidence stays as a record."""
    return [
        LabelledQuery(
            id=r.query.id,
            query=r.query.query,
            doc=r.query.doc,
            gold=r.gold,
            evidence=r.query.evidence,
            doc_sha256=r.doc_sha256,
            meta=r.query.meta,
        )
        for r in resolved
    ]
