"""OCR in the workbench under ``AppTest``: a scan uploaded and read by OCR, its citation
on the Source page saying so with the confidence, the sidebar's choice, and the line
that says OCR is missing. Tests that need the ``tesseract`` program are skipped, saying
so, where it is not installed."""

from __future__ import annotations

import pytest

from core.formats import load_document
from core.ingest import ocr
from core.ingest.ocr import ocr_reading
from tests.conftest import PDF_DIR
from tests.test_app_pages import app, open_page, plain, store_dir, upload  # noqa: F401
from workbench.documents import reads

SCAN = "ocrmypdf_c03-29.pdf"
needs_tesseract = pytest.mark.skipif(
    ocr.engine_version() is None,
    reason="the tesseract program with its English model is not installed "
    "(Debian packages tesseract-ocr, tesseract-ocr-eng)",
)


@pytest.fixture(autouse=True)
def _policy_of_the_process(monkeypatch):
    """The workbench's OCR policy is the process's: each test starts from ``auto``."""
    monkeypatch.setattr(reads, "_POLICY", [])
    monkeypatch.delenv(ocr.ENV_OCR, raising=False)


@needs_tesseract
def test_a_scan_is_read_by_ocr_and_its_citation_says_so(app):  # noqa: F811
    upload(app, (SCAN, (PDF_DIR / SCAN).read_bytes()))
    (note,) = [plain(s.value) for s in app.success]
    assert note.startswith(f"**{SCAN}** read: 1 page, ")
    assert "page 1 read by OCR (confidence 0." in note
    doc = load_document(PDF_DIR / SCAN)
    line = max(doc.ocr_lines, key=lambda ln: ln.char_end - ln.char_start)
    open_page(
        app, "source", doc=doc.doc_id, span=f"{line.char_start}-{line.char_end}", sha=doc.sha256
    )
    captions = [c.value for c in app.caption]
    reading = ocr_reading(doc, line.char_start, line.char_end)
    expected = f"read by OCR, confidence {reading.confidence:.2f}"
    assert any(expected in c for c in captions), captions
    assert any("1 line(s) highlighted" in c for c in captions)


@needs_tesseract
def test_the_sidebar_choice_reads_the_session_documents_again(app):  # noqa: F811
    upload(app, (SCAN, (PDF_DIR / SCAN).read_bytes()))
    choice = app.sidebar.selectbox(key="cs_w_ocr_policy")
    assert choice.value == "auto"
    choice.set_value("never").run()
    assert not app.exception, [e.value for e in app.exception]
    assert reads.ocr_policy() == "never"
    app.run()  # the frame reads the upload again under the new policy
    open_page(app, "library")
    table = app.dataframe[0].value
    row = table[table["document"] == "ocrmypdf_c03-29"]
    assert int(row["chars"].iloc[0]) == 0


def test_without_tesseract_the_sidebar_says_so_in_one_line(app, monkeypatch):  # noqa: F811
    monkeypatch.setattr(ocr, "_engine", lambda: None)
    app.run()
    lines = [plain(c.value) for c in app.sidebar.caption if "OCR is not available" in c.value]
    assert len(lines) == 1 and "\n" not in lines[0] and "tesseract-ocr" in lines[0]
    upload(app, (SCAN, (PDF_DIR / SCAN).read_bytes()))
    (warning,) = [plain(w.value) for w in app.warning]
    assert "no text on page 1: OCR is not available" in warning
