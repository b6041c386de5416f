"""Repairs as experiments: for a failure of method M under policy P, each repair that can
be computed makes one repaired text of the gold, scores it as M scores a chunk and ranks
it against the scores the run already holds for the query (its top hits to the run's
depth). Only the repaired texts are embedded; nothing is re-indexed.

- **boundary**: a chunk of P's size placed to hold the gold whole (its answering sentence,
  the one holding most of the query's content words, when the gold is longer than a
  chunk). When one chunk already holds it whole but the gold is under ``DROWNED`` of
  that chunk (drowned in text about other things), the gold's own blocks (its
  paragraphs) as a chunk of their own; not run when those blocks are longer than a
  chunk (in a text that is not a PDF, the gold's lines then: ``own_lines``) or most of
  the chunk already (``SAME_CHUNK``: nothing to take away).
- **context**: the gold's best chunk with its document title and heading path before it,
  and the short lines just above it that hold a query term it lacks (``lines_above``: a
  segment heading or a table row's name the chunker left in the chunk before), ranked
  against the run's first hits given their own (a control: a title that lifts
  every chunk of the document is not the gold's missing context); not run for a method
  that already reads them (a prefixed method, late chunking).
- **parse**: the gold's region read again by OCR (the PDF page rendered, Tesseract) and
  compared with the text layer; when they differ, the OCR text is ranked.
- **method**: the other methods' ranks of the same gold (already in the run).

A dense method scores a text by the dot product of its vector (made by the method's own
embed step for a chunk, by the encoder for a prefixed or OCR text) with the query's; a
lexical one by BM25 (Lucene's formula, as ``core.methods.lexical.Bm25Index``) against the
run's index statistics (every chunk of the run's corpus). A fused or external method has
no repair of its own: only its method experiment.

An experiment ``fixes`` the failure when its rank is within the run's top k. A rank past
the run's depth is ``None`` ("beyond the top N").
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core import methods as registry
from core.chunk.sentence_bounds import sentence_spans
from core.chunk.spans import strip_span
from core.diagnose.terms import PERIOD, Span, name_like, sentence_start
from core.embed import encode_queries
from core.embed.contextual import contextual_prefix
from core.ingest.ocr import recognise_page, require_engine
from core.methods.lexical import K1, B, indexed_text, terms, word_spans
from core.methods.spec import MethodSpec
from core.provenance.types import Block, Chunk, Document, make_chunk_id

REPAIRS = ("boundary", "context", "parse", "method")
DROWNED = 0.5  # a gold under this share of the chunk holding it whole is drowned there
SAME_CHUNK = 0.8  # the gold's blocks covering this share of its chunk: no repair to make
RIVALS = 10  # the run's first hits the context repair gives their own title and headings
ABOVE = 600  # characters before a chunk read for the lines that say what it is about
LABEL_LINE = 120  # the longest such line: a heading, a table row's name, a segment title
# Words a question is phrased with that say nothing of what it asks.
PROMPT_WORDS = frozenset(
    """please explain describe like tell give list show provide detail details briefly
    summarize summarise summary discuss outline help know want find mean means meaning
    according based say says said report reported reports company's answer answers round
    decimal places define defined definition information data drawing conclusions stated
    usd analyst analysts perspective question questions respond response assume assuming
    shown within using compute computed calculate calculated calculation metric metrics
    here's let let's us following provided reasonable approximation exact plainly
    roughly something mention mentions mentioned discussed described presented noted
    highlighted listed text passage passages article""".split()  # noqa: SIM905
)
OCR_DIFFERS = 0.9  # an OCR reading less alike than this to the text layer differs from it
RecordsFn = Callable[..., Sequence[Any]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Experiment:
    """One repair tried on one failure: the gold's rank before (the run's full-depth rank
    of its best chunk, None when unknown) and after (the repaired text's rank among the
    run's hits; None past the run's depth), whether it ``fixes`` the failure (after within
    the top k), the line a reader sees, and the span repaired (document characters)."""

    repair: str
    before: int | None
    after: int | None
    fixes: bool
    line: str
    detail: str = ""
    span: Span | None = None
    method: str = ""  # the other method, for a method experiment
    drowned: bool = False  # a boundary repair taking away the text a chunk drowned it in

    def to_dict(self) -> dict[str, object]:
        return {
            "repair": self.repair, "before": self.before, "after": self.after,
            "fixes": self.fixes, "line": self.line, "detail": self.detail,
            "span": list(self.span) if self.span else None, "method": self.method,
            "drowned": self.drowned,
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Experiment:
        span = data.get("span")
        return cls(
            repair=str(data["repair"]),
            before=_int_or_none(data.get("before")),
            after=_int_or_none(data.get("after")),
            fixes=bool(data.get("fixes")),
            line=str(data.get("line", "")),
            detail=str(data.get("detail", "")),
            span=(int(span[0]), int(span[1])) if span else None,
            method=str(data.get("method", "")),
            drowned=bool(data.get("drowned", False)),
        )


def _int_or_none(value: object) -> int | None:
    return None if value is None else int(value)  # type: ignore[call-overload]


def ordinal(n: int) -> str:
    tail = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{tail}"


def shown_rank(rank: int | None, depth: int) -> str:
    return f"beyond {depth}" if rank is None else str(rank)


# -- the query's words -----------------------------------------------------------------


def content_words(query: str, function_words: frozenset[str]) -> dict[str, float]:
    """The query's content terms (stems) with their weight: prompt and function words
    out; a name or figure (not a fiscal period) weighs 2, any other word 1."""
    out: dict[str, float] = {}
    for a, b, term in _word_spans(query):
        word = query[a:b]
        low = word.lower()
        if low in function_words or low in PROMPT_WORDS or term in PROMPT_WORDS:
            continue
        heavy = name_like(word) and PERIOD.fullmatch(word) is None
        # a capital at the start of a sentence is grammar, not a name
        if sentence_start(query, a) and word[:1].isupper() and word[1:].islower():
            heavy = False
        out[term] = max(out.get(term, 0.0), 2.0 if heavy else 1.0)
    return out


def _word_spans(text: str) -> list[tuple[int, int, str]]:
    return list(word_spans(text))


def held_share(weights: Mapping[str, float], text: str) -> float:
    """The share of the query's content weight whose terms ``text`` holds."""
    total = sum(weights.values())
    if not total:
        return 0.0
    have = {t for _, _, t in _word_spans(text)}
    return sum(w for t, w in weights.items() if t in have) / total


# -- scoring a repaired text as the method does ----------------------------------------


@dataclass(slots=True)
class LexicalStats:
    """BM25 statistics of the run's whole corpus (its chunks as the lexical method indexed
    them): document frequencies, the number of texts and their mean length."""

    df: dict[str, int]
    n: int
    avgdl: float

    @classmethod
    def build(cls, texts: Sequence[str]) -> LexicalStats:
        df: dict[str, int] = {}
        total = 0
        for text in texts:
            words = terms(text)
            total += len(words)
            for t in set(words):
                df[t] = df.get(t, 0) + 1
        return cls(df=df, n=len(texts), avgdl=total / max(1, len(texts)))

    def score(self, query: str, text: str) -> float:
        """Lucene BM25 of ``text`` for ``query`` (as ``bm25s`` scores an indexed text)."""
        words = terms(text)
        counts: dict[str, int] = {}
        for w in words:
            counts[w] = counts.get(w, 0) + 1
        norm = K1 * (1 - B + B * len(words) / max(self.avgdl, 1e-9))
        out = 0.0
        for t in terms(query):
            df = self.df.get(t)
            if df is None:
                continue
            tf = counts.get(t, 0)
            if tf:
                idf = math.log(1 + (self.n - df + 0.5) / (df + 0.5))
                out += idf * tf / (tf + norm)
        return out


@dataclass(slots=True)
class ScoreBook:
    """The vectors a run's repairs need, made in batches: the repairs of every failure are
    first run to ``collect`` what they would embed (queries, texts, and spans of each
    document per method), then ``fill`` encodes each kind in one call (a document's spans
    in one call of the method's embed step), and the repairs run again reading them."""

    encoder: Any
    embed: RecordsFn
    collecting: bool = True
    queries: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    texts: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)
    spans: dict[tuple[str, str], np.ndarray] = dataclasses.field(default_factory=dict)
    _spans_wanted: dict[tuple[str, str], tuple[Document, dict[str, Chunk]]] = dataclasses.field(
        default_factory=dict
    )

    def query(self, query: str) -> np.ndarray:
        if self.collecting:
            self.queries.setdefault(query, np.zeros(0, np.float32))
            return np.zeros(0, np.float32)
        return self.queries[query]

    def text(self, text: str) -> np.ndarray | None:
        if self.collecting:
            self.texts.setdefault(text, np.zeros(0, np.float32))
            return None
        return self.texts[text]

    def span(self, method: str, doc: Document, chunk: Chunk) -> np.ndarray | None:
        if self.collecting:
            key = (method, doc.doc_id)
            self._spans_wanted.setdefault(key, (doc, {}))[1][chunk.chunk_id] = chunk
            return None
        return self.spans[(method, chunk.chunk_id)]

    def fill(self) -> None:
        """Encode what was collected: the queries in one call, the texts in one call (each
        normalised), each document's spans under each method in one call."""
        if self.queries:
            listed = list(self.queries)
            made = np.asarray(encode_queries(self.encoder, listed), np.float32)
            self.queries = dict(zip(listed, made, strict=True))
        if self.texts:
            listed = list(self.texts)
            made = np.asarray(self.encoder.encode_texts(listed), np.float32)
            norms = np.linalg.norm(made, axis=1, keepdims=True)
            made = (made / np.where(norms > 0, norms, 1.0)).astype(np.float32)
            self.texts = dict(zip(listed, made, strict=True))
        for (method, _), (doc, chunks) in self._spans_wanted.items():
            records = self.embed(doc, list(chunks.values()), method, self.encoder)
            for chunk_id, record in zip(chunks, records, strict=True):
                self.spans[(method, chunk_id)] = np.asarray(record.vector, np.float32)
        self._spans_wanted.clear()
        self.collecting = False


@dataclass(slots=True)
class MethodScorer:
    """Scores a repaired text of one document for one query as ``method`` scores a chunk:
    ``chunk(doc, chunk)`` for a span of the document (the method's own embed step),
    ``text(doc, text)`` for a text that is no span (prefixed, or read by OCR). With a
    ``book`` (``ScoreBook``) a dense method's vectors are read from it, made in batches."""

    method: str
    query: str
    encoder: Any
    embed: RecordsFn
    lexical: LexicalStats | None = None
    book: ScoreBook | None = None
    _qvec: np.ndarray | None = None

    @property
    def family(self) -> str:
        return registry.get(self.method).family

    def _query_vector(self) -> np.ndarray:
        if self.book is not None:
            return self.book.query(self.query)
        if self._qvec is None:
            self._qvec = np.asarray(encode_queries(self.encoder, [self.query])[0], np.float32)
        return self._qvec

    def chunk(self, doc: Document, chunk: Chunk) -> float:
        if self.family == "lexical":
            records = self.embed(doc, [chunk], self.method, self.encoder)
            assert self.lexical is not None
            return self.lexical.score(self.query, indexed_text(records[0].prefix, chunk.text))
        if self.book is not None:
            query, vec = self._query_vector(), self.book.span(self.method, doc, chunk)
            return 0.0 if vec is None else float(vec @ query)
        records = self.embed(doc, [chunk], self.method, self.encoder)
        return float(np.asarray(records[0].vector, np.float32) @ self._query_vector())

    def text(self, text: str) -> float:
        if self.family == "lexical":
            assert self.lexical is not None
            return self.lexical.score(self.query, text)
        if self.book is not None:
            query, found = self._query_vector(), self.book.text(text)
            return 0.0 if found is None else float(found @ query)
        vec = np.asarray(self.encoder.encode_texts([text]), np.float32)[0]
        norm = float(np.linalg.norm(vec))
        return float((vec / norm if norm else vec) @ self._query_vector())


def rank_among(score: float, others: Sequence[float], depth: int) -> int | None:
    """The rank a text of ``score`` takes among the run's hits (``others``, their scores
    to the run's depth, the gold's own chunks left out); None past the depth."""
    above = sum(1 for s in others if s > score)
    if above >= depth or (len(others) >= depth and score < min(others, default=score)):
        return None
    return above + 1


# -- the repairs ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """What the repairs of one failure read: the query, its gold spans (merged), the
    document and its chunks under the run's policy, the method, the gold's rank before,
    the scores of the run's hits that are not the gold's (to the run's depth), the run's
    top k and depth, every method's full-depth rank of the gold, ``rivals``: the
    chunks of the gold's document among the first of those hits (``RIVALS``), each with
    its index in ``others``, for the context repair's control, and the document's parsed
    ``blocks`` (the boundary repair of a drowned gold keeps the gold's own)."""

    query: str
    gold: tuple[Span, ...]
    doc: Document
    chunks: Sequence[Chunk]
    method: str
    before: int | None
    others: tuple[float, ...]
    k: int
    depth: int
    ranks: Mapping[str, int | None]
    rivals: tuple[tuple[int, Chunk], ...] = ()
    blocks: Sequence[Block] = ()


def _overlap(a: Span, b: Span) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def gold_range(failure: Failure) -> Span:
    return min(a for a, _ in failure.gold), max(b for _, b in failure.gold)


def best_chunk(failure: Failure) -> Chunk | None:
    span = gold_range(failure)
    return max(
        (c for c in failure.chunks if _overlap((c.char_start, c.char_end), span)),
        key=lambda c: _overlap((c.char_start, c.char_end), span),
        default=None,
    )


def _arrow(failure: Failure, after: int | None) -> str:
    return f"rank {shown_rank(failure.before, failure.depth)} → {shown_rank(after, failure.depth)}"


def _make(
    failure: Failure, repair: str, score: float, line: str,
    others: Sequence[float] | None = None, **extra: Any,
) -> Experiment:  # fmt: skip
    after = rank_among(score, failure.others if others is None else others, failure.depth)
    fixes = after is not None and after <= failure.k
    return Experiment(repair=repair, before=failure.before, after=after, fixes=fixes,
                      line=f"{line}: {_arrow(failure, after)}", **extra)  # fmt: skip


def answering_sentence(failure: Failure, weights: Mapping[str, float]) -> Span:
    """The gold's sentence holding most of the query's content weight (the first such)."""
    text = failure.doc.text
    best: tuple[float, Span] | None = None
    for a, b in failure.gold:
        for sa, sb in sentence_spans(text[a:b]):
            span = (a + sa, a + sb)
            share = held_share(weights, text[span[0] : span[1]])
            if best is None or share > best[0]:
                best = (share, span)
    return best[1] if best else gold_range(failure)


def _span_chunk(failure: Failure, like: Chunk, span: Span) -> Chunk:
    doc = failure.doc
    return dataclasses.replace(
        like, char_start=span[0], char_end=span[1], text=doc.text[span[0] : span[1]],
        chunk_id=make_chunk_id(doc.doc_id, doc.sha256, like.policy, span[0], span[1]),
        pages=doc.pages_of(span[0], span[1]), header_rows=(), header_text="",
    )  # fmt: skip


def boundary(
    failure: Failure, scorer: MethodScorer, weights: Mapping[str, float]
) -> Experiment | None:
    """A chunk of the policy's size (the longest chunk of the document) placed to hold the
    gold whole, or its answering sentence when the gold is longer. When one chunk already
    holds what would be placed: for the gold itself, the drowned repair (``_drowned``),
    else None."""
    like = best_chunk(failure)
    if like is None:
        return None
    size = max(c.char_end - c.char_start for c in failure.chunks)
    gs, ge = gold_range(failure)
    what = "the gold"
    if ge - gs > size:
        gs, ge = answering_sentence(failure, weights)
        what = "its answering sentence"
        if ge - gs > size:
            ge = gs + size
    holding = [c for c in failure.chunks if c.char_start <= gs and ge <= c.char_end]
    if holding:
        return _drowned(failure, scorer, holding, size) if what == "the gold" else None
    spare = size - (ge - gs)
    a = max(0, gs - spare // 2)
    b = min(len(failure.doc.text), a + size)
    a = max(0, min(a, b - size))
    a, b = min(a, gs), max(b, ge)
    chunk = _span_chunk(failure, like, (a, b))
    return _make(failure, "boundary", scorer.chunk(failure.doc, chunk),
                 f"{what} kept whole in one chunk", span=(a, b),
                 detail=f"a {b - a}-character chunk at {a}-{b}")  # fmt: skip


def _drowned(
    failure: Failure, scorer: MethodScorer, holding: Sequence[Chunk], size: int
) -> Experiment | None:
    """The boundary repair of a gold that a chunk holds whole but drowns (its spans under
    ``DROWNED`` of the chunk's characters): the gold's own blocks as a chunk. None when
    the gold is not drowned, the document has no blocks there, its blocks are longer
    than a chunk (the other text is its own paragraph's) or most of the chunk already
    (``SAME_CHUNK``)."""
    gs, ge = gold_range(failure)
    chunk = min(holding, key=lambda c: c.char_end - c.char_start)
    length = chunk.char_end - chunk.char_start
    inside = sum(_overlap(g, (chunk.char_start, chunk.char_end)) for g in failure.gold)
    if inside <= 0 or inside >= DROWNED * length:
        return None
    own = [b for b in failure.blocks if b.char_start < ge and gs < b.char_end]
    if not own:
        return None
    a = min(gs, *(x.char_start for x in own))
    b = max(ge, *(x.char_end for x in own))
    if b - a > size and not failure.doc.is_paged:
        a, b = own_lines(failure.doc.text, (gs, ge), (a, b))
    if b - a > size:
        return None
    if _overlap((a, b), (chunk.char_start, chunk.char_end)) >= SAME_CHUNK * length:
        return None
    repaired = _span_chunk(failure, chunk, (a, b))
    line = f"the gold's own paragraph as its chunk (it was {1 - inside / length:.0%} other text)"
    return _make(failure, "boundary", scorer.chunk(failure.doc, repaired), line,
                 span=(a, b), detail=f"a {b - a}-character chunk at {a}-{b}",
                 drowned=True)  # fmt: skip


def own_lines(text: str, gold: Span, block: Span) -> Span:
    """The lines of ``text`` holding ``gold``, within ``block``, without their line breaks
    and the spaces around them: in a reflowable text a line break is the writer's, so
    where the parser's paragraph (a Markdown paragraph whose lines are the writer's
    paragraphs, as in a text with no blank line) is longer than a chunk, the gold's lines
    are its paragraph."""
    gold = strip_span(text, *gold)  # a gold starting or ending on a break
    a = max(block[0], text.rfind("\n", block[0], gold[0]) + 1)
    b = text.find("\n", gold[1], block[1])
    return strip_span(text, a, block[1] if b < 0 else b)


def context(
    failure: Failure, scorer: MethodScorer, weights: Mapping[str, float] | None = None
) -> Experiment | None:
    """The gold's best chunk with its document title and heading path before it, and the
    label lines above it that hold a query term it lacks (``lines_above``), ranked among
    the run's hits with the first of them (``failure.rivals``) given their own title and
    headings too: a prefix that lifts every chunk of the document (its company's name,
    the year) does not count as the gold's missing context. The lines above are the
    experiment's own: given to the rivals as well, the chunks after a section's heading
    rose with the gold (the demo datasheets' sections went from context to vocabulary).
    None for a method that reads them already (a prefix, late chunking's window), or when
    there are none."""
    weights = weights or {}
    chunk = best_chunk(failure)
    if chunk is None:
        return None
    spec = registry.get(scorer.method)
    if reads_document(spec):
        return None  # it reads them already (a prefix; late chunking's window)
    if spec.family == "lexical":
        if scorer.embed(failure.doc, [chunk], scorer.method, scorer.encoder)[0].prefix:
            return None
    elif spec.family != "dense":
        return None
    head = contextual_prefix(failure.doc, chunk, unread=True)
    above = lines_above(failure.doc, chunk, weights)
    prefix = _context_of(head, above)
    if not prefix:
        return None
    others = list(failure.others)
    for index, rival in failure.rivals:
        given = contextual_prefix(failure.doc, rival, unread=True)
        if given:
            others[index] = _prefixed_score(scorer, given, rival)
    score = _prefixed_score(scorer, prefix, chunk)
    shown = context_detail(head, above)
    given_too = _control_line(len(failure.rivals), min(RIVALS, len(failure.others)))
    lines = len(above)
    what = "its title and headings" + (
        f" and the {lines} line{'s' if lines > 1 else ''} above it naming what it is about"
        if lines
        else ""
    )
    return _make(failure, "context", score, f"with {what}{given_too}",
                 span=(chunk.char_start, chunk.char_end), detail=shown,
                 others=tuple(others))  # fmt: skip


def context_detail(head: str, above: Sequence[str]) -> str:
    """The context repair's prefix as a reader sees it: the title and heading path joined
    by " > ", then the lines above apart (they are not headings of the path)."""
    shown = " > ".join(head.split("\n")) if head else ""
    if above:
        shown += ("; " if shown else "") + "above it: " + " | ".join(f"“{a}”" for a in above)
    return shown


def _context_of(head: str, above: Sequence[str]) -> str:
    """The repair's prefix: a chunk's title and heading path it does not hold (``head``),
    then the lines above it that name what it is about (``lines_above``)."""
    return "\n".join(line for line in (head, *above) if line)


def lines_above(doc: Document, chunk: Chunk, weights: Mapping[str, float]) -> list[str]:
    """The label lines in the ``ABOVE`` characters before the chunk, on its page, that hold
    a query term the chunk lacks: the segment heading, the table row or the caption a
    chunker cut from it ("Las Vegas Strip Resorts" at the end of the chunk before). A
    label line is short (at most ``LABEL_LINE`` characters) and either a table row (its
    cells tab-separated) or a heading's shape: it starts with a capital or a figure, ends
    without a sentence's punctuation and stands before a blank line (a line of running
    text in a narrow column runs on into the next). In document order; none already in
    the chunk's heading path."""
    start = max(0, chunk.char_start - ABOVE)
    if doc.is_paged and chunk.pages and 1 <= chunk.pages[0] <= len(doc.pages):
        start = max(start, doc.pages[chunk.pages[0] - 1].char_start)
    lines = doc.text[start : chunk.char_start].split("\n")
    if start > 0 and doc.text[start - 1 : start] != "\n":
        lines = lines[1:]  # the first line is cut
    held = {t for _, _, t in _word_spans(chunk.text)}
    missing = {t for t in weights if t not in held}
    path = " ".join(" ".join(h.split()) for h in chunk.heading_path)
    out = []
    for at, raw in enumerate(lines[:-1]):  # the last runs into the chunk
        line = " ".join(raw.split())
        if not line or len(line) > LABEL_LINE or line in path:
            continue
        row = "\t" in raw.strip()
        heading = (
            (line[0].isupper() or line[0].isdigit())
            and line[-1] not in ".,;:"
            and not lines[at + 1].strip()
        )
        if (row or heading) and any(t in missing for _, _, t in _word_spans(line)):
            out.append(line)
    return out


def reads_document(spec: MethodSpec) -> bool:
    """A dense method that reads a chunk with its document: late chunking's window, a
    contextual prefix."""
    return spec.embedding is not None and (spec.embedding.windowed or spec.embedding.prefixed)


def _control_line(given: int, first: int) -> str:
    """ " (the first 10 hits given theirs too)", or " (4 of the first 10 ...)" when only
    some of them are in the gold's document."""
    if not given:
        return ""
    if given == first:
        return f" (the first {given} hits given theirs too)"
    return f" ({given} of the first {first} hits given theirs too)"


def _prefixed_score(scorer: MethodScorer, prefix: str, chunk: Chunk) -> float:
    if scorer.family == "lexical":
        return scorer.text(indexed_text(prefix, chunk.text))
    return scorer.text(f"{prefix}\n\n{chunk.encoder_text}")


OcrRead = Callable[[Document, Span], "str | None"]


def parse(failure: Failure, scorer: MethodScorer, read: OcrRead | None = None) -> Experiment | None:
    """The gold's region read again by OCR and compared with its text layer; when they
    differ, the OCR text ranked. None when the document has no pages to render or the OCR
    engine is missing."""
    read = read or ocr_region
    span = gold_range(failure)
    found = read(failure.doc, span)
    if not found:
        return None
    layer = failure.doc.text[span[0] : span[1]]
    alike = difflib.SequenceMatcher(None, " ".join(layer.split()), " ".join(found.split())).ratio()
    if alike >= OCR_DIFFERS:
        return None
    return _make(failure, "parse", scorer.text(found), "OCR text", span=span,
                 detail=f"OCR reads {alike:.0%} alike to the text layer")  # fmt: skip


def ocr_region(doc: Document, span: Span) -> str | None:
    """The OCR text of the region the span covers on its PDF page(s): the recognised
    characters whose boxes' centres fall in the span's box. None for a document that is
    not a PDF with boxes, or without the OCR engine."""
    if doc.kind != "pdf" or doc.char_bbox_pt is None or not doc.source_bytes:
        return None
    try:
        if not require_engine("auto"):
            return None
    except Exception:  # noqa: BLE001 - no engine: no parse repair
        return None
    import pymupdf

    out: list[str] = []
    with pymupdf.open(stream=doc.source_bytes, filetype="pdf") as pdf:
        for number in doc.pages_of(*span):
            page_info = doc.pages[number - 1]
            a, b = max(span[0], page_info.char_start), min(span[1], page_info.char_end)
            boxes = doc.char_bbox_pt[a:b]
            boxes = boxes[~np.isnan(boxes[:, 0])]
            if not len(boxes):
                continue
            x0, y0 = boxes[:, 0].min() - 2, boxes[:, 1].min() - 2
            x1, y1 = boxes[:, 2].max() + 2, boxes[:, 3].max() + 2
            paragraphs = recognise_page(pdf[number - 1], doc.sha256, doc.title)
            for paragraph in paragraphs:
                for (text, chars, *_), _conf in paragraph:
                    kept = "".join(
                        ch for ch, (cx0, cy0, cx1, cy1) in zip(text, chars, strict=False)
                        if x0 <= (cx0 + cx1) / 2 <= x1 and y0 <= (cy0 + cy1) / 2 <= y1
                    )  # fmt: skip
                    if kept.strip():
                        out.append(kept.strip())
    return "\n".join(out) or None


def method_experiments(failure: Failure) -> list[Experiment]:
    """The other methods' full-depth ranks of the same gold."""
    out = []
    for other, rank in failure.ranks.items():
        if other == failure.method:
            continue
        fixes = rank is not None and rank <= failure.k
        said = f"ranks it {ordinal(rank)}" if rank is not None else "does not rank it"
        out.append(Experiment(repair="method", before=failure.before, after=rank, fixes=fixes,
                              line=f"{other} {said}", method=other))  # fmt: skip
    return out


def run_repairs(
    failure: Failure, scorer: MethodScorer | None, weights: Mapping[str, float],
    read: OcrRead | None = None,
) -> list[Experiment]:  # fmt: skip
    """Every experiment that can be computed for the failure (repairs of the gold text
    only for a method that ranks its own index: dense or lexical)."""
    out: list[Experiment] = []
    if scorer is not None and scorer.family in ("dense", "lexical"):
        for made in (
            boundary(failure, scorer, weights),
            context(failure, scorer, weights),
            parse(failure, scorer, read),
        ):
            if made is not None:
                out.append(made)
    out.extend(method_experiments(failure))
    return out
