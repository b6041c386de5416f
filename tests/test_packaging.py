"""Installed where the pipeline lives: the wheel carries the library (``core``), the
project's own top-level package (``chunkscope``) and the workbench (``app.py``,
``pages/``, ``workbench/``, the samples, the Streamlit settings) under ``chunkscope/app/``.
Installed by pip into a fresh virtual environment (``tests/venvs.py``), from that wheel
and from a copy of the checkout (``pip install .``): ``import chunkscope`` comes from
there, the ``chunkscope ui --port N --store DIR`` console script serves the workbench
(``tests/browser/test_installed_app.py`` opens it in Chromium), ``chunkscope open`` starts
the same app on a run, and a run names no commit of a repository around the environment.
Built offline, in temporary folders."""

from __future__ import annotations

import json
import shutil
import subprocess
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests.venvs import build_wheel, installed_venv, run_in, serving, site_packages


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def from_wheel(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed_venv(tmp_path_factory.mktemp("from-wheel"), wheel=wheel)


@pytest.fixture(scope="module")
def from_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return installed_venv(tmp_path_factory.mktemp("from-source"))


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


@pytest.mark.parametrize("how", ["from_wheel", "from_source"])
def test_installed_it_imports_from_its_environment(
    how: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    venv: Path = request.getfixturevalue(how)
    site = site_packages(venv)
    where = run_in(venv, "python", "-c",
                   "import chunkscope; print(chunkscope.__file__); "
                   "print(chunkscope.chunk.__name__, chunkscope.core.__file__); "
                   "print(chunkscope.__version__); "
                   "from core.cli.ui_cmd import app_path; print(app_path())",
                   cwd=tmp_path)  # fmt: skip
    assert where.returncode == 0, where.stderr
    assert where.stdout.splitlines() == [
        str(site / "chunkscope" / "__init__.py"),
        f"core.chunk {site / 'core' / '__init__.py'}",
        "0.1.0",  # its own metadata, not the checkout's "0+source"
        str(site / "chunkscope" / "app" / "app.py"),  # the installed workbench
    ]
    for shipped in (".streamlit/config.toml", "pages/library.py", "workbench/assets/icon.png"):
        assert (site / "chunkscope" / "app" / shipped).is_file(), shipped
    helped = run_in(venv, "chunkscope", "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    assert "ui" in helped.stdout and "chunk" in helped.stdout


def test_its_console_script_serves_the_workbench(from_wheel: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    with (
        serving(from_wheel, store=store, cwd=tmp_path) as url,
        urllib.request.urlopen(f"{url}/") as page,
    ):
        assert "<title>Streamlit</title>" in page.read().decode()
    first = (tmp_path / "ui.log").read_text().splitlines()[0]
    port = url.rsplit(":", 1)[1]
    assert first == f"Chunkscope workbench on http://localhost:{port} (store {store})"


def test_open_starts_the_installed_workbench_on_a_run(from_wheel: Path, tmp_path: Path) -> None:
    """``chunkscope open`` starts the app ``chunkscope ui`` serves, with its settings: the
    installed copy, not an ``app.py`` beside the package that only a checkout has."""
    text = "Harbour ships dock at the eastern quay.\n\nThe keeper trims the lamp at night.\n"
    (tmp_path / "harbour.md").write_text(text, encoding="utf-8")
    start = text.index("The keeper")
    gold = {"char_start": start, "char_end": start + 25}
    query = {"id": "q1", "query": "who trims the lamp", "doc": "harbour", "gold": [gold]}
    (tmp_path / "q.jsonl").write_text(json.dumps(query) + "\n", encoding="utf-8")
    made = run_in(from_wheel, "chunkscope", "eval", "--queries", "q.jsonl", "--docs",
                  "harbour.md", "--methods", "bm25", "--k", "1", "--resamples", "50",
                  "--out", "run.json", cwd=tmp_path)  # fmt: skip
    assert made.returncode == 0, made.stderr
    opened = run_in(from_wheel, "chunkscope", "open", "run.json", "--store", "store",
                    "--dry-run", cwd=tmp_path)  # fmt: skip
    assert opened.returncode == 0, opened.stderr
    app = site_packages(from_wheel) / "chunkscope" / "app" / "app.py"
    assert f" -m streamlit run {app} " in opened.stdout
    assert "--client.showSidebarNavigation=false" in opened.stdout  # its settings, as flags
    assert opened.stdout.rstrip().endswith("--server.port 8501")


def test_a_run_names_no_commit_of_the_repository_it_is_installed_in(
    from_wheel: Path, tmp_path: Path
) -> None:
    """An environment inside the user's own repository (a ``.venv`` in their project):
    a run's code version is Chunkscope's, never that repository's commit."""
    repository = from_wheel.parent
    git = ["git", "-C", str(repository), "-c", "user.name=t", "-c", "user.email=t@t"]
    try:
        subprocess.run([*git, "init", "-q"], check=True, timeout=60)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "theirs"], check=True,
                       timeout=60)  # fmt: skip
        said = "from core.evaluate.run_file import code_version as v, source_digest as d; "
        versioned = run_in(from_wheel, "python", "-c", said + "print(v()); print(d())",
                           cwd=tmp_path)  # fmt: skip
        assert versioned.returncode == 0, versioned.stderr
        version, digest = versioned.stdout.split()
        assert version == f"0.1.0+src.{digest}"
    finally:
        shutil.rmtree(repository / ".git", ignore_errors=True)
