"""Diagnose every failure of a saved evaluation run (``core.evaluate.run_file.EvalRun``).

The run stores ranks and top chunks per method; the chunks and blocks of each gold
document are rebuilt under the run's policy (the same spans the run ranked, since chunk
ids are content-addressed), and each document's terms are read once. Given the run's
encoder, each failure's repairs are run as experiments (``core.diagnose.repairs``): the
repaired texts are scored by the failing method and ranked against the scores of the
run's stored hits; a lexical method's statistics are those of every chunk of the run's
corpus (chunked again, not embedded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.chunk import chunk_document
from core.chunk.policy_registry import policy_from_dict
from core.diagnose.repairs import (
    RIVALS,
    Failure,
    LexicalStats,
    MethodScorer,
    ScoreBook,
    content_words,
    ocr_region,
    run_repairs,
)
from core.diagnose.restated import Restatement, restatement
from core.diagnose.signals import FUNCTION_WORDS, Case, Diagnosis, Hit, diagnose, hits_not_gold
from core.diagnose.terms import ChunkShares
from core.evaluate.run_file import Suggestion
from core.formats import parse_document
from core.index.indexer import method_records
from core.methods.lexical import indexed_text, term_spans
from core.provenance.types import Block, Chunk, Document

Chunker = Callable[[Document], tuple[Sequence[Block], Sequence[Chunk]]]


def default_chunker(policy: Any) -> Chunker:
    """The default parser's blocks, and the chunks of ``policy`` (a ``ChunkPolicy``)."""

    def parts(doc: Document) -> tuple[Sequence[Block], Sequence[Chunk]]:
        blocks = parse_document(doc).blocks
        return blocks, chunk_document(doc, blocks, policy)

    return parts


def diagnose_run(
    run: Any,
    docs: Mapping[str, Document],
    *,
    method: str,
    chunker: Chunker | None = None,
    only_failed: bool = True,
    encoder: Any = None,
    embed: Any = None,
) -> dict[str, Diagnosis]:
    """Diagnoses of the run's failed queries under ``method`` (every query with
    ``only_failed=False``), by query id; queries whose document is not given are skipped."""
    return diagnose_methods(
        run, docs, [method], chunker=chunker, only_failed=only_failed, encoder=encoder,
        embed=embed,
    )[method]  # fmt: skip


def diagnose_methods(
    run: Any,
    docs: Mapping[str, Document],
    methods: Sequence[str] | None = None,
    *,
    chunker: Chunker | None = None,
    only_failed: bool = True,
    encoder: Any = None,
    embed: Any = None,
) -> dict[str, dict[str, Diagnosis]]:
    """``diagnose_run`` for each of ``methods`` (default: every method of the run), each
    document chunked and read once: ``{method: {query id: diagnosis}}``. With ``encoder``
    (and ``embed``, the run's records function; default the indexer's) the repairs are
    run (the repaired texts of every failure embedded in batches: ``ScoreBook``); without,
    only the other methods' ranks and the evidence decide."""
    parts = chunker or default_chunker(policy_from_dict(run.policy))
    if encoder is not None and embed is None:
        embed = method_records
    stats: dict[str, LexicalStats] = {}
    built: dict[str, tuple[Sequence[Block], Sequence[Chunk], Mapping[str, float], Any]] = {}
    every = {d: term_spans(doc.text) for d, doc in docs.items()}  # read once each
    terms = {d: {t: spans[0] for t, spans in found.items()} for d, found in every.items()}
    corpus = set().union(*terms.values()) if terms else set()
    holding: dict[str, int] = {}
    for found in terms.values():
        for term in found:
            holding[term] = holding.get(term, 0) + 1
    doc_share = {t: n / len(terms) for t, n in holding.items()} if len(terms) > 1 else {}
    chosen = list(methods or run.methods)
    out: dict[str, dict[str, Diagnosis]] = {m: {} for m in chosen}
    book = ScoreBook(encoder=encoder, embed=embed) if encoder is not None else None
    read = _remembered(ocr_region)
    pending: list[tuple[Case, str, Any, Any, dict[str, float], ScoreBook | None]] = []
    for record in run.queries:
        doc = docs.get(record.doc_id)
        if doc is None or doc.sha256 != record.doc_sha256:
            continue
        failing = [m for m in chosen if record.failed.get(m) or not only_failed]
        if not failing:
            continue
        if doc.doc_id not in built:
            blocks, chunks = parts(doc)
            spans = every[doc.doc_id]  # the query's terms' shares read from them
            built[doc.doc_id] = (blocks, chunks, ChunkShares(chunks, doc.text, spans), spans)
        blocks, chunks, shares, spans = built[doc.doc_id]
        case = Case(
            query_id=record.id,
            query=record.query,
            gold=tuple((g.char_start, g.char_end, g.method, g.coverage) for g in record.gold),
            doc=doc,
            chunks=chunks,
            blocks=blocks,
            ranks=dict(record.ranks),
            tops={m: (hits[0].chunk_id if hits else None) for m, hits in record.top.items()},
            k=run.text_k,
            doc_terms=terms[doc.doc_id],
            chunk_share=shares,
            doc_share=doc_share,
            hits={m: _hits(run, hits) for m, hits in record.top.items()},
            term_spans=spans,
            n_docs=len(terms),
            specs={m: run.method(m) for m in run.methods},
        )
        for method in failing:
            failure = _failure(run, record, doc, chunks, method, blocks)
            scorer = None
            if encoder is not None and failure is not None:
                scorer = _scorer(run, docs, parts, method, record.query, encoder, embed, stats)
                if scorer is not None:
                    scorer.book = book
            weights = content_words(record.query, FUNCTION_WORDS)
            if failure is not None and scorer is not None:
                run_repairs(failure, scorer, weights, read)  # what they would embed
            said = book if book is not None and _reads_restatement(run, method) else None
            if said is not None:
                _restated(case, method, said, weights)  # the sentences it would embed
            pending.append((case, method, failure, scorer, weights, said))
    if book is not None:
        book.fill()  # every repaired text and compared sentence of the run, in batches
    for case, method, failure, scorer, weights, said in pending:
        tried = run_repairs(failure, scorer, weights, read) if failure is not None else []
        out[method][case.query_id] = diagnose(
            case, method=method, corpus_terms=corpus, experiments=tried,
            repaired=scorer is not None,
            restated=_restated(case, method, said, weights) if said is not None else None,
        )  # fmt: skip
    return out


def _restated(
    case: Case, method: str, book: ScoreBook, weights: Mapping[str, float]
) -> Restatement | None:
    """The top hit's sentence closest in meaning to the gold's (``core.diagnose.restated``),
    read from ``book`` (None while it collects what to embed). Not asked for an external
    retriever's failure (``_reads_restatement``)."""
    gold = [(a, b) for a, b, _, _ in case.gold]
    doc = case.doc
    hits = hits_not_gold(case, method)
    return restatement(gold, doc.doc_id, doc.text, hits, book.text, weights)


def _reads_restatement(run: Any, method: str) -> bool:
    """Whether a failure of ``method`` reads the restatement: every method but an external
    retriever, whose failure is diagnosed without the model (no repair of its own either),
    which is then never loaded for it: its first failure is shown without waiting about a
    second for the weights."""
    return bool(run.method(method).family != "external")


def _remembered(read: Callable[[Document, Any], str | None]) -> Callable[..., str | None]:
    """``read`` (an OCR reading of a span) kept per document and span, so the repairs'
    two passes read each region once."""
    kept: dict[tuple[str, str, Any], str | None] = {}

    def again(doc: Document, span: Any) -> str | None:
        key = (doc.doc_id, doc.sha256, tuple(span))
        if key not in kept:
            kept[key] = read(doc, span)
        return kept[key]

    return again


def _failure(
    run: Any, record: Any, doc: Document, chunks: Sequence[Chunk], method: str,
    blocks: Sequence[Block] = (),
) -> Any:  # fmt: skip
    """The failure the repairs read: the run's stored hit scores for ``method`` that are
    not the gold's (the first ``RIVALS`` of them in the gold's document with their chunks,
    for the context repair's control), the gold's full-depth rank and every method's."""
    if not record.gold:
        return None
    gold = tuple(sorted((g.char_start, g.char_end) for g in record.gold))
    others: list[float] = []
    rivals: list[tuple[int, Chunk]] = []
    by_span = {(c.char_start, c.char_end): c for c in chunks}
    for hit in record.top.get(method, ()):
        cite = run.chunks.get(hit.chunk_id)
        ours = cite is not None and cite.doc_id == doc.doc_id
        if ours and any(cite.char_start < b and a < cite.char_end for a, b in gold):
            continue
        if ours and len(others) < RIVALS:
            rival = by_span.get((cite.char_start, cite.char_end))
            if rival is not None:
                rivals.append((len(others), rival))
        others.append(float(hit.score))
    ranks = {m: record.full_ranks.get(m, record.ranks.get(m)) for m in run.methods}
    return Failure(
        query=record.query, gold=gold, doc=doc, chunks=chunks, method=method,
        before=ranks.get(method), others=tuple(others), k=run.text_k, depth=run.depth,
        ranks=ranks, rivals=tuple(rivals), blocks=blocks,
    )  # fmt: skip


def _scorer(
    run: Any, docs: Mapping[str, Document], parts: Chunker, method: str, query: str,
    encoder: Any, embed: Any, stats: dict[str, LexicalStats],
) -> MethodScorer | None:  # fmt: skip
    """The failing method's scorer; a lexical one with the run's corpus statistics
    (built once per method), None for a fused or external method."""
    family = run.method(method).family  # a run answers for its own (external) methods
    if family not in ("dense", "lexical"):
        return None
    lexical = None
    if family == "lexical":
        if method not in stats:
            texts = []
            for doc_id in run.corpus:
                doc = docs.get(doc_id)
                if doc is None:
                    continue
                chunks = parts(doc)[1]
                if chunks:
                    records = embed(doc, chunks, method, encoder)
                    pairs = zip(records, chunks, strict=True)
                    texts += [indexed_text(r.prefix, c.text) for r, c in pairs]
            stats[method] = LexicalStats.build(texts)
        lexical = stats[method]
    return MethodScorer(method=method, query=query, encoder=encoder, embed=embed, lexical=lexical)


def _hits(run: Any, hits: Sequence[Any]) -> tuple[Hit, ...]:
    """The run's top ``text_k`` hits of one method with their cited spans and text."""
    out = []
    for hit in list(hits)[: run.text_k]:
        cite = run.chunks.get(hit.chunk_id)
        if cite is not None:
            out.append(
                Hit(chunk_id=hit.chunk_id, doc_id=cite.doc_id, char_start=cite.char_start,
                    char_end=cite.char_end, text=cite.quote)
            )  # fmt: skip
    return tuple(out)


def suggest_run(
    run: Any,
    docs: Mapping[str, Document],
    *,
    chunker: Chunker | None = None,
    encoder: Any = None,
    embed: Any = None,
) -> tuple[Any, dict[str, dict[str, Diagnosis]]]:
    """The run with each failed query's suggestion per failed method stored
    (``QueryRecord.suggested``, with its experiments), and the diagnoses themselves."""
    import dataclasses

    found = diagnose_methods(run, docs, chunker=chunker, encoder=encoder, embed=embed)
    records = []
    for record in run.queries:
        kept = {
            m: Suggestion(cause=d.suggested, confidence=d.confidence, runner_up=d.runner_up,
                          decided_by=d.decided_by,
                          experiments=tuple(e.to_dict() for e in d.experiments))
            for m in run.methods
            if (d := found.get(m, {}).get(record.id)) is not None
        }  # fmt: skip
        records.append(dataclasses.replace(record, suggested=kept) if kept else record)
    return dataclasses.replace(run, queries=tuple(records)), found
