"""Diagnose every failure of a saved evaluation run (``core.evaluate.run_file.EvalRun``).

The run stores ranks and top chunks per method; the chunks and blocks of each gold
document are rebuilt under the run's policy (the same spans the run ranked, since chunk
ids are content-addressed), and each document's terms are read once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from core.diagnose.signals import Case, Diagnosis, diagnose
from core.diagnose.terms import chunk_shares, first_terms
from core.types import Block, Chunk, Document

Chunker = Callable[[Document], tuple[Sequence[Block], Sequence[Chunk]]]


def default_chunker(policy: Any) -> Chunker:
    """The default parser's blocks, and the chunks of ``policy`` (a ``ChunkPolicy``)."""
    from core.chunk import chunk_document
    from core.parse import parse_document

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
) -> dict[str, Diagnosis]:
    """Diagnoses of the run's failed queries under ``method`` (every query with
    ``only_failed=False``), by query id; queries whose document is not given are skipped."""
    from core.chunk.registry import policy_from_dict

    parts = chunker or default_chunker(policy_from_dict(run.policy))
    built: dict[str, tuple[Sequence[Block], Sequence[Chunk], dict[str, float]]] = {}
    terms = {d: first_terms(doc.text) for d, doc in docs.items()}
    corpus = set().union(*terms.values()) if terms else set()
    holding: dict[str, int] = {}
    for found in terms.values():
        for term in found:
            holding[term] = holding.get(term, 0) + 1
    doc_share = {t: n / len(terms) for t, n in holding.items()} if len(terms) > 1 else {}
    out = {}
    for record in run.queries:
        doc = docs.get(record.doc_id)
        if doc is None or doc.sha256 != record.doc_sha256:
            continue
        if only_failed and not record.failed.get(method):
            continue
        if doc.doc_id not in built:
            blocks, chunks = parts(doc)
            built[doc.doc_id] = (blocks, chunks, chunk_shares(chunks))
        blocks, chunks, shares = built[doc.doc_id]
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
        )
        out[record.id] = diagnose(case, method=method, corpus_terms=corpus)
    return out
