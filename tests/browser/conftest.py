"""Browser fixtures: the real app (``streamlit run app.py``) on a free loopback port,
driven by Debian's Chromium through Playwright's sync API.

Every test here is marked ``browser``. They skip, with the reason, when
``/usr/bin/chromium`` (or ``$CHUNKSCOPE_CHROMIUM``) or Playwright is missing (CI installs
Chromium; no browser is ever downloaded). Screenshots go to ``test-artifacts/browser/``
(git-ignored).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers import free_port, stop_group, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path(os.environ.get("CHUNKSCOPE_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
RUN_TIMEOUT_MS = 120_000


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def chromium_path() -> Path:
    if not CHROMIUM.is_file():
        pytest.skip(f"browser tests need Chromium at {CHROMIUM} (CI installs the chromium package)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip("browser tests need the playwright package (requirements-dev.txt)")
    return CHROMIUM


@contextlib.contextmanager
def running_app(work: Path, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """``streamlit run app.py`` on a free 127.0.0.1 port with its store under ``work``
    (and ``extra_env`` set for it, such as ``CHUNKSCOPE_EDITOR_KEY``).

    Yields the base URL once the server answers its health check; stops the whole
    process group afterwards. The server log is ``work/streamlit.log``.
    """
    port = free_port()
    log = work / "streamlit.log"
    env = {
        **os.environ,
        "CHUNKSCOPE_STORE": str(work / "store"),
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "ANONYMIZED_TELEMETRY": "False",
    }
    env.pop("CHUNKSCOPE_CHROMA", None)
    env.pop("CHUNKSCOPE_EDITOR_KEY", None)  # open to edits unless a test sets a key
    env.update(extra_env or {})
    command = [
        sys.executable, "-m", "streamlit", "run", "app.py",
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",
    ]  # fmt: skip
    with log.open("w") as sink:
        process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process, log, "streamlit")
        yield url
    finally:
        stop_group(process)


@pytest.fixture(scope="session")
def app_url(chromium_path, tmp_path_factory) -> Iterator[str]:
    """The app with an empty store, shared by this session's browser tests."""
    with running_app(tmp_path_factory.mktemp("app")) as url:
        yield url


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=str(chromium_path), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    """A fresh browser tab (a fresh app session); records every JS dialog in ``.dialogs``."""
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    tab = context.new_page()
    tab.set_default_timeout(RUN_TIMEOUT_MS)
    dialogs: list[str] = []
    tab.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    tab.dialogs = dialogs  # type: ignore[attr-defined]
    yield tab
    context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
