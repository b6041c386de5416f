"""OCR in ingest: pages without a text layer read by Tesseract, with exact provenance.

Quick tests on one page of known text drawn to an image-only PDF and on the shared
one-page scan (the OCR'd corpus files under every policy, and word accuracy on every
page of known text, are ``test_ocr_corpus.py``). Tests
that need the ``tesseract`` program are skipped, saying so, where it is not installed.
"""

from __future__ import annotations

import difflib
import functools
import re

import numpy as np
import pytest
from conftest import PDF_DIR

from core.bench.ocr_cases import (
    check_ocr_provenance,
    image_only_pdf,
    known_text_pdf,
    word_accuracy,
)
from core.errors import ChunkscopeError, LimitExceededError, OcrUnavailableError
from core.formats import document_to_dict, load_document, parse_document
from core.ingest import limits, ocr
from core.provenance.types import Document
from core.render.views import highlight_shapes

needs_tesseract = pytest.mark.skipif(
    ocr.engine_version() is None,
    reason="the tesseract program with its English model is not installed "
    "(Debian packages tesseract-ocr, tesseract-ocr-eng)",
)
SCAN = PDF_DIR / "ocrmypdf_c03-29.pdf"
WORD = re.compile(r"[^\W_]+")


@functools.cache
def _one_page(index: int) -> bytes:
    import pymupdf

    with pymupdf.open(stream=known_text_pdf(), filetype="pdf") as pdf:
        pdf.select([index])
        return pdf.tobytes()


@functools.cache
def _reference(index: int) -> Document:
    return load_document(_one_page(index), name=f"known-{index}.pdf", ocr="never")


@functools.cache
def _scanned(index: int, dpi: int) -> Document:
    data = image_only_pdf(_one_page(index), dpi)
    return load_document(data, name=f"known-{index}-{dpi}.pdf", ocr="auto")


def test_the_policy_in_force_and_a_wrong_one(monkeypatch):
    monkeypatch.delenv(ocr.ENV_OCR, raising=False)
    assert ocr.policy_in_force() == "auto"
    monkeypatch.setenv(ocr.ENV_OCR, "Never")
    assert ocr.policy_in_force() == "never"
    with ocr.policy_override("always"):
        assert ocr.policy_in_force() == "always"
        assert ocr.policy_in_force("never") == "never"
    monkeypatch.setenv(ocr.ENV_OCR, "sometimes")
    with pytest.raises(ChunkscopeError, match="CHUNKSCOPE_OCR must be one of auto, always"):
        ocr.policy_in_force()


def test_without_the_engine_auto_leaves_scans_empty_and_always_is_refused(monkeypatch):
    monkeypatch.setattr(ocr, "_engine", lambda: None)
    doc = load_document(SCAN, ocr="auto")
    assert doc.text == "" and doc.pages_without_text == (1,) and not doc.ocr_lines
    with pytest.raises(OcrUnavailableError) as refused:
        load_document(SCAN, ocr="always")
    assert "\n" not in str(refused.value) and "tesseract-ocr" in str(refused.value)
    assert "\n" not in ocr.missing_line() and "tesseract-ocr" in ocr.missing_line()


def test_never_reads_no_page_by_ocr():
    doc = load_document(SCAN, ocr="never")
    assert doc.text == "" and not doc.pages[0].read_by_ocr and not doc.ocr_lines


@needs_tesseract
def test_a_scan_is_read_with_every_character_boxed_and_marked_ocr():
    doc = load_document(SCAN, ocr="auto")
    assert doc.pages[0].has_text and doc.pages[0].read_by_ocr
    assert "Miss Watson" in doc.text
    check_ocr_provenance(doc)
    held = np.zeros(len(doc.text), dtype=bool)
    for line in doc.ocr_lines:
        held[line.char_start : line.char_end] = True
        assert 0 < line.confidence <= 1
    boxed = ~np.isnan(doc.char_bbox_pt[:, 0])
    assert (held | ~boxed).all()  # every character with a box came from an OCR line
    box = doc.char_bbox_pt[boxed]
    info = doc.pages[0]
    assert (box[:, 0] >= 0).all() and (box[:, 2] <= info.width_pt + 1e-3).all()
    assert (box[:, 1] >= 0).all() and (box[:, 3] <= info.height_pt + 1e-3).all()
    blocks = parse_document(doc).blocks
    assert blocks and all(doc.text[b.char_start : b.char_end] == b.text for b in blocks)
    listed = document_to_dict(doc)
    assert listed["pages"][0]["read_by_ocr"] is True and listed["ocr_lines"]


@needs_tesseract
def test_the_ocr_reading_of_a_span():
    doc = load_document(SCAN, ocr="auto")
    line = max(doc.ocr_lines, key=lambda ln: ln.char_end - ln.char_start)
    found = ocr.ocr_reading(doc, line.char_start, line.char_end)
    assert found is not None and found.share == 1.0
    assert found.confidence == pytest.approx(line.confidence) and found.lowest == line.confidence
    whole = ocr.ocr_reading(doc, 0, len(doc.text))
    expected = sum(
        (
            ln.char_end
            - ln.char_start
            - int(np.isnan(doc.char_bbox_pt[ln.char_start : ln.char_end, 0]).sum())
        )
        * ln.confidence
        for ln in doc.ocr_lines
    )
    assert whole is not None and whole.share == 1.0
    n_boxed = int((~np.isnan(doc.char_bbox_pt[:, 0])).sum())
    assert whole.confidence == pytest.approx(expected / n_boxed)
    text_layer = _reference(0)
    assert ocr.ocr_reading(text_layer, 0, len(text_layer.text)) is None


@needs_tesseract
@pytest.mark.parametrize("dpi", [150, 300])
def test_the_highlight_of_a_cited_word_covers_the_word_on_the_image(dpi):
    """For every word the OCR read as printed: the boxes the Source page draws for its
    characters contain the centre of the word's box on the image (the text layer of the
    page it was drawn from)."""
    reference, doc = _reference(3), _scanned(3, dpi)  # a paragraph and a ruled table
    ref_words = [(m.start(), m.end(), m.group()) for m in WORD.finditer(reference.text)]
    got_words = [(m.start(), m.end(), m.group()) for m in WORD.finditer(doc.text)]
    matcher = difflib.SequenceMatcher(
        a=[w[2] for w in ref_words], b=[w[2] for w in got_words], autojunk=False
    )
    checked = 0
    for block in matcher.get_matching_blocks():
        for k in range(block.size):
            ra, rb, _ = ref_words[block.a + k]
            ga, gb, word = got_words[block.b + k]
            rows = reference.char_bbox_pt[ra:rb]
            cx = (np.nanmin(rows[:, 0]) + np.nanmax(rows[:, 2])) / 2
            cy = (np.nanmin(rows[:, 1]) + np.nanmax(rows[:, 3])) / 2
            shapes = highlight_shapes(doc, ga, gb, 1)
            assert any(
                s.bbox_pt[0] <= cx <= s.bbox_pt[2] and s.bbox_pt[1] <= cy <= s.bbox_pt[3]
                for s in shapes
            ), f"{word!r} at {ga}-{gb}: no highlight box holds ({cx:.1f}, {cy:.1f})"
            checked += 1
    assert checked >= 0.95 * len(ref_words)


@needs_tesseract
def test_always_reads_a_text_page_from_its_image():
    doc = load_document(_one_page(0), name="known-0.pdf", ocr="always")
    assert doc.pages[0].read_by_ocr and doc.ocr_lines
    assert word_accuracy(_reference(0).text, doc.text) >= 0.95
    check_ocr_provenance(doc)


@needs_tesseract
def test_an_ocr_past_its_time_limit_is_one_line():
    ocr.clear_memo()
    with limits.override(ocr_page_s=0.001), pytest.raises(LimitExceededError) as stopped:
        load_document(SCAN, ocr="auto")
    message = str(stopped.value)
    assert "\n" not in message and "page 1" in message and "--ocr-timeout" in message


@needs_tesseract
def test_progress_is_told_each_page_before_its_ocr():
    ocr.clear_memo()
    seen: list[tuple[int, int]] = []
    load_document(SCAN, ocr="auto", ocr_progress=lambda page, pages: seen.append((page, pages)))
    assert seen == [(1, 1)]


def test_word_accuracy_counts_the_reference_words_read_in_order():
    assert word_accuracy("The cat sat, on the mat.", "The cat sat on the mat") == 1.0
    assert word_accuracy("one two three four", "one too three four") == 0.75
    assert word_accuracy("one two three four", "four three two one") == 0.25
    assert word_accuracy("", "anything") == 1.0


def test_the_ocr_flag_on_the_command_line(capsys):
    from core.cli import main

    assert main(["parse", str(SCAN), "--ocr", "never", "--json"]) == 0
    out, _ = capsys.readouterr()
    assert '"has_text": false' in out and "ocr_lines" not in out
    with pytest.raises(SystemExit):
        main(["parse", str(SCAN), "--ocr", "sometimes"])
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and "--ocr" in err


@needs_tesseract
def test_the_ocr_of_a_document_stops_at_its_limit_in_one_line():
    ocr.clear_memo()
    scans = PDF_DIR / "Seige_of_Vicksburg_Sample_OCR.pdf"  # six pages
    with limits.override(ocr_s=0.001), pytest.raises(LimitExceededError) as stopped:
        load_document(scans, ocr="always")
    message = str(stopped.value)
    assert "\n" not in message and "by page 2" in message and "--ocr-document-timeout" in message


def test_an_index_remakes_records_read_under_another_ocr_choice():
    """The reading recorded in an index marker: a text layer holds under any choice but
    ``always``; a scan's reading holds only under the policy and engine that made it."""
    from types import SimpleNamespace

    from core.store.markers import _reading_holds

    text_page = SimpleNamespace(has_text=True, read_by_ocr=False)
    scan_page = SimpleNamespace(has_text=False, read_by_ocr=False)
    text_doc = SimpleNamespace(pages=(text_page,))
    scan_doc = SimpleNamespace(pages=(text_page, scan_page))
    with ocr.policy_override("never"):
        assert ocr.reading_key(text_doc) == ocr.TEXT_READING
        scan_never = ocr.reading_key(scan_doc)
        assert scan_never.startswith("ocr:never:") and ocr.reading_holds(scan_never)
        assert _reading_holds(None)  # a marker older than the field: a text reading
    with ocr.policy_override("auto"):
        assert not ocr.reading_holds(scan_never)  # now read by OCR: its records go
        assert ocr.reading_holds(ocr.TEXT_READING)
        assert ocr.reading_holds(ocr.reading_key(scan_doc))
    with ocr.policy_override("always"):
        assert not ocr.reading_holds(ocr.TEXT_READING)
        assert ocr.reading_key(text_doc).startswith("ocr:always:")
