"""The workbench pages under ``streamlit.testing.v1.AppTest`` (no browser).

Every test starts the real ``app.py`` with the bundled samples and an empty store folder,
then drives one page: it loads, bad input shows a one-line error in place, and changing a
chunking parameter changes what is drawn and counted.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from core import defaults
from core.chunk import default_policy
from core.embed import ChunkVector
from core.formats import load_document
from core.provenance.cite import Citation
from core.provenance.types import Chunk, make_chunk_id
from core.render.links import source_params
from core.store import ChunkStore
from tests.conftest import BAD_PDFS, PDF_DIR, PDF_PASSWORDS, SAMPLE_DOCS
from tests.data.injection import INJECTION_LINES, INJECTION_NAME, injection_pdf_bytes
from workbench.state import (
    ChunksKey,
    Key,
    LibraryKey,
    full_width_widget,
    page_widget,
    policy_widget,
    size_widget,
)

TIMEOUT_S = 120


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    folder = tmp_path / "store"
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(folder))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    return folder


@pytest.fixture
def app(store_dir) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(at: AppTest, name: str, **query: str) -> AppTest:
    at.query_params.clear()
    at.query_params.update(query)
    at.switch_page(f"pages/{name}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def html_of(at: AppTest) -> str:
    return "\n".join(h.proto.body for h in at.html)


def plain(markdown: str) -> str:
    """What a reader sees of markdown whose signs were escaped (``wording.md``)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def metric(at: AppTest, label: str, index: int = 0) -> str:
    return [m.value for m in at.metric if m.label == label][index]


def upload(at: AppTest, *files: tuple[str, bytes]) -> AppTest:
    at.file_uploader(key=LibraryKey.UPLOADER).set_value(
        [(name, data, "application/octet-stream") for name, data in files]
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def library_names(at: AppTest) -> list[str]:
    return list(at.dataframe[0].value["document"])


# -- library ----------------------------------------------------------------------------


def test_library_shows_the_samples_and_their_lengths(app):
    assert app.title[0].value == "Library"
    names = library_names(app)
    assert names[0] == "sample-sigconf"
    assert {"plumber_nics-background-checks-2015-11", "state_of_the_union"} <= set(names)
    datasheets = {p.stem for p in (SAMPLE_DOCS / "datasheets").glob("*.pdf")}
    assert len(datasheets) == 5 and datasheets <= set(names)  # the demo set is a sample too
    table = app.dataframe[0].value
    assert list(table["kind"]) == ["PDF"] * 7 + ["Markdown"]
    assert (table["tokens"] > 300).all() and (table["indexed"] == "no").all()
    # The datasheets (311-412 tokens) fit one late-chunking pass (510); the other three don't.
    assert metric(app, "One late pass") == "510 tokens"
    assert metric(app, "Too long for one pass") == f"{3 / 8:.0%}"
    assert app.sidebar.selectbox[0].value == "sample-sigconf"


def test_bad_files_show_one_line_errors_and_good_files_still_load(app):
    files = [(name, (PDF_DIR / name).read_bytes()) for name in BAD_PDFS]
    files.append(("notes.txt", b"Plain notes.\n\nA second paragraph."))
    upload(app, *files)
    errors = [plain(e.value) for e in app.error]
    assert len(errors) == len(BAD_PDFS)
    for name in BAD_PDFS:
        (line,) = [e for e in errors if name in e]
        assert "\n" not in line and "Traceback" not in line
        assert line.count(name) == 1, line  # the bold name, not repeated by the message
    assert "notes" in library_names(app)
    assert any("notes.txt" in plain(s.value) for s in app.success)


def test_a_scan_without_a_text_layer_is_read_with_a_warning(app, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_OCR", "never")  # OCR'd scans: tests/test_ocr_app.py
    name = "ocrmypdf_c03-29.pdf"
    upload(app, (name, (PDF_DIR / name).read_bytes()))
    (warning,) = [plain(w.value) for w in app.warning]
    assert warning == (
        f"**{name}** read: 1 page, 0 chars; no text on page 1: OCR is off (sidebar), so "
        "those pages can be neither chunked nor cited"
    )
    assert any(c.value.startswith("1 document(s) without text") for c in app.caption)
    open_page(app, "chunks")  # the scan is the current document: no numbers, one line why
    assert not app.metric and not app.get("plotly_chart")
    assert any(c.value.startswith("No chunks: the document has no text") for c in app.caption)


def test_encrypted_pdf_asks_for_its_password(app):
    name = "crazyones-encrypted-256.pdf"
    upload(app, (name, (PDF_DIR / name).read_bytes()), ("notes.txt", b"Plain notes."))
    assert any("encrypted" in w.value for w in app.warning)
    app.main.text_input[0].set_value("not-the-password")
    app.main.button[0].click().run()
    assert any("password" in e.value.lower() for e in app.error)
    app.main.text_input[0].set_value(PDF_PASSWORDS[name])
    app.main.button[0].click().run()
    assert not app.exception
    assert "crazyones-encrypted-256" in library_names(app)
    assert not [t for t in app.main.text_input if "assword" in t.label]  # its form is gone
    read = [plain(s.value) for s in app.success]  # the batch's other note stays
    assert any(line.startswith(f"**{name}** read: ") for line in read)
    assert any(line.startswith("**notes.txt** read: ") for line in read)


def _index_fake(store_dir, doc) -> int:
    """Store ``doc`` as two chunks with unit vectors (what an index run leaves behind)."""
    policy = default_policy("fixed")
    chunks = [
        Chunk(
            chunk_id=make_chunk_id(doc.doc_id, doc.sha256, policy, a, b),
            doc_id=doc.doc_id,
            doc_sha256=doc.sha256,
            char_start=a,
            char_end=b,
            text=doc.text[a:b],
            pages=(),
            heading_path=(),
            block_kinds=("paragraph",),
            token_count=5,
            policy=policy,
        )
        for a, b in ((0, 20), (20, 40))
    ]
    vectors = [
        ChunkVector(chunk_id=c.chunk_id, method="naive", vector=row, token_count=5)
        for c, row in zip(chunks, np.eye(2, 4, dtype=np.float32), strict=True)
    ]
    store = ChunkStore.open(store_dir)
    store.upsert_document(doc, chunks, vectors, model="fake", method="naive", policy=policy)
    return len(chunks)


def test_changed_reupload_names_the_stale_citations(app, store_dir):
    old = b"Version one of the notes, long enough for two chunks of twenty characters."
    new = b"Version TWO of the notes, long enough for two chunks of twenty characters."
    upload(app, ("notes.txt", old))
    n_stored = _index_fake(store_dir, load_document(old, name="notes.txt"))
    app.run()
    table = app.dataframe[0].value
    assert table[table["document"] == "notes"]["indexed"].item() == "yes"
    upload(app, ("notes.txt", new))
    (warning,) = [plain(w.value) for w in app.warning if "notes.txt" in plain(w.value)]
    assert "changed (sha256" in warning
    assert f"{n_stored} stored chunk citations are now stale" in warning
    assert "naive/fixed-chars-800-100" in warning
    table = app.dataframe[0].value
    assert table[table["document"] == "notes"]["indexed"].item() == "older version"


# -- parse ------------------------------------------------------------------------------


def test_parse_draws_every_block_of_the_page_and_kinds_toggle(app):
    open_page(app, "parse")
    body = html_of(app)
    n_rows = len(app.dataframe[0].value)
    assert body.count('class="cs-box cs-block') == n_rows > 10
    assert "data:image/png;base64," in body
    kinds = app.pills[0]
    app.pills[0].set_value([k for k in kinds.value if k != "paragraph"]).run()
    fewer = html_of(app).count('class="cs-box cs-block')
    assert 0 < fewer < n_rows and "cs-kind-paragraph" not in html_of(app)
    app.number_input(key=page_widget("sample-sigconf")).set_value(2).run()
    assert not app.exception
    assert any(m.value.endswith("blocks on page 2**") for m in app.markdown)


def test_parse_of_reflowable_text_says_it_has_no_pages(app):
    app.sidebar.selectbox[0].set_value("state_of_the_union").run()
    open_page(app, "parse")
    assert any("no pages" in i.value for i in app.info)
    assert "data:image/png" not in html_of(app) and "<mark" in html_of(app)


# -- chunks -----------------------------------------------------------------------------


def test_changing_the_size_changes_the_chunks(app):
    open_page(app, "chunks")
    app.segmented_control(key=policy_widget("a")).set_value("fixed").run()
    before = int(metric(app, "Chunks").replace(",", ""))
    boxes_before = html_of(app).count("cs-box cs-chunk")
    app.slider(key=size_widget("a", "fixed", "chars")).set_value(300).run()
    assert not app.exception
    after = int(metric(app, "Chunks").replace(",", ""))
    assert after > 2 * before
    assert html_of(app).count("cs-box cs-chunk") != boxes_before
    app.segmented_control(key=policy_widget("a")).set_value("sentence").run()
    assert not app.exception and int(metric(app, "Chunks").replace(",", "")) != after


def keys_of(app: AppTest) -> list[str]:
    """Policy keys shown above each panel's numbers, e.g. ``**fixed-chars-800-100**``."""
    return [m.value for m in app.markdown if re.fullmatch(r"\*\*\S+-\S+-\d+-\d+\*\*", m.value)]


def test_two_policies_side_by_side(app):
    open_page(app, "chunks")
    app.toggle(key=ChunksKey.COMPARE).set_value(True).run()
    assert not app.exception
    assert len([m for m in app.metric if m.label == "Chunks"]) == 2
    first, second = keys_of(app)  # the pair starts on the default policy and another one
    assert first.startswith(f"**{defaults.POLICY}-") and not second.startswith(
        f"**{defaults.POLICY}-"
    )
    app.segmented_control(key=policy_widget("b")).set_value("sentence").run()
    keys = keys_of(app)
    assert keys[0] != keys[1] and "sentence" in keys[1]


def test_chunks_of_reflowable_text_are_shown_as_text(app):
    app.sidebar.selectbox[0].set_value("state_of_the_union").run()
    open_page(app, "chunks")
    body = html_of(app)
    assert body.count("data-start=") >= 3 and "data:image/png" not in body


# -- source -----------------------------------------------------------------------------


def test_source_highlights_exactly_the_cited_characters(app):
    doc = load_document(SAMPLE_DOCS / "sample-sigconf.pdf")
    start = doc.text.index("ACM")
    citation = Citation.of_span(doc, start, start + 120)
    open_page(app, "source", **source_params(citation))
    body = html_of(app)
    assert "Verified" in body and "cs-badge-ok" in body
    marked = [
        re.sub(r"<[^>]+>", "", m)  # "In context" wraps a PDF's line breaks, text kept
        for m in re.findall(r'<mark class="cs-hl"[^>]*>(.*?)</mark>', body, flags=re.S)
    ]
    assert marked == [citation.quote.replace("&", "&amp;").replace("<", "&lt;")]
    assert body.count('class="cs-box cs-hl"') >= 2


def test_source_says_stale_and_mismatch_in_red(app):
    doc = load_document(SAMPLE_DOCS / "state_of_the_union.md")
    params = source_params(Citation.of_span(doc, 100, 160))
    open_page(app, "source", **{**params, "sha": "0" * 64})
    assert "Stale" in html_of(app) and "cs-badge-bad" in html_of(app)
    open_page(app, "source", **{**params, "span": "101-161"})
    assert "Mismatch" in html_of(app)
    open_page(app, "source", **params)
    assert any("no pages" in i.value for i in app.info)


def test_a_datasheet_citation_opens_in_a_fresh_session(store_dir):
    doc = load_document(SAMPLE_DOCS / "datasheets" / "datasheet-corvane-hx40.pdf")
    start = doc.text.index("Operating temperature")
    citation = Citation.of_span(doc, start, start + 80)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S)
    at.query_params.update(source_params(citation))  # a deep link, before the first run
    at.switch_page("pages/source.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert at.title[0].value == "Source"
    body = html_of(at)
    assert "Verified" in body and "cs-badge-ok" in body
    marked = [
        re.sub(r"<[^>]+>", "", m)  # "In context" wraps a PDF's line breaks, text kept
        for m in re.findall(r'<mark class="cs-hl"[^>]*>(.*?)</mark>', body, flags=re.S)
    ]
    assert marked == [citation.quote.replace("&", "&amp;").replace("<", "&lt;")]


def test_source_link_to_a_missing_document_says_what_to_do(app):
    open_page(app, "source", doc="not-loaded", span="1-5")
    (error,) = app.error
    assert "'not-loaded'" in plain(error.value) and "Library" in error.value
    app.sidebar.selectbox[0].set_value("state_of_the_union").run()
    for bad in ("oops", "700-500", "²-3"):  # the picker opens on the linked document
        open_page(app, "source", doc="sample-sigconf", span=bad)
        (error,) = app.error
        assert plain(error.value).startswith(f"This link's span {bad!r} is not two character")
        assert any(m.value.startswith("**Span of `sample-sigconf`**") for m in app.markdown)


def test_source_span_past_the_end_is_a_mismatch_with_nothing_highlighted(app):
    doc = load_document(SAMPLE_DOCS / "sample-sigconf.pdf")
    n = len(doc.text)
    params = source_params(Citation.of_span(doc, n - 40, n))
    open_page(app, "source", **{**params, "span": f"{n - 40}-{n + 500}"})
    body = html_of(app)
    assert "Mismatch: the span lies outside the document" in body and "cs-badge-bad" in body
    assert "<mark" not in body and "data:image/png" not in body  # never clamped and drawn


# -- escaping ---------------------------------------------------------------------------


def test_script_injection_document_is_shown_as_text(app):
    upload(app, (INJECTION_NAME, injection_pdf_bytes()))
    for name in ("parse", "chunks"):
        open_page(app, name)
        body = html_of(app)
        assert "<script" not in body and "<img src=x" not in body and "<svg" not in body
        assert "&lt;script&gt;alert(&quot;xss-script&quot;)&lt;/script&gt;" in body
    doc = load_document(injection_pdf_bytes(), name=INJECTION_NAME)
    start = doc.text.index(INJECTION_LINES[1])
    end = start + len(INJECTION_LINES[1])
    open_page(app, "source", **source_params(Citation.of_span(doc, start, end)))
    body = html_of(app)
    assert "<img src=x" not in body and "&lt;img src=x onerror=alert(&#x27;xss-img" in body


def test_parse_with_the_layout_model_reports_its_pages_and_time(app):
    """The layout model reads page by page (its bar counts pages), and its result is
    cached: a second visit neither parses again nor shows the status."""
    open_page(app, "parse")
    app.button_group(key=Key.PARSER_WIDGET).set_value("layout").run()
    assert not app.exception, [e.value for e in app.exception]
    pages = len(load_document(SAMPLE_DOCS / "sample-sigconf.pdf").pages)
    labels = [s.label for s in app.status]
    assert any(
        label.startswith(f"Parsed {pages} pages into ") and label.endswith("(layout parser)")
        for label in labels
    ), labels
    assert html_of(app).count('class="cs-box cs-block') > 10
    times = [c.value for c in app.caption if c.value.startswith("Parse time: ")]
    assert len(times) == 1 and re.fullmatch(
        r"Parse time: fast [\d.]+ s · layout [\d.]+ s · fast\+layout not run yet; "
        r"reading it took [\d.]+ s \(text, character map and tables\)",
        times[0],
    ), times  # reading (a PDF's text, character map and table search) is said apart
    app.number_input(key=page_widget("sample-sigconf")).set_value(2).run()
    assert not app.exception and not app.status


def test_a_landscape_page_gets_the_full_width_in_parse(app):
    """A statement set sideways is drawn across the page's width with its blocks below;
    a portrait page keeps the figure beside its block list unless the reader asks for the
    full width (one choice for Parse and Chunks)."""
    import pymupdf

    open_page(app, "parse")
    beside = len(app.columns)
    app.toggle(key=full_width_widget("parse")).set_value(True).run()
    assert len(app.columns) == beside - 2
    open_page(app, "chunks")
    assert app.toggle(key=full_width_widget("chunks")).value is True
    app.toggle(key=full_width_widget("chunks")).set_value(False).run()
    open_page(app, "parse")
    assert len(app.columns) == beside
    with pymupdf.open() as pdf:
        page = pdf.new_page(width=792, height=612)
        for k, line in enumerate(("Supplementary Sales Data", "U.S. 12,516 12,163 2.9")):
            page.insert_text((54, 72 + 14 * k), line, fontsize=9)
        data = pdf.tobytes()
    open_page(app, "library")
    upload(app, ("sideways.pdf", data))
    open_page(app, "parse")
    assert "data:image/png;base64," in html_of(app) and app.dataframe
    assert len(app.columns) == beside - 2  # no figure-and-list pair of columns
    open_page(app, "chunks")  # the same layout there: the figure, its numbers below it
    assert "data:image/png;base64," in html_of(app) and app.metric
