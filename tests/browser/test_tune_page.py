"""The Tune page in a real browser, on the real model and the demo set: run a small sweep,
see its curves, click a cell's marker on the chart and land on that cell's failures on
the Evaluate page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from core import defaults
from tests.browser.conftest import running_app
from tests.browser.test_workbench import wait_idle

pytestmark = pytest.mark.slow
SWEEP_TIMEOUT_MS = 600_000  # a loaded 2-core machine


@pytest.fixture(scope="module")
def tune_url(chromium_path, tmp_path_factory):
    with running_app(tmp_path_factory.mktemp("tune-app")) as url:
        yield url


@pytest.fixture
def tall(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 3000})
    tab = context.new_page()
    tab.set_default_timeout(120_000)
    yield tab
    context.close()


def settle(page) -> None:
    wait_idle(page)  # the app says its script has finished, nothing is loading


def test_sweep_the_demo_click_a_cell_and_read_its_failures(tall, tune_url, artifacts):
    page = tall
    page.goto(f"{tune_url}/tune")
    settle(page)
    page.get_by_role("button", name="Sweep", exact=True).click()
    page.get_by_text(re.compile(r"Swept 3 points × 3 methods")).wait_for(timeout=SWEEP_TIMEOUT_MS)
    settle(page)
    chart = page.locator("[data-testid=stPlotlyChart]").first
    chart.wait_for()
    assert chart.locator(".scatterlayer .trace").count() >= 9  # band, line, cost per method
    page.screenshot(path=str(artifacts / "tune.png"))
    markers = chart.locator(".scatterlayer .trace .points path.point")
    assert markers.count() == 9  # 3 sizes x 3 methods; bands and cost lines have none

    def selectbox(label: str):
        box = page.get_by_test_id("stMain").get_by_test_id("stSelectbox").filter(has_text=label)
        return box.first.locator("input")

    def chosen(label: str) -> str:
        return selectbox(label).input_value()

    assert chosen("Cell") == f"{defaults.POLICY}-tokens-64-0 · naive"  # the first cell
    markers.nth(8).click(force=True)  # the last line's (bm25) marker at the largest size
    # the selection reaches the app a moment after the click: wait for its rerun's result
    last = f"{defaults.POLICY}-tokens-256-0 · bm25"
    expect(selectbox("Cell")).to_have_value(last, timeout=60_000)
    settle(page)
    assert page.locator("[data-testid=stException]").count() == 0
    page.get_by_role("button", name="Its failures on the Evaluate page").click()
    page.locator("[data-testid=stMain] h1", has_text="Evaluate & triage").wait_for()
    settle(page)
    assert page.locator("[data-testid=stException]").count() == 0
    assert f"{defaults.POLICY}-tokens-256-0" in chosen("Run")
    assert chosen("Failures of").startswith("bm25")
    page.screenshot(path=str(artifacts / "tune-failures.png"))
