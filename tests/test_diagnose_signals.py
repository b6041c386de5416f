"""Why it failed: the evidence for each cause, and the suggested cause, on the bundled
datasheets and on constructed cases of each kind."""

from __future__ import annotations

import collections

import pytest
from fakes import make_document, paragraph_chunks
from test_demo_datasheets import DATASHEETS, load_generator

from core.diagnose.run_failures import diagnose_run
from core.diagnose.signals import Case, diagnose
from core.diagnose.terms import chunk_shares, first_terms
from core.evaluate import EvalConfig, Evidence, LabelledQuery, run_eval
from core.ingest import load_document
from core.types import Block, ChunkPolicy

FIXED_300 = ChunkPolicy(name="fixed", size=300)


@pytest.fixture(scope="module")
def datasheet_run():
    from test_embed_encoder import shared_default_encoder

    gen = load_generator()
    docs = [load_document(DATASHEETS / f"datasheet-{gen.slug(p)}.pdf") for p in gen.PRODUCTS]
    queries = [
        LabelledQuery(
            id=f"{gen.slug(product)}-{gen.slug(section)}",
            query=f"{product} {asked}",
            doc=f"datasheet-{gen.slug(product)}",
            evidence=(Evidence(text=texts[section]),),
        )
        for product, texts in gen.PRODUCTS.items()
        for section, asked in gen.SECTION_QUERIES.items()
    ]
    config = EvalConfig(policy=FIXED_300, methods=("naive", "late", "bm25"), ks=(1,))
    run = run_eval(queries, docs, config, encoder=shared_default_encoder())
    return run, {d.doc_id: d for d in docs}, gen


@pytest.mark.slow
def test_datasheet_failures_are_context_failures_that_name_the_product(datasheet_run):
    run, docs, gen = datasheet_run
    found = diagnose_run(run, docs, method="naive")
    assert len(found) >= 10  # the sections after page 1 say "the unit", not the product
    causes = collections.Counter(d.suggested for d in found.values())
    assert causes["context"] >= 0.6 * len(found), causes  # the rest straddle two chunks
    assert set(causes) <= {"context", "boundary"}, causes
    record = {q.id: q for q in run.queries}
    for qid, diagnosis in found.items():
        if diagnosis.suggested != "context":
            continue
        doc = docs[record[qid].doc_id]
        (signal,) = [s for s in diagnosis.by_cause("context") if s.holds]
        shown = {doc.text[a:b] for a, b in signal.spans}
        product = next(p for p in gen.PRODUCTS if doc.doc_id.endswith(gen.slug(p)))
        assert product.split()[0] in shown, (qid, shown)  # the product's name ...
        first = min(a for a, b in signal.spans if doc.text[a:b] == product.split()[0])
        assert doc.pages_of(first, first + 1) == (1,)  # ... where it stands, on page 1


def _case(text, gold, query, *, chunks=None, blocks=(), ranks=None, tops=None):
    doc = make_document("d", text, title="Manual")
    chunks = chunks if chunks is not None else paragraph_chunks(doc, FIXED_300)
    return Case(
        query_id="q", query=query, gold=(gold,), doc=doc, chunks=chunks,
        blocks=list(blocks), ranks=ranks or {"naive": None, "late": None},
        tops=tops or {"naive": chunks[0].chunk_id, "late": chunks[-1].chunk_id}, k=5,
        doc_terms=first_terms(doc.text), chunk_share=chunk_shares(chunks),
    )  # fmt: skip


def test_evidence_straddling_two_chunks_is_a_boundary_failure():
    text = "The pump starts at two bar.\n\nIt stops at six bar.\n\nFilters last a year."
    end = text.index("six bar.") + len("six bar.")
    gold = (text.index("starts"), end, "given", 1.0)
    found = diagnose(
        _case(text, gold, "pump start stop pressure"), method="naive", corpus_terms=set()
    )
    assert found.suggested == "boundary" and found.decided_by == "best chunk coverage"
    (signal,) = [s for s in found.by_cause("boundary") if s.name == "best chunk coverage"]
    assert len(signal.spans) == 2 and "holds 50%" in signal.detail  # half of it, two chunks


def test_a_query_term_no_document_holds_is_a_vocabulary_failure():
    text = "The pump starts at two bar.\n\nIt stops at six bar."
    gold = (0, len("The pump starts at two bar."), "given", 1.0)
    corpus = set(first_terms(text))
    found = diagnose(
        _case(text, gold, "Zyxtronic actuator pump"), method="naive", corpus_terms=corpus
    )
    assert found.suggested == "vocabulary"
    assert found.decided_by == "names or figures absent from the corpus"
    named, words = [s for s in found.by_cause("vocabulary") if s.holds]
    assert "Zyxtronic" in named.detail and "actuator" not in named.detail
    assert "Zyxtronic" in words.detail and "actuator" in words.detail


def test_gold_text_in_a_running_header_is_a_parse_failure():
    text = "ACME PUMPS 2024\n\nThe pump starts at two bar.\n\nACME PUMPS 2024"
    doc = make_document("d", text, title="Manual")
    header = Block(
        doc_id="d", doc_sha256=doc.sha256, kind="header", char_start=0, char_end=15,
        text=text[0:15], page=1, bbox_pt=None,
    )  # fmt: skip
    found = diagnose(
        _case(text, (0, 15, "given", 1.0), "ACME pumps 2024", blocks=[header]),
        method="naive", corpus_terms=set(first_terms(text)),
    )  # fmt: skip
    assert found.suggested == "parse" and found.decided_by == "gold in a running header or footer"
    assert found.by_cause("parse")[0].spans == ((0, 15),)


def test_gold_found_by_alignment_with_low_coverage_and_a_qualifier_are_shown():
    text = "Parts are covered for three years.\n\nUnless the seal was opened.\n\nOther text."
    gold = (0, len("Parts are covered for three years."), "aligned", 0.9)
    found = diagnose(_case(text, gold, "warranty years"), method="naive", corpus_terms=set())
    assert found.suggested == "label"
    qualifier = [s for s in found.by_cause("boundary") if s.name == "qualifier in the next chunk"]
    assert qualifier and qualifier[0].holds and "'Unless'" in qualifier[0].detail


@pytest.mark.slow
def test_signals_for_every_query_of_a_run_are_laid_out(datasheet_run):
    import time

    run, docs, _ = datasheet_run
    started = time.perf_counter()
    found = diagnose_run(run, docs, method="bm25", only_failed=False)
    assert len(found) == len(run.queries)
    assert time.perf_counter() - started < 30  # generous: the benchmark measures it
    for diagnosis in found.values():
        assert {s.cause for s in diagnosis.signals} == {
            "parse",
            "label",
            "boundary",
            "vocabulary",
            "context",
        }
        assert diagnosis.suggested in {
            "parse",
            "label",
            "boundary",
            "vocabulary",
            "context",
            "other",
        }
