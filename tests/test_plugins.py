"""Plugins: an installed package adds a policy, a method or a format through entry points
(``chunkscope.policies``, ``chunkscope.methods``, ``chunkscope.formats``), without editing
Chunkscope; ``chunkscope --help`` and the pages list it with its package. On the command
line the package is a real one, pip-installed into a fresh virtual environment beside
Chunkscope (``tests/venvs.py``); in this process (the registries, the pages) it is its
``.dist-info`` written to a temporary folder put on the path (what ``pip install`` leaves)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.chunk import policy_registry
from core.registry import plugins
from tests.venvs import installed_venv, pip_install, run_in

ROOT = Path(__file__).resolve().parents[1]
SOTU = ROOT / "sample_docs" / "state_of_the_union.md"

TOY = """
from core.chunk.policy_spec import PolicySpec
from core.chunk.spans import Piece, strip_span


def paragraph_pieces(analysis, index, policy):
    text, out, start = analysis.text, [], 0
    while start < len(text):
        end = text.find("\\n\\n", start)
        end = len(text) if end < 0 else end
        a, b = strip_span(text, start, end)
        if a < b:
            out.append(Piece(char_start=a, char_end=b))
        start = end + 2
    return out


SPEC = PolicySpec(
    name="toy_paragraphs", summary="one chunk per paragraph (a plugin)",
    sizes={"chars": (100000, 0)}, unit="chars", pieces=paragraph_pieces,
)


def broken():
    raise RuntimeError("this plugin is broken")
"""


ENTRY_POINTS = """
    [chunkscope.policies]
    toy = chunkscope_toy:SPEC
    toy_broken = chunkscope_toy:broken
"""

# The same package as a project pip builds and installs (its entry points as above).
PYPROJECT = """
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "chunkscope-toy"
version = "0.1"

[project.entry-points."chunkscope.policies"]
toy = "chunkscope_toy:SPEC"
toy_broken = "chunkscope_toy:broken"

[tool.setuptools]
py-modules = ["chunkscope_toy"]
"""


def _install(site: Path, entry_points: str) -> None:
    (site / "chunkscope_toy.py").write_text(TOY, encoding="utf-8")
    info = site / "chunkscope_toy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: chunkscope-toy\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points), encoding="utf-8")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "site"
    folder.mkdir()
    _install(folder, ENTRY_POINTS)
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    policy_registry.unload_plugins("chunkscope-toy")


def test_an_installed_package_adds_a_policy(site: Path) -> None:
    loaded = {p.name: p for p in policy_registry.load_plugins()}
    assert loaded["toy"].package == "chunkscope-toy" and loaded["toy"].entries == (
        "toy_paragraphs",
    )
    assert loaded["toy_broken"].error == "RuntimeError: this plugin is broken"  # left out
    assert "toy_paragraphs" in policy_registry.policy_names()
    assert any(p.name == "toy" for p in plugins())
    policy_registry.unload_plugins("chunkscope-toy")
    assert "toy_paragraphs" not in policy_registry.policy_names()
    assert not any(p.package == "chunkscope-toy" for p in plugins())


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with Chunkscope (``pip install .``) and the toy package,
    a project of its own with its entry points in its ``pyproject.toml``, pip-installed."""
    work = tmp_path_factory.mktemp("plugin-venv")
    venv = installed_venv(work)
    project = work / "chunkscope-toy"
    project.mkdir()
    (project / "chunkscope_toy.py").write_text(TOY, encoding="utf-8")
    (project / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    pip_install(venv, str(project))
    return venv


def test_the_command_line_uses_and_lists_the_plugin(venv: Path, tmp_path: Path) -> None:
    chunked = run_in(venv, "chunkscope", "chunk", str(SOTU), "--policy", "toy_paragraphs",
                     cwd=tmp_path)  # fmt: skip
    assert chunked.returncode == 0, chunked.stderr
    paragraphs = [p for p in SOTU.read_text(encoding="utf-8").split("\n\n") if p.strip()]
    assert "chunks under toy_paragraphs-chars-100000-0" in chunked.stdout
    assert f"{len(paragraphs)} chunks" in chunked.stdout
    helped = run_in(venv, "chunkscope", "--help", cwd=tmp_path)
    assert helped.returncode == 0, helped.stderr
    listed = " ".join(helped.stdout.split())
    assert "policy toy_paragraphs (from chunkscope-toy)" in listed
    assert "toy_broken (failed to load: RuntimeError: this plugin is broken)" in listed


def test_the_pages_list_the_plugin_with_its_package(site: Path, tmp_path, monkeypatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    policy_registry.load_plugins()
    at = AppTest.from_file("../app.py", default_timeout=300).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [c.value.replace("\\", "") for c in at.sidebar.caption]
    assert "Plugin policy toy_paragraphs (from chunkscope-toy)" in said
    assert any(s.startswith("Plugin policy toy_broken (failed to load: RuntimeError") for s in said)
