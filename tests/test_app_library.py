"""The store's library in the workbench: what one session uploads, a fresh session lists
and opens by deep link; removed and replaced documents; encrypted ones ask again."""

from __future__ import annotations

import re

from streamlit.testing.v1 import AppTest

from core.formats import load_document
from core.library import Library
from core.provenance.cite import Citation
from core.render.links import source_params
from core.store import ChunkStore
from tests.conftest import PDF_DIR, PDF_PASSWORDS
from tests.test_app_pages import TIMEOUT_S, app, html_of, open_page, plain, store_dir, upload
from workbench.source.source_views import SOFT_BREAK, reflowed
from workbench.state import LibraryKey, SourceKey

__all__ = ["app", "store_dir"]  # fixtures, imported for pytest

REPORT_V1 = b"# Report\n\nRevenue rose by 4 percent in the quarter.\n\nCosts fell.\n"
REPORT_V2 = b"# Report\n\nRevenue rose by 5 percent in the quarter.\n\nCosts fell.\n"


def fresh_session(**query: str) -> AppTest:
    """A new browser session: nothing uploaded, only the store folder in common."""
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S)
    at.query_params.update(query)
    at.switch_page("pages/source.py" if query else "pages/library.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def marked(at: AppTest) -> list[str]:
    found = re.findall(r'<mark class="cs-hl"[^>]*>(.*?)</mark>', html_of(at), flags=re.S)
    return [re.sub(r"<[^>]+>", "", m) for m in found]


def citation_of(data: bytes, name: str, quote: str) -> Citation:
    doc = load_document(data, name=name)
    start = doc.text.index(quote)
    return Citation.of_span(doc, start, start + len(quote))


def test_an_upload_opens_by_link_in_a_fresh_session(app, store_dir):
    name = "pypdfsf_multicolumn.pdf"
    data = (PDF_DIR / name).read_bytes()
    upload(app, (name, data))
    doc = load_document(data, name=name)
    citation = Citation.of_span(doc, 200, 260)
    at = fresh_session(**source_params(citation))
    assert not at.error, [e.value for e in at.error]
    assert "Verified" in html_of(at) and marked(at) == [citation.quote.replace("&", "&amp;")]
    listing = fresh_session()
    rows = listing.dataframe[0].value
    assert doc.doc_id in list(rows["document"])
    assert list(rows[rows["document"] == doc.doc_id]["source"]) == ["library"]


def test_an_unknown_document_is_named_before_the_span(app):
    open_page(app, "source", doc="nonexistent", span="5-2")
    (error,) = app.error
    assert plain(error.value).startswith("No document 'nonexistent' is in the library")
    assert "span" not in error.value
    assert any("The library holds" in c.value for c in app.caption)
    assert "<mark" not in html_of(app) and not app.main.markdown  # no other document shown


def test_a_removed_document_reports_its_link_gone(app, store_dir):
    upload(app, ("report.md", REPORT_V1))
    citation = citation_of(REPORT_V1, "report.md", "Revenue rose")
    open_page(app, "library")
    app.selectbox(key=LibraryKey.REMOVE_PICK).set_value("report").run()
    app.button(key=LibraryKey.REMOVE_GO).click().run()
    assert any("report removed: 1 kept version(s)" in plain(s.value) for s in app.success)
    assert Library.of_store(ChunkStore.open(store_dir)).versions() == []
    at = fresh_session(**source_params(citation))
    (error,) = at.error
    assert plain(error.value).startswith("No document 'report' is in the library")


def test_a_changed_version_makes_old_links_stale_and_opens_the_old_bytes(app):
    upload(app, ("report.md", REPORT_V1))
    old = citation_of(REPORT_V1, "report.md", "Revenue rose by 4 percent")
    upload(app, ("report.md", REPORT_V2))
    at = fresh_session(**source_params(old))
    assert "Stale" in html_of(at) and "cs-badge-bad" in html_of(at)
    (link,) = [p for p in at.get("page_link") if "Open the cited version" in p.proto.label]
    assert f"version={old.doc_sha256}" in link.proto.query_string
    at = fresh_session(**source_params(old), version=old.doc_sha256)
    assert "Verified" in html_of(at) and marked(at) == ["Revenue rose by 4 percent"]
    assert any("An older version of report" in plain(i.value) for i in at.info)


def test_an_encrypted_upload_asks_for_its_password_in_a_fresh_session(app, store_dir):
    name = "crazyones-encrypted-256.pdf"
    data = (PDF_DIR / name).read_bytes()
    upload(app, (name, data))
    app.main.text_input[0].set_value(PDF_PASSWORDS[name])
    app.main.button[0].click().run()
    (entry,) = Library.of_store(ChunkStore.open(store_dir)).current()
    assert entry.encrypted and entry.name == name
    doc = load_document(data, name=name, password=PDF_PASSWORDS[name])
    citation = Citation.of_span(doc, 10, 60)
    at = fresh_session(**source_params(citation))
    assert any("kept encrypted" in plain(w.value) for w in at.warning)
    assert "<mark" not in html_of(at)  # nothing of it shown before the password
    at.text_input[0].set_value("wrong")
    at.button[0].click().run()
    assert any("password" in e.value.lower() for e in at.error)
    at.text_input[0].set_value(PDF_PASSWORDS[name])
    at.button[0].click().run()
    assert not at.exception and "Verified" in html_of(at)


def test_in_context_wraps_a_pdfs_lines_and_keeps_every_character(app):
    doc = load_document(PDF_DIR / "pypdfsf_multicolumn.pdf")
    start = doc.text.index("\n", 300) - 30  # a span across a line end
    citation = Citation.of_span(doc, start, start + 60)
    open_page(app, "library")
    upload(app, ("pypdfsf_multicolumn.pdf", (PDF_DIR / "pypdfsf_multicolumn.pdf").read_bytes()))
    open_page(app, "source", **source_params(citation))
    (context,) = [h.proto.body for h in app.html if 'class="cs-text"' in h.proto.body]
    assert SOFT_BREAK in context  # a line end wraps as a space; blank lines stay breaks
    assert marked(app) == [citation.quote.replace("&", "&amp;")]  # every character kept
    assert reflowed("a\nb\n\nc") == f"a{SOFT_BREAK}b\n\nc"


def test_source_zooms_to_the_cited_lines_and_shows_the_whole_page_on_demand(app):
    from tests.conftest import SAMPLE_DOCS

    doc = load_document(SAMPLE_DOCS / "sample-sigconf.pdf")
    start = doc.text.index("ACM")
    open_page(app, "source", **source_params(Citation.of_span(doc, start, start + 120)))

    def shown_aspect() -> float:
        (style,) = re.findall(
            r'class="cs-page"[^>]*style="aspect-ratio:([\d.]+)/([\d.]+)"', html_of(app)
        )
        return float(style[0]) / float(style[1])

    info = doc.pages[doc.pages_of(start, start + 120)[0] - 1]
    lines = shown_aspect()
    assert app.button_group(key=SourceKey.ZOOM).value == "Cited lines"
    assert lines >= 2.5  # a band of the cited lines, at most a third as tall as wide
    app.button_group(key=SourceKey.ZOOM).set_value("Whole page").run()
    assert abs(shown_aspect() - info.width_pt / info.height_pt) < 1e-3


def test_a_wrong_password_names_the_file_once(app):
    name = "crazyones-encrypted-256.pdf"
    upload(app, (name, (PDF_DIR / name).read_bytes()))
    app.main.text_input[0].set_value("not-the-password")
    app.main.button[0].click().run()
    (error,) = [plain(e.value) for e in app.error]
    assert error == f"the password for **{name}** is wrong; give the right one"


def test_the_library_chart_ticks_are_plain_numbers(app):
    from core.render.charts import log_ticks

    open_page(app, "library")
    (chart,) = app.get("plotly_chart")
    import json

    yaxis = json.loads(chart.proto.spec)["layout"]["yaxis"]
    assert yaxis["type"] == "log" and yaxis["ticktext"]
    values = [float(v.replace(",", "")) for v in yaxis["ticktext"]]
    assert values == yaxis["tickvals"] == sorted(values)  # each label is its value
    low, high = (10**r for r in yaxis["range"])
    assert all(low <= v <= high for v in values)
    assert log_ticks([1.7, 3.1]) == ([100.0, 200.0, 500.0, 1000.0], ["100", "200", "500", "1,000"])
    assert log_ticks([0.5, 6.2])[1] == ["10", "100", "1,000", "10,000", "100,000", "1,000,000"]


def test_upload_notes_go_with_the_files_they_are_about(app):
    upload(app, ("report.md", REPORT_V1))
    n = len(load_document(REPORT_V1, name="report.md").text)
    assert [plain(s.value) for s in app.success] == [f"**report.md** read: {n} chars"]
    open_page(app, "chunks")
    open_page(app, "library")  # the uploader is empty again: its old note is gone
    assert not app.success and not app.warning
    upload(app, ("other.md", REPORT_V2))
    assert [plain(s.value) for s in app.success] == [f"**other.md** read: {n} chars"]


def test_the_listing_counts_each_documents_garbled_blocks_and_characters(app):
    """elstest-5p.pdf (an Elsevier article) sets its formulas in fonts whose glyphs map
    to no code point: those blocks are flagged garbled; the other samples have none."""
    from core.formats import parse_document

    name = "elstest-5p.pdf"
    data = (PDF_DIR / name).read_bytes()
    upload(app, (name, data))
    doc = load_document(data, name=name)
    flagged = [b for b in parse_document(doc).blocks if b.garbled]
    assert len(flagged) >= 3 and all(doc.text[b.char_start : b.char_end] for b in flagged)
    rows = app.dataframe[0].value.set_index("document")
    assert rows.loc[doc.doc_id, "garbled blocks"] == len(flagged)
    assert rows.loc[doc.doc_id, "garbled chars"] == sum(len(b.text) for b in flagged)
    assert rows.loc["sample-sigconf", "garbled blocks"] == 0
    assert rows.loc["state_of_the_union", "garbled chars"] == 0
    (line,) = [c.value for c in app.caption if "hold garbled text" in c.value]
    assert f"{plain(doc.doc_id)} ({len(flagged)})" in plain(line)
