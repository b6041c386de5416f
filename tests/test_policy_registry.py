"""The policy registry: one spec per policy, and a toy policy registered in a test is
offered by the CLI, chunked, evaluated and offered by the Chunks and Compare pages
without any other edit."""

from __future__ import annotations

import json
import re

import pytest
from fakes import FakeEncoder, fake_embed_chunks
from streamlit.testing.v1 import AppTest

from core.chunk import PolicyError, chunk_document, default_policy, policy_from_args
from core.chunk import policy_registry as registry
from core.chunk.analysis import DocAnalysis
from core.chunk.annotate import BlockIndex
from core.chunk.policy_registry import PolicySpec
from core.chunk.skip import kept_regions
from core.chunk.spans import Piece, strip_span
from core.cli import main
from core.evaluate import EvalConfig, run_eval
from core.evaluate.labels import GoldSpan, LabelledQuery
from core.formats import load_document
from core.model.tokens import load_tokenizer
from core.provenance.types import ChunkPolicy
from tests.test_app_engine_pages import TIMEOUT_S, fake, index_demo, store_dir
from tests.test_chunk import assert_chunk_invariants
from workbench.engine import resources as eng
from workbench.state import EngineKey

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest

_PARAGRAPH = re.compile(r"\S(?:.*?\S)??(?=\s*\n\s*\n|\s*\Z)", re.S)


def _paragraph_pieces(analysis: DocAnalysis, index: BlockIndex, policy: ChunkPolicy) -> list:
    """A toy policy: one chunk per blank-line separated paragraph (size is not enforced
    beyond flagging: a longer paragraph is one oversize chunk)."""
    text, pieces = analysis.text, []
    for lo, hi in kept_regions(len(text), index, policy):
        for match in _PARAGRAPH.finditer(text, lo, hi):
            start, end = strip_span(text, *match.span())
            if start < end:
                oversize = end - start > policy.size
                pieces.append(Piece(char_start=start, char_end=end, oversize=oversize))
    return pieces


TOY = PolicySpec(
    name="paragraphs",
    summary="one chunk per paragraph",
    sizes={"chars": (4000, 0)},
    unit="chars",
    pieces=_paragraph_pieces,
    options=frozenset({"skip_garbled"}),
    order=50,
)
TEXT = (
    "# Pumps\n\nThe pump runs at two bar.\n\nIts warranty covers labour for two years.\n\n"
    "Valves are checked every month.\n"
)


@pytest.fixture
def toy():
    with registry.registered(TOY) as spec:
        yield spec
    assert "paragraphs" not in registry.policy_names()


def test_builtin_policies_are_registered_once_and_specs_are_checked() -> None:
    names = registry.policy_names()
    assert len(set(names)) == len(names) and {"fixed", "sentence", "structure"} <= set(names)
    for spec in registry.all_policies():  # every default policy is valid and round-trips
        policy = default_policy(spec.name)
        assert ChunkPolicy.from_dict(policy.to_dict()) == policy and policy.unit == spec.unit
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get("fixed"))
    with pytest.raises(ValueError, match="unknown options"):
        PolicySpec(name="x", summary="", sizes={"chars": (9, 0)}, unit="chars",
                   pieces=_paragraph_pieces, options=frozenset({"nope"}))  # fmt: skip
    with pytest.raises(ValueError, match="has no sizes"):
        PolicySpec(name="x", summary="", sizes={"chars": (9, 0)}, unit="tokens",
                   pieces=_paragraph_pieces)  # fmt: skip
    with pytest.raises(PolicyError, match="unknown policy 'paragraphs'"):
        policy_from_args("paragraphs")
    with pytest.raises(ValueError, match="unknown policy"):
        registry.check_policy(ChunkPolicy(name="paragraphs", size=10))


def test_a_toy_policy_is_offered_chunked_and_evaluated(toy, tmp_path, capsys) -> None:
    for command in ("chunk", "index", "eval", "export"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "paragraphs" in capsys.readouterr().out, command
    path = tmp_path / "pumps.md"
    path.write_text(TEXT, encoding="utf-8")
    assert main(["chunk", str(path), "--policy", "paragraphs", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["policy"] == {"name": "paragraphs", "size": 4000, "overlap": 0, "unit": "chars"}
    assert [c["text"] for c in out["chunks"]][1:3] == [
        "The pump runs at two bar.", "Its warranty covers labour for two years."
    ]  # fmt: skip
    assert main(["chunk", str(path), "--policy", "paragraphs", "--table-header-prefix"]) == 2
    assert "--table-header-prefix works with the structure policy only" in capsys.readouterr().err
    doc = load_document(path)
    policy = policy_from_args("paragraphs", skip_garbled=True)
    assert policy.key == "paragraphs-chars-4000-0-ng"
    chunks = chunk_document(doc, [], policy)
    assert_chunk_invariants(doc, [], policy, chunks, load_tokenizer())
    start = doc.text.index("Its warranty")
    gold = GoldSpan(char_start=start, char_end=start + len("Its warranty covers labour"))
    query = LabelledQuery(id="q", query="warranty labour", doc=doc.doc_id, gold=(gold,))
    config = EvalConfig(policy=policy, methods=("naive", "bm25"), ks=(1,))
    run = run_eval([query], [doc], config, encoder=FakeEncoder(), embed=fake_embed_chunks)
    assert run.policy["key"] == policy.key and run.metrics["bm25"]


def test_a_toy_policy_is_offered_on_the_chunks_and_compare_pages(toy, fake, store_dir):
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    at.switch_page("pages/chunks.py").run()
    assert not at.exception, [e.value for e in at.exception]
    control = at.segmented_control(key="cs_policy_a")
    assert "paragraphs" in control.options
    control.set_value("paragraphs").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(m.value == "**paragraphs-chars-4000-0**" for m in at.markdown)
    at.checkbox(key="cs_opt_ng_a_paragraphs").check().run()  # its one option, as a checkbox
    assert any(m.value == "**paragraphs-chars-4000-0-ng**" for m in at.markdown)

    index_demo(store_dir, fake, methods=("naive", "bm25"), policy=default_policy("paragraphs"))
    at.switch_page("pages/compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "paragraphs" in at.segmented_control(key="cs_policy_index").options
    picker = at.selectbox(key=EngineKey.POLICY)
    assert picker.value == "paragraphs-chars-4000-0" and picker.options == [picker.value]
    assert at.text_input(key=EngineKey.QUERY_WIDGET).value == eng.DEMO_QUERY
    at.multiselect(key=EngineKey.METHODS).set_value(["naive", "bm25"]).run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [w for w in at.warning if "Not indexed" in w.value]
    assert "Inspect a chunk" in [h.value for h in at.subheader]  # ranked under the toy
