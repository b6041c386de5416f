"""A cached function draws nothing: Streamlit replays what a function under
``st.cache_resource``/``st.cache_data`` drew on every cache hit, so a parse's status box
drawn there came back under the failure reader as a "Parsing …" spinner that never ended.
Every call of the parse cache's drawing functions inside one passes ``quiet=True``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DRAWING = {"parsed", "chunked", "stats_of"}  # workbench.documents.parse_cache


def _cached(node: ast.AST) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr in ("cache_resource", "cache_data"):
            return True
    return False


def _loud_calls(function: ast.FunctionDef) -> list[str]:
    out = []
    for node in ast.walk(function):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        owner = node.func.value
        if not (isinstance(owner, ast.Name) and owner.id == "parse_cache"):
            continue
        if node.func.attr not in DRAWING:
            continue
        quiet = any(
            k.arg == "quiet" and isinstance(k.value, ast.Constant) and k.value.value is True
            for k in node.keywords
        )
        if not quiet:
            out.append(f"{function.name}:{node.lineno} parse_cache.{node.func.attr}")
    return out


def test_no_cached_function_draws_a_parse():
    loud, seen = [], 0
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if _cached(node):
                assert isinstance(node, ast.FunctionDef)
                calls = _loud_calls(node)
                seen += 1
                loud += [f"{path.relative_to(ROOT)}: {c}" for c in calls]
    assert seen >= 5  # the check reads the cached functions it is about
    assert not loud, loud


def test_a_quiet_parse_draws_nothing_where_a_first_parse_shows_its_status(tmp_path: Path):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import SHARED

    pdf = SHARED / "corpus" / "pdfs" / "beamerexample-conference-talk.pdf"  # 31 pages
    if not pdf.exists():
        pytest.skip("the shared corpus is not here")
    script = tmp_path / "page.py"
    script.write_text(
        "import streamlit as st\n"
        "from core.formats import load_document\n"
        "from workbench.documents import parse_cache\n"
        f"doc = load_document({str(pdf)!r})\n"
        "parse_cache._parsed_keys.discard((doc.doc_id, doc.sha256, 'fast'))\n"
        "st.session_state.setdefault('cs_parse_times', {})  # as the app's start sets it\n"
        "quiet = st.session_state.get('quiet', True)\n"
        "found = parse_cache.parsed(doc, 'fast', quiet=quiet)\n"
        "st.markdown(f'blocks {len(found.blocks)}')\n",
        encoding="utf-8",
    )
    at = AppTest.from_file(str(script), default_timeout=120).run()
    assert not at.exception
    assert at.markdown[-1].value.startswith("blocks ") and at.markdown[-1].value != "blocks 0"
    assert not at.get("status")
    at.session_state["quiet"] = False
    at.run()
    assert not at.exception
    drawn = at.get("status")  # the status box of a first parse of a big document
    assert drawn and "Parsed 31 pages" in str(drawn[0].proto.label)
