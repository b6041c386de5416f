"""Installed where the pipeline lives: the wheel carries the library (``core``), the
project's own top-level package (``chunkscope``) and the workbench (``app.py``,
``pages/``, ``workbench/``, the samples, the Streamlit settings) under ``chunkscope/app/``;
installed from it, ``import chunkscope`` works and ``chunkscope ui --port N --store DIR``
serves the workbench. Built offline from a copy of the checkout, in a temporary folder."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def build_wheel(work: Path) -> Path:
    """The wheel of a copy of the checkout (its files git knows or would add), built
    offline in ``work``."""
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the checkout's files")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    source = work / "src"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", ".", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(work / "out")],
        cwd=source, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-2000:]
    [found] = (work / "out").glob("chunkscope-*.whl")
    return found


def install(wheel: Path, site: Path) -> dict[str, str]:
    """``wheel`` installed into ``site`` (its dependencies are this interpreter's); the
    environment that imports it from there."""
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
         "--target", str(site), str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    env = {**os.environ, "PYTHONPATH": str(site)}
    env.pop("CHUNKSCOPE_STORE", None)
    env.pop("CHUNKSCOPE_CHROMA", None)
    return env


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


def test_the_wheel_carries_the_library_the_package_and_the_workbench(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in (
        "chunkscope/__init__.py", "core/cli/ui_cmd.py", "core/imported/live.py",
        "chunkscope/app/app.py", "chunkscope/app/.streamlit/config.toml",
        "chunkscope/app/pages/library.py", "chunkscope/app/pages/tune.py",
        "chunkscope/app/workbench/__init__.py", "chunkscope/app/workbench/assets/icon.png",
        "chunkscope/app/sample_docs/state_of_the_union.md",
    ):  # fmt: skip
        assert name in names, name
    assert not any(n.startswith(("tests/", "workbench/", "pages/")) for n in names)
    assert not any("__pycache__" in n for n in names)
    [points] = [n for n in names if n.endswith("entry_points.txt")]
    assert "chunkscope = core.cli:main" in zipfile.ZipFile(wheel).read(points).decode()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_installed_it_imports_and_serves_the_workbench(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = install(wheel, site)
    where = subprocess.run(
        [sys.executable, "-c", "import chunkscope; print(chunkscope.__file__); "
         "print(chunkscope.chunk.__name__, chunkscope.core.__file__)"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert where.stdout.splitlines()[0] == str(site / "chunkscope" / "__init__.py")
    assert where.stdout.splitlines()[1] == f"core.chunk {site / 'core' / '__init__.py'}"

    port = _free_port()
    store = tmp_path / "store"
    server = subprocess.Popen(
        [sys.executable, "-m", "core", "ui", "--port", str(port), "--store", str(store)],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        health = ""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health") as r:
                    health = r.read().decode()
                    break
            except OSError:
                time.sleep(0.5)
        assert health == "ok", server.stdout.read() if server.poll() is not None else "no answer"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/") as page:
            assert "<title>Streamlit</title>" in page.read().decode()
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # `ui` became the server: its group stops
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=5)
    first = (server.stdout.readline() if server.stdout else "").strip()
    assert first == f"Chunkscope workbench on http://localhost:{port} (store {store})"
