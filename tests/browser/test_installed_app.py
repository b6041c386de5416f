"""Installed by ``pip install .`` into a fresh virtual environment (``tests/venvs.py``),
the ``chunkscope ui --port N --store DIR`` console script serves the workbench: Chromium
opens the Library page, with the bundled samples, and no error on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.formats.format_registry import is_supported_name
from tests.browser.test_workbench import wait_idle
from tests.venvs import ROOT, installed_venv, serving


def samples() -> list[Path]:
    """The bundled samples the Library lists (``workbench/documents/session.py``), here."""
    folders = (ROOT / "sample_docs", ROOT / "sample_docs" / "datasheets")
    return [
        p for f in folders for p in f.iterdir() if is_supported_name(p) and p.name != "README.md"
    ]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed_venv(tmp_path_factory.mktemp("installed"))


def test_chunkscope_ui_serves_the_library_page(browser, venv, tmp_path, artifacts) -> None:
    with serving(venv, store=tmp_path / "store", cwd=tmp_path, address="127.0.0.1") as url:
        context = browser.new_context(viewport={"width": 1500, "height": 1100})
        try:
            page = context.new_page()
            page.set_default_timeout(120_000)
            page.goto(url)
            wait_idle(page)
            page.screenshot(path=str(artifacts / "installed-library.png"))
            assert page.locator("[data-testid=stMain] h1").first.inner_text() == "Library"
            assert page.locator("[data-testid=stException]").count() == 0
            # every bundled sample is listed (the table is drawn on a canvas: its heading
            # counts them)
            heading = page.get_by_role("heading", name=f"{len(samples())} documents", exact=True)
            assert heading.count() == 1
        finally:
            context.close()
