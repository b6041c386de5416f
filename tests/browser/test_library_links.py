"""A citation link outlives the browser session and the app process: it opens in a fresh
browser context from the store's library, reports a removed document as gone and an old
version as stale."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from core.formats import load_document
from core.render.views import highlight_shapes
from tests.browser.conftest import RUN_TIMEOUT_MS, running_app
from tests.browser.test_workbench import go_to, highlighted_lines, open_app, shot, upload, wait_idle
from tests.conftest import PDF_DIR

PDF = PDF_DIR / "pypdfsf_multicolumn.pdf"


def fresh_tab(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    tab = context.new_page()
    tab.set_default_timeout(RUN_TIMEOUT_MS)
    return context, tab


def citation_link(page, url: str) -> str:
    """Upload ``PDF``, follow a chunk's citation and read the Source page's share link."""
    open_app(page, url)
    upload(page, str(PDF))
    go_to(page, "Chunks")
    page.get_by_test_id("stPageLink").filter(has_text="in Source").first.click()
    page.locator("div.cs-badge").first.wait_for()
    wait_idle(page)
    return page.get_by_test_id("stCode").last.inner_text().strip()


def open_link(browser, link: str, artifacts, name: str):
    context, tab = fresh_tab(browser)
    tab.goto(link)
    wait_idle(tab)
    shot(tab, artifacts, name)
    return context, tab


def test_a_citation_link_opens_anywhere_until_removed_or_replaced(browser, tmp_path, artifacts):
    work = tmp_path / "app"
    work.mkdir()
    with running_app(work) as url:
        _, first = fresh_tab(browser)
        link = citation_link(first, url)
        query = parse_qs(urlparse(link).query)
        start, end = (int(x) for x in query["span"][0].split("-"))
        doc = load_document(PDF)
        expected = [
            dict(s.data)["text"]
            for s in highlight_shapes(doc, start, end, doc.pages_of(start, end)[0])
        ]
        context, tab = open_link(browser, link, artifacts, "library-link-fresh-context")
        assert "Verified" in tab.locator("div.cs-badge").inner_text()
        assert highlighted_lines(tab) == expected
        context.close()
    with running_app(work) as url:  # a new app process on the same store
        link = link.replace(link.split("/source")[0], url)
        context, tab = open_link(browser, link, artifacts, "library-link-after-restart")
        assert "Verified" in tab.locator("div.cs-badge").inner_text()
        assert highlighted_lines(tab) == expected

        go_to(tab, "Library")  # upload a changed version (same name, other bytes)
        changed = tmp_path / PDF.name
        changed.write_bytes(PDF.read_bytes() + b"\n% a changed version\n")
        tab.locator(".st-key-cs_uploader input[type=file]").set_input_files(str(changed))
        tab.get_by_test_id("stAlertContentWarning").filter(has_text="changed").wait_for()
        wait_idle(tab)
        context.close()
        context, tab = open_link(browser, link, artifacts, "library-link-stale")
        assert "Stale" in tab.locator("div.cs-badge").inner_text()
        old = tab.get_by_test_id("stPageLink").filter(has_text="Open the cited version")
        assert old.count() == 1

        go_to(tab, "Library")
        tab.get_by_text("Remove a document").click()
        picker = tab.get_by_test_id("stSelectbox").filter(has_text="Document to remove")
        assert picker.locator("input").input_value() == PDF.stem  # the sidebar's document
        tab.get_by_role("button", name="Remove", exact=True).click()
        tab.get_by_test_id("stAlertContentSuccess").filter(has_text="removed").wait_for()
        context.close()
        context, tab = open_link(browser, link, artifacts, "library-link-removed")
        error = tab.get_by_test_id("stAlertContentError").first.inner_text()
        assert f"No document '{PDF.stem}' is in the library" in error
        context.close()
