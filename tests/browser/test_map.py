"""The Map page in a real browser on the demo index (the real model, naive and late):
hover a point, read its chunk in the hover label, click it, land on that chunk.

The demo is indexed before the app starts (the command line, into the app's store), so
the test spends its time on the map, not on indexing through the page.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.browser.conftest import ROOT, running_app
from tests.browser.test_workbench import wait_idle
from workbench.engine.resources import DEMO_DIR, DEMO_QUERY

pytestmark = pytest.mark.slow
INDEX_TIMEOUT_S = 600


@pytest.fixture(scope="module")
def map_url(chromium_path, tmp_path_factory):
    work = tmp_path_factory.mktemp("map-app")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("CHUNKSCOPE_CHROMA", None)
    done = subprocess.run(
        [sys.executable, "-m", "core", "index", str(DEMO_DIR), "--methods", "naive,late",
         "--store", str(work / "store")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=INDEX_TIMEOUT_S,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    with running_app(work) as url:
        yield url


def test_hover_a_point_then_click_it_and_land_on_its_chunk(browser, map_url, artifacts):
    context = browser.new_context(viewport={"width": 1500, "height": 2600})
    page = context.new_page()
    page.set_default_timeout(120_000)
    page.goto(f"{map_url}/map")
    wait_idle(page)
    chart = page.locator(".js-plotly-plot").first
    chart.wait_for()
    assert page.get_by_test_id("stException").count() == 0
    assert page.get_by_test_id("stMain").get_by_label("Query").input_value() == DEMO_QUERY
    assert "naive" in chart.inner_text() and "late" in chart.inner_text()  # one panel each
    page.screenshot(path=str(artifacts / "map.png"))

    point = chart.locator(".scatterlayer .trace").first.locator("path.point").nth(1)
    point.scroll_into_view_if_needed()
    box = point.bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x, y)
    label = chart.locator(".hoverlayer .hovertext").first
    label.wait_for()
    hovered = label.evaluate(  # an SVG label: its lines are tspans
        "g => [...g.querySelectorAll('tspan.line')].map(t => t.textContent).join('\\n')"
        " || g.textContent"
    )
    found = re.search(r"chars ([\d,]+)-([\d,]+)", hovered)
    assert found, hovered
    start, end = (int(g.replace(",", "")) for g in found.groups())
    doc_id = hovered.split(" · ")[0].strip()
    page.screenshot(path=str(artifacts / "map-hover.png"))

    page.mouse.click(x, y)  # plotly's drag layer takes the click, at the point's place
    page.get_by_text("The picked chunk", exact=True).wait_for()
    wait_idle(page)
    assert page.get_by_test_id("stException").count() == 0
    cite = page.get_by_test_id("stPageLink-NavLink").filter(has_text=f"chars {start}-{end}")
    assert cite.count() >= 1, f"no citation of {doc_id} chars {start}-{end}"
    assert f"span={start}-{end}" in cite.first.get_attribute("href")
    page.get_by_text("Where does it rank?", exact=True).wait_for()
    page.screenshot(path=str(artifacts / "map-picked.png"))
    context.close()
