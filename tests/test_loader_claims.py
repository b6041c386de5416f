"""Offsets and pages of a per-page PDF loader's chunks, checked in that loader's own text.

Rows are built by hand from pypdf's and PyMuPDF's page text with known offsets, with
seeded errors (an offset moved, a page moved, ``-1``), and by LangChain's real loaders
where ``langchain-community`` is installed. Every verdict is asserted, chunk by chunk."""

from __future__ import annotations

import json
from pathlib import Path

import pymupdf
import pypdf
import pytest

from core.cli import main
from core.formats import load_document
from core.imported import headline, import_chunks, read_file
from core.imported.loader_text import extractor_label
from tests.conftest import CORPUS, PDF_DIR

MULTICOLUMN = PDF_DIR / "pypdfsf_multicolumn.pdf"  # pypdf and PyMuPDF order it differently
SIGCONF = PDF_DIR / "sample-sigconf.pdf"


def page_texts(path: Path, extractor: str) -> list[str]:
    """The page texts LangChain's loaders give (each page's text, stripped)."""
    if extractor == "pypdf":
        return [p.extract_text().strip() for p in pypdf.PdfReader(path).pages]
    return [p.get_text().strip() for p in pymupdf.open(path)]


def windows(text: str, size: int = 300, step: int = 260) -> list[tuple[int, str]]:
    """(offset, text) windows of ``text`` cut at whitespace, their ends stripped."""
    found = []
    start = 0
    while start < len(text):
        end = min(len(text), start + size)
        if end < len(text):
            end = max(text.rfind(" ", start, end), start + 1)
        piece = text[start:end]
        lead = len(piece) - len(piece.lstrip())
        if piece.strip():
            found.append((start + lead, piece.strip()))
        nxt = text.find(" ", start + step)
        if nxt < 0:
            break
        start = nxt + 1
    return found


def rows_of(path: Path, extractor: str, meta: dict | None = None, base: int = 0) -> list[dict]:
    rows = []
    for number, text in enumerate(page_texts(path, extractor)):
        for start, piece in windows(text):
            metadata = {"source": str(path), "page": number + base, "start_index": start}
            rows.append({"page_content": piece, "metadata": metadata | (meta or {})})
    return rows


def run(rows: list[dict], path: Path, **kwargs):
    shape, chunks = read_file("".join(json.dumps(r) + "\n" for r in rows).encode(), "rows.jsonl")
    chunk_set, _ = import_chunks(
        chunks, [load_document(path)], name="mine", shape=shape, origin="rows.jsonl", **kwargs
    )
    return chunk_set


def unique_on_its_page(rows: list[dict], k: int, texts: list[str]) -> bool:
    text = rows[k]["page_content"]
    return sum(t.count(text) for t in texts) == 1


def seeded(rows: list[dict], texts: list[str]) -> tuple[int, int, int]:
    """Seed an offset moved by 7, a page moved to another page, and ``-1``; returns their
    row numbers (chunks whose text occurs once in the document, on different pages)."""
    unique = [k for k in range(len(rows)) if unique_on_its_page(rows, k, texts)]
    first_page = [k for k in unique if rows[k]["metadata"]["page"] == 0]
    later = [k for k in unique if rows[k]["metadata"]["page"] > 0]
    moved_offset, minus_one, moved_page = first_page[1], first_page[-1], later[0]
    rows[moved_offset]["metadata"]["start_index"] += 7
    rows[minus_one]["metadata"]["start_index"] = -1
    rows[moved_page]["metadata"]["page"] = 0 if rows[moved_page]["metadata"]["page"] > 0 else 1
    return moved_offset, minus_one, moved_page


@pytest.mark.parametrize(
    ("path", "extractor", "meta", "how"),
    [
        (SIGCONF, "pypdf", {"page_label": "1"}, "metadata"),
        (SIGCONF, "pymupdf", {"file_path": "x.pdf", "format": "PDF 1.5"}, "metadata"),
        (MULTICOLUMN, "pypdf", None, "trial"),
        (MULTICOLUMN, "pymupdf", None, "trial"),
        # the metadata names the other loader: its text does not reproduce the rows
        (MULTICOLUMN, "pypdf", {"file_path": "x.pdf", "format": "PDF 1.5"}, "trial"),
    ],
)
def test_every_seeded_error_is_flagged_and_nothing_else(
    path: Path, extractor: str, meta: dict | None, how: str
) -> None:
    texts = page_texts(path, extractor)
    rows = rows_of(path, extractor, meta)
    moved_offset, minus_one, moved_page = seeded(rows, texts)
    real_page = next(n + 1 for n, t in enumerate(texts) if rows[moved_page]["page_content"] in t)
    chunk_set = run(rows, path)
    assert chunk_set.checks["extractors"] == {path.stem: extractor_label(extractor)}
    assert chunk_set.checks["extractor_how"] == how
    assert chunk_set.checks["page_base"] == 0
    claims = {c.anchor.index: c.anchor.claim for c in chunk_set.chunks}
    pages = {c.anchor.index: c.anchor.page_claim for c in chunk_set.chunks}
    assert {k for k, v in claims.items() if v == "wrong"} == {moved_offset, minus_one}
    assert {k for k, v in claims.items() if v != "wrong"} == set(claims) - {
        moved_offset,
        minus_one,
    } and set(claims.values()) <= {"ok", "wrong"}
    assert {k for k, v in pages.items() if v != "ok"} == {moved_page}
    assert pages[moved_page] == "wrong"
    wrong_page = chunk_set.chunks[moved_page].anchor
    claimed = rows[moved_page]["metadata"]["page"] + 1
    assert f"claims p. {claimed}, is on p. {real_page}" in wrong_page.detail
    assert wrong_page.claim == "ok"  # its offset holds on the page it is on
    assert wrong_page.char_start is not None and real_page in wrong_page.pages
    lines = headline(chunk_set)
    assert lines[0].startswith(f"Offsets: 2 wrong of {len(rows):,} checked")
    assert lines[1].startswith(f"Pages: 1 wrong of {len(rows):,} checked (numbered from 0")


def test_a_moved_offset_says_where_the_text_is_in_the_loaders_text() -> None:
    texts = page_texts(SIGCONF, "pypdf")
    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    moved_offset, _, _ = seeded(rows, texts)
    true_start = rows[moved_offset]["metadata"]["start_index"] - 7
    anchor = run(rows, SIGCONF).chunks[moved_offset].anchor
    assert anchor.anchor in ("exact", "aligned")  # still anchored where it is
    label = extractor_label("pypdf")
    claimed = true_start + 7
    assert f"claims {claimed:,}, its text is at {true_start:,} in {label}'s text of p. 1" in (
        anchor.detail
    )


def test_text_no_extractor_reproduces_stays_unchecked_and_the_headline_says_why() -> None:
    rows = rows_of(MULTICOLUMN, "pypdf")
    _, _, moved_page = seeded(rows, page_texts(MULTICOLUMN, "pypdf"))
    assert rows[moved_page]["metadata"]["page"] == 0  # on p. 2: claim p. 3, not the page before
    rows[moved_page]["metadata"]["page"] = 2
    for row in rows:  # a pipeline that cleaned the text after splitting: a word in 8 gone
        words = row["page_content"].split()
        row["page_content"] = " ".join(w for k, w in enumerate(words) if k % 8 != 7)
    chunk_set = run(rows, MULTICOLUMN)
    assert {c.anchor.claim for c in chunk_set.chunks} == {"unchecked", "wrong"}  # -1: wrong
    # pages are still checked, where the chunks are anchored in our text
    pages = {c.anchor.index: c.anchor.page_claim for c in chunk_set.chunks}
    assert {k for k, v in pages.items() if v != "ok"} == {moved_page}
    assert pages[moved_page] == "wrong" and chunk_set.chunks[moved_page].anchor.anchored
    assert chunk_set.checks["extractors"] == {MULTICOLUMN.stem: None}
    tried = f"{extractor_label('pypdf')}, {extractor_label('pymupdf')}"
    assert headline(chunk_set)[0] == (
        f"Offsets: 1 wrong of 1 checked; {len(rows) - 1:,} unchecked: their loader's text "
        f"could not be reproduced (tried {tried})"
    )


def test_pages_numbered_from_one_are_detected() -> None:
    rows = rows_of(SIGCONF, "pypdf", base=1)  # LangChain's shape, whose default is 0
    chunk_set = run(rows, SIGCONF)
    assert chunk_set.checks["page_base"] == 1
    assert chunk_set.checks["page_base_how"] == "detected"
    assert {c.anchor.page_claim for c in chunk_set.chunks} == {"ok"}
    assert {c.anchor.claim for c in chunk_set.chunks} == {"ok"}


def test_given_page_base_is_kept_and_misnumbered_pages_are_wrong() -> None:
    rows = rows_of(SIGCONF, "pypdf", base=1)
    chunk_set = run(rows, SIGCONF, page_base=0)  # read as 0-based: every page one too far
    assert chunk_set.checks["page_base_how"] == "given"
    verdicts = {c.anchor.page_claim for c in chunk_set.chunks}
    assert "ok" not in verdicts and "wrong" in verdicts


def test_cli_reports_page_claims_span_lengths_and_the_named_extractor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = rows_of(MULTICOLUMN, "pypdf")
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = tmp_path / "store"
    argv = ["import-chunks", str(data), "--docs", str(MULTICOLUMN), "--store", str(store),
            "--json"]  # fmt: skip
    assert main([*argv, "--extractor", "pymupdf"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["claim"]["unchecked"] == len(rows)  # not the loader's text
    assert report["checks"]["tried"] == [extractor_label("pymupdf")]
    assert main([*argv, "--extractor", "pypdf"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["counts"]["claim"] == {"ok": len(rows), "wrong": 0, "absent": 0,
                                         "unchecked": 0, "pending": 0}  # fmt: skip
    assert report["counts"]["page_claim"]["ok"] == len(rows)
    assert report["headline"][0].startswith(f"Offsets: 0 wrong of {len(rows)} checked")
    for row in report["chunks"]:
        assert row["page_claim"] == "ok" and row["claimed_page"] >= 1
        if row["char_start"] is not None:
            assert row["span_chars"] == row["char_end"] - row["char_start"]
            assert 0 < row["span_ratio"] < 2.5
    assert main(["import-chunks", str(data), "--docs", str(MULTICOLUMN), "--store",
                 str(store)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert f"Offsets: 0 wrong of {len(rows)} checked" in out and "Wrong claims 0" not in out


def test_a_text_file_headline_counts_what_was_checked(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("One line of notes.\n\nAnother line of notes here.\n", encoding="utf-8")
    rows = [
        {"page_content": "One line of notes.", "metadata": {"source": "notes.txt",
                                                            "start_index": 0}},
        {"page_content": "Another line of notes here.", "metadata": {"source": "notes.txt"}},
    ]  # fmt: skip
    chunk_set = run(rows, path)
    assert headline(chunk_set) == ["Offsets: 0 wrong of 1 checked; 1 without an offset"]


@pytest.mark.parametrize("loader", ["PyPDFLoader", "PyMuPDFLoader"])
@pytest.mark.parametrize("path", [SIGCONF, PDF_DIR / "elstest-5p.pdf"])
def test_langchains_own_loaders_are_checked_as_they_made_the_chunks(
    loader: str, path: Path
) -> None:
    lc_loaders = pytest.importorskip(
        "langchain_community.document_loaders",
        reason="langchain-community (optional, requirements-dev.txt) is not installed",
    )
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    pages = getattr(lc_loaders, loader)(str(path)).load()
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=1000, chunk_overlap=150, add_start_index=True
    )
    rows = [json.loads(json.dumps(d.model_dump(), default=str))
            for d in splitter.split_documents(pages)]  # fmt: skip
    texts = [p.page_content for p in pages]
    moved_offset, minus_one, moved_page = seeded(rows, texts)
    chunk_set = run(rows, path)
    extractor = "pypdf" if loader == "PyPDFLoader" else "pymupdf"
    assert chunk_set.checks["extractors"] == {path.stem: extractor_label(extractor)}
    assert chunk_set.checks["extractor_how"] == "metadata"
    wrong = {c.anchor.index for c in chunk_set.chunks if c.anchor.claim == "wrong"}
    assert wrong == {moved_offset, minus_one}
    assert {c.anchor.claim for c in chunk_set.chunks} <= {"ok", "wrong"}
    page_wrong = {c.anchor.index for c in chunk_set.chunks if c.anchor.page_claim != "ok"}
    assert page_wrong == {moved_page}
    placed = [c for c in chunk_set.chunks if c.anchor.char_start is not None]
    assert len(placed) >= 0.95 * len(rows)


def test_chunks_whose_words_come_in_another_order_are_placed_on_their_page() -> None:
    """Three chunks of the Pfizer 10-Q whose words are all on their page, in an order no
    run of our text holds (footnote marks, a table's columns): placed by the loader's
    text, on their page, no wider than about twice the chunk."""
    path = CORPUS / "financebench" / "pdfs" / "Pfizer_2023Q2_10Q.pdf"
    if not path.is_file():
        pytest.skip(f"{path} is not in this corpus")
    texts = {n: pymupdf.open(path)[n - 1].get_text().strip() for n in (26, 39, 40)}
    cut = [(26, 3437, 106), (39, 3441, 122), (40, 5352, 193)]
    rows = [
        {"page_content": texts[page][at : at + size].strip(),
         "metadata": {"source": str(path), "page": page - 1, "start_index": at,
                      "file_path": str(path), "format": "PDF 1.7"}}
        for page, at, size in cut
    ]  # fmt: skip
    doc = load_document(path)
    chunk_set = run(rows, path)
    for (page, _, _), chunk in zip(cut, chunk_set.chunks, strict=True):
        a = chunk.anchor
        assert a.anchor == "aligned" and a.pages == (page,), a
        assert (a.claim, a.page_claim) == ("ok", "ok")
        span = doc.text[a.char_start : a.char_end]
        assert len("".join(span.split())) <= 2 * len("".join(chunk.given.text.split()))


def test_llamaindex_pdfreader_nodes_are_checked_in_pypdfs_page_text() -> None:
    """Nodes as LlamaIndex's ``PDFReader`` and a node parser make them: ``page_label``
    (1-based), ``file_name``, ``start_char_idx`` into pypdf's page text as extracted."""
    texts = [p.extract_text() for p in pypdf.PdfReader(SIGCONF).pages]
    rows = []
    for number, text in enumerate(texts, 1):
        for start, piece in windows(text)[:4]:
            meta = {"page_label": str(number), "file_name": SIGCONF.name}
            rows.append({"id_": f"n{len(rows)}", "class_name": "TextNode", "text": piece,
                         "start_char_idx": start, "end_char_idx": start + len(piece),
                         "metadata": meta})  # fmt: skip
    rows[5]["start_char_idx"] += 3
    rows[9]["metadata"]["page_label"] = str(int(rows[9]["metadata"]["page_label"]) + 2)
    chunk_set = run(rows, SIGCONF)
    assert chunk_set.shape == "llamaindex"
    assert chunk_set.checks["extractor_how"] == "metadata"
    assert chunk_set.checks["page_base"] == 1
    assert {c.anchor.index for c in chunk_set.chunks if c.anchor.claim != "ok"} == {5}
    assert {c.anchor.index for c in chunk_set.chunks if c.anchor.page_claim != "ok"} == {9}


def _counted_extractions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every pypdf page extraction from now on, counted."""
    calls: list[int] = []
    extract = pypdf.PageObject.extract_text

    def counted(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        calls.append(1)
        return extract(self, *args, **kwargs)

    monkeypatch.setattr(pypdf.PageObject, "extract_text", counted)
    return calls


def _verdicts(chunk_set) -> list[tuple]:  # noqa: ANN001
    return [(c.anchor.anchor, c.anchor.char_start, c.anchor.char_end, c.anchor.claim,
             c.anchor.page_claim, c.anchor.detail) for c in chunk_set.chunks]  # fmt: skip


def test_a_second_import_of_the_same_pdf_checks_every_claim_without_extracting_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from core.imported import loader_text

    loader_text.forget()
    calls = _counted_extractions(monkeypatch)
    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    moved_offset, minus_one, moved_page = seeded(rows, page_texts(SIGCONF, "pypdf"))
    calls.clear()
    first = run(rows, SIGCONF)
    assert calls  # the loader's pages were extracted
    calls.clear()
    again = run(rows, SIGCONF)  # another split of the same PDF would do the same
    assert calls == [] and _verdicts(again) == _verdicts(first)
    wrong = {c.anchor.index for c in again.chunks if c.anchor.claim == "wrong"}
    assert wrong == {moved_offset, minus_one}
    assert {c.anchor.claim for c in again.chunks} <= {"ok", "wrong"}
    loader_text.forget()
    run(rows, SIGCONF)
    assert calls  # forgotten: extracted again


def test_the_command_keeps_the_loaders_pages_in_the_store_for_the_next_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.imported import loader_text

    rows = rows_of(MULTICOLUMN, "pypdf", {"page_label": "1"})
    rows[2]["metadata"]["start_index"] += 5
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    store = tmp_path / "store"
    argv = ["import-chunks", str(data), "--docs", str(MULTICOLUMN), "--store", str(store),
            "--json"]  # fmt: skip
    loader_text.forget()
    calls = _counted_extractions(monkeypatch)
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert calls
    (kept,) = (store / "loader_text").glob("*.json")
    assert load_document(MULTICOLUMN).sha256 in kept.name
    loader_text.forget()  # as a new process: nothing in memory
    calls.clear()
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert calls == [] and again["chunks"] == first["chunks"]
    assert again["counts"]["claim"] == {"ok": len(rows) - 1, "wrong": 1, "absent": 0,
                                        "unchecked": 0, "pending": 0}  # fmt: skip
    # a kept file that is not this document's text is not trusted: the pages are extracted
    kept.write_text(json.dumps({"document_sha256": "0" * 64, "extractor": "x", "pages": {}}))
    loader_text.forget()
    assert main(argv) == 0
    assert calls and json.loads(capsys.readouterr().out)["chunks"] == first["chunks"]


def _broken(text: str) -> str:
    """A page text as a loader that splits and joins words gives it: every third long
    word split in two ("Registran t"), every twentieth pair of words run together
    ("accompanythe") and every thirtieth pair swapped."""
    words = text.split()
    for k in range(len(words) - 1):
        if k % 30 == 29:
            words[k], words[k + 1] = words[k + 1], words[k]
        elif k % 3 == 1 and len(words[k]) >= 6:
            words[k] = words[k][: len(words[k]) // 2] + " " + words[k][len(words[k]) // 2 :]
    joined = [w + ("" if k % 20 == 19 else " ") for k, w in enumerate(words)]
    return "".join(joined).strip()


def test_chunks_whose_words_the_loader_split_or_joined_are_placed_by_its_characters(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A loader that breaks words where ours does not (as pypdf does on some 10-Ks): a
    tenth or more of a chunk's words are not words of ours, yet its offset holds in the
    loader's text; it is placed by its characters, on its page, not much longer than
    itself (this PDF's author block comes in another order in pypdf's text)."""
    from core.imported import loader_text

    extract = pypdf.PageObject.extract_text
    monkeypatch.setattr(
        pypdf.PageObject, "extract_text", lambda self, *a, **k: _broken(extract(self, *a, **k))
    )
    loader_text.forget()
    try:
        rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
        chunk_set = run(rows, SIGCONF)
    finally:
        loader_text.forget()
    doc = load_document(SIGCONF)
    by_chars = [c for c in chunk_set.chunks if "characters line up" in c.anchor.detail]
    assert len(by_chars) >= len(rows) // 2, [c.anchor.detail for c in chunk_set.chunks][:5]
    for chunk, row in zip(chunk_set.chunks, rows, strict=True):
        a = chunk.anchor
        assert a.anchor in ("exact", "aligned"), a
        assert (a.claim, a.page_claim) == ("ok", "ok"), a
        assert a.pages == (row["metadata"]["page"] + 1,), a
    for chunk in by_chars:
        a = chunk.anchor
        span = "".join(doc.text[a.char_start : a.char_end].split())
        given = "".join(chunk.given.text.split())
        assert 0.85 * len(given) <= len(span) <= 1.5 * len(given), a  # an author block moves
        assert a.coverage is not None and a.coverage >= 0.9


def test_placing_by_characters_keeps_offsets_where_case_folding_lengthens_a_character() -> None:
    """'ß' folds to 'ss': each folded character keeps its source offset, so a match after
    it still points at the right characters of ours (and never past the end)."""
    from core.align.exact import whitespace_free_view
    from core.imported.anchor import _folded

    text = "Straße " * 4 + "Registrant Corporation"
    view = _folded(whitespace_free_view(text, 0, len(text)))
    assert len(view.text) == len(view.offsets)
    at = view.text.index("registrant")
    assert text[view.offsets[at] : view.offsets[at + len("registrant") - 1] + 1] == "Registrant"
    assert view.offsets[-1] == len(text) - 1
