"""One set of defaults (``core.defaults``): every command's parser and every page start on
the same policy, methods and k, and the policy the index holds is the one Compare shows
and the one an evaluation runs with unless the user picks another."""

from __future__ import annotations

import pytest

from core import defaults
from core import methods as registry
from core.chunk import default_policy
from core.cli import build_parser
from core.cli.options import eval_config
from tests.test_app_engine_pages import fake, index_demo, open_page, store_dir
from workbench.engine import resources as eng
from workbench.state import EngineKey, EvalKey, TuneKey, policy_widget

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest


def _parse(*argv: str):
    return build_parser().parse_args(list(argv))


def test_the_defaults_name_a_registered_policy_and_methods() -> None:
    assert default_policy(defaults.POLICY).key == defaults.POLICY_KEY == "structure-tokens-240-24"
    assert set(defaults.METHODS) <= set(registry.base_methods())
    assert registry.parse_methods(defaults.COMPARED) == defaults.COMPARED
    assert set(defaults.METHODS) <= set(defaults.COMPARED)
    assert defaults.EMBED_METHOD in registry.embedding_methods()
    assert max(defaults.KS) <= defaults.K
    assert defaults.methods_arg() == "naive,late,bm25" and defaults.ks_arg() == "1,5,10"


def test_index_stores_the_default_policy() -> None:
    args = _parse("index", "docs/")
    assert args.policy == defaults.POLICY and args.size is None and args.unit is None


@pytest.mark.parametrize("command", ["eval", "check"])
def test_eval_and_check_evaluate_the_default_policy_methods_and_ks(command: str) -> None:
    config = eval_config(_parse(command, "--queries", "q.jsonl", "--docs", "d.pdf"))
    assert config.policy.key == defaults.POLICY_KEY
    assert config.methods == defaults.METHODS
    assert config.ks == defaults.KS


def test_sweep_sweeps_the_default_policy_with_the_default_methods() -> None:
    from core.cli import sweep_cmd

    args = _parse("sweep", "--queries", "q.jsonl", "--docs", "d.pdf", "--size", "64,128")
    grid = sweep_cmd._grid(args)
    assert {p.policy.name for p in grid} == {defaults.POLICY}
    config = eval_config(args, policy=grid[0].policy)
    assert config.methods == defaults.METHODS and config.ks == defaults.KS


def test_import_run_query_and_embed_start_on_the_defaults() -> None:
    run = _parse("import-run", "log.jsonl", "--chunks", "mine", "--queries", "q.jsonl")
    assert run.k == defaults.ks_arg() and run.methods is None  # None: defaults.METHODS
    assert _parse("query", "pump").k == defaults.K
    assert _parse("embed", "a.txt", "--policy", "fixed").method == defaults.EMBED_METHOD


def test_the_evaluate_form_starts_on_the_defaults(fake, store_dir) -> None:
    at = open_page("evaluate")
    assert at.button_group(key=policy_widget("eval")).value == defaults.POLICY
    assert at.multiselect(key=EvalKey.METHODS).value == list(defaults.METHODS)
    assert at.multiselect(key=EvalKey.KS).value == list(defaults.KS)


def test_the_tune_form_starts_on_the_defaults(fake, store_dir) -> None:
    at = open_page("tune")
    assert at.button_group(key=TuneKey.POLICY).value == defaults.POLICY
    assert at.multiselect(key=TuneKey.METHODS).value == list(defaults.METHODS)


def test_the_chunks_page_starts_on_the_default_policy() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../app.py", default_timeout=300).run()
    at.switch_page("pages/chunks.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.button_group(key=policy_widget("a")).value == defaults.POLICY


def test_compare_shows_the_default_policy_when_the_index_holds_several(fake, store_dir) -> None:
    """The policy Compare opens on is the one Evaluate and ``chunkscope eval`` use."""
    assert eng.DEMO_POLICY.key == defaults.POLICY_KEY
    index_demo(store_dir, fake, policy=default_policy("fixed"))  # listed first
    index_demo(store_dir, fake)  # eng.DEMO_POLICY
    at = open_page("compare")
    assert at.selectbox(key=EngineKey.POLICY).value == defaults.POLICY_KEY
    assert at.multiselect(key=EngineKey.METHODS).value == list(defaults.COMPARED)
    assert at.number_input(key=EngineKey.K).value == defaults.K
