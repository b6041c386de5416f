"""The workbench with the new formats (AppTest, no browser): a transcript and an HTML
file uploaded in the Library, cited on the Source page (turns with times; the raw HTML
range), and exported from the Chunks page."""

from __future__ import annotations

import html as htmllib

import pytest
from conftest import ROOT
from streamlit.testing.v1 import AppTest

from core.formats import load_document
from core.provenance.cite import Citation
from core.render.links import source_params
from workbench.state import LibraryKey

DATA = ROOT / "tests" / "data" / "formats"


@pytest.fixture
def app(tmp_path, monkeypatch) -> AppTest:
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    at = AppTest.from_file("../app.py", default_timeout=120).run()
    assert not at.exception, [e.value for e in at.exception]
    files = [(p.name, p.read_bytes(), "application/octet-stream") for p in (
        DATA / "lecture-3.vtt", DATA / "pumps.html",
    )]  # fmt: skip
    at.file_uploader(key=LibraryKey.UPLOADER).set_value(files).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_source(at: AppTest, citation: Citation) -> str:
    at.query_params.clear()
    at.query_params.update(source_params(citation))
    at.switch_page("pages/source.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return "\n".join(h.proto.body for h in at.html)


def test_library_lists_the_new_kinds(app) -> None:
    table = app.dataframe[0].value
    kinds = dict(zip(table["document"], table["kind"], strict=True))
    assert kinds["lecture-3"] == "WebVTT transcript" and kinds["pumps"] == "HTML"


def test_source_shows_a_transcript_citation_with_its_turns_and_times(app) -> None:
    doc = load_document(DATA / "lecture-3.vtt")
    start = doc.text.index("Does the same tensor")
    citation = Citation.of_span(doc, start, start + 48)
    page = open_source(app, citation)
    assert any("00:13:39-00:13:44" in m.value for m in app.markdown)  # the rendered citation
    assert 'class="cs-turns"' in page and "00:13:39-00:13:49" in page  # the turn's times
    assert 'tr class="cs-turn cs-turn-cited"' in page and "Student" in page
    assert '<mark class="cs-hl"' in page and "Does the same tensor apply" in page


def test_source_shows_the_raw_html_range(app) -> None:
    doc = load_document(DATA / "pumps.html")
    start = doc.text.index("Listen for noise")
    end = doc.text.index("normal.") + len("normal.")
    page = open_source(app, Citation.of_span(doc, start, end))
    a, b = doc.raw_range(start, end)
    assert any(f"bytes {a:,}-{b:,}" in m.value for m in app.markdown)
    raw = doc.source_bytes[a:b].decode()
    assert "</li>" in raw and htmllib.escape(raw) in page  # tags as written, escaped
    assert "<script>" not in page


def test_chunks_page_offers_the_exports(app) -> None:
    app.switch_page("pages/chunks.py").run()
    app.sidebar.selectbox[0].set_value("lecture-3").run()
    assert not app.exception, [e.value for e in app.exception]
    assert any(c.value.startswith("**lecture\\-3** cut by") for c in app.caption)
    assert any("(00:12:25-" in p.proto.label.replace("\\", "") for p in app.get("page_link"))
    labels = [b.proto.label for b in app.get("download_button")]
    assert "LangChain JSONL" in labels and "LlamaIndex JSONL" in labels


@pytest.mark.parametrize("doc_id", ["lecture-3", "pumps"])
def test_parse_page_types_the_blocks(app, doc_id: str) -> None:
    app.switch_page("pages/parse.py").run()
    app.sidebar.selectbox[0].set_value(doc_id).run()
    assert not app.exception, [e.value for e in app.exception]
    page = "\n".join(h.proto.body for h in app.html)
    kind = "turn" if doc_id == "lecture-3" else "table"
    assert f'data-kind="{kind}"' in page
