"""Why one query failed under one method: the experiments decide, the signals show.

The suggested cause comes from ``core.diagnose.cause.decide``: the repairs run as
experiments (``core.diagnose.repairs``) and the evidence a reader can check (query words
the document never uses, the query's words in the gold and in a top hit). The signals
below are kept as what the failure reader shows beside the experiments (each with its
**strength**, 0 to 1, and the characters it points at: the damaged runs of a gold, the
chunk that displaced it, a second place holding the answer); ``scores`` holds each
cause's strongest signal, shown, never weighed into the suggestion. What each measures:

- **parse**: the gold's *content* damaged or left out: the share of its characters in
  words that are not language (garbled text, glyphs found nowhere else in the corpus),
  in running headers or footers, on pages without a text layer, or in no chunk at all.
  A header that merely touches a long gold statement affects a few percent of it.
- **label**: the gold resolved by alignment with low coverage; the answer in two places
  (a top hit that holds the gold's figures and the query's terms: a second gold span);
  the gold a near-duplicate of a top hit that holds query terms the gold lacks; every
  method agreeing on one other chunk that holds every query term.
- **method**: only the diagnosed method misses; every other method of the run (at least
  two) ranks the gold in the top k. The chunk that displaced the gold is named.
- **boundary**: the best single chunk holds a small part of the gold (relative to what a
  chunk of its size could hold); the query's terms and the gold's figures in different
  chunks; a qualifier cut off into the next chunk.
- **vocabulary**: the query's content words that the gold's document never uses (names
  and figures count double); a lexical method finds what dense ones miss, or back.
- **context**: the query's discriminating terms that the document holds but the gold
  chunk does not; the evidence shown is the nearest heading (else sentence) naming them,
  skipping running headers and footers and cover-page boilerplate. Terms a near-duplicate
  top hit holds count for label instead.
"""

from __future__ import annotations

import bisect
import dataclasses
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import lru_cache

from core import methods as registry
from core.chunk.sentence_bounds import sentence_spans
from core.diagnose.cause import COPY, RESTATED, Evidence, decide
from core.diagnose.repairs import (
    DROWNED,
    Experiment,
    content_words,
    held_share,
    ordinal,
    reads_document,
)
from core.diagnose.restated import Restatement
from core.diagnose.terms import (
    FIGURE,
    JOINED_GAP,
    PERIOD,
    ChunkShares,
    Span,
    absence,
    chunk_terms,
    document_pairs,
    figure_list,
    name_like,
    query_terms,
    terms_of,
)
from core.diagnose.terms import forget as terms_forget
from core.ingest.ocr import ocr_reading
from core.methods.lexical import term_spans, word_spans
from core.methods.spec import MethodSpec
from core.model.paths import default_model_dir
from core.parse.garbled import COMMON
from core.provenance.types import Block, Chunk, Document

CAUSE_NAMES = ("parse", "label", "method", "boundary", "vocabulary", "context")  # tie order
QUALIFIERS = re.compile(
    r"^\s*(unless|except|however|but|note|provided|only if|excluding|[*†‡§¹²³])", re.I
)
# Function and question words never tell chunks apart (BM25's own stopword list is short).
FUNCTION_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not now of off on once only or
    other our ours out over own same she should so some such than that the their theirs them
    then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours""".split()  # noqa: SIM905
)
# Cover pages and indexes name every subject of a filing without saying anything of it.
BOILERPLATE = re.compile(
    r"transition report|annual report pursuant|quarterly report pursuant|commission file"
    r"|indicate by check mark|securities registered pursuant|accelerated filer"
    r"|exact name of registrant|employer identification|table of contents"
    r"|incorporation or organization|trading symbol",
    re.I,
)
_YEAR = re.compile(r"(?:19|20)\d\d")
DISCRIMINATING_SHARE = 0.15  # a query term in at most this share of the chunks tells them apart
NAMING_DOC_SHARE = 0.5  # a term in at most half the corpus's documents names a subject
LABEL_COVERAGE = 0.98  # aligned evidence below this: the label may point at the wrong text
HOLDS = 0.5  # a signal at least this strong is shown as holding
SAME_FIGURES = 3  # a hit holding this many of the gold's figures (and 80 %) repeats its facts
NEAR_DUPLICATE = 0.5  # Jaccard similarity of a passage's terms and the gold's: its twin
COPY_WORDS = 5  # the fewest words of a gold whose copy in a top hit counts as label evidence
COPY_RUN = 3  # words in a row that count towards a copy
COPY_SPREAD = 1.5  # a copy's words lie within this many times the gold's length in the hit
_WORD = re.compile(r"\w+")
METHOD_STRENGTH = 0.85  # every other method finds the gold
PREFIX_FINDS = 0.75  # the prefixed method finds the gold its plain twin misses
# Where a reader of the gold finds its context: the document's opening (a cover page, a
# title, an introduction), the last headings above the gold, the text just read before it
# within its section, the gold itself and a little after.
OPENING_CHARS = 1_500
LEAD_CHARS = 2_000
TRAIL_CHARS = 500
GOVERNING_HEADINGS = 3
CONFIDENCES = ("strong", "weak", "unclear")


@dataclass(frozen=True, slots=True, kw_only=True)
class Signal:
    """One piece of evidence for ``cause``, ``strength`` 0 to 1 (see the module docstring)."""

    cause: str
    name: str
    strength: float
    detail: str
    spans: tuple[Span, ...] = ()

    @property
    def holds(self) -> bool:
        return self.strength >= HOLDS


@dataclass(frozen=True, slots=True, kw_only=True)
class Hit:
    """A chunk a method ranked, with its document span and text."""

    chunk_id: str
    doc_id: str
    char_start: int
    char_end: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnosis:
    """One failed query under one method: the suggested cause (``core.diagnose.cause``),
    the experiments it rests on, the evidence and the signals.

    ``scores`` holds each cause's strongest signal (shown, not weighed); ``runner_up`` is
    '' unless a second cause is close; ``displacer`` is the failing method's first hit (the
    chunk that took the gold's place) and ``second_gold`` a top hit that holds the answer
    too (label: answer in two places).
    """

    query_id: str
    method: str
    signals: tuple[Signal, ...]
    suggested: str
    decided_by: str
    confidence: str = "unclear"
    runner_up: str = ""
    scores: Mapping[str, float] = field(default_factory=dict)
    gold_chunk: str = ""
    displacer: Hit | None = None
    second_gold: Hit | None = None
    experiments: tuple[Experiment, ...] = ()
    evidence: Evidence | None = None
    repaired: bool = False  # the failing method's repairs could be run (none may apply)

    def by_cause(self, cause: str) -> list[Signal]:
        return [s for s in self.signals if s.cause == cause]

    @property
    def summary(self) -> str:
        """``context (strong)``, ``label (weak; runner-up: context)``."""
        extra = f"; runner-up: {self.runner_up}" if self.runner_up else ""
        return f"{self.suggested} ({self.confidence}{extra})"

    def to_dict(self) -> dict[str, object]:
        def hit(h: Hit | None) -> object:
            if h is None:
                return None
            return {"chunk_id": h.chunk_id, "doc": h.doc_id, "char_start": h.char_start,
                    "char_end": h.char_end}  # fmt: skip

        return {
            "query_id": self.query_id,
            "method": self.method,
            "suggested": self.suggested,
            "confidence": self.confidence,
            "runner_up": self.runner_up,
            "decided_by": self.decided_by,
            "scores": {c: round(s, 3) for c, s in self.scores.items()},
            "displacer": hit(self.displacer),
            "second_gold": hit(self.second_gold),
            "experiments": [e.to_dict() for e in self.experiments],
            "evidence": self.evidence.to_dict() if self.evidence else None,
            "signals": [
                {
                    "cause": s.cause,
                    "name": s.name,
                    "strength": round(s.strength, 3),
                    "holds": s.holds,
                    "detail": s.detail,
                    "spans": [list(p) for p in s.spans],
                }
                for s in self.signals
            ],  # fmt: skip
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """What one failure's diagnosis reads: the query, its gold spans (with how they were
    resolved), the document, its chunks and blocks under the run's policy, each method's
    rank of the gold (None beyond the depth) and top chunk id, and each method's top hits
    (``hits``; empty: only ``tops`` known)."""

    query_id: str
    query: str
    gold: tuple[tuple[int, int, str, float], ...]  # (start, end, resolved how, coverage)
    doc: Document
    chunks: Sequence[Chunk]
    blocks: Sequence[Block]
    ranks: Mapping[str, int | None]
    tops: Mapping[str, str | None]
    k: int
    doc_terms: Mapping[str, Span]  # each term of the document: where it first stands
    chunk_share: Mapping[str, float]  # each term: the share of the document's chunks holding it
    doc_share: Mapping[str, float] = field(default_factory=dict)  # ... of the corpus's documents
    hits: Mapping[str, Sequence[Hit]] = field(default_factory=dict)
    term_spans: Mapping[str, Sequence[Span]] = field(default_factory=dict)  # every occurrence
    n_docs: int = 1  # documents in the corpus
    # each method's spec as the run answers for it (``core.evaluate.EvalRun.method``: an
    # imported retriever is registered nowhere); a method left out is the registry's
    specs: Mapping[str, MethodSpec] = field(default_factory=dict)
    # the chunks that overlap a gold span, in the chunks' order (read by most signals)
    gold_chunks: tuple[Chunk, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        held = tuple(
            c for c in self.chunks
            if any(_overlap((c.char_start, c.char_end), (g[0], g[1])) for g in self.gold)
        )  # fmt: skip
        object.__setattr__(self, "gold_chunks", held)

    def spec(self, method: str) -> MethodSpec:
        """The spec of one of the case's methods."""
        return self.specs.get(method) or registry.get(method)


def _overlap(a: Span, b: Span) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def _gold_range(case: Case) -> Span:
    return min(g[0] for g in case.gold), max(g[1] for g in case.gold)


def _gold_chars(case: Case) -> list[Span]:
    """The gold spans, merged."""
    merged: list[list[int]] = []
    for a, b, *_ in sorted(case.gold):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]


def _share_in(case: Case, spans: Sequence[Span]) -> float:
    """The share of the gold's characters inside ``spans``."""
    gold = _gold_chars(case)
    total = sum(b - a for a, b in gold) or 1
    covered = 0
    for ga, gb in gold:
        marks = sorted((max(ga, a), min(gb, b)) for a, b in spans if a < gb and b > ga)
        last = ga
        for a, b in marks:
            a = max(a, last)
            if b > a:
                covered += b - a
                last = b
    return covered / total


def _best_chunk(case: Case) -> Chunk | None:
    span = _gold_range(case)
    return max(
        case.gold_chunks, key=lambda c: _overlap((c.char_start, c.char_end), span), default=None
    )


def _spans_of(case: Case) -> Mapping[str, Sequence[Span]]:
    if case.term_spans:
        return case.term_spans

    return term_spans(case.doc.text)


def hits_not_gold(case: Case, method: str) -> list[Hit]:
    """The method's top-k hits that do not overlap the gold."""
    gold = _gold_chars(case)
    return [
        h for h in list(case.hits.get(method, ()))[: case.k]
        if not (h.doc_id == case.doc.doc_id
                and any(_overlap((h.char_start, h.char_end), g) for g in gold))
    ]  # fmt: skip


def content_terms(terms: Mapping[str, str]) -> dict[str, str]:
    return {t: w for t, w in terms.items() if w.lower() not in FUNCTION_WORDS}


# -- parse ------------------------------------------------------------------------------


def _not_language(case: Case) -> tuple[float, list[Span]]:
    """The share of the gold's non-space characters that are not language: symbols other
    than prose punctuation, unmapped glyphs (private-use code points, or the ``(cid:N)``
    codes an extractor writes for a glyph it cannot map), letters set apart one by one (a
    font without word spacing: "T h e u n i t"), and words found nowhere else in the
    corpus (a name or figure excepted), with the spans of the damaged runs."""
    spans = _spans_of(case)
    several = bool(case.doc_share)
    gold = _gold_chars(case)
    damaged: list[Span] = []
    counted = bad = 0
    for ga, gb in gold:
        text = case.doc.text[ga:gb]
        for m in re.finditer(r"\S+", text):
            counted += len(m.group())
        codes = [(m.start(), m.end()) for m in CID_CODE.finditer(text)]
        for m in [*CID_CODE.finditer(text), *SPACED_LETTERS.finditer(text)]:
            bad += sum(not ch.isspace() for ch in m.group())
            damaged.append((ga + m.start(), ga + m.end()))

        def coded(at: int, codes: list[Span] = codes) -> bool:
            return any(a <= at < b for a, b in codes)

        for m in re.finditer(r"[^\w\s]", text):
            if coded(m.start()):
                continue
            if m.group() not in COMMON:
                bad += 1
                damaged.append((ga + m.start(), ga + m.end()))
        for a, b, term in _word_terms(text):
            word = text[a:b]
            if coded(a) or len(word) < 3 or any(ch.isdigit() for ch in word) or name_like(word):
                continue
            if _is_word(word.lower()):
                continue
            elsewhere = any(not (ga <= s < gb) for s, _ in spans.get(term, ()))
            if not elsewhere and several:
                elsewhere = case.doc_share.get(term, 0.0) * case.n_docs > 1.5
            if not elsewhere:
                bad += b - a
                damaged.append((ga + a, ga + b))
        for m in re.finditer(r"[\ue000-\uf8ff\ufffd]", text):  # unmapped glyphs
            bad += 1
            damaged.append((ga + m.start(), ga + m.end()))
    return (bad / counted if counted else 0.0), damaged


CID_CODE = re.compile(r"\(cid:\d+\)")
SPACED_LETTERS = re.compile(r"(?<!\S)(?:[^\W\d_] ){3,}[^\W\d_](?!\S)")
_SUFFIXES = ("s", "es", "ed", "d", "ing", "ly", "er", "ers", "al", "ation", "ment")


@lru_cache(maxsize=1)
def _dictionary() -> frozenset[str]:
    """Whole words of the default model's WordPiece vocabulary (about 20,000 English
    words; empty when the model package is missing)."""
    try:
        lines = (default_model_dir() / "vocab.txt").read_text("utf-8").split()
    except (OSError, ImportError, ValueError, RuntimeError):
        return frozenset()
    return frozenset(w for w in lines if w.isalpha() and len(w) > 1)


def _is_word(word: str) -> bool:
    """Whether ``word`` (lower case) is an English word of the dictionary, or one with a
    common suffix taken off."""
    known = _dictionary()
    if word in known:
        return True
    return any(word.endswith(x) and word[: -len(x)] in known for x in _SUFFIXES)


def _word_terms(text: str) -> list[tuple[int, int, str]]:
    return list(word_spans(text))


def _parse(case: Case) -> list[Signal]:
    furniture = [(b.char_start, b.char_end) for b in case.blocks if b.kind in ("header", "footer")]
    garbled = [(b.char_start, b.char_end) for b in case.blocks if getattr(b, "garbled", False)]
    pages = {p.number: p for p in case.doc.pages}
    blank = [
        (b.char_start, b.char_end)
        for b in case.blocks
        if b.page in pages and not pages[b.page].has_text
    ]
    chunked = [(c.char_start, c.char_end) for c in case.chunks]
    in_furniture = _share_in(case, furniture)
    in_garbled = _share_in(case, garbled)
    damaged, runs = _not_language(case)
    on_blank = _share_in(case, blank)
    left_out = 1.0 - _share_in(case, chunked) if case.chunks else 0.0
    touching = [s for s in furniture if any(_overlap(s, g) for g in _gold_chars(case))]
    language = max(in_garbled, _clip((damaged - 0.25) / 0.4))
    return [
        Signal(
            cause="parse", name="gold text is not language", strength=language,
            detail=f"{damaged:.0%} of the gold's characters are symbols, unmapped glyphs or "
            f"words found nowhere else; {in_garbled:.0%} lie in blocks flagged as garbled",
            spans=tuple(runs[:40]),
        ),
        Signal(
            cause="parse", name="gold in running headers or footers", strength=in_furniture,
            detail=f"{in_furniture:.0%} of the gold lies in {len(touching)} header/footer "
            "block(s)" if touching else "no header or footer block holds the gold",
            spans=tuple(touching),
        ),
        Signal(
            cause="parse", name="page without a text layer", strength=on_blank,
            detail=f"{on_blank:.0%} of the gold lies on a page without a text layer"
            if on_blank else "every page of the gold has text",
        ),
        Signal(
            cause="parse", name="gold left out of every chunk", strength=left_out,
            detail=f"{left_out:.0%} of the gold is in no chunk of the policy"
            if left_out else "every character of the gold is in a chunk",
        ),
    ] + _ocr_signals(case)  # fmt: skip


# OCR line confidence at or above this reads as clean; the signal grows to full strength
# as the gold's mean confidence falls to LOW_OCR - 0.3.
LOW_OCR = 0.85


def _ocr_signals(case: Case) -> list[Signal]:
    """Gold read by OCR at low confidence (only for documents with OCR'd pages): the share
    of the gold read by OCR, weighted by how far its lines' confidence falls short."""
    readings = [
        (r, b - a) for a, b in _gold_chars(case)
        if (r := ocr_reading(case.doc, a, b)) is not None
    ]  # fmt: skip
    if not readings:
        return []
    size = sum(b - a for a, b in _gold_chars(case)) or 1
    read = sum(r.share * n for r, n in readings)
    confidence = sum(r.confidence * r.share * n for r, n in readings) / max(read, 1e-9)
    lowest = min(r.lowest for r, _ in readings)
    share = read / size
    strength = share * _clip((LOW_OCR - confidence) / 0.3)
    return [
        Signal(
            cause="parse", name="gold read by OCR at low confidence", strength=strength,
            detail=f"{share:.0%} of the gold was read by OCR, mean line confidence "
            f"{confidence:.2f} (lowest {lowest:.2f})",
            spans=tuple(_gold_chars(case)) if strength >= 0.5 else (),
        )
    ]  # fmt: skip


# -- label ------------------------------------------------------------------------------


def _figures(text: str) -> set[str]:
    return {f for f in figure_list(text) if len(f) >= 2}


def _twin_passage(text: str, gold_text: str, gold_terms: set[str]) -> tuple[float, set[str]]:
    """The passage of ``text`` (a run of its sentences about as long as the gold) most
    like the gold: ``(Jaccard similarity of their terms, the passage's terms)``."""
    spans = list(sentence_spans(text)) or [(0, len(text))]
    each = [terms_of(text[a:b]) for a, b in spans]
    size = max(1, len(gold_text))
    best: tuple[float, set[str]] = (0.0, set())
    for i in range(len(spans)):
        held: set[str] = set()
        for j in range(i, len(spans)):
            if spans[j][1] - spans[i][0] > 1.6 * size and j > i:
                break
            held = held | each[j]
            union = gold_terms | held
            score = len(gold_terms & held) / len(union) if union else 0.0
            if score > best[0]:
                best = (score, held)
    return best


def _label(case: Case, terms: Mapping[str, str], method: str) -> tuple[list[Signal], Hit | None]:
    aligned = [g for g in case.gold if g[2] == "aligned"]
    low = min((g[3] for g in aligned), default=1.0)
    gold_text = " ".join(case.doc.text[a:b] for a, b in _gold_chars(case))
    gold_terms = terms_of(gold_text)
    content = content_terms(terms)
    figures = _figures(gold_text)
    asked = [t for t in content if t in gold_terms] or list(content)
    two: tuple[float, Hit | None, str] = (0.0, None, "no top hit holds the gold's figures")
    twin: tuple[float, Hit | None, str] = (
        0.0, None, "no passage of the document is a near-duplicate of the gold holding more "
        "of the query")  # fmt: skip
    hits = hits_not_gold(case, method)
    gold_ids = {c.chunk_id for c in case.gold_chunks}
    seen = {h.chunk_id for h in hits}
    lacking = [t for t in content if t not in gold_terms and t in case.doc_terms]
    # an unranked chunk matters only as a twin, which holds a query term the gold lacks
    holding = (
        case.chunk_share.holding(lacking) if isinstance(case.chunk_share, ChunkShares) else None
    )
    rest = [
        Hit(chunk_id=c.chunk_id, doc_id=c.doc_id, char_start=c.char_start, char_end=c.char_end,
            text=c.text)
        for c in case.chunks if c.chunk_id not in gold_ids and c.chunk_id not in seen
        and (holding is None or c.chunk_id in holding)
    ]  # fmt: skip
    for hit in [*hits, *rest]:
        ranked = hit.chunk_id in seen
        held = chunk_terms(hit.chunk_id, hit.text)
        if len(figures) >= 2 and ranked:
            fig = len(figures & _figures(hit.text)) / len(figures)
            key = sum(t in held for t in asked) / max(1, len(asked))
            if len(figures) >= SAME_FIGURES and fig >= 0.8:
                key = max(key, 0.75)  # the same several figures: the same facts stand there
            if fig * key > two[0]:
                why = (
                    f"a top hit holds {fig:.0%} of the gold's figures and {key:.0%} of the "
                    "query's terms the gold holds: the answer may stand there too"
                )
                two = (fig * key, hit, why)
        if hit.doc_id != case.doc.doc_id:
            continue  # a twin the label should have pointed at stands in the same document
        if not lacking or not any(t in held for t in lacking):
            continue
        if len(gold_terms & held) < NEAR_DUPLICATE * len(gold_terms):
            continue  # no passage of it can be the gold's twin
        overlap, passage = _twin_passage(hit.text, gold_text, gold_terms)
        held_lacking = [t for t in lacking if t in passage]
        if overlap >= NEAR_DUPLICATE and held_lacking:
            # what tells the twin from the gold: a name or figure of the query counts whole,
            # a plain word less (words neither passage holds say nothing either way)
            named = any(name_like(content[t]) for t in held_lacking)
            strength = (1.0 if named else 0.7) * _clip(overlap / 0.8) * (1.0 if ranked else 0.9)
            if strength > twin[0]:
                words = ", ".join(content[t] for t in lacking if t in held)
                twin = (strength, hit,
                        f"{'a top hit' if ranked else 'a passage of the document'} is "
                        f"{overlap:.0%} alike the gold in its terms and holds "
                        f"{words}, which the gold lacks: the label may point at a twin "
                        "that does not answer")  # fmt: skip
    tops = {t for t in case.tops.values() if t}
    agreed = next(iter(tops)) if len(tops) == 1 and len(case.tops) > 1 else None
    chunk = next((c for c in case.chunks if c.chunk_id == agreed), None)
    holds_terms = chunk is not None and set(terms) <= terms_of(chunk.text)
    agree = agreed is not None and agreed not in gold_ids and holds_terms
    alignment = _clip((LABEL_COVERAGE - low) / 0.1) * 0.7 if aligned else 0.0

    def spans_of(h: Hit | None) -> tuple[Span, ...]:
        return ((h.char_start, h.char_end),) if h and h.doc_id == case.doc.doc_id else ()

    signals = [
        Signal(
            cause="label", name="evidence resolved by alignment", strength=alignment,
            detail=f"resolved by word alignment, coverage {low:.0%}" if aligned
            else "resolved exactly", spans=tuple((g[0], g[1]) for g in aligned),
        ),
        Signal(
            cause="label", name="answer in two places", strength=two[0],
            detail=two[2] + (f" ({two[1].doc_id}, chars {two[1].char_start}-{two[1].char_end})"
                             if two[1] else ""),
            spans=spans_of(two[1]),
        ),
        Signal(
            cause="label", name="gold is a near-duplicate of the answer", strength=twin[0],
            detail=twin[2], spans=spans_of(twin[1]),
        ),
        Signal(
            cause="label", name="every method agrees on another chunk",
            strength=0.6 if agree else 0.0,
            detail="the top chunk of every method is one non-gold chunk holding every query "
            "term" if agree else "the methods' top chunks differ, or hold the gold",
            spans=((chunk.char_start, chunk.char_end),) if chunk is not None and agree else (),
        ),
    ]  # fmt: skip
    return signals, two[1] if two[0] >= HOLDS else None


# -- method -----------------------------------------------------------------------------


def _first_hit(case: Case, method: str) -> Hit | None:
    hits = case.hits.get(method, ())
    return hits[0] if hits else None


def _method(case: Case, method: str, unused: float) -> list[Signal]:
    """``unused``: the vocabulary signal's strength; a lexical method that misses words the
    document never uses misses for that reason, not for its own."""
    spec = case.spec(method)
    others = {
        m: r for m, r in case.ranks.items()
        if m != method and method not in getattr(case.spec(m), "parts", ())
        and m not in getattr(spec, "parts", ())
    }  # fmt: skip
    found = {m: r for m, r in others.items() if r is not None and r <= case.k}
    mine = case.ranks.get(method)
    shown = ", ".join(f"{m} {r}" for m, r in found.items())
    top = _first_hit(case, method)
    if len(others) >= 2 and len(found) == len(others):
        strength = METHOD_STRENGTH
        detail = (f"only {method} misses; every other method ranks the gold in the top "
                  f"{case.k} ({shown}); {method} ranks it "
                  f"{'beyond the depth' if mine is None else mine}")  # fmt: skip
    elif len(others) >= 3 and len(found) >= len(others) - 1:
        strength = 0.45
        detail = f"{len(found)} of {len(others)} other methods rank the gold in the top {case.k}"
    else:
        strength = 0.0
        detail = f"{len(found)} of {len(others)} other method(s) find the gold"
    if spec.family == "lexical":
        strength *= 1.0 - unused
    if top is not None and strength:
        detail += f"; {method}'s first hit is {top.doc_id}, chars {top.char_start}-{top.char_end}"
    spans = ((top.char_start, top.char_end),) if top and top.doc_id == case.doc.doc_id else ()
    return [
        Signal(cause="method", name=f"only {method} misses", strength=strength, detail=detail,
               spans=spans if strength else ())
    ]  # fmt: skip


# -- boundary ---------------------------------------------------------------------------


def gold_share(case: Case) -> float | None:
    """The gold's share of the characters of the one chunk that holds it (the rest is
    other text it is drowned in); ``None`` when several chunks, or none, touch it."""
    best = _best_chunk(case)
    if best is None or len(case.gold_chunks) != 1:
        return None
    length = max(1, best.char_end - best.char_start)
    inside = sum(_overlap((best.char_start, best.char_end), g) for g in _gold_chars(case))
    return inside / length


def _boundary(case: Case, terms: Mapping[str, str]) -> list[Signal]:
    start, end = _gold_range(case)
    size = max(1, sum(b - a for a, b in _gold_chars(case)))
    touching = case.gold_chunks
    best = _best_chunk(case)
    held = _overlap((best.char_start, best.char_end), (start, end)) if best else 0
    share = held / size
    longest = max((c.char_end - c.char_start for c in case.chunks), default=size)
    reach = min(1.0, longest / size)  # a gold longer than every chunk cannot fit in one
    relative = min(1.0, share / reach) if reach else 0.0
    strength = _clip(2.0 * (1.0 - relative)) if len(touching) > 1 else 0.0
    gold_text = case.doc.text[start:end]
    figures = _figures(gold_text)
    asked = [t for t in content_terms(terms) if t in terms_of(gold_text)]
    if best is not None and strength:
        kept = terms_of(best.text)
        if figures <= _figures(best.text) and all(t in kept for t in asked):
            strength *= 0.5  # the cut leaves the figures and the asked words together
    out = [
        Signal(
            cause="boundary", name="best chunk coverage", strength=strength,
            detail=f"the best single chunk holds {share:.0%} of the gold, {relative:.0%} of "
            f"what the longest chunk could ({len(touching)} chunk(s) touch it)",
            spans=tuple((c.char_start, c.char_end) for c in touching),
        )
    ]  # fmt: skip
    if len(touching) > 1 and figures and asked:
        with_terms = [c for c in touching if sum(t in terms_of(c.text) for t in asked)
                      >= max(1, len(asked) // 2)]  # fmt: skip
        with_figures = [c for c in touching if _figures(c.text) & figures]
        apart = bool(with_terms and with_figures) and not set(with_terms) & set(with_figures)
        out.append(
            Signal(
                cause="boundary", name="answer cut from its label", strength=0.8 if apart else 0.0,
                detail="the query's terms and the gold's figures stand in different chunks"
                if apart else "one chunk holds the query's terms and the gold's figures",
                spans=tuple((c.char_start, c.char_end) for c in with_terms + with_figures),
            )
        )  # fmt: skip
    nxt = QUALIFIERS.match(case.doc.text[end : end + 200])
    if nxt and best is not None:
        at = end + nxt.start(1)
        apart = not best.char_start <= at < best.char_end
        out.append(
            Signal(
                cause="boundary", name="qualifier in the next chunk",
                strength=0.5 if apart else 0.0,
                detail=f"the gold is followed by {nxt.group(1)!r}"
                + (", which sits in another chunk" if apart else ", in the same chunk"),
                spans=((at, at + len(nxt.group(1))),),
            )
        )  # fmt: skip
    part = gold_share(case)
    if best is not None and part is not None:
        drowned = part < DROWNED
        out.append(
            Signal(
                cause="boundary", name="gold drowned in its chunk",
                strength=round(1 - part, 2) if drowned else 0.0,
                detail=f"the gold is {part:.0%} of the one chunk holding it"
                + (f"; the other {1 - part:.0%} is other text" if drowned else ""),
                spans=((best.char_start, best.char_end),),
            )
        )  # fmt: skip
    return out


# -- vocabulary and context -------------------------------------------------------------


def discriminating(case: Case, query_terms: Mapping[str, str]) -> dict[str, str]:
    """The query terms that tell chunks apart (names, model numbers, figures; not "what"
    or "has"): in at most ``DISCRIMINATING_SHARE`` of the document's chunks, or, in a corpus
    of several documents, in at most ``NAMING_DOC_SHARE`` of them (a product's name that
    every page header of its own datasheet repeats)."""
    several = bool(case.doc_share)  # empty for a one-document corpus
    return {
        t: w
        for t, w in query_terms.items()
        if w.lower() not in FUNCTION_WORDS
        and (
            case.chunk_share.get(t, 0.0) <= DISCRIMINATING_SHARE
            or (several and case.doc_share.get(t, 0.0) <= NAMING_DOC_SHARE)
        )
    }


def _period(word: str) -> bool:
    return PERIOD.fullmatch(word) is not None


def _weight(word: str) -> float:
    return 2.0 if name_like(word) and not _period(word) else 1.0


def far_share(terms: Mapping[str, str], far: Mapping[str, str]) -> float:
    """The share of the query's content weight in ``far``: the words the document uses
    only away from the gold (``missing_terms``)."""
    content = content_terms(terms)
    total = sum(_weight(w) for w in content.values()) or 1.0
    return sum(_weight(w) for w in far.values()) / total


def _vocabulary(
    case: Case, terms: Mapping[str, str], corpus_terms: set[str], method: str, damage: float,
    far: Mapping[str, str],
) -> list[Signal]:  # fmt: skip
    content = content_terms(terms)
    in_doc = set(case.doc_terms)
    absent_doc = [t for t in content if t not in in_doc]
    total = sum(_weight(w) for w in content.values()) or 1.0
    share = sum(_weight(content[t]) for t in absent_doc) / total
    nowhere = [content[t] for t in absent_doc if t not in corpus_terms]
    names = [w for w in nowhere if name_like(w) and not _period(w)]
    family = case.spec(method).family
    lexical = {m: r for m, r in case.ranks.items() if case.spec(m).family == "lexical"}
    dense = {m: r for m, r in case.ranks.items() if case.spec(m).family == "dense"}
    found_lex = [m for m, r in lexical.items() if r is not None and r <= case.k]
    found_dense = [m for m, r in dense.items() if r is not None and r <= case.k]
    best = _best_chunk(case)
    chunk_lacks = best is not None and any(t not in terms_of(best.text) for t in content)
    cross = 0.0
    if family == "dense" and found_lex and not found_dense:
        cross = 0.4
    elif family == "lexical" and found_dense and not found_lex and chunk_lacks:
        cross = 0.5
    words = ", ".join(content[t] for t in absent_doc)
    away = far_share(terms, far)
    elsewhere = ", ".join(far.values())
    shown = ", ".join(f"{m} {'-' if r is None else r}" for m, r in {**lexical, **dense}.items())
    return [
        Signal(
            cause="vocabulary", name="query words the document never uses",
            strength=_clip(share * 1.2) * (1.0 - 0.7 * damage),
            detail=f"the gold's document never uses {words} ({share:.0%} of the query's "
            "weight; names and figures count double)"
            + (f"; no document holds {', '.join(nowhere)}" if nowhere else "")
            if absent_doc else "the document uses every content word of the query",
        ),
        Signal(
            cause="vocabulary", name="query words absent from the gold and its context",
            strength=_clip((share + away) * 1.2) * (1.0 - 0.7 * damage) if far else 0.0,
            detail=f"the document uses {elsewhere} only away from the gold (not in its "
            "section, the headings above it, its title or opening): the gold says it in other "
            f"words ({share + away:.0%} of the query's weight with the words no part of the "
            "document uses)" if far else "no query word stands only away from the gold",
        ),
        Signal(
            cause="vocabulary", name="names or figures absent from the corpus",
            # one missing "FY2022" among ten matched words is weak evidence; a missing
            # subject name in a short query is strong
            strength=0.7 * _clip(2.0 * sum(_weight(w) for w in names) / total),
            detail=f"no document holds {', '.join(names)}" if names
            else "no name or figure of the query is missing from the corpus",
        ),
        Signal(
            cause="vocabulary", name="lexical and dense disagree", strength=cross,
            detail=f"gold rank {shown} (top {case.k})" if shown else "one family of methods",
        ),
    ]  # fmt: skip


def _evidence(case: Case, term: str, chunk: Chunk | None) -> Span | None:
    """Where the document best names ``term`` for a reader of the gold: the nearest
    heading above the gold, else the nearest sentence above, else the nearest after;
    never in a running header or footer, cover-page boilerplate or the gold chunk."""
    spans = _spans_of(case).get(term, ())
    if not spans:
        return None
    start = _gold_range(case)[0]
    furniture = [(b.char_start, b.char_end) for b in case.blocks if b.kind in ("header", "footer")]
    headings = sorted((b.char_start, b.char_end) for b in case.blocks if b.kind == "heading")
    heading_starts = [a for a, _ in headings]
    text = case.doc.text
    covers = _cover_pages(case.doc)

    def in_heading(a: int) -> bool:  # headings do not overlap: the last one starting by a
        k = bisect.bisect_right(heading_starts, a) - 1
        return k >= 0 and a < headings[k][1]

    def key(span: Span) -> tuple[int, int, int]:
        a = span[0]
        return (0 if a < start else 1, 0 if in_heading(a) else 1, abs(start - a))

    for a, b in sorted(spans, key=key):  # the preferred first; the first that passes wins
        if chunk is not None and chunk.char_start <= a < chunk.char_end:
            continue
        if any(fa <= a < fb for fa, fb in furniture):
            continue
        if covers and set(case.doc.pages_of(a, b)) & covers:
            continue
        para_start = max(text.rfind("\n\n", 0, a) + 1, a - BOILERPLATE_REACH)
        para_end = text.find("\n\n", b, b + BOILERPLATE_REACH)
        if BOILERPLATE.search(text[para_start : para_end if para_end >= 0 else b + 300]):
            continue
        return (a, b)
    return None


BOILERPLATE_REACH = 300  # characters of a paragraph read around a mention


COVER_PAGES = 3  # a filing's cover page and index come first


_COVERS: dict[str, frozenset[int]] = {}


def forget() -> None:
    """Drop what is kept per document and chunk in memory: the cover pages here, the
    terms and word pairs of ``core.diagnose.terms`` (a first diagnosis again)."""
    _COVERS.clear()
    terms_forget()


def _cover_pages(doc: Document) -> frozenset[int]:
    """The first pages of a paged document that read as a cover page or an index
    (``BOILERPLATE`` on them); kept per document version."""
    if doc.sha256 not in _COVERS:
        if len(_COVERS) > 256:
            _COVERS.clear()
        _COVERS[doc.sha256] = frozenset(
            p.number for p in doc.pages[:COVER_PAGES]
            if BOILERPLATE.search(doc.text[p.char_start : p.char_end])
        )  # fmt: skip
    return _COVERS[doc.sha256]


def _governing(case: Case) -> list[Span]:
    """Where a reader of the gold finds its context: the document's opening, the last
    ``GOVERNING_HEADINGS`` headings above the gold, the text read just before it within
    its section (at most ``LEAD_CHARS``), the gold itself and ``TRAIL_CHARS`` after it."""
    start, end = _gold_range(case)
    above = sorted(
        (b.char_start, b.char_end) for b in case.blocks
        if b.kind == "heading" and b.char_start < start
    )[-GOVERNING_HEADINGS:]  # fmt: skip
    section = above[-1][0] if above else 0
    lead = max(section, start - LEAD_CHARS)
    return [(0, OPENING_CHARS), *above, (lead, end + TRAIL_CHARS)]


def missing_terms(case: Case, terms: Mapping[str, str]) -> tuple[dict[str, str], dict[str, str]]:
    """The discriminating query terms the document holds but the gold chunk does not,
    split: ``(near, far)``. Near: the gold's context names them (its document's title, or
    a mention in ``_governing``): what a reader of the gold knows and the chunk does not
    say (context). Far: the document uses them only away from the gold, in passages about
    something else: the gold says it in other words (vocabulary)."""
    chosen = discriminating(case, content_terms(terms))
    best = _best_chunk(case)
    held = terms_of(best.text) if best else set()
    missing = [t for t in chosen if t in case.doc_terms and t not in held]
    title = terms_of(re.sub(r"[_\W]+", " ", case.doc.title))
    places = _governing(case)
    spans = _spans_of(case)
    near: dict[str, str] = {}
    far: dict[str, str] = {}
    for t in missing:
        named = t in title or any(
            pa <= a < pb for a, _ in spans.get(t, ()) for pa, pb in places
        )  # fmt: skip
        (near if named else far)[t] = chosen[t]
    return near, far


def query_phrases(query: str, wanted: set[str]) -> tuple[str, ...]:
    """The query's words whose terms are ``wanted``, neighbours joined as the query writes
    them ("Lockheed Martin", "forward-looking statements"), in the query's order."""
    out: list[str] = []
    run: tuple[int, int] | None = None
    for a, b, term in word_spans(query):
        if term not in wanted:
            if run is not None:
                out.append(query[run[0] : run[1]])
            run = None
            continue
        if run is not None and JOINED_GAP.fullmatch(query[run[1] : a]):
            run = (run[0], b)
        else:
            if run is not None:
                out.append(query[run[0] : run[1]])
            run = (a, b)
    if run is not None:
        out.append(query[run[0] : run[1]])
    return tuple(dict.fromkeys(out))


def _context(
    case: Case, terms: Mapping[str, str], method: str, twin: float, damage: float,
    near: Mapping[str, str],
) -> list[Signal]:  # fmt: skip
    chosen = dict(near)
    best = _best_chunk(case)
    missing = list(near)
    total = sum(_weight(w) for w in content_terms(terms).values()) or 1.0
    share = sum(_weight(chosen[t]) for t in missing) / total
    evidence = [s for t in missing if (s := _evidence(case, t, best)) is not None]
    path = " ".join((case.doc.title, *(best.heading_path if best else ()))).lower()
    in_path = [chosen[t] for t in missing if chosen[t].lower() in path]
    prefixed = registry.embedding_method(prefixed=True).name
    strength = _clip(share * 2.0) * (1.0 - 0.7 * damage)  # damaged gold text explains it
    if in_path and method == prefixed:
        strength *= 0.5  # the prefixed method saw them
    if not evidence:
        strength *= 0.5  # only in furniture or boilerplate: a weak hint
    strength *= 1.0 - 0.6 * twin  # a near-duplicate hit holding them explains them better
    words = ", ".join(chosen[t] for t in missing) or "none"
    plain = registry.embedding_method(prefixed=False).name
    prefix_rank = case.ranks.get(prefixed)
    finds = method == plain and bool(missing) and prefix_rank is not None and prefix_rank <= case.k
    ranks = " · ".join(
        f"{m} {'-' if r is None else r}"
        for m, r in case.ranks.items()
        if case.spec(m).family == "dense"
    )
    return [
        Signal(
            cause="context", name="query terms outside the gold chunk", strength=strength,
            detail=f"the gold's context (its title, the opening, the headings and text above "
            f"it) holds {words} (discriminating query terms) but the gold chunk does not"
            + (f"; the title or heading path holds {', '.join(in_path)} ({prefixed} sees it)"
               if in_path else ""),
            spans=tuple(evidence),
        ),
        Signal(
            cause="context", name="the prefixed method finds it", strength=PREFIX_FINDS if finds
            else 0.0,
            detail=f"{prefixed} (the same model with the title and headings in front) ranks the "
            f"gold {prefix_rank}, {method} does not reach the top {case.k}" if finds
            else f"gold rank: {ranks}",
        ),
    ]  # fmt: skip


# -- the decision -----------------------------------------------------------------------


def scores_of(signals: Sequence[Signal]) -> dict[str, float]:
    """Each cause's strongest signal (shown beside the suggestion, not weighed into it)."""
    scores = {c: 0.0 for c in CAUSE_NAMES}
    for s in signals:
        scores[s.cause] = max(scores.get(s.cause, 0.0), s.strength)
    return scores


def _method_experiments(case: Case, method: str) -> list[Experiment]:
    """The other methods' ranks of the gold, from the case (when the caller gave none)."""
    out = []
    for other, rank in case.ranks.items():
        if other != method:
            said = f"ranks it {ordinal(rank)}" if rank is not None else "does not rank it"
            out.append(
                Experiment(repair="method", before=case.ranks.get(method), after=rank,
                           fixes=rank is not None and rank <= case.k, line=f"{other} {said}",
                           method=other)
            )  # fmt: skip
    return out


def evidence_of(case: Case, method: str, damage: float) -> Evidence:
    """What a reader can check without a repair (``core.diagnose.cause.Evidence``): the
    query's key terms the document never uses (``core.diagnose.terms.absence``: a word by
    its stem or one of its phrases, a hyphenated compound whole), a metric the question asks to
    compute that the document never names, the figures the gold holds; a top hit holds the
    query's words when one of its sentences does (a chunk that ends one passage and starts
    the next, under a heading naming the subject, does not answer)."""
    weights = content_words(case.query, FUNCTION_WORDS)
    doc = case.doc
    missing = absence(
        case.query, weights, case.doc_terms, document_pairs(doc.doc_id, doc.sha256, doc.text)
    )
    gold_text = " ".join(case.doc.text[a:b] for a, b in _gold_chars(case))

    def holds(hit: Hit) -> float:  # one sentence of the hit holding the query's words
        return max(
            (held_share(weights, hit.text[a:b]) for a, b in sentence_spans(hit.text)),
            default=0.0,
        )

    hits = hits_not_gold(case, method)
    held = [(holds(h), h) for h in hits]
    best = max(held, key=lambda x: x[0], default=None)
    copy, copy_hit = gold_copy(gold_text, hits)
    share = gold_share(case)
    return Evidence(
        absent=missing.share,
        absent_words=missing.terms,
        metric=missing.metric,
        metric_defined=missing.defined,
        figures=sum(1 for f in FIGURE.findall(gold_text) if not _YEAR.fullmatch(f)),
        gold_holds=held_share(weights, gold_text),
        hit_holds=best[0] if best else 0.0,
        hit=best[1].chunk_id if best else "",
        damage=damage,
        copy=copy,
        copy_hit=copy_hit,
        share=1.0 if share is None else share,
    )


def _copy_hit(case: Case, method: str, evidence: Evidence) -> Hit | None:
    """The top hit holding the gold's text, when one does (``COPY``): a second gold span."""
    if evidence.copy < COPY:
        return None
    return next((h for h in hits_not_gold(case, method) if h.chunk_id == evidence.copy_hit), None)


def _copy_signal(case: Case, evidence: Evidence, copy: Hit | None) -> Signal:
    """The gold's text standing in a top hit, as the reader's label panel shows it."""
    if copy is None:
        detail = "no top hit holds the gold's text"
        if evidence.copy:
            detail += f" (at most {evidence.copy:.0%} of its words, in order)"
        return Signal(cause="label", name="gold's text in a top hit", strength=evidence.copy,
                      detail=detail)  # fmt: skip
    where = ((copy.char_start, copy.char_end),) if copy.doc_id == case.doc.doc_id else ()
    return Signal(
        cause="label", name="gold's text in a top hit", strength=evidence.copy,
        detail=f"a top hit holds {evidence.copy:.0%} of the gold's words, in order, and its "
        f"figures ({copy.doc_id}, chars {copy.char_start}-{copy.char_end}): the passage "
        "stands twice",
        spans=where,
    )  # fmt: skip


def _restated_signal(case: Case, found: Restatement) -> Signal:
    """The top hit's sentence closest in meaning to one of the gold's, as the reader's label
    panel shows it: both sentences, side by side, for the reader to judge."""
    where = (found.hit,) if found.hit_doc == case.doc.doc_id else ()
    said = "says what the gold says" if found.similarity >= RESTATED else "comes closest to"
    strength = found.similarity if found.similarity >= RESTATED else 0.0  # holds only there
    return Signal(
        cause="label", name="gold said again in a top hit", strength=strength,
        detail=f"a top hit's sentence {said} ({found.similarity:.2f} under the model): "
        f"“{_shortened(found.hit_text)}” ({found.hit_doc}, chars {found.hit[0]}-{found.hit[1]}) "
        f"beside the gold's “{_shortened(found.gold_text)}”",
        spans=where,
    )  # fmt: skip


def _shortened(text: str, most: int = 160) -> str:
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def gold_copy(gold_text: str, hits: Sequence[Hit]) -> tuple[float, str]:
    """The largest share of the gold's words that one of ``hits`` (none overlapping the
    gold) holds in the gold's order, in runs of at least ``COPY_RUN`` words within a
    stretch of the hit at most ``COPY_SPREAD`` times the gold's length, and that hit's
    chunk id: a hit holding the gold's text, the same passage standing twice (a repeated
    filing note, a report quoted again). A hit lacking one of the gold's figures (each
    as often as the gold states it) is not its copy: a twin stating another model's
    voltage or another year's total. ``(0.0, "")`` for a gold of fewer than
    ``COPY_WORDS`` words."""
    gold = _WORD.findall(gold_text.lower())
    if len(gold) < COPY_WORDS:
        return 0.0, ""
    figures = Counter(figure_list(gold_text))
    run = min(COPY_RUN, len(gold))
    best, found = 0.0, ""
    for hit in hits:
        if figures - Counter(figure_list(hit.text)):
            continue  # a figure of the gold the hit does not state
        words = _WORD.findall(hit.text.lower())
        matcher = SequenceMatcher(None, gold, words, autojunk=False)
        blocks = [m for m in matcher.get_matching_blocks() if m.size >= run]
        if not blocks:
            continue
        spread = blocks[-1].b + blocks[-1].size - blocks[0].b
        if spread > COPY_SPREAD * len(gold):
            continue  # the words stand apart: not the passage again
        share = sum(m.size for m in blocks) / len(gold)
        if share > best:
            best, found = share, hit.chunk_id
    return best, found


def diagnose(
    case: Case,
    *,
    method: str,
    corpus_terms: set[str],
    experiments: Sequence[Experiment] = (),
    repaired: bool = False,
    restated: Restatement | None = None,
) -> Diagnosis:
    """The suggested cause of one failed query under ``method`` from its ``experiments``
    (``repaired``: the method's own repairs were run) and the evidence, with every signal
    (see the module docstring); ``restated``: the top hit's sentence closest in meaning to
    a sentence of the gold (``core.diagnose.restated``), when the encoder was at hand."""
    terms = query_terms(case.query)
    labels, second = _label(case, terms, method)
    twin = next(s.strength for s in labels if s.name == "gold is a near-duplicate of the answer")
    parse = _parse(case)
    damage = max(s.strength for s in parse if s.name == "gold text is not language")
    near, far = missing_terms(case, terms)
    if second is not None:  # the method found the answer, standing in a second place: the
        # label explains the miss better than what the gold chunk lacks (as a twin does)
        twin = max(twin, next(s.strength for s in labels if s.name == "answer in two places"))
    vocabulary = _vocabulary(case, terms, corpus_terms, method, damage, far)
    unused = max(
        s.strength for s in vocabulary
        if s.name in ("query words the document never uses",
                      "query words absent from the gold and its context")
    )  # fmt: skip
    signals = [
        *parse,
        *labels,
        *_method(case, method, unused),
        *_boundary(case, terms),
        *vocabulary,
        *_context(case, terms, method, twin, damage, near),
    ]
    broken = max((s.strength for s in parse), default=0.0)
    two = next((s.strength for s in labels if s.name == "answer in two places"), 0.0)
    outside = next(s for s in signals if s.name == "query terms outside the gold chunk")
    evidence = dataclasses.replace(
        evidence_of(case, method, broken), second_place=two, outside=outside.strength,
        outside_words=query_phrases(case.query, set(near)), elsewhere=far_share(terms, far),
        elsewhere_words=query_phrases(case.query, set(far)),
    )  # fmt: skip
    copy = _copy_hit(case, method, evidence)
    signals.append(_copy_signal(case, evidence, copy))
    said_again = None
    if restated is not None:
        evidence = dataclasses.replace(
            evidence, restated=restated.similarity, restated_hit=restated.chunk_id
        )
        signals.append(_restated_signal(case, restated))
        if restated.similarity >= RESTATED:  # the sentence, not its whole chunk
            said_again = Hit(
                chunk_id=restated.chunk_id, doc_id=restated.hit_doc,
                char_start=restated.hit[0], char_end=restated.hit[1], text=restated.hit_text,
            )  # fmt: skip
    if not any(e.repair == "method" for e in experiments):
        experiments = [*experiments, *_method_experiments(case, method)]
    lexical = case.spec(method).family == "lexical"
    meaning = frozenset(m for m in case.ranks if case.spec(m).family == "dense")
    in_context = frozenset(m for m in meaning if reads_document(case.spec(m)))
    decision = decide(experiments, evidence, k=case.k, lexical=lexical,
                      meaning=meaning, in_context=in_context,
                      own_context=method in in_context)  # fmt: skip
    best = _best_chunk(case)
    top = _first_hit(case, method)
    return Diagnosis(
        query_id=case.query_id, method=method, signals=tuple(signals),
        suggested=decision.cause, decided_by=decision.decided_by,
        confidence=decision.confidence, runner_up=decision.runner_up,
        scores=scores_of(signals), gold_chunk=best.chunk_id if best else "", displacer=top,
        second_gold=second or copy or (said_again if decision.cause == "label" else None),
        experiments=tuple(experiments), evidence=evidence,
        repaired=repaired,
    )  # fmt: skip
