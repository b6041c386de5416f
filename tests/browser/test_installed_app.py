"""Installed from its wheel, ``chunkscope ui`` serves the workbench: Chromium opens the
Library page, with the bundled samples, and no error on it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

from tests.browser.conftest import _free_port
from tests.browser.test_workbench import wait_idle
from tests.test_packaging import build_wheel, install


def test_chunkscope_ui_serves_the_library_page(browser, tmp_path, artifacts) -> None:
    env = install(build_wheel(tmp_path / "wheel"), tmp_path / "site")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "core", "ui", "--port", str(port), "--store",
         str(tmp_path / "store"), "--address", "127.0.0.1"],
        cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).close()
                break
            except OSError:
                time.sleep(0.3)
        context = browser.new_context(viewport={"width": 1500, "height": 1100})
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(url)
        wait_idle(page)
        page.screenshot(path=str(artifacts / "installed-library.png"))
        assert page.locator("[data-testid=stMain] h1").first.inner_text() == "Library"
        assert page.locator("[data-testid=stException]").count() == 0
        # the bundled samples are listed (the table is drawn on a canvas: its heading counts)
        assert page.get_by_role("heading", name=re.compile(r"^[1-9]\d* documents$")).count() == 1
        context.close()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=5)
