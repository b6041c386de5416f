"""Retake the README's screenshots: every page of the workbench on the Pfizer 10-Q.

    chunkscope index ../shared/corpus/financebench/pdfs/Pfizer_2023Q2_10Q.pdf \
        --methods naive,late,contextual,bm25 --store WORK/store
    chunkscope eval --queries Q.jsonl --docs PFIZER.pdf --methods naive,late,bm25 \
        --out WORK/store/runs/run-pfizer.json          # Q: the filing's FinanceBench questions
    python docs/screenshots/take.py WORK

Starts ``streamlit run app.py`` on that store (``tests/browser/conftest.running_app``),
drives Debian's Chromium through Playwright and writes ``docs/screenshots/<page>.png``
(1280 px wide, palette-quantised to stay small).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from urllib.parse import urlencode

from PIL import Image
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from core.provenance.cite import Citation  # noqa: E402
from core.formats import load_document  # noqa: E402
from core.render.links import source_params  # noqa: E402
from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, running_app  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
FILING = ROOT.parent / "shared" / "corpus" / "financebench" / "pdfs" / "Pfizer_2023Q2_10Q.pdf"
PAGE = 37  # the filing's page 37: deferred revenues, a table of alliance revenues
QUERY = "deferred revenues related to Comirnaty"
BUSY = "[data-testid=stStatusWidget], [data-testid=stSkeleton]"


def wait_idle(page, quiet_polls: int = 6) -> None:
    page.locator("[data-testid=stMain] h1").first.wait_for()
    quiet = 0
    while quiet < quiet_polls:
        quiet = 0 if page.locator(BUSY).count() else quiet + 1
        time.sleep(0.3)


def go_to(page, title: str) -> None:
    menu = page.locator("[data-testid=stSidebar] [data-testid=stPageLink-NavLink]")
    menu.filter(has_text=title).first.click()
    page.wait_for_function(
        "t => document.querySelector('[data-testid=stMain] h1')?.textContent.includes(t)", arg=title
    )
    wait_idle(page)


def shot(page, name: str, *, viewport: bool = False) -> Path:
    """The page as shown (``viewport``: where it is scrolled to; else from its top)."""
    raw = OUT / f"{name}.raw.png"
    page.screenshot(path=str(raw), full_page=not viewport)
    image = Image.open(raw).convert("RGB")
    if image.height > 2600:  # the top of a long page: what a reader sees first, and more
        image = image.crop((0, 0, image.width, 2600))
    scale = 1280 / image.width
    image = image.resize((1280, round(image.height * scale)), Image.Resampling.LANCZOS)
    path = OUT / f"{name}.png"
    image.quantize(colors=128, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    raw.unlink()
    return path


def pick_document(page, doc_id: str) -> None:
    picker = page.get_by_test_id("stSidebar").get_by_test_id("stSelectbox").first
    picker.click()
    page.keyboard.type(doc_id)
    page.keyboard.press("Enter")
    wait_idle(page)


def set_number(page, label: str, value: int) -> None:
    box = page.get_by_label(label, exact=False).first
    box.fill(str(value))
    box.press("Enter")
    wait_idle(page)


def main(work: Path) -> None:
    doc = load_document(FILING)
    start = doc.text.index("Deferred Revenues")
    end = doc.text.index(" as of July 2, 2023", doc.text.index("Comirnaty total", start))
    citation = Citation.of_span(doc, start, end)
    query = urlencode(source_params(citation))
    with running_app(work) as url, sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_context(viewport={"width": 1500, "height": 1300}).new_page()
        page.set_default_timeout(600_000)
        page.goto(url)
        wait_idle(page)
        pick_document(page, doc.doc_id)
        print(shot(page, "library"))
        go_to(page, "Parse")
        set_number(page, "Page (of", PAGE)
        print(shot(page, "parse"))
        go_to(page, "Chunks")
        print(shot(page, "chunks"))
        page.goto(f"{url}/source?{query}")
        wait_idle(page)
        print(shot(page, "source"))
        go_to(page, "Compare")
        box = page.get_by_label("Query").first
        box.fill(QUERY)
        box.press("Enter")
        wait_idle(page)
        print(shot(page, "compare"))
        go_to(page, "Evaluate & triage")
        print(shot(page, "evaluate"))
        page.get_by_text("Failure reader", exact=True).scroll_into_view_if_needed()
        time.sleep(1)
        print(shot(page, "triage", viewport=True))
        go_to(page, "Tune")
        print(shot(page, "tune"))
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
