"""The opt-in ``scale-corpus`` bench case without its long run: the generated corpus, the
case's registration, and the Ray embed stage's vector cache that its copies rely on
(the stage called directly, no cluster: a copy under a new name gets the original's
vectors from the cache, under its own chunk ids, equal to freshly encoded ones)."""

from __future__ import annotations

import functools
import pickle
import shutil

import numpy as np
import pytest
from conftest import PDF_DIR
from test_embed_encoder import shared_tiny_dir

from core.bench import CASE_NAMES, OPT_IN_CASES
from core.bench.inputs import shared_dir
from core.bench.scale_corpus import PAGE_DEPTH, TEXTS, base_documents, write_corpus
from core.cli.bench_cmd import parse_cases
from core.embed import load_encoder
from core.formats import doc_id_for
from core.provenance.types import ChunkPolicy
from core.scale.stages import Embedder, RayJob, parse_row

DENSE = ("naive", "late", "contextual")


def test_base_documents_cut_each_corpus_at_line_ends_and_lose_nothing():
    bases = base_documents()
    folder = shared_dir() / "corpus" / "chunking_evaluation" / "corpora"
    for stem in TEXTS:
        pieces = [text for name, text in bases if name.startswith(f"{stem}-p")]
        whole = (folder / f"{stem}.md").read_text(encoding="utf-8")
        assert "".join(pieces) == whole and len(pieces) > 1
        assert all(p.endswith("\n") for p in pieces[:-1])


def test_the_corpus_copies_its_distinct_bases_under_new_ids(tmp_path):
    bases = dict(base_documents())
    paths, distinct = write_corpus(tmp_path, 5 * 12 + 7, distinct=12)
    assert len(paths) == 67 and distinct == 12
    ids = [doc_id_for(p.name) for p in paths]
    assert len(set(ids)) == len(ids)
    texts = [p.read_text(encoding="utf-8") for p in paths]
    assert len(set(texts)) == 12 and all(t in bases.values() for t in texts)
    assert {n.split("-p")[0] for n in bases if any(bases[n] == t for t in texts)} == set(TEXTS)
    for copy, first in zip(paths[12:], paths, strict=False):
        assert copy.read_bytes() == first.read_bytes() and copy.name != first.name
    (tmp_path / "few").mkdir()
    few, distinct = write_corpus(tmp_path / "few", 3)
    assert len(few) == distinct == 3


def test_scale_corpus_runs_only_when_named():
    assert "scale-corpus" in OPT_IN_CASES and "scale-corpus" not in CASE_NAMES
    assert parse_cases(None) == CASE_NAMES
    assert parse_cases("scale-corpus,scale") == ("scale-corpus", "scale")


def test_bench_docs_must_be_positive(capsys):
    from core.cli import main

    assert main(["bench", "--cases", "scale-corpus", "--docs", "0"]) == 2
    assert "error: --docs must be at least 1, not 0" in capsys.readouterr().err


def test_the_page_depth_is_the_compare_pages():
    from workbench.engine.resources import WIDE

    assert PAGE_DEPTH == WIDE


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return shared_tiny_dir(tmp_path_factory)


def _job(tiny, cache: bool) -> RayJob:
    enc = load_encoder(tiny, device="cpu")
    return RayJob(policy=ChunkPolicy(name="fixed", unit="tokens", size=48, overlap=0),
                  model=enc.name, model_dir=str(enc.model_dir), host="127.0.0.1:9",
                  make_encoder=functools.partial(load_encoder, tiny, device="cpu"),
                  vector_cache=cache)  # fmt: skip


def _embedded(embedder: Embedder, path) -> dict[str, dict]:
    row = {"path": str(path), "doc_id": doc_id_for(path.name), "source": str(path),
           "sha256": "", "methods": list(DENSE), "skipped": []}  # fmt: skip
    parsed = parse_row(row, job=embedder.job)
    assert not parsed["error"]
    return {r["method"]: r for r in embedder(parsed)}


def test_a_copy_under_a_new_name_takes_its_vectors_from_the_actors_cache(tiny, tmp_path):
    original = tmp_path / "outline.pdf"
    copy = tmp_path / "outline-copy.pdf"
    shutil.copy(PDF_DIR / "pypdfsf_pdflatex-outline.pdf", original)
    shutil.copy(original, copy)
    cached = Embedder(_job(tiny, cache=True))
    first = _embedded(cached, original)
    again = _embedded(cached, copy)
    fresh = _embedded(Embedder(_job(tiny, cache=False)), copy)
    for method in DENSE:
        n = again[method]["n_chunks"]
        assert first[method]["cached"] == 0 and again[method]["cached"] == n > 0, method
        assert fresh[method]["cached"] == 0
        got, want = pickle.loads(again[method]["vectors"]), pickle.loads(fresh[method]["vectors"])
        assert [v.chunk_id for v in got] == [v.chunk_id for v in want]
        assert not {v.chunk_id for v in got} & {
            v.chunk_id for v in pickle.loads(first[method]["vectors"])
        }  # the copy's own ids
        np.testing.assert_allclose(
            np.stack([v.vector for v in got]), np.stack([v.vector for v in want]), atol=1e-5
        )
