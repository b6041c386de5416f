"""The ``ocr`` case: how well and how fast pages without a text layer are read.

Known text is set with PyMuPDF on four pages (Helvetica 11 pt; Times 9 and 14 pt;
two columns of Courier 10 pt and Times 11 pt; a ruled table of words and figures), each
page drawn to a grey image at 150 and at 300 dpi and wrapped as an image-only PDF. Per
resolution, one row: our time per page to read the image-only PDF with OCR (``--ocr
always``, the OCR memo emptied before every round) against the layout model's time per
page on the same pages with their text layer (``--parser layout``), target <= 3 s a
page. The row's notes give the word accuracy of the OCR'd canonical text against the
canonical text of the text-layer PDF (``word_accuracy``; target >= 95% at 300 dpi, >= 90%
at 150 dpi). A last row compares the OCR of ``Seige_of_Vicksburg_Sample_OCR.pdf`` (six
scanned pages) with the invisible OCR layer the file carries.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from typing import Any

import pymupdf

from core.bench.inputs import BenchInputs, shared_dir
from core.bench.report import CaseResult
from core.bench.timing import interleaved
from core.formats import load_document, parse_document
from core.ingest.ocr import clear_memo, engine_version, missing_line

RESOLUTIONS: tuple[int, ...] = (150, 300)
TARGET_ACCURACY: dict[int, float] = {150: 0.90, 300: 0.95}
MAX_S_PER_PAGE = 3.0
VICKSBURG = "Seige_of_Vicksburg_Sample_OCR.pdf"
_WORD = re.compile(r"[^\W_]+")

PASSAGES: tuple[str, ...] = (
    "A retrieval system can only cite what its parser read. When a contract arrives as a "
    "scan, every clause is a picture of letters, and the chunker sees an empty page. The "
    "reader recognises the words on the image, keeps a box for every character, and "
    "records how sure it was. A citation into that page can then light the exact words "
    "on the scan, and a reviewer can check the quote against the picture itself.",
    "Quarterly revenue rose to 4,812 thousand dollars, an increase of 7.5 percent over "
    "the same period last year. Operating costs fell slightly, while research spending "
    "grew as planned. The board approved a dividend of 0.42 per share, payable in March "
    "to holders of record on the twentieth of February.",
    "Older filings, lab reports and signed forms often exist only as images. Each page "
    "is read once, line by line, and the text is built in reading order: columns from "
    "left to right, then the band below them. Numbers such as 2019, 350 and 12.5 must "
    "survive the trip unchanged, because a wrong digit changes the meaning of a claim.",
    "The maintenance schedule lists every pump by its station and the date of its last "
    "inspection. A pump that missed two inspections is flagged for the regional manager, "
    "who assigns a crew within five working days and reports the outcome to the office.",
)
TABLE: tuple[tuple[str, ...], ...] = (
    ("Station", "Pumps", "Inspected", "Flagged"),
    ("Northfield", "12", "11", "1"),
    ("Riverside", "8", "8", "0"),
    ("Hillcrest", "15", "13", "2"),
    ("Lakeshore", "6", "5", "1"),
)


def known_text_pdf() -> bytes:
    """Four letter-size pages of known text with a text layer (see the module doc)."""
    pdf = pymupdf.open()
    width, height, margin = 612.0, 792.0, 72.0
    page = pdf.new_page(width=width, height=height)
    page.insert_textbox(
        (margin, margin, width - margin, 400), PASSAGES[0], fontname="helv", fontsize=11
    )
    page.insert_textbox(
        (margin, 420, width - margin, 720), PASSAGES[3], fontname="helv", fontsize=11
    )
    page = pdf.new_page(width=width, height=height)
    page.insert_textbox(
        (margin, margin, width - margin, 300), PASSAGES[1], fontname="tiro", fontsize=14
    )
    page.insert_textbox(
        (margin, 330, width - margin, 600), PASSAGES[2], fontname="tiro", fontsize=9
    )
    page = pdf.new_page(width=width, height=height)
    middle = width / 2
    page.insert_textbox(
        (margin, margin, middle - 12, 700), PASSAGES[0], fontname="cour", fontsize=10
    )
    page.insert_textbox(
        (middle + 12, margin, width - margin, 700), PASSAGES[2], fontname="tiro", fontsize=11
    )
    page = pdf.new_page(width=width, height=height)
    page.insert_textbox(
        (margin, margin, width - margin, 200), PASSAGES[3], fontname="helv", fontsize=11
    )
    _table(page, top=240.0, left=margin, cell_w=110.0, cell_h=24.0)
    data = pdf.tobytes()
    pdf.close()
    return data


def _table(page: pymupdf.Page, *, top: float, left: float, cell_w: float, cell_h: float) -> None:
    rows, cols = len(TABLE), len(TABLE[0])
    for r in range(rows + 1):
        y = top + r * cell_h
        page.draw_line((left, y), (left + cols * cell_w, y), width=0.8)
    for c in range(cols + 1):
        x = left + c * cell_w
        page.draw_line((x, top), (x, top + rows * cell_h), width=0.8)
    for r, row in enumerate(TABLE):
        for c, cell in enumerate(row):
            origin = (left + c * cell_w + 6, top + r * cell_h + 16)
            page.insert_text(origin, cell, fontname="hebo" if r == 0 else "helv", fontsize=11)


def image_only_pdf(data: bytes, dpi: int) -> bytes:
    """``data``'s pages drawn to grey images at ``dpi``, each the only content of a page
    of the same size (no text layer)."""
    with pymupdf.open(stream=data, filetype="pdf") as source:
        out = pymupdf.open()
        for page in source:
            pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
            target = out.new_page(width=page.rect.width, height=page.rect.height)
            target.insert_image(target.rect, pixmap=pixmap)
        data = out.tobytes(deflate=True)
        out.close()
    return data


def words(text: str) -> list[str]:
    """The words of a text: maximal runs of letters and digits (punctuation and spacing
    are not scored)."""
    return _WORD.findall(text)


def word_accuracy(reference: str, recognised: str) -> float:
    """The share of ``reference``'s words that ``recognised`` holds in the same order
    (the matched words of a longest-common-subsequence style alignment, ``difflib``),
    case-sensitive; 1.0 for a reference without words."""
    ref, got = words(reference), words(recognised)
    if not ref:
        return 1.0
    matcher = difflib.SequenceMatcher(a=ref, b=got, autojunk=False)
    return sum(block.size for block in matcher.get_matching_blocks()) / len(ref)


def _documents(dpi: int) -> tuple[Any, bytes]:
    text_pdf = known_text_pdf()
    reference = load_document(text_pdf, name="known-text.pdf", ocr="never")
    return reference, image_only_pdf(text_pdf, dpi)


def ocr_case(inputs: BenchInputs, dpi: int) -> CaseResult:
    """One resolution: OCR time per page against the layout model's, word accuracy."""
    key = f"ocr:{dpi}dpi"
    label = f"ocr {dpi} dpi known text"
    if engine_version() is None:
        return CaseResult(key=key, case="ocr", label=label, skipped=missing_line())
    reference, scan = _documents(dpi)
    n_pages = len(reference.pages)
    name = f"known-text-{dpi}dpi.pdf"

    def ours(step: int) -> object:
        clear_memo()
        return load_document(scan, name=name, ocr="always")

    def layout(step: int) -> object:
        return parse_document(reference, parser="layout")

    def check(who: str, result: Any) -> None:
        if who == "ours":
            check_ocr_provenance(result)

    s = inputs.settings
    rounds = 1 if s.quick else 3
    t = interleaved({"ours": ours, "layout": layout}, warmup=0, repeats=rounds, check=check)
    recognised = load_document(scan, name=name, ocr="always")
    accuracy = word_accuracy(reference.text, recognised.text)
    target = TARGET_ACCURACY[dpi]
    per_page = tuple(v / n_pages for v in t["ours"].samples_s)
    return CaseResult(
        key=key,
        case="ocr",
        label=label,
        ours=t["ours"].median_s / n_pages,
        baseline=t["layout"].median_s / n_pages,
        baseline_label="layout model",
        max_ours=MAX_S_PER_PAGE,
        target=f"<= {MAX_S_PER_PAGE:g} s a page",
        notes=(
            f"seconds a page over {n_pages} pages ({engine_version()}), {rounds} round(s)",
            f"word accuracy {accuracy:.1%} of {len(words(reference.text))} words "
            f"(target >= {target:.0%}: {'met' if accuracy >= target else 'MISSED'})",
        ),
        extra={"word_accuracy": accuracy, "pages": n_pages, "dpi": dpi},
        ours_samples=per_page,
        baseline_samples=tuple(v / n_pages for v in t["layout"].samples_s),
    )


def vicksburg_case(inputs: BenchInputs) -> CaseResult:
    """The shared scan with an invisible OCR layer: our OCR against that layer."""
    key, label = "ocr:vicksburg", f"ocr {VICKSBURG} against its own layer"
    path = shared_dir() / "corpus" / "pdfs" / VICKSBURG
    if engine_version() is None or not path.is_file():
        reason = missing_line() if path.is_file() else f"{path} not found"
        return CaseResult(key=key, case="ocr", label=label, skipped=reason)
    layer = load_document(path, ocr="never")
    read: list[Any] = []

    def ours(step: int) -> object:
        clear_memo()
        read.append(load_document(path, ocr="always"))
        return read[-1]

    t = interleaved(
        {"ours": ours}, warmup=0, repeats=1, check=lambda who, doc: check_ocr_provenance(doc)
    )
    accuracy = word_accuracy(layer.text, read[-1].text)
    n_pages = len(layer.pages)
    return CaseResult(
        key=key,
        case="ocr",
        label=label,
        ours=t["ours"].median_s / n_pages,
        notes=(
            f"seconds a page over {n_pages} pages; agreement with the file's own layer: "
            f"{accuracy:.1%} of its {len(words(layer.text))} words",
        ),
        extra={"word_agreement": accuracy, "pages": n_pages},
    )


def check_ocr_provenance(doc: Any) -> None:
    """Every OCR line is an exact, boxed span on its page (raises ``AssertionError``)."""
    if doc.char_page is None or doc.char_bbox_pt is None:
        raise AssertionError(f"{doc.doc_id}: no per-character maps")
    spans: Sequence[Any] = doc.ocr_lines
    if not spans:
        raise AssertionError(f"{doc.doc_id}: nothing was read by OCR")
    previous = 0
    for line in spans:
        if line.char_start < previous:
            raise AssertionError(f"{doc.doc_id}: OCR lines overlap at {line.char_start}")
        previous = line.char_end
        pages = set(doc.char_page[line.char_start : line.char_end].tolist()) - {0}
        if pages != {line.page}:  # 0: a space the builder inserted (two lines joined)
            raise AssertionError(f"{doc.doc_id}: OCR line {line} has characters off its page")
