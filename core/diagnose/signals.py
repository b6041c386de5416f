"""The evidence for each possible cause of a failed query, and the cause it suggests.

Every signal is computed from what the run and the document hold, with the characters it
points at (document spans) so the reader can light them up:

- **boundary**: the share of the gold span the best single chunk covers; whether the gold
  straddles a boundary; whether the sentence after the gold (a qualifier: "unless",
  "except", "however", "note", a footnote mark) sits in another chunk;
- **context**: the query's terms that the document holds but the gold chunk does not, where
  they first stand, and whether the title or heading path holds them; the gold's rank
  under each method side by side;
- **vocabulary**: the gold's rank under lexical methods against dense ones; query terms
  absent from the whole corpus;
- **parse**: the gold lies in a running header or footer (left out by the structure
  policy), on a page without a text layer, or in a block flagged as garbled;
- **label**: the gold was resolved only by word alignment (and with what coverage); the
  top chunk of every method is one and the same non-gold chunk holding the query's terms.

``diagnose`` applies a fixed rule, in this order: parse, label, boundary, a name or
figure of the query absent from the corpus (vocabulary), discriminating terms outside
the gold chunk (context), any other vocabulary signal, else other; the first signal that
holds decides, and the diagnosis names it. A human confirms or overrides it in the failure reader.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from core import methods as registry
from core.diagnose.terms import Span, name_like, query_terms, terms_of
from core.types import Block, Chunk, Document

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
DISCRIMINATING_SHARE = 0.15  # a query term in at most this share of the chunks tells them apart
NAMING_DOC_SHARE = 0.5  # a term in at most half the corpus's documents names a subject
BOUNDARY_COVERAGE = 0.6  # the best chunk holds less than this share of the gold: a split
LABEL_COVERAGE = 0.98  # aligned evidence below this: the label may point at the wrong text


@dataclass(frozen=True, slots=True, kw_only=True)
class Signal:
    """One piece of evidence: ``holds`` says whether it points at ``cause``."""

    cause: str
    name: str
    holds: bool
    detail: str
    spans: tuple[Span, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Diagnosis:
    """The signals of one failed query under one method and the suggested cause."""

    query_id: str
    method: str
    signals: tuple[Signal, ...]
    suggested: str
    decided_by: str

    def by_cause(self, cause: str) -> list[Signal]:
        return [s for s in self.signals if s.cause == cause]


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """What one failure's diagnosis reads: the query, its gold spans (with how they were
    resolved), the document, its chunks and blocks under the run's policy, each method's
    rank of the gold (None beyond the depth) and top chunk id."""

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


def _overlap(a: Span, b: Span) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def _boundary(case: Case) -> list[Signal]:
    start, end = min(g[0] for g in case.gold), max(g[1] for g in case.gold)
    size = max(1, end - start)
    touching = [c for c in case.chunks if _overlap((c.char_start, c.char_end), (start, end))]
    best = max(
        touching, key=lambda c: _overlap((c.char_start, c.char_end), (start, end)), default=None
    )
    share = _overlap((best.char_start, best.char_end), (start, end)) / size if best else 0.0
    out = [
        Signal(
            cause="boundary",
            name="best chunk coverage",
            holds=share < BOUNDARY_COVERAGE,
            detail=f"the best single chunk holds {share:.0%} of the gold "
            f"({len(touching)} chunk(s) touch it)",
            spans=tuple((c.char_start, c.char_end) for c in touching),
        )
    ]
    after = case.doc.text[end : end + 200]
    nxt = QUALIFIERS.match(after)
    if nxt and best is not None:
        at = end + nxt.start(1)
        apart = not best.char_start <= at < best.char_end
        out.append(
            Signal(
                cause="boundary",
                name="qualifier in the next chunk",
                holds=apart,
                detail=f"the gold is followed by {nxt.group(1)!r}"
                + (", which sits in another chunk" if apart else ", in the same chunk"),
                spans=((at, at + len(nxt.group(1))),),
            )
        )
    return out


def _best_chunk(case: Case) -> Chunk | None:
    start, end = min(g[0] for g in case.gold), max(g[1] for g in case.gold)
    return max(
        (c for c in case.chunks if _overlap((c.char_start, c.char_end), (start, end))),
        key=lambda c: _overlap((c.char_start, c.char_end), (start, end)),
        default=None,
    )


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


def _context(case: Case, query_terms: Mapping[str, str]) -> list[Signal]:
    query_terms = discriminating(case, query_terms)
    best = _best_chunk(case)
    held = terms_of(best.text) if best else set()
    first = case.doc_terms
    missing = [t for t in query_terms if t in first and t not in held]
    spans = tuple(first[t] for t in missing)
    path = " ".join((case.doc.title, *(best.heading_path if best else ()))).lower()
    in_path = [query_terms[t] for t in missing if query_terms[t].lower() in path]
    words = ", ".join(query_terms[t] for t in missing) or "none"
    out = [
        Signal(
            cause="context",
            name="query terms outside the gold chunk",
            holds=bool(missing),
            detail=f"the document holds {words} (discriminating query terms) but the gold "
            "chunk does not"
            + (
                f"; the title or heading path holds {', '.join(in_path)} "
                f"({registry.embedding_method(prefixed=True).name} sees it)"
                if in_path
                else ""
            ),
            spans=spans,
        )
    ]
    ranks = " · ".join(
        f"{m} {'-' if r is None else r}"
        for m, r in case.ranks.items()
        if registry.get(m).family == "dense"
    )
    out.append(
        Signal(cause="context", name="dense ranks", holds=False, detail=f"gold rank: {ranks}")
    )
    return out


def _vocabulary(case: Case, query_terms: Mapping[str, str], corpus_terms: set[str]) -> list[Signal]:
    absent = [
        w
        for t, w in query_terms.items()
        if t not in corpus_terms and w.lower() not in FUNCTION_WORDS
    ]
    names = [w for w in absent if name_like(w)]
    lexical = {m: r for m, r in case.ranks.items() if registry.get(m).family == "lexical"}
    dense = {m: r for m, r in case.ranks.items() if registry.get(m).family == "dense"}
    found = [m for m, r in lexical.items() if r is not None and r <= case.k]
    missed = [m for m, r in dense.items() if r is None or r > case.k]
    out = [
        Signal(
            cause="vocabulary",
            name="names or figures absent from the corpus",
            holds=bool(names),
            detail=f"no document holds {', '.join(names)}"
            if names
            else "no name or figure of the query is missing from the corpus",
        ),
        Signal(
            cause="vocabulary",
            name="query terms absent from the corpus",
            holds=bool(absent),
            detail=f"no document holds {', '.join(absent)}"
            if absent
            else "every query term occurs in the corpus",
        ),
    ]
    if lexical and dense:
        shown = ", ".join(f"{m} {'-' if r is None else r}" for m, r in {**lexical, **dense}.items())
        out.append(
            Signal(
                cause="vocabulary",
                name="lexical finds what dense misses",
                holds=bool(found) and len(missed) == len(dense),
                detail=f"gold rank {shown} (top {case.k})",
            )
        )
    return out


def _parse(case: Case) -> list[Signal]:
    start, end = min(g[0] for g in case.gold), max(g[1] for g in case.gold)
    furniture = [
        b
        for b in case.blocks
        if b.kind in ("header", "footer") and _overlap((b.char_start, b.char_end), (start, end))
    ]
    garbled = [
        b
        for b in case.blocks
        if getattr(b, "garbled", False) and _overlap((b.char_start, b.char_end), (start, end))
    ]
    pages = {p.number: p for p in case.doc.pages}
    blank = sorted(
        {
            n
            for b in case.blocks
            if _overlap((b.char_start, b.char_end), (start, end))
            for n in (b.page,)
            if n in pages and not pages[n].has_text
        }
    )
    return [
        Signal(
            cause="parse",
            name="gold in a running header or footer",
            holds=bool(furniture),
            detail=f"{len(furniture)} header/footer block(s) hold the gold "
            "(the structure policy leaves them out)"
            if furniture
            else "no header or footer block holds the gold",
            spans=tuple((b.char_start, b.char_end) for b in furniture),
        ),
        Signal(
            cause="parse",
            name="gold in garbled text",
            holds=bool(garbled),
            detail=f"{len(garbled)} block(s) flagged as garbled hold the gold"
            if garbled
            else "no garbled block holds the gold",
            spans=tuple((b.char_start, b.char_end) for b in garbled),
        ),
        Signal(
            cause="parse",
            name="page without a text layer",
            holds=bool(blank),
            detail=f"page(s) {', '.join(map(str, blank))} have no text layer"
            if blank
            else "every page of the gold has text",
        ),
    ]


def _label(case: Case, query_terms: Mapping[str, str]) -> list[Signal]:
    aligned = [g for g in case.gold if g[2] == "aligned"]
    low = min((g[3] for g in aligned), default=1.0)
    tops = {t for t in case.tops.values() if t}
    gold_ids = {
        c.chunk_id
        for c in case.chunks
        if any(_overlap((c.char_start, c.char_end), (g[0], g[1])) for g in case.gold)
    }
    agreed = next(iter(tops)) if len(tops) == 1 and len(case.tops) > 1 else None
    chunk = next((c for c in case.chunks if c.chunk_id == agreed), None)
    holds_terms = chunk is not None and set(query_terms) <= terms_of(chunk.text)
    return [
        Signal(
            cause="label",
            name="evidence resolved by alignment",
            holds=bool(aligned) and low < LABEL_COVERAGE,
            detail=f"resolved by word alignment, coverage {low:.0%}"
            if aligned
            else "resolved exactly",
            spans=tuple((g[0], g[1]) for g in aligned),
        ),
        Signal(
            cause="label",
            name="every method agrees on another chunk",
            holds=agreed is not None and agreed not in gold_ids and holds_terms,
            detail="the top chunk of every method is one non-gold chunk holding every query term"
            if agreed is not None and agreed not in gold_ids and holds_terms
            else "the methods' top chunks differ, or hold the gold",
            spans=((chunk.char_start, chunk.char_end),) if chunk is not None else (),
        ),
    ]


# (cause, deciding signal or None for any of its signals), first match wins: a name the
# corpus lacks outranks a chunk that lost its subject, which outranks a paraphrase.
ORDER: tuple[tuple[str, str | None], ...] = (
    ("parse", None),
    ("label", None),
    ("boundary", None),
    ("vocabulary", "names or figures absent from the corpus"),
    ("context", None),
    ("vocabulary", None),
)


def diagnose(case: Case, *, method: str, corpus_terms: set[str]) -> Diagnosis:
    """Every signal of one failed query and the suggested cause (see the module docstring)."""
    terms = query_terms(case.query)
    signals = [
        *_parse(case),
        *_label(case, terms),
        *_boundary(case),
        *_vocabulary(case, terms, corpus_terms),
        *_context(case, terms),
    ]
    for cause, name in ORDER:
        deciding = next(
            (s for s in signals if s.cause == cause and s.holds and name in (None, s.name)), None
        )
        if deciding is not None:
            return Diagnosis(
                query_id=case.query_id,
                method=method,
                signals=tuple(signals),
                suggested=cause,
                decided_by=deciding.name,
            )
    return Diagnosis(
        query_id=case.query_id,
        method=method,
        signals=tuple(signals),
        suggested="other",
        decided_by="no signal holds",
    )
