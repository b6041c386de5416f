"""Why it failed: the evidence for each cause, and the suggested cause, on the bundled
datasheets and on constructed cases of each kind."""

from __future__ import annotations

import collections

import pytest
from fakes import make_document, paragraph_chunks
from test_demo_datasheets import DATASHEETS, load_generator

from core.diagnose.run_failures import default_chunker, diagnose_run
from core.diagnose.signals import CAUSE_NAMES, Case, Hit, diagnose
from core.diagnose.terms import chunk_shares, first_terms
from core.evaluate import EvalConfig, Evidence, LabelledQuery, run_eval
from core.formats import load_document
from core.provenance.types import Block, ChunkPolicy

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
    from test_embed_encoder import shared_default_encoder

    run, docs, gen = datasheet_run
    # the repairs run: the gold's chunk with its title and headings is ranked by the model
    found = diagnose_run(run, docs, method="naive", encoder=shared_default_encoder())
    assert len(found) >= 10  # the sections after page 1 say "the unit", not the product
    causes = collections.Counter(d.suggested for d in found.values())
    assert causes["context"] >= 0.6 * len(found), causes  # the rest straddle two chunks
    assert set(causes) <= {"context", "boundary", "vocabulary"}, causes
    for qid, diagnosis in found.items():  # a phrase of the question no datasheet uses
        if diagnosis.suggested == "vocabulary":
            assert diagnosis.confidence == "weak" and diagnosis.runner_up in ("context", "boundary")
            text = docs[next(q.doc_id for q in run.queries if q.id == qid)].text.lower()
            assert diagnosis.evidence is not None and diagnosis.evidence.absent_words
            assert all(w.lower() not in text for w in diagnosis.evidence.absent_words)
    assert causes["vocabulary"] <= 0.1 * len(found), causes
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


def _case(
    text, gold, query, *, chunks=None, blocks=(), ranks=None, tops=None, hits=None, shares=None
):
    doc = make_document("d", text, title="Manual")
    chunks = chunks if chunks is not None else paragraph_chunks(doc, FIXED_300)
    return Case(
        query_id="q", query=query, gold=(gold,), doc=doc, chunks=chunks,
        blocks=list(blocks), ranks=ranks or {"naive": None, "late": None},
        tops=tops or {"naive": chunks[0].chunk_id, "late": chunks[-1].chunk_id}, k=5,
        doc_terms=first_terms(doc.text), chunk_share=chunk_shares(chunks), hits=hits or {},
        doc_share=shares or {}, n_docs=2 if shares else 1,
    )  # fmt: skip


def test_evidence_straddling_two_chunks_is_a_boundary_failure():
    text = "The pump starts at two bar.\n\nIt stops at six bar.\n\nFilters last a year."
    end = text.index("six bar.") + len("six bar.")
    gold = (text.index("starts"), end, "given", 1.0)
    found = diagnose(
        _case(text, gold, "pump start stop pressure"), method="naive", corpus_terms=set()
    )
    assert found.scores["boundary"] >= 0.5  # shown; deciding needs the repair run (no encoder)
    (signal,) = [s for s in found.by_cause("boundary") if s.name == "best chunk coverage"]
    assert len(signal.spans) == 2 and "holds 50%" in signal.detail  # half of it, two chunks
    assert signal.strength >= 0.5


def test_a_query_naming_what_no_document_holds_is_a_vocabulary_failure():
    text = "The pump starts at two bar.\n\nIt stops at six bar."
    gold = (0, len("The pump starts at two bar."), "given", 1.0)
    corpus = set(first_terms(text))
    found = diagnose(
        _case(text, gold, "Zyxtronic actuator pump"), method="naive", corpus_terms=corpus
    )
    assert found.suggested == "vocabulary" and found.confidence == "weak"  # absent words: weak
    words, named = [s for s in found.by_cause("vocabulary") if s.holds][:2]
    assert "Zyxtronic" in named.detail and "actuator" not in named.detail
    assert "Zyxtronic" in words.detail and "actuator" in words.detail


def _header(doc, a, b, kind="header"):
    return Block(
        doc_id=doc.doc_id, doc_sha256=doc.sha256, kind=kind, char_start=a, char_end=b,
        text=doc.text[a:b], page=1, bbox_pt=None, level=1 if kind == "heading" else 0,
    )  # fmt: skip


def test_gold_text_in_a_running_header_is_a_parse_failure():
    text = "ACME PUMPS 2024\n\nThe pump starts at two bar.\n\nACME PUMPS 2024"
    doc = make_document("d", text, title="Manual")
    found = diagnose(
        _case(text, (0, 15, "given", 1.0), "ACME pumps 2024", blocks=[_header(doc, 0, 15)]),
        method="naive", corpus_terms=set(first_terms(text)),
    )  # fmt: skip
    assert found.suggested == "parse" and "left out" in found.decided_by
    (signal,) = [s for s in found.by_cause("parse") if s.holds]
    assert signal.spans == ((0, 15),) and signal.strength == 1.0


def test_a_header_touching_a_long_statement_is_not_a_parse_failure():
    """A 10-character running header inside a 700-character gold statement affects 1 %
    of it: the content is whole, so parse is not suggested."""
    body = " ".join(
        f"Revenue from subscriptions grew in segment {i} as customers renewed their plans."
        for i in range(9)
    )
    text = "ADOBE INC.\n" + body + "\n\nOther matters follow here."
    doc = make_document("d", text, title="10-K")
    gold = (0, len("ADOBE INC.\n") + len(body), "given", 1.0)
    found = diagnose(
        _case(text, gold, "How did subscription revenue grow?", blocks=[_header(doc, 0, 10)]),
        method="naive", corpus_terms=set(first_terms(text)),
    )  # fmt: skip
    assert found.suggested != "parse"
    (furniture,) = [s for s in found.by_cause("parse") if "headers" in s.name]
    assert furniture.strength < 0.05 and not furniture.holds


def test_glyph_soup_in_the_gold_is_a_parse_failure_not_a_vocabulary_one():
    soup = "#%& @<=> ~|^ #%&+< =>@ ^~|\\# %&+<=> @^~| #%&+ <=>@^"
    text = "Pump manual.\n\nThe pump draws power.\n\n" + soup + "\n\nService yearly."
    a = text.index(soup)
    found = diagnose(
        _case(text, (a, a + len(soup), "given", 1.0), "pump power draw watts"),
        method="naive", corpus_terms=set(first_terms(text)),
    )  # fmt: skip
    assert found.suggested == "parse"


def test_gold_found_by_alignment_with_low_coverage_is_a_label_signal_and_a_qualifier_shown():
    text = "Parts are covered for three years.\n\nUnless the seal was opened.\n\nOther text."
    gold = (0, len("Parts are covered for three years."), "aligned", 0.9)
    found = diagnose(_case(text, gold, "parts covered years"), method="naive", corpus_terms=set())
    assert found.scores["label"] >= 0.5
    qualifier = [s for s in found.by_cause("boundary") if s.name == "qualifier in the next chunk"]
    assert qualifier and qualifier[0].holds and "'Unless'" in qualifier[0].detail


def _hit(doc, chunk):
    return Hit(chunk_id=chunk.chunk_id, doc_id=doc.doc_id, char_start=chunk.char_start,
               char_end=chunk.char_end, text=chunk.text)  # fmt: skip


def test_only_one_method_missing_is_named_with_the_chunk_that_displaced_the_gold():
    text = ("Litigation about the depot went on.\n\nRestructuring charges were 12 million.\n\n"
            "The court met again in spring.")  # fmt: skip
    doc = make_document("d", text, title="Report")
    chunks = paragraph_chunks(doc, FIXED_300)
    gold = (chunks[1].char_start, chunks[1].char_end, "given", 1.0)
    ranks = {"naive": 1, "bm25": 1, "contextual": 2, "late": 7}
    case = _case(text, gold, "restructuring charges", chunks=chunks, ranks=ranks,
                 hits={"late": [_hit(doc, chunks[2])]})  # fmt: skip
    found = diagnose(case, method="late", corpus_terms=set(first_terms(text)))
    assert found.suggested == "method" and found.decided_by == "naive ranks it 1st"
    assert found.confidence == "weak"  # the failing method's own repairs were not run
    (signal,) = found.by_cause("method")
    assert "every other method ranks the gold in the top 5" in signal.detail
    assert "naive 1, bm25 1, contextual 2" in signal.detail
    assert found.displacer is not None and found.displacer.chunk_id == chunks[2].chunk_id
    assert found.gold_chunk == chunks[1].chunk_id
    # with two methods missing, the finding no longer holds (a weaker lean is kept)
    both = _case(text, gold, "restructuring charges", chunks=chunks,
                 ranks={**ranks, "naive": 9}, hits={"late": [_hit(doc, chunks[2])]})  # fmt: skip
    (weaker,) = diagnose(both, method="late", corpus_terms=set()).by_cause("method")
    assert not weaker.holds and "2 of 3 other methods" in weaker.detail


def _late_hit(text: str, query: str, *, gold: int, hit: int, rank: int = 7, title: str = "10-K"):
    """``text``'s paragraph chunks and late's diagnosis of ``query`` with paragraph ``gold``
    labelled (ranked ``rank`` by naive and late) and paragraph ``hit`` late's one top hit."""
    doc = make_document("d", text, title=title)
    chunks = paragraph_chunks(doc, FIXED_300)
    span = (chunks[gold].char_start, chunks[gold].char_end, "given", 1.0)
    case = _case(text, span, query, chunks=chunks, ranks={"naive": rank, "late": rank},
                 hits={"late": [_hit(doc, chunks[hit])]})  # fmt: skip
    return chunks, diagnose(case, method="late", corpus_terms=set(first_terms(text)))


def test_a_top_hit_holding_the_gold_figures_is_the_answer_in_a_second_place():
    text = ("Product mix.\n\nComputing was 44% of revenue and appliances 21% of revenue, "
            "with services at 5%.\n\n| Category | Share |\n| Computing revenue | 44% |\n"
            "| Appliances revenue | 21% |\n| Services | 5% |")  # fmt: skip
    chunks, found = _late_hit(text, "What share of revenue was computing?", gold=1, hit=2,
                              rank=4, title="10-Q")  # fmt: skip
    assert found.suggested == "label" and found.second_gold is not None
    assert found.second_gold is not None and found.second_gold.chunk_id == chunks[2].chunk_id
    (signal,) = [s for s in found.by_cause("label") if s.name == "answer in two places"]
    assert signal.spans == ((chunks[2].char_start, chunks[2].char_end),)


def test_a_top_hit_holding_the_golds_text_is_label_with_its_signal_and_a_second_gold():
    said = "Card member loans grew 11 percent as spending recovered across all regions."
    text = f"Overview.\n\n{said}\n\nRisk factors follow.\n\nIn brief: {said}"
    asked = "How fast did card member loans grow?"
    chunks, found = _late_hit(text, asked, gold=1, hit=3)
    assert found.suggested == "label" and "holds the gold's text (100%" in found.decided_by
    assert found.second_gold is not None and found.second_gold.chunk_id == chunks[3].chunk_id
    (signal,) = [s for s in found.by_cause("label") if s.name == "gold's text in a top hit"]
    assert signal.holds and signal.spans == ((chunks[3].char_start, chunks[3].char_end),)
    # without the copy among the hits, the signal says so and does not hold
    _, alone = _late_hit(text, asked, gold=1, hit=2)
    (none,) = [s for s in alone.by_cause("label") if s.name == "gold's text in a top hit"]
    assert not none.holds and none.detail.startswith("no top hit holds the gold's text")


def test_context_evidence_skips_cover_boilerplate_and_prefers_the_heading_above():
    text = (
        "TRANSITION REPORT PURSUANT TO SECTION 13 of Amcor plc, commission file 001.\n\n"
        "Amcor plc\n\n"
        "Plan details\n\n"
        "The program costs were 98 million in the period, mostly severance.\n\n"
        "Other notes about the year."
    )  # fmt: skip
    doc = make_document("d", text, title="10-Q")
    chunks = paragraph_chunks(doc, FIXED_300)
    heading_at = text.index("Amcor plc\n\nPlan")
    heading = _header(doc, heading_at, heading_at + len("Amcor plc"), kind="heading")
    gold_at = text.index("The program")
    gold = (gold_at, text.index("\n\nOther"), "given", 1.0)
    found = diagnose(
        _case(text, gold, "What did Amcor spend on the program?", chunks=chunks,
              blocks=[heading], shares={"amcor": 0.5, "program": 1.0}),  # another filer too
        method="naive", corpus_terms=set(first_terms(text)),
    )  # fmt: skip
    (signal,) = [s for s in found.by_cause("context") if s.name.startswith("query terms")]
    assert found.scores["context"] >= 0.5
    shown = [(a, text[a:b]) for a, b in signal.spans]
    assert shown == [(heading_at, "Amcor")]  # the heading, not the cover page's mention


@pytest.mark.slow
def test_signals_for_every_query_of_a_run_are_laid_out(datasheet_run):
    run, docs, _ = datasheet_run
    parts = default_chunker(FIXED_300)
    chunked: list[str] = []

    def counting(doc):
        chunked.append(doc.doc_id)
        return parts(doc)

    found = diagnose_run(run, docs, method="bm25", only_failed=False, chunker=counting)
    assert len(found) == len(run.queries)
    # bounded work: each document is parsed and chunked once, not once per query
    assert sorted(chunked) == sorted({q.doc_id for q in run.queries})
    for diagnosis in found.values():
        assert {s.cause for s in diagnosis.signals} == set(CAUSE_NAMES)
        assert diagnosis.suggested in {*CAUSE_NAMES, "unclear"}  # no encoder: no repairs


@pytest.mark.parametrize("confidence, low", [(0.42, True), (0.96, False)])
def test_gold_read_by_ocr_at_low_confidence_is_a_parse_signal(confidence, low):
    """A scanned page's gold read with low line confidence points at the reading; the same
    gold read cleanly says so and does not point at parse."""
    from dataclasses import replace

    from core.provenance.types import OcrLine

    text = "Pump manual.\n\nThe pumq stcrts at twc bar whcn cold.\n\nService yearly."
    a = text.index("The pumq")
    b = text.index("cold.") + len("cold.")
    case = _case(text, (a, b, "given", 1.0), "when does the pump start")
    case = replace(
        case,
        doc=replace(
            case.doc, ocr_lines=(OcrLine(char_start=a, char_end=b, page=1, confidence=confidence),)
        ),
    )
    found = diagnose(case, method="naive", corpus_terms=set(first_terms(text)))
    (signal,) = [s for s in found.by_cause("parse") if "OCR" in s.name]
    assert f"confidence {confidence:.2f}" in signal.detail and "100% of the gold" in signal.detail
    assert signal.holds is low
    if low:
        assert signal.strength == 1.0 and signal.spans == ((a, b),)
    else:
        assert signal.strength == 0.0 and found.decided_by != signal.name


def test_no_ocr_signal_for_a_document_with_a_text_layer():
    text = "The pump starts at two bar.\n\nIt stops at six bar."
    found = diagnose(
        _case(text, (0, 27, "given", 1.0), "pump start"), method="naive", corpus_terms=set()
    )
    assert not [s for s in found.by_cause("parse") if "OCR" in s.name]


# Cases of the shapes read on real filings (invented text): words the document uses only
# far from the gold, a prefix that finds what the plain method misses, the same figures in
# a table elsewhere, a fiscal period, and extraction damage (CID codes, spaced letters).

_FILLER = [
    "The canteen opens at seven and closes after the late shift.",
    "Visitors sign the book at the gate and wear a yellow vest.",
    "The old warehouse roof was replaced with glass panels.",
    "Gulls nest on the chimney of the boiler house every spring.",
    "A mural of the bay covers the wall of the meeting hall.",
    "The choir rehearses in the library on Thursday evenings.",
]


def _filler(n, start=0):
    return "\n\n".join(_FILLER[(start + i) % len(_FILLER)] + f" ({i})" for i in range(n))


def _crane_case(far):
    """A crane manual: the query's finance words stand far from the gold (another part of
    the manual, over 2,000 characters away) or right above it (its own section)."""
    finance = "Profit margins improved after the quay fees were renegotiated."
    gold_text = "It lifts 40 tonnes at full reach."
    parts = ["Crane manual for the east quay.", _filler(30)]
    parts += [finance, _filler(40, 3)] if far else [finance]
    text = "\n\n".join([*parts, gold_text, _filler(4, 2)])
    at = text.index(gold_text)
    return text, (at, at + len(gold_text), "given", 1.0)


def test_query_words_used_only_far_from_the_gold_are_vocabulary_not_context():
    query = "How many tonnes can it lift when profit margins improved?"
    text, gold = _crane_case(far=True)
    far = diagnose(_case(text, gold, query), method="naive", corpus_terms=set(first_terms(text)))
    assert far.scores["vocabulary"] > far.scores["context"], far.scores
    (signal,) = [
        s for s in far.signals if s.name == "query words absent from the gold and its context"
    ]
    assert signal.holds and "margins" in signal.detail and "improved" in signal.detail
    text, gold = _crane_case(far=False)  # the same words right above it: what a reader knows
    near = diagnose(_case(text, gold, query), method="naive", corpus_terms=set(first_terms(text)))
    assert near.scores["context"] > near.scores["vocabulary"], near.scores


def test_the_prefixed_method_finding_what_the_plain_one_misses_is_context():
    from core import methods as registry

    plain = registry.embedding_method(prefixed=False).name
    prefixed = registry.embedding_method(prefixed=True).name
    text = "\n\n".join(["Harlan pumps: the Vesta line.", _filler(20), "Liability: 93 million."])
    at = text.index("Liability")
    gold = (at, len(text), "given", 1.0)
    query = "What is the Vesta liability purpose and nature?"
    ranks = {plain: 6, prefixed: 1, "bm25": 2, "late": 9}
    found = diagnose(_case(text, gold, query, ranks=ranks), method=plain, corpus_terms=set())
    assert found.scores["context"] >= 0.5
    assert [s for s in found.signals if s.name == "the prefixed method finds it" and s.holds]
    # the prefixed method itself missing: no such evidence
    missed = diagnose(_case(text, gold, query, ranks={**ranks, prefixed: 9}), method=plain,
                      corpus_terms=set())  # fmt: skip
    assert not [s for s in missed.signals if s.name == "the prefixed method finds it" and s.holds]


def test_the_same_figures_in_a_table_elsewhere_are_the_answer_in_two_places():
    bullets = ("Audio: the 6.4% decline came from speakers. Games: the 9.0% growth came from "
               "consoles. Services: the 7.6% growth came from memberships.")  # fmt: skip
    table = "Home segment mix\n\n| Audio | (6.4)% |\n| Games | 9.0 % |\n| Services | 7.6 % |"
    text = "\n\n".join(["Quarterly report.", table, _filler(8), bullets, _filler(3, 1)])
    doc = make_document("d", text, title="10-Q")
    chunks = paragraph_chunks(doc, FIXED_300)
    at = text.index(bullets)
    gold = (at, at + len(bullets), "given", 1.0)
    second = next(c for c in chunks if "9.0 %" in c.text)
    query = "What growth did games and services have in the home segment?"
    case = _case(text, gold, query, chunks=chunks, ranks={"naive": 8, "late": 8},
                 hits={"late": [_hit(doc, second)]})  # fmt: skip
    found = diagnose(case, method="late", corpus_terms=set(first_terms(text)))
    assert found.suggested == "label" and found.second_gold is not None
    assert found.second_gold is not None and found.second_gold.chunk_id == second.chunk_id


@pytest.mark.parametrize("period", ["FY2031", "Q3", "Q32031", "Q3'2031", "H1"])
def test_a_fiscal_period_is_not_a_name(period):
    text = "Pump report.\n\nRevenue of the pump was 12 million.\n\nOther notes."
    at = text.index("Revenue")
    gold = (at, text.index("\n\nOther"), "given", 1.0)
    found = diagnose(_case(text, gold, f"pump revenue {period}"), method="naive",
                     corpus_terms=set(first_terms(text)))  # fmt: skip
    (named,) = [s for s in found.signals if s.name == "names or figures absent from the corpus"]
    assert named.strength == 0.0 and period not in named.detail


@pytest.mark.parametrize(
    "damaged",
    [
        "(cid:55)(cid:75)(cid:72) (cid:83)(cid:88)(cid:80)(cid:83) (cid:71)(cid:85)(cid:68)"
        "(cid:90)(cid:86) 450 (cid:90)(cid:68)(cid:87)(cid:87)(cid:86).",
        "T h e p u m p d r a w s 4 5 0 w a t t s a t f u l l l o a d .",
    ],
)
def test_cid_codes_and_letters_set_apart_are_parse_failures(damaged):
    text = "Pump manual.\n\nThe pump is blue.\n\n" + damaged + "\n\nService the pump yearly."
    at = text.index(damaged)
    found = diagnose(
        _case(text, (at, at + len(damaged), "given", 1.0), "How much power does the pump draw?"),
        method="naive", corpus_terms=set(first_terms(text)),
    )  # fmt: skip
    assert found.suggested == "parse"
