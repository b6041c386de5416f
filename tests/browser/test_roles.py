"""Viewers and editors in a real browser: with ``CHUNKSCOPE_EDITOR_KEY`` set, a fresh
session cannot upload or remove, still opens a citation link verified and lit, and the
key typed in the sidebar makes it an editor without the key ever reaching the page or
the address bar."""

from __future__ import annotations

from core.formats import load_document
from core.library import Library
from core.provenance.cite import Citation
from core.render.links import link_url, source_params
from core.render.views import highlight_shapes
from core.store import ChunkStore
from tests.browser.conftest import running_app
from tests.browser.test_library_links import fresh_tab
from tests.browser.test_workbench import go_to, highlighted_lines, open_app, shot, wait_idle
from tests.conftest import PDF_DIR

PDF = PDF_DIR / "pypdfsf_multicolumn.pdf"
KEY = "Editor-Key-7f3a9c2e-used-only-in-this-test"
UPLOADER = "[data-testid=stFileUploader] input[type=file]"


def test_a_viewer_reads_a_citation_and_the_key_makes_an_editor(browser, tmp_path, artifacts):
    work = tmp_path / "app"
    work.mkdir()
    data = PDF.read_bytes()
    doc = load_document(data, name=PDF.name)
    library = Library.of_store(ChunkStore.open(work / "store"))  # kept before the app starts
    library.add(data, name=PDF.name, doc_id=doc.doc_id, sha256=doc.sha256)
    citation = Citation.of_span(doc, 200, 260)
    expected = [
        dict(s.data)["text"] for s in highlight_shapes(doc, 200, 260, citation.pages[0])
    ]  # fmt: skip
    with running_app(work, {"CHUNKSCOPE_EDITOR_KEY": KEY}) as url:
        context, tab = fresh_tab(browser)
        open_app(tab, url)
        sidebar = tab.get_by_test_id("stSidebar")
        assert sidebar.get_by_text("Viewing:").count() == 1
        assert tab.locator(UPLOADER).count() == 0
        assert tab.get_by_text("Remove a document").count() == 0
        shot(tab, artifacts, "roles-viewer-library")

        tab.goto(link_url(url, source_params(citation)))
        wait_idle(tab)
        assert "Verified" in tab.locator("div.cs-badge").first.inner_text()
        assert highlighted_lines(tab) == expected
        shot(tab, artifacts, "roles-viewer-source")

        go_to(tab, "Library")
        sidebar.get_by_text("Sign in to edit").click()
        sidebar.locator("input[type=password]").fill(KEY)
        sidebar.get_by_role("button", name="Sign in").click()
        tab.locator(UPLOADER).first.wait_for(state="attached")
        wait_idle(tab)
        assert tab.get_by_text("Remove a document").count() == 1
        assert sidebar.get_by_text("Signed in to edit").count() == 1
        assert KEY not in tab.content() and KEY not in tab.url
        shot(tab, artifacts, "roles-editor-library")
        context.close()
