"""Compare and Evaluate & triage in a real browser, on the real model and the demo set.

The app runs on its own loopback port with its own empty store (the module's fixture), so
what these tests index never meets the other browser tests. Screenshots of each page go
to ``test-artifacts/browser/`` (a tall viewport, so a screenshot holds the whole page).
"""

from __future__ import annotations

import csv
import io
import json
from urllib.parse import parse_qs, urlparse

import pytest

from core.formats import load_document
from core.render.views import highlight_shapes
from tests.browser.conftest import RUN_TIMEOUT_MS, running_app
from tests.browser.test_workbench import wait_idle
from workbench.engine.resources import DEMO_DIR, DEMO_POLICY, DEMO_QUERY

pytestmark = pytest.mark.slow
ASKED = "Corvane HX40 › Operating temperature"
INDEX_TIMEOUT_MS = 600_000  # a loaded 2-core machine


@pytest.fixture(scope="module")
def engine_url(chromium_path, tmp_path_factory):
    """``streamlit run app.py`` with a store of its own, for this module only."""
    with running_app(tmp_path_factory.mktemp("engine-app")) as url:
        yield url


@pytest.fixture
def tall(browser):
    """A tab with a tall viewport: Streamlit scrolls inside its own container, so only
    what fits the viewport reaches a screenshot."""
    context = browser.new_context(viewport={"width": 1500, "height": 4000}, accept_downloads=True)
    tab = context.new_page()
    tab.set_default_timeout(RUN_TIMEOUT_MS)
    yield tab
    context.close()


def settle(page) -> None:
    wait_idle(page)  # the app says its script has finished, nothing is loading


def shot(page, artifacts, name: str) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"))


def no_errors(page) -> None:
    assert page.locator("[data-testid=stException]").count() == 0


def test_index_the_demo_compare_and_follow_a_moved_chunk(tall, engine_url, artifacts):
    page = tall
    page.goto(f"{engine_url}/compare")
    settle(page)
    page.get_by_role("button", name=f"Index the demo set ({DEMO_POLICY.key})").click()
    page.get_by_test_id("stProgress").first.wait_for()
    assert "document" in page.get_by_test_id("stProgress").first.inner_text().lower()
    shot(page, artifacts, "compare-indexing")
    done = page.get_by_test_id("stAlertContentSuccess").filter(has_text="5 of 5 document(s)")
    done.wait_for(timeout=INDEX_TIMEOUT_MS)
    page.get_by_text("Inspect a chunk", exact=True).wait_for()
    settle(page)
    no_errors(page)
    assert page.get_by_test_id("stMain").get_by_label("Query").input_value() == DEMO_QUERY
    shot(page, artifacts, "compare")

    page.get_by_text("Second stage: rerank a wider candidate set").click()
    page.get_by_text("Rerank", exact=True).click()
    page.get_by_role("heading", name="late + rerank").wait_for()
    settle(page)
    no_errors(page)
    shot(page, artifacts, "compare-rerank")

    # the asked section moved up under late: its card says so; follow its citation
    late = page.get_by_test_id("stColumn").filter(
        has=page.get_by_role("heading", name="late", exact=True)
    ).last  # fmt: skip
    href = late.evaluate(
        """(col, asked) => {
            const cards = [...col.querySelectorAll('div.cs-hit')];
            const card = cards.find(c => c.querySelector('.cs-path').textContent === asked);
            if (!card || !card.querySelector('.cs-up')) return null;
            const box = card.closest('[data-testid=stElementContainer]');
            let next = box.nextElementSibling;
            while (next && !next.querySelector('[data-testid=stPageLink] a')) {
                next = next.nextElementSibling;
            }
            const link = next.querySelector('[data-testid=stPageLink] a');
            link.setAttribute('data-cs-picked', '1');
            return link.getAttribute('href');
        }""",
        ASKED,
    )
    assert href, "the asked section's card in the late column should show a move up"
    query = parse_qs(urlparse(href).query)
    start, end = (int(x) for x in query["span"][0].split("-"))
    page.locator("a[data-cs-picked]").click()
    page.locator("div.cs-badge").first.wait_for()
    settle(page)
    assert "Verified" in page.locator("div.cs-badge").first.inner_text()
    doc = load_document(DEMO_DIR / "datasheet-corvane-hx40.pdf")
    assert query["doc"][0] == doc.doc_id and query["sha"][0] == doc.sha256
    assert doc.text[start:end].startswith("Operating temperature")
    lines = page.locator("div.cs-box.cs-hl").evaluate_all("b => b.map(x => x.dataset.text)")
    page_no = doc.pages_of(start, end)[0]
    assert lines == [dict(s.data)["text"] for s in highlight_shapes(doc, start, end, page_no)]
    assert page.locator("div.cs-text mark.cs-hl").text_content() == doc.text[start:end]
    shot(page, artifacts, "compare-to-source")
    no_errors(page)


def test_triage_tags_survive_a_reload_and_export(tall, engine_url, artifacts):
    page = tall
    page.goto(f"{engine_url}/evaluate")
    settle(page)
    page.get_by_role("radio", name="structure", exact=True).click()  # one chunk per section
    settle(page)
    cut_offs = page.get_by_test_id("stMultiSelect").filter(has=page.get_by_text("k", exact=True))
    cut_offs.locator("input").click()
    for _ in range(2):  # [1, 5, 10] -> [1]: a failure is "gold not first", so there are many
        page.keyboard.press("Backspace")
    page.keyboard.press("Escape")
    settle(page)
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("Failure reader", exact=True).wait_for(timeout=INDEX_TIMEOUT_MS)
    settle(page)
    no_errors(page)
    progress = page.get_by_test_id("stProgress").last
    total = int(progress.inner_text().split(" of ")[1].split()[0])
    assert progress.inner_text().startswith("0 of") and total == 20  # the sample's size
    shot(page, artifacts, "evaluate")

    scatter = page.locator(".js-plotly-plot").filter(has_text="First gold rank per query")
    point = scatter.locator(".scatterlayer .trace").last.locator("path.point").first
    box = point.bounding_box()  # plotly's drag layer takes the click, at the point's place
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.get_by_text("Query opened from the chart", exact=True).wait_for()
    settle(page)
    no_errors(page)

    picked = []
    for key, cause in (("2", "boundary"), ("3", "context"), ("6", "method")):
        query_id = page.locator("[data-testid=stCaptionContainer]").filter(
            has_text=" · first gold chunk:"
        ).last.inner_text().split(" · ")[0]  # fmt: skip
        page.locator("[data-testid=stMain] h1").first.click()  # focus away from inputs
        page.keyboard.press(key)
        page.wait_for_function(
            "n => [...document.querySelectorAll('[data-testid=stProgress]')]"
            ".some(p => p.textContent.startsWith(n + ' of'))",
            arg=str(len(picked) + 1),
        )
        settle(page)
        picked.append((query_id, cause))
    shot(page, artifacts, "evaluate-tagged")

    page.reload()
    page.get_by_text("Failure reader", exact=True).wait_for()
    settle(page)
    assert page.get_by_test_id("stProgress").last.inner_text().startswith(f"3 of {total}")
    assert page.get_by_text("Not tagged yet").first.is_visible()  # the first untagged one
    assert "3 tagged" in page.locator(".js-plotly-plot").last.inner_text()
    shot(page, artifacts, "evaluate-after-reload")

    with page.expect_download() as got:
        page.get_by_role("button", name="Download JSONL").click()
    text = got.value.path().read_text(encoding="utf-8")
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    assert sorted((x["id"], x["tag"]) for x in lines) == sorted(picked)
    assert all(x["gold"] and x["doc"].startswith("datasheet-") for x in lines)
    with page.expect_download() as got:
        page.get_by_role("button", name="Download CSV").click()
    rows = list(csv.DictReader(io.StringIO(got.value.path().read_text(encoding="utf-8"))))
    assert sorted((r["query_id"], r["cause"]) for r in rows) == sorted(picked)
    no_errors(page)


def click_a_chunk_on_its_page(page, artifacts) -> None:
    """Click the last chunk drawn on the inspected chunk's page (its marker's place, as a
    user's click lands there) and read its full-depth rank: the chunk the panel ranks is
    the one whose span the clicked marker's hover names."""
    chart = (
        page.locator(".js-plotly-plot").filter(has=page.locator("image")).last
    )  # the clickable page: the only chart with the page image in it
    chart.wait_for()
    picked = chart.evaluate(
        """gd => {
            const n = gd.data.findIndex(t => t.name === 'chunks');
            const trace = gd.data[n];
            const last = trace.customdata[trace.customdata.length - 1][0];
            const i = trace.customdata.findIndex(d => d[0] === last);
            const mid = i + Math.floor((trace.customdata.length - i) / 2);
            const group = [...gd.querySelectorAll('.scatterlayer .trace')].find(
                g => g.__data__ && g.__data__[0] && g.__data__[0].trace.name === 'chunks');
            const nodes = group.querySelectorAll('path.point');
            nodes[mid].setAttribute('data-cs-click', '1');
            return trace.hovertext[mid];
        }"""
    )
    chars = picked.split("chars ")[1].split("<br>")[0]
    marker = chart.locator("path.point[data-cs-click]")
    marker.scroll_into_view_if_needed()  # far down the page: a click lands only in view
    box = marker.bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    ranked = page.get_by_text("Ranked: the chunk clicked on the page", exact=False)
    ranked.wait_for()
    settle(page)
    no_errors(page)
    assert f"chars {chars}:" in ranked.inner_text()
    summary = page.get_by_text("At full depth:", exact=False).first
    assert summary.inner_text().count(" of 45") == 5
    page.locator(".js-plotly-plot").filter(
        has=page.locator("image")
    ).last.scroll_into_view_if_needed()
    shot(page, artifacts, "compare-clicked-on-page")


def test_a_chunk_outside_the_top_k_ranks_at_full_depth_and_becomes_a_labelled_query(
    tall, engine_url, artifacts
):
    page = tall
    page.goto(f"{engine_url}/compare")
    page.get_by_text("Where does a chunk rank?", exact=True).wait_for()
    settle(page)
    click_a_chunk_on_its_page(page, artifacts)
    finder = page.get_by_test_id("stMain").get_by_label("Find a chunk by its words")
    finder.fill("noise metre")  # the noise sections: far below the top 10 for this query
    finder.press("Enter")
    page.get_by_text("chunk(s) found").wait_for()
    settle(page)
    summary = page.get_by_text("At full depth:", exact=False).first
    summary.wait_for()
    text = summary.inner_text()
    assert text.count(" of 45") == 5  # a rank of the 45 chunks under each of five methods
    shot(page, artifacts, "compare-full-depth")
    page.get_by_role("button", name="Mark as the answer").click()
    settle(page)
    with page.expect_download() as got:
        page.get_by_role("button", name="Download 1 marked").click()
    with open(got.value.path(), encoding="utf-8") as handle:
        (line,) = handle.read().splitlines()
    marked = json.loads(line)
    assert marked["query"] == DEMO_QUERY and marked["doc"].startswith("datasheet-")
    assert marked["gold"][0]["char_end"] > marked["gold"][0]["char_start"]
    page.get_by_role("link", name="Evaluate & triage").click()
    page.get_by_text("Run an evaluation").wait_for()
    settle(page)
    marked_source = page.get_by_text("Marked in Compare (1)")
    if not marked_source.is_visible():  # the form folds away once a run exists
        page.get_by_text("Run an evaluation").click()
    marked_source.click()
    settle(page)
    page.get_by_text("Labelled queries: 1 · documents: 1").wait_for()
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_text("1 queries · policy", exact=False).wait_for(timeout=INDEX_TIMEOUT_MS)
    settle(page)
    no_errors(page)
    shot(page, artifacts, "evaluate-marked")
