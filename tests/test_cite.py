import pytest

from core.provenance.cite import Citation, CitationStatus, merge_citations
from core.provenance.types import Document


def _doc(text: str, sha: str = "a" * 64) -> Document:
    return Document(doc_id="d", sha256=sha, source="d.txt", kind="text", text=text, title="d")


def test_render_and_verify_reflowable() -> None:
    doc = _doc("alpha beta gamma")
    cit = Citation.of_span(doc, 6, 10)
    assert cit.quote == "beta"
    assert cit.render() == "d, chars 6-10"
    assert cit.verify(doc) is CitationStatus.OK


def test_stale_and_mismatch_and_missing() -> None:
    doc = _doc("alpha beta gamma")
    cit = Citation.of_span(doc, 6, 10)
    assert cit.verify(_doc("alpha beta gamma!", sha="b" * 64)) is CitationStatus.STALE
    wrong = Citation(doc_id="d", doc_sha256=doc.sha256, char_start=0, char_end=4, quote="beta")
    assert wrong.verify(doc) is CitationStatus.MISMATCH
    assert cit.verify(None) is CitationStatus.MISSING


def test_render_pages() -> None:
    one = Citation(doc_id="x", doc_sha256="s", char_start=1, char_end=3, quote="ab", pages=(4,))
    two = Citation(doc_id="x", doc_sha256="s", char_start=1, char_end=3, quote="ab", pages=(4, 5))
    assert one.render() == "x, p. 4, chars 1-3"
    assert two.render() == "x, pp. 4-5, chars 1-3"


def test_merge_overlapping_same_version_only() -> None:
    doc = _doc("0123456789abcdef")
    parts = [Citation.of_span(doc, 8, 12), Citation.of_span(doc, 2, 6), Citation.of_span(doc, 5, 9)]
    other = Citation.of_span(_doc("0123456789abcdef", sha="c" * 64), 3, 4)
    merged = merge_citations([*parts, other])
    assert [(c.char_start, c.char_end) for c in merged if c.doc_sha256 == doc.sha256] == [(2, 12)]
    assert all(c.verify(doc) is CitationStatus.OK for c in merged if c.doc_sha256 == doc.sha256)
    assert len(merged) == 2


def test_quote_length_is_checked() -> None:
    with pytest.raises(ValueError):
        Citation(doc_id="d", doc_sha256="s", char_start=0, char_end=3, quote="ab")
