"""Hostile inputs in process: the limits and how to raise them, typed errors for damaged
PDFs, surrogates and rotations in the canonical text, special files, meshes and long
texts, furniture that needs evidence, pages too large to draw, and deep links."""

from __future__ import annotations

from pathlib import Path

import hostile_files as h
import numpy as np
import pymupdf
import pytest

from core.chunk import chunk_document, policy_from_args
from core.errors import (
    ChunkscopeError,
    DamagedPdfError,
    LimitExceededError,
    NotAPdfError,
    UnsupportedFileError,
)
from core.formats import load_document, parse_document
from core.ingest import limits
from core.ingest.pdf_guard import normalise_rotation
from core.model.tokens import load_tokenizer
from core.parse.furniture import furniture_lines
from core.render.links import parse_span
from core.render.pages import MAX_PIXELS, MAX_SIDE_PX, fitted_zoom, render_page_png

STRUCTURE = policy_from_args("structure", None, None, None)


def exact(doc) -> None:  # noqa: ANN001
    blocks = parse_document(doc).blocks
    chunks = chunk_document(doc, blocks, STRUCTURE, load_tokenizer(None))
    assert chunks
    for item in (*blocks, *chunks):
        assert doc.text[item.char_start : item.char_end] == item.text


# -- limits -----------------------------------------------------------------------------


def test_limit_message_names_the_limit_and_both_ways_to_raise_it() -> None:
    with pytest.raises(LimitExceededError) as info, limits.override(lines=10):
        load_document(b"a\n" * 20, name="many.txt")
    message = str(info.value)
    assert message.startswith("many.txt has 21 lines, over the limit of 10 lines a document")
    assert "--max-lines N" in message and "CHUNKSCOPE_MAX_LINES=N" in message


def test_environment_raises_a_limit_and_a_flag_beats_it(monkeypatch) -> None:
    data = b"word " * 3000  # 15,000 characters
    monkeypatch.setenv("CHUNKSCOPE_MAX_CHARS", "10000")
    with pytest.raises(LimitExceededError, match="15,000 characters"):
        load_document(data, name="long.txt")
    monkeypatch.setenv("CHUNKSCOPE_MAX_CHARS", "20000")
    assert len(load_document(data, name="long.txt").text) == 15_000
    with limits.override(chars=1000), pytest.raises(LimitExceededError):
        load_document(data, name="long.txt")
    assert limits.value("chars") == 20_000  # the override ended with its block


@pytest.mark.parametrize("raw", ["abc", "0", "-5"])
def test_a_bad_limit_in_the_environment_is_one_line(monkeypatch, raw: str) -> None:
    monkeypatch.setenv("CHUNKSCOPE_MAX_PAGES", raw)
    with pytest.raises(LimitExceededError, match="CHUNKSCOPE_MAX_PAGES"):
        limits.value("pages")


def test_every_limit_has_a_flag_an_environment_variable_and_a_positive_default() -> None:
    assert set(limits.LIMITS) == {
        "file_mb",
        "pages",
        "page_content_mb",
        "content_mb",
        "page_chars",
        "chars",
        "lines",
        "markdown_tokens",
        "layout_s",
        "ocr_page_s",
        "ocr_s",
    }
    for limit in limits.LIMITS.values():
        assert limit.default > 0 and limit.env.startswith("CHUNKSCOPE_")
        assert limit.flag.startswith("--")


def test_markdown_past_its_block_tokens_is_refused_at_load_at_exactly_the_limit() -> None:
    from markdown_it import MarkdownIt

    data = b"# List\n\n" + b"".join(b"- item %d\n  > quoted\n" % i for i in range(60))
    count = len(MarkdownIt("commonmark").enable("table").parse(data.decode()))  # every token
    with limits.override(markdown_tokens=count):
        exact(load_document(data, name="list.md"))
    with limits.override(markdown_tokens=count - 1), pytest.raises(LimitExceededError) as info:
        load_document(data, name="list.md")
    bound = f"{count - 1:,}"
    assert str(info.value).startswith(
        f"list.md has more than {bound} Markdown block tokens, over the limit of {bound} "
        "Markdown block tokens a document; raise it with --max-markdown-tokens N or "
        "CHUNKSCOPE_MAX_MARKDOWN_TOKENS=N"
    )
    with limits.override(markdown_tokens=10):  # the same text as plain text: no such limit
        exact(load_document(data, name="list.txt"))


def test_the_layout_model_stops_at_its_time_limit() -> None:
    doc = load_document(h.many_pages_pdf(3), name="three.pdf")
    with limits.override(layout_s=1e-9), pytest.raises(LimitExceededError) as info:
        parse_document(doc, parser="layout")
    assert "the layout model spent" in str(info.value) and "--layout-timeout" in str(info.value)


def test_content_past_the_document_limit_is_refused_before_any_page_is_read() -> None:
    data = h.off_page_text_pdf(20, content_bytes=1_000_000)
    with limits.override(content_mb=5), pytest.raises(LimitExceededError) as info:
        load_document(data, name="heavy.pdf")
    assert str(info.value).startswith("heavy.pdf has more than 5 MB of content, over the limit")
    with limits.override(content_mb=50):  # raised: read, and every page is empty
        assert load_document(data, name="heavy.pdf").pages_without_text == tuple(range(1, 21))


def test_too_many_pages_is_refused_before_any_page_is_read() -> None:
    with limits.override(pages=10), pytest.raises(LimitExceededError, match="11 pages"):
        load_document(h.many_pages_pdf(11), name="eleven.pdf")


def test_a_file_past_the_size_limit_is_read_only_to_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    path.write_bytes(b"x" * 2_000_001)
    with limits.override(file_mb=2), pytest.raises(LimitExceededError, match="2 MB a file"):
        load_document(path)


# -- damaged and odd PDFs -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (h.page_tree_cycle_pdf(), "cycle in page tree"),
        (h.count_lie_pdf(), "damaged"),
    ],
)
def test_damaged_page_trees_are_typed_errors(data: bytes, words: str) -> None:
    with pytest.raises(DamagedPdfError, match=words) as info:
        load_document(data, name="broken.pdf")
    assert isinstance(info.value, NotAPdfError) and "\n" not in str(info.value)


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    doc = load_document(h.lone_surrogate_pdf(), name="surrogate.pdf")
    assert doc.text == "\ufffdb\ufffdb plain"
    assert doc.text.encode("utf-8")  # encodable: no surrogate left
    exact(doc)


@pytest.mark.parametrize("rotate", [45, 91, 134, 271])
def test_an_off_grid_rotation_keeps_its_text_on_the_page(rotate: int) -> None:
    doc = load_document(h.one_page_pdf(h.text_ops(["Turned text."]), rotate=rotate), name="r.pdf")
    page = doc.pages[0]
    assert doc.text == "Turned text." and page.has_text and not doc.pages_without_text
    boxes = doc.char_bbox_pt
    assert np.all(boxes[:, 0] >= 0) and np.all(boxes[:, 2] <= page.width_pt)
    assert np.all(boxes[:, 1] >= 0) and np.all(boxes[:, 3] <= page.height_pt)
    assert np.all(boxes[:, 2] > boxes[:, 0]) and np.all(boxes[:, 3] > boxes[:, 1])
    pdf = pymupdf.open(stream=doc.pdf_bytes, filetype="pdf")  # as parsers and renders open it
    again = normalise_rotation(pdf, pdf[0])
    assert (again.rect.width, again.rect.height) == (page.width_pt, page.height_pt)
    assert again.rotation == page.rotation_deg


def test_a_text_file_that_mentions_the_pdf_header_is_text() -> None:
    doc = load_document(h.text_file_with_pdf_marker(), name="notes.txt")
    assert doc.kind == "text" and "%PDF-1.7" in doc.text


def test_a_pdf_named_txt_is_still_a_pdf() -> None:
    data = h.one_page_pdf(h.text_ops(["Still a PDF."]))
    assert load_document(data, name="renamed.txt").kind == "pdf"


def test_find_tables_is_spared_meshes_and_bounded_over_a_document() -> None:
    from core.tables import finder as tables

    page = pymupdf.open(stream=h.mesh_pdf(100), filetype="pdf")[0]
    horizontal, vertical = tables.rulings(page)
    assert tables.count_crossings(horizontal, vertical, 10**6) == 101 * 101
    assert tables.count_crossings(horizontal, vertical, 5000) == 5001  # stops early
    budget = tables.TableBudget()
    assert budget.allows(10_000) and not budget.allows(30_000)
    budget.spent = tables.MAX_DOCUMENT_TABLE_WORK
    assert not budget.allows(1)
    small = pymupdf.open(stream=h.mesh_pdf(20, n_pages=3), filetype="pdf")
    work = [tables.table_work(p, [b for b in _line_boxes(p)]) for p in small]
    assert work == [21 * 21] * 3  # a small mesh is looked at: it may be a table


def test_crossing_points_are_counted_as_distinct_rows_are() -> None:
    from core.tables.table_signals import _KEY_SPAN, _distinct_points

    rng = np.random.default_rng(11)
    special = np.array([0.0, -0.0, _KEY_SPAN - 1, -_KEY_SPAN + 1, _KEY_SPAN, 1e300, np.inf])
    for case in range(400):
        n = int(rng.integers(0, 300))
        span = [3, 50, 2000, 2 * _KEY_SPAN][case % 4]
        x = np.rint(rng.uniform(-span, span, n))
        y = np.rint(rng.uniform(-span, span, n))
        if n and case % 5 == 0:
            x[rng.integers(0, n, 3)] = rng.choice(special, 3)
            y[rng.integers(0, n, 3)] = rng.choice(special, 3)
        if n > 10:
            x[n // 2 :], y[n // 2 :] = x[: n - n // 2], y[: n - n // 2]  # repeated points
        rows = len(np.unique(np.stack([x, y], axis=1), axis=0))
        assert _distinct_points(x, y) == rows


def _line_boxes(page):  # noqa: ANN001, ANN202
    blocks = page.get_text("dict", flags=0)["blocks"]
    return [tuple(ln["bbox"]) for b in blocks for ln in b.get("lines", ())]


def test_a_long_text_is_tokenized_in_pieces_exactly_as_a_whole() -> None:
    import random

    tokenizer = load_tokenizer(None)
    rng = random.Random(7)
    alphabet = "abc déf, GHI. 中文 ﬁ e\u0301 \u200d [x] 1.5 -- \t\n naïve Straße "
    text = "".join(rng.choice(alphabet) for _ in range(150_000))
    whole = tokenizer._backend.encode(text, add_special_tokens=False)
    pieces = tokenizer.token_words(text)
    assert [(a, b) for a, b, _ in pieces] == [tuple(o) for o in whole.offsets]
    words = whole.word_ids
    assert all(
        (words[i] == words[i + 1]) == (pieces[i][2] == pieces[i + 1][2])
        for i in range(len(words) - 1)
    )
    assert tokenizer.count(text) == len(whole.ids)
    assert len(tokenizer._pieces(text)) == 3


# -- special files ----------------------------------------------------------------------


def test_special_files_are_refused_without_reading(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    loop = tmp_path / "loop.md"
    loop.symlink_to(loop.name)
    cases = {fifo: "FIFO", Path("/dev/zero"): "a device", loop: "symlink loop", tmp_path: "folder"}
    for path, words in cases.items():
        with pytest.raises(UnsupportedFileError, match=words):
            load_document(path)


# -- furniture --------------------------------------------------------------------------


def test_a_heading_at_the_top_of_a_column_is_content() -> None:
    doc = load_document(h.column_heading_pdf(), name="paper.pdf")
    heading = next(
        i for i, ln in enumerate(doc.lines) if doc.text[ln.char_start :].startswith("6.5")
    )
    assert heading not in furniture_lines(doc)
    blocks = parse_document(doc).blocks
    chunks = chunk_document(doc, blocks, STRUCTURE, load_tokenizer(None))
    assert any("6.5 Calling External Functions" in c.text for c in chunks)


def test_a_document_that_would_be_all_furniture_has_none() -> None:
    doc = load_document(h.repeated_form_pdf(["Visitor form", "Name and date"]), name="form.pdf")
    assert furniture_lines(doc) == {}
    exact(doc)


def test_running_headers_repeated_beside_body_text_stay_furniture() -> None:
    doc = load_document(h.many_pages_pdf(5), name="five.pdf")
    assert furniture_lines(doc) == {}  # body text only, in the middle of the page
    header = h.one_page_pdf(
        h.text_ops(["Running head"], top=770) + b"\n" + h.text_ops(["Body."], top=400)
    )
    pages = load_document(header, name="one.pdf")
    assert furniture_lines(pages) == {}  # one page is no evidence of repetition


# -- rendering --------------------------------------------------------------------------


def test_a_huge_page_is_drawn_at_a_fitted_zoom() -> None:
    doc = load_document(
        h.one_page_pdf(h.text_ops(["Huge."]), media_box=b"[0 0 14400 14400]"), name="huge.pdf"
    )
    png = render_page_png(doc, 1)
    width = int.from_bytes(png[16:20], "big")
    height = int.from_bytes(png[20:24], "big")
    assert width <= MAX_SIDE_PX and width * height <= 1.001 * MAX_PIXELS and width > 1000
    assert fitted_zoom(612, 792, 2.0) == 2.0  # ordinary pages keep their zoom


def test_an_image_bomb_and_a_zero_page_are_drawn() -> None:
    for name, data in (
        ("image.pdf", h.image_bomb_pdf(20_000)),
        ("zero.pdf", h.one_page_pdf(h.text_ops(["Zero."]), media_box=b"[0 0 0 0]")),
    ):
        doc = load_document(data, name=name)
        assert render_page_png(doc, 1).startswith(b"\x89PNG")


@pytest.mark.parametrize("span", ["1" * 5000 + "-2", "0-" + "9" * 13, "1²-3"])
def test_a_deep_link_span_with_too_many_digits_is_no_span(span: str) -> None:
    assert parse_span(span) is None
    assert parse_span("120-180") == (120, 180)


DAMAGED = h.damaged_pdfs()


def test_the_damaged_pdfs_cover_truncations_xref_tables_and_streams() -> None:
    labels = [label for label, _ in DAMAGED]
    for base in ("plain", "pages", "compact"):
        assert sum(label.startswith(f"{base}-cut-") for label in labels) == 9
        assert f"{base}-stream-0-ends-file" in labels
    assert "plain-xref-cut" in labels and "pages-xref-garbled" in labels


@pytest.mark.parametrize(("label", "data"), DAMAGED, ids=[label for label, _ in DAMAGED])
def test_a_damaged_pdf_is_read_exactly_or_refused_in_one_line(label: str, data: bytes) -> None:
    """Load, parse (the layout model too on the files whose streams lost their second
    half), chunking and drawing every page: each either works with exact spans or ends
    in one typed line (a PyMuPDF error on any page object included)."""
    try:
        doc = load_document(data, name=f"{label}.pdf")
        for parser in ("fast", "layout") if label.endswith("-half") else ("fast",):
            blocks = parse_document(doc, parser=parser).blocks
            assert all(doc.text[b.char_start : b.char_end] == b.text for b in blocks)
        for chunk in chunk_document(doc, blocks, STRUCTURE, load_tokenizer(None)):
            assert doc.text[chunk.char_start : chunk.char_end] == chunk.text
        for number in range(1, len(doc.pages) + 1):
            render_page_png(doc, number, 0.5)
    except ChunkscopeError as exc:
        assert "\n" not in str(exc) and f"{label}.pdf" in str(exc)


def test_a_pdf_cut_in_a_content_stream_is_one_line_from_the_command_line(
    tmp_path: Path, capsys
) -> None:
    from core.cli import main

    path = tmp_path / "cut.pdf"
    path.write_bytes(dict(DAMAGED)["pages-stream-0-ends-file"])
    assert main(["parse", str(path)]) == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith("error: cut.pdf is damaged")


def test_a_load_error_is_a_chunkscope_error_for_every_crafted_pdf() -> None:
    crafted = [h.page_tree_cycle_pdf(), h.count_lie_pdf(), b"%PDF-1.7\n" + b"\xff" * 200]
    for data in crafted:
        with pytest.raises(ChunkscopeError):
            load_document(data, name="x.pdf")


def test_the_readme_lists_every_limit_with_its_default_flag_and_variable() -> None:
    """The limits table of docs/limits.md (the README links to it)."""
    page = Path(__file__).resolve().parent.parent / "docs" / "limits.md"
    rows = [line for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("| ")]
    for limit in limits.LIMITS.values():
        (row,) = [r for r in rows if f"`{limit.flag}` / `{limit.env}`" in r]
        assert f"| {limit.default:,.0f} " in row, (limit.key, row)
