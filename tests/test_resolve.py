"""Evidence resolution on real PDFs: exact spans, aligned spans, honest failures."""

from __future__ import annotations

import hashlib
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.align.words import normalise_word, words_of
from core.errors import LabelError
from core.evaluate.labels import Evidence, GoldSpan, LabelledQuery
from core.evaluate.resolve import (
    DocumentIndex,
    ResolvedQuery,
    Resolver,
    Unresolved,
    resolve_queries,
)
from core.formats import load_document
from core.provenance.types import Document
from tests.conftest import PDF_DIR

FEDERAL = "plumber_federal-register-2020-17221.pdf"
NICS = "plumber_nics-background-checks-2015-11.pdf"
SIGCONF = "sample-sigconf.pdf"


@pytest.fixture(scope="module")
def pdfs() -> dict[str, Document]:
    return {name: load_document(PDF_DIR / name) for name in (FEDERAL, NICS, SIGCONF)}


def _span_of(doc: Document, first: str, last: str) -> tuple[int, int]:
    """Expected span, read off the canonical text itself."""
    start = doc.text.index(first)
    return start, doc.text.index(last, start) + len(last)


def _page(doc: Document, start: int, end: int) -> int:
    (page,) = doc.pages_of(start, end)
    return page


def test_a_copied_sentence_resolves_exactly(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    start, end = _span_of(doc, "The FAA proposes mandating", "condition.")
    page = _page(doc, start, end)
    result = Resolver().resolve(doc, Evidence(text=doc.text[start:end], page=page))
    assert result.span is not None
    assert (result.span.char_start, result.span.char_end) == (start, end)
    assert result.span.method == "exact" and result.span.coverage == 1.0
    assert doc.text[result.span.char_start : result.span.char_end] == result.span.text


def test_changed_spacing_still_resolves_to_the_same_span(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    start, end = _span_of(doc, "The FAA proposes mandating", "condition.")
    words = doc.text[start:end].split()
    respaced = "\n  " + "  ".join(words[:6]) + "\n\n" + " ".join(words[6:]) + "  \n"
    result = Resolver().resolve(doc, Evidence(text=respaced, page=_page(doc, start, end)))
    assert result.span is not None and result.span.method == "exact"
    assert (result.span.char_start, result.span.char_end) == (start, end)


def test_words_broken_differently_resolve_as_aligned(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    start, end = _span_of(doc, "The FAA proposes mandating", "condition.")
    broken = " ".join(doc.text[start:end].split())
    broken = broken.replace("mandating", "manda-\nting").replace("condition", "con- dition")
    result = Resolver().resolve(doc, Evidence(text=broken, page=_page(doc, start, end)))
    assert result.span is not None and result.span.method == "aligned"
    assert (result.span.char_start, result.span.char_end) == (start, end)
    assert result.span.coverage == 1.0


def test_reordered_table_cells_resolve_as_aligned_to_the_row(pdfs: dict[str, Document]) -> None:
    doc = pdfs[NICS]
    start, end = _span_of(doc, "Delaware\t", "\t5,040")
    cells = doc.text[start:end].split("\t")
    assert len(cells) > 20
    shuffled = " | ".join(cells[1::2] + cells[0::2])
    result = Resolver().resolve(doc, Evidence(text=shuffled, page=1))
    assert result.span is not None and result.span.method == "aligned"
    assert (result.span.char_start, result.span.char_end) == (start, end)
    assert result.coverage == 1.0


def test_a_ligature_in_the_evidence_is_aligned(pdfs: dict[str, Document]) -> None:
    doc = pdfs[SIGCONF]
    start, end = _span_of(doc, "Permission to make digital", "on the first page.")
    assert doc.text[start:end].count("fi") >= 2
    evidence = doc.text[start:end].replace("fi", "\ufb01")
    result = Resolver().resolve(doc, Evidence(text=evidence, page=_page(doc, start, end)))
    assert result.span is not None and result.span.method == "aligned"
    assert (result.span.char_start, result.span.char_end) == (start, end)


def test_one_missing_word_in_forty_is_still_aligned(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    page = doc.pages[2]
    words = words_of(doc.text, page.char_start, page.char_end)[100:140]
    start, end = words[0].char_start, words[-1].char_end
    kept = [doc.text[w.char_start : w.char_end] for w in words]
    evidence = " ".join(kept[:20] + kept[21:])  # one word dropped: 39 of 40 present
    result = Resolver().resolve(doc, Evidence(text=evidence, page=3))
    assert result.span is not None and result.span.method == "aligned"
    assert result.span.char_start == start and result.span.char_end == end
    assert result.span.coverage == 1.0  # every evidence word is in the span


def test_a_sentence_that_is_not_there_is_unresolved(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    result = Resolver().resolve(
        doc,
        Evidence(text="Late chunking pools token states of the whole document per span.", page=3),
    )
    assert result.span is None and not result.resolved
    assert result.coverage < 0.95 and "under 95%" in result.reason


def test_too_few_words_are_unresolved_never_guessed(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    start, end = _span_of(doc, "The FAA proposes mandating", "condition.")
    words = doc.text[start:end].split()
    evidence = " ".join(words[:-3] + ["zebra", "quokka", "narwhal"])
    result = Resolver(threshold=0.95).resolve(doc, Evidence(text=evidence, page=3))
    assert result.span is None and 0.8 < result.coverage < 0.95
    lenient = Resolver(threshold=0.8).resolve(doc, Evidence(text=evidence, page=3))
    assert lenient.span is not None and lenient.span.char_start == start


def test_words_scattered_over_the_page_are_unresolved(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    page = doc.pages[2]
    words = words_of(doc.text, page.char_start, page.char_end)
    scattered = [doc.text[w.char_start : w.char_end] for w in words[::40]][:20]
    assert len(scattered) == 20
    result = Resolver().resolve(doc, Evidence(text=" ".join(scattered), page=3))
    # every word is on the page, but no passage holds 95% of them
    assert result.span is None and result.coverage < 0.95 and "under 95%" in result.reason


def test_evidence_on_another_page_is_unresolved(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    start, end = _span_of(doc, "The FAA proposes mandating", "condition.")
    page = _page(doc, start, end)
    other = page + 2
    result = Resolver().resolve(doc, Evidence(text=doc.text[start:end], page=other))
    assert result.span is None


def _two_page_pdf() -> Document:
    import pymupdf

    out = pymupdf.open()
    first = out.new_page()
    first.insert_text((72, 700), "The committee approved the well-", fontsize=11)
    first.insert_text((72, 714), "known budget for the coming", fontsize=11)
    second = out.new_page()
    second.insert_text((72, 72), "fiscal year after long debate.", fontsize=11)
    second.insert_text((72, 100), "The committee approved the budget.", fontsize=11)
    return load_document(out.tobytes(), name="minutes.pdf")


def test_evidence_running_on_into_the_next_page_resolves_from_its_start_page() -> None:
    doc = _two_page_pdf()
    resolver = Resolver()
    across = resolver.resolve(doc, Evidence(text="budget for the coming fiscal year", page=1))
    assert across.span is not None and across.span.method == "exact"
    assert doc.text[across.span.char_start : across.span.char_end] == across.span.text
    assert across.span.text.split() == ["budget", "for", "the", "coming", "fiscal", "year"]
    assert doc.pages_of(across.span.char_start, across.span.char_end) == (1, 2)
    bent = resolver.resolve(doc, Evidence(text="for the coming year fiscal after long", page=1))
    assert bent.span is not None and bent.span.method == "aligned"
    assert doc.pages_of(bent.span.char_start, bent.span.char_end) == (1, 2)
    # wholly on page 2: labelled page 1 it stays unresolved (a span must start on its page)
    later = resolver.resolve(doc, Evidence(text="after long debate.", page=1))
    assert later.span is None
    last = resolver.resolve(doc, Evidence(text="fiscal year after long debate", page=2))
    assert last.span is not None and last.span.char_start >= doc.pages[1].char_start


def test_resolve_queries_reports_every_failure(pdfs: dict[str, Document]) -> None:
    doc = pdfs[FEDERAL]
    start, end = _span_of(doc, "The FAA proposes mandating", "condition.")
    page = _page(doc, start, end)
    good = Evidence(text=doc.text[start:end], page=page)
    queries = [
        LabelledQuery(id="ok", query="q", doc=FEDERAL, evidence=(good,)),
        LabelledQuery(id="stem", query="q", doc=FEDERAL.removesuffix(".pdf"), evidence=(good,)),
        LabelledQuery(id="nopage", query="q", doc=FEDERAL, evidence=(Evidence(text="x", page=99),)),
        LabelledQuery(id="missing", query="q", doc="nowhere.pdf", evidence=(good,)),
        LabelledQuery(
            id="half",
            query="q",
            doc=doc.doc_id,
            evidence=(good, Evidence(text="Nothing like this is written anywhere at all.")),
        ),
        LabelledQuery(
            id="stale",
            query="q",
            doc=doc.doc_id,
            doc_sha256="0" * 64,
            gold=(GoldSpan(char_start=start, char_end=end),),
        ),
        LabelledQuery(
            id="moved",
            query="q",
            doc=doc.doc_id,
            gold=(GoldSpan(char_start=start + 1, char_end=end + 1, text=doc.text[start:end]),),
        ),
    ]
    resolved, unresolved = resolve_queries(queries, list(pdfs.values()))
    assert [r.query.id for r in resolved] == ["ok", "stem"]
    assert all(isinstance(r, ResolvedQuery) and r.doc_id == doc.doc_id for r in resolved)
    reasons = {u.query_id: u.reason for u in unresolved}
    assert set(reasons) == {"nopage", "missing", "half", "stale", "moved"}
    assert "no page 99" in reasons["nopage"] and "not loaded" in reasons["missing"]
    assert reasons["half"].startswith("evidence 2") and "changed" in reasons["stale"]
    assert "differs" in reasons["moved"]
    assert all(isinstance(u, Unresolved) for u in unresolved)


def test_document_index_matches_ids_and_file_names(pdfs: dict[str, Document]) -> None:
    index = DocumentIndex(list(pdfs.values()))
    doc = pdfs[NICS]
    for name in (doc.doc_id, NICS, NICS.removesuffix(".pdf"), f"some/dir/{NICS}"):
        assert index.find(name) is doc
    assert index.find("other.pdf") is None


def test_words_keep_canonical_offsets_and_join_hyphenation() -> None:
    text = "Docu-\nment well-known ﬁle, 1,234 e\u0301te\u0301"
    words = words_of(text)
    assert [w.norm for w in words] == ["document", "wellknown", "file", "1", "234", "été"]
    for word in words:
        assert normalise_word(text[word.char_start : word.char_end]) == word.norm


def _doc(text: str) -> Document:
    return Document(
        doc_id="t",
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        source="t.txt",
        kind="text",
        text=text,
        title="t",
    )


@settings(max_examples=60, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("abc xyz\n\t.,-ﬁ\u05d0\u0628é")), min_size=1, max_size=300
    ),
    st.data(),
)
def test_any_slice_resolves_to_a_span_with_the_same_non_space_text(text: str, data) -> None:
    edges = [p for p in range(len(text) + 1) if not _splits_a_word(text, p)]
    start = data.draw(st.sampled_from(edges[:-1]))
    end = data.draw(st.sampled_from([p for p in edges if p > start]))
    evidence = text[start:end]
    if not evidence.split():
        return
    result = Resolver().resolve(_doc(text), Evidence(text=evidence))
    assert result.span is not None and result.span.method == "exact"
    span_text = text[result.span.char_start : result.span.char_end]
    assert span_text == result.span.text
    assert "".join(span_text.split()) == "".join(evidence.split())


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def _splits_a_word(text: str, offset: int) -> bool:
    """Whether ``offset`` falls between two word characters of ``text``."""
    return 0 < offset < len(text) and all(_is_word_char(text[i]) for i in (offset - 1, offset))


SAID = "Then the said function is a notebook."


@pytest.mark.parametrize("evidence", ["he said", "ion is", "note book", "is a note", "hen"])
@pytest.mark.parametrize("threshold", [0.95, 0.5])
def test_evidence_cut_mid_word_never_resolves_mid_word(evidence: str, threshold: float) -> None:
    result = Resolver(threshold=threshold).resolve(_doc(SAID), Evidence(text=evidence))
    if threshold == 0.95:
        assert result.span is None
    if result.span is not None:
        span = result.span
        assert span.method == "aligned" and SAID[span.char_start : span.char_end] == span.text
        assert not _splits_a_word(SAID, span.char_start)
        assert not _splits_a_word(SAID, span.char_end)
        assert span.text.split() == [w for w in span.text.split() if w in evidence.split()]


def test_words_joined_in_the_evidence_do_not_match_split_words() -> None:
    result = Resolver().resolve(_doc("a note book here"), Evidence(text="notebook"))
    assert result.span is None


def test_whole_word_evidence_with_other_spacing_resolves_exactly() -> None:
    doc = _doc(SAID)
    for evidence, expected in [
        ("the said", "the said"),
        ("  said\n function\tis ", "said function is"),
        ("a notebook .", "a notebook."),
        ("Then", "Then"),
    ]:
        result = Resolver().resolve(doc, Evidence(text=evidence))
        assert result.span is not None and result.span.method == "exact", evidence
        assert result.span.text == expected


def test_the_first_whole_word_match_is_taken() -> None:
    text = "bathe cat sat. the cat ran. the  cat hid."
    result = Resolver().resolve(_doc(text), Evidence(text="the cat"))
    assert result.span is not None and result.span.method == "exact"
    assert result.span.char_start == text.index(" the cat") + 1
    assert result.span.text == "the cat"


@settings(max_examples=60, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab xy\n.-ﬁ\u05d0é\u0301")), min_size=1, max_size=200),
    st.data(),
)
def test_no_slice_resolves_to_a_span_that_cuts_a_word(text: str, data) -> None:
    start = data.draw(st.integers(0, len(text) - 1))
    end = data.draw(st.integers(start + 1, len(text)))
    if not text[start:end].split():
        return
    result = Resolver(threshold=0.5).resolve(_doc(text), Evidence(text=text[start:end]))
    if result.span is not None:
        assert text[result.span.char_start : result.span.char_end] == result.span.text
        assert not _splits_a_word(text, result.span.char_start)
        assert not _splits_a_word(text, result.span.char_end)


def test_a_threshold_outside_zero_to_one_is_a_user_error() -> None:
    for threshold in (0.0, 1.5, float("nan")):
        with pytest.raises(LabelError, match="share in"):
            Resolver(threshold=threshold)
