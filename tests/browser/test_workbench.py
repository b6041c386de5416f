"""The workbench in a real browser: upload, tune a slider, follow a citation, deep links,
and a document made of HTML that must stay text."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlparse

from core.formats import load_document
from core.provenance.cite import Citation
from core.render.links import source_params
from core.render.views import highlight_shapes
from tests.conftest import PDF_DIR, SAMPLE_DOCS
from tests.data.injection import INJECTION_LINES, INJECTION_NAME, injection_pdf_bytes

UPLOAD_PDF = PDF_DIR / "pypdfsf_multicolumn.pdf"
BUSY = "[data-testid=stStatusWidget], [data-testid=stSkeleton]"


IDLE = """busy => {
    const app = document.querySelector('[data-testid=stApp]');
    return app !== null
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && document.querySelector(busy) === null;
}"""


def wait_idle(page) -> None:
    """Wait for the page title, then until the app says its script (and every fragment)
    has finished running, it is connected, and no element is still loading."""
    page.locator("[data-testid=stMain] h1").first.wait_for()
    page.wait_for_function(IDLE, arg=BUSY)


def open_app(page, url: str) -> None:
    page.goto(url)
    wait_idle(page)


def go_to(page, title: str) -> None:
    menu = page.locator("[data-testid=stSidebar] [data-testid=stPageLink-NavLink]")
    menu.filter(has_text=title).first.click()
    page.wait_for_function(
        "t => document.querySelector('[data-testid=stMain] h1')?.textContent.includes(t)", arg=title
    )
    wait_idle(page)


def shot(page, artifacts: Path, name: str) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)


def upload(page, payload) -> None:
    page.locator(".st-key-cs_uploader input[type=file]").set_input_files(payload)  # the library's
    page.get_by_test_id("stAlertContentSuccess").first.wait_for()
    wait_idle(page)


def current_document(page) -> str:
    picker = page.get_by_test_id("stSidebar").get_by_role("combobox", name="Document")
    return picker.input_value()


def metric_value(page, label: str) -> str:
    box = page.get_by_test_id("stMetric").filter(has_text=label).first
    return box.get_by_test_id("stMetricValue").inner_text()


def chunk_boxes(page) -> list[str]:
    return page.locator("div.cs-box.cs-chunk, div.cs-box.cs-overlap").evaluate_all(
        "boxes => boxes.map(b => b.getAttribute('style'))"
    )


def highlighted_lines(page) -> list[str]:
    return page.locator("div.cs-box.cs-hl").evaluate_all("boxes => boxes.map(b => b.dataset.text)")


def assert_no_script_ran(page) -> None:
    assert page.dialogs == []
    assert page.locator("[data-testid=stHtml] script, [data-testid=stHtml] img[src=x]").count() == 0
    assert page.locator("[data-testid=stException]").count() == 0


def test_every_page_renders(page, app_url, artifacts):
    """...and asks nothing of any host but the app's own (it must work offline)."""
    own = urlparse(app_url).netloc
    outside: list[str] = []
    page.on("request", lambda r: urlparse(r.url).netloc not in ("", own) and outside.append(r.url))
    open_app(page, app_url)
    assert current_document(page) == "sample-sigconf (PDF)"
    shot(page, artifacts, "library")
    for title in ("Parse", "Chunks", "Source"):
        go_to(page, title)
        assert page.locator("[data-testid=stException]").count() == 0
        shot(page, artifacts, title.lower())
    go_to(page, "Parse")
    assert page.locator("div.cs-page img.cs-page-image").count() == 1
    assert page.locator("div.cs-box.cs-block").count() > 10
    assert_no_script_ran(page)
    assert outside == [], outside


def test_upload_tune_the_size_and_follow_a_citation(page, app_url, artifacts):
    open_app(page, app_url)
    upload(page, str(UPLOAD_PDF))
    assert current_document(page) == f"{UPLOAD_PDF.stem} (PDF)"  # the new one is current
    go_to(page, "Chunks")
    before_count, before_boxes = metric_value(page, "Chunks"), chunk_boxes(page)
    assert before_boxes
    # the default policy (core.defaults): structure, sized in tokens
    slider = page.get_by_test_id("stSlider").filter(has_text="Size (tokens)").get_by_role("slider")
    slider.focus()
    for _ in range(8):  # smaller chunks: more of them
        slider.press("ArrowLeft")
    page.wait_for_function(
        "v => [...document.querySelectorAll('[data-testid=stMetric]')].some(m => "
        "m.textContent.startsWith('Chunks') && !m.textContent.includes(v))",
        arg=before_count,
    )
    wait_idle(page)
    after_count = int(metric_value(page, "Chunks"))
    assert after_count > int(before_count)
    # the overlay's HTML can land a frame after the metric: wait for it to be redrawn
    page.wait_for_function(
        "before => JSON.stringify([...document.querySelectorAll("
        "'div.cs-box.cs-chunk, div.cs-box.cs-overlap')].map(b => b.getAttribute('style')))"
        " !== before",
        arg=json.dumps(before_boxes, separators=(",", ":")),
    )
    assert chunk_boxes(page) != before_boxes
    shot(page, artifacts, "chunks-after-slider")

    link = page.get_by_test_id("stPageLink").filter(has_text="in Source").first
    link.click()
    page.locator("div.cs-badge").first.wait_for()
    wait_idle(page)
    # the span shown is the one in the address the click opened (the Chunks page may
    # have redrawn its links between reading one and clicking it)
    query = parse_qs(urlparse(page.url).query)
    start, end = (int(x) for x in query["span"][0].split("-"))
    doc = load_document(UPLOAD_PDF)
    assert query["sha"][0] == doc.sha256
    assert "Verified" in page.locator("div.cs-badge").inner_text()
    page_no = doc.pages_of(start, end)[0]
    expected = [dict(s.data)["text"] for s in highlight_shapes(doc, start, end, page_no)]
    assert expected and highlighted_lines(page) == expected
    assert page.locator("div.cs-text mark.cs-hl").text_content() == doc.text[start:end]
    shot(page, artifacts, "source-from-chunk")
    assert_no_script_ran(page)


def test_a_deep_link_opens_the_exact_span(page, app_url, artifacts):
    doc = load_document(SAMPLE_DOCS / "sample-sigconf.pdf")
    start = doc.text.index("ACM")
    citation = Citation.of_span(doc, start, start + 160)
    query = "&".join(f"{k}={v}" for k, v in source_params(citation).items())
    open_app(page, f"{app_url}/source?{query}")
    page.locator("div.cs-badge").first.wait_for()
    assert "Verified" in page.locator("div.cs-badge").inner_text()
    expected = [dict(s.data)["text"] for s in highlight_shapes(doc, start, start + 160, 1)]
    assert highlighted_lines(page) == expected
    assert page.locator("div.cs-text mark.cs-hl").text_content() == citation.quote
    shot(page, artifacts, "source-deep-link")
    stale = query.replace(doc.sha256, "0" * 64)
    open_app(page, f"{app_url}/source?{stale}")
    assert "Stale" in page.locator("div.cs-badge").inner_text()


def test_a_document_of_html_runs_nothing(page, app_url, artifacts):
    open_app(page, app_url)
    data = injection_pdf_bytes()
    upload(page, {"name": INJECTION_NAME, "mimeType": "application/pdf", "buffer": data})
    go_to(page, "Parse")
    tips = page.locator("div.cs-box.cs-block span.cs-tip").all_text_contents()
    assert [t for t in tips if INJECTION_LINES[0] in t]  # the tooltip shows it as text
    page.locator("div.cs-box.cs-kind-heading").hover()
    assert page.locator("div.cs-box.cs-kind-heading span.cs-tip").is_visible()
    shot(page, artifacts, "injection-parse")
    go_to(page, "Chunks")
    page.get_by_text("Chunks as text").click()
    text = page.locator("div.cs-text").first
    text.wait_for()
    for line in INJECTION_LINES:
        assert line in text.text_content()
    shot(page, artifacts, "injection-chunks")
    page.get_by_test_id("stPageLink").filter(has_text="in Source").first.click()
    page.locator("div.cs-badge").first.wait_for()
    wait_idle(page)
    doc = load_document(data, name=INJECTION_NAME)
    quoted = page.locator("div.cs-text mark.cs-hl").text_content()
    assert INJECTION_LINES[0] in quoted and quoted in doc.text
    shot(page, artifacts, "injection-source")
    assert_no_script_ran(page)
    # a new session (a link opened elsewhere) opens it from the library, still as text
    page.goto(f"{app_url}/source?doc={doc.doc_id}&span=0-10")
    page.locator("div.cs-badge").first.wait_for()
    wait_idle(page)
    assert page.locator("div.cs-text mark.cs-hl").text_content() == doc.text[0:10]
    assert_no_script_ran(page)


def test_the_menu_is_the_one_list_of_pages(page, app_url):
    """The pages live in pages/, which Streamlit lists by itself (module names and all)
    unless told not to; the sidebar's menu is the frame's links, present from the first
    paint, no other list ever drawn, and each link lands on its page and its address."""
    page.goto(app_url)
    legacy = []
    for _ in range(20):  # while the first run paints
        legacy.append(page.locator("[data-testid=stSidebarNav]").count())
        page.wait_for_timeout(150)
    wait_idle(page)
    assert max(legacy) == 0
    links = page.locator("[data-testid=stSidebar] [data-testid=stPageLink-NavLink]")
    titles = [" ".join(t.split()[1:]) for t in links.all_inner_texts()]
    assert titles == ["Library", "Parse", "Chunks", "Source", "Compare", "Map",
                      "Evaluate & triage", "Tune"]  # fmt: skip
    sidebar = page.get_by_test_id("stSidebar").inner_text()
    assert "_ui" not in sidebar and "evaluate.py" not in sidebar
    go_to(page, "Chunks")
    page.wait_for_url("**/chunks")
    go_to(page, "Evaluate & triage")
    page.wait_for_url("**/evaluate")
