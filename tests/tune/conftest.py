"""Fixtures of the tune tests: a small shared query set and the fake model.

Two small shared documents (the chat logs and the State of the Union of the
chunking_evaluation set) with their first twelve labelled questions each; the fake
encoder stands in for the model through ``core.cli.options.load_model``, the seam ``eval``,
``sweep`` and ``check`` share.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.cli import options
from core.evaluate import import_chunking_eval, write_queries
from tests.conftest import EVAL_DIR, TEXT_CORPORA, need_corpus
from tests.fakes import FakeEncoder, fake_embed_chunks

SMALL = ("chatlogs", "state_of_the_union")
PER_DOC = 12


@pytest.fixture(scope="module")
def small_set(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A query set of the first questions on the two small corpora, and their files."""
    need_corpus(TEXT_CORPORA)
    root = tmp_path_factory.mktemp("small")
    queries = import_chunking_eval(EVAL_DIR)
    picked = [q for name in SMALL for q in [q for q in queries if q.doc == name][:PER_DOC]]
    write_queries(root / "q.jsonl", picked)
    return root


@pytest.fixture
def fake_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(
        options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None)
    )
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))


def small_docs() -> list[str]:
    return [str(TEXT_CORPORA / f"{name}.md") for name in SMALL]
