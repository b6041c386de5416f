"""What the suite's own fixtures (tests/conftest.py) promise.

A test that reads the shared corpus fails when the corpus is not where it looks: it never
passes having read nothing, nor is it skipped, unless the file is one this copy of the
corpus does not describe (its SOURCES.md does not name it). A test process loads the
default model's weights once, and keeps no vectors in the working folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tests.conftest as conftest
from tests.conftest import ROOT, corpus_files, need_corpus


@pytest.fixture
def partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A corpus whose SOURCES.md names ``listed.pdf`` and the folder ``pdfs``."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "SOURCES.md").write_text("## pdfs/\n\n| listed.pdf | 3 | ... |\n")
    monkeypatch.setattr(conftest, "SHARED", tmp_path)
    monkeypatch.setattr(conftest, "SOURCES", corpus / "SOURCES.md")
    return corpus


def test_a_file_that_is_there_is_given_back(partial: Path) -> None:
    (partial / "listed.pdf").write_bytes(b"%PDF")
    assert need_corpus(partial / "listed.pdf") == partial / "listed.pdf"


def test_a_listed_file_that_is_missing_fails_naming_the_variable(partial: Path) -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        need_corpus(partial / "listed.pdf")
    message = str(failed.value)
    assert message.startswith(f"the shared corpus lacks {partial / 'listed.pdf'}: ")
    assert "set CHUNKSCOPE_SHARED" in message and "\n" not in message


def test_a_file_this_copy_does_not_describe_is_skipped_with_the_reason(partial: Path) -> None:
    with pytest.raises(pytest.skip.Exception, match="tracemonkey-pldi-09.pdf is not in this copy"):
        need_corpus(partial / "tracemonkey-pldi-09.pdf")


def test_without_sources_md_every_missing_file_fails(partial: Path) -> None:
    (partial / "SOURCES.md").unlink()
    with pytest.raises(pytest.fail.Exception, match="CHUNKSCOPE_SHARED"):
        need_corpus(partial / "tracemonkey-pldi-09.pdf")


def test_a_folder_with_no_matching_file_fails_never_an_empty_list(partial: Path) -> None:
    with pytest.raises(pytest.fail.Exception, match="lacks .*pdfs: set CHUNKSCOPE_SHARED"):
        corpus_files(partial / "pdfs", "*.pdf")  # not there
    (partial / "pdfs").mkdir()
    with pytest.raises(pytest.fail.Exception, match=r"lacks .*pdfs/\*\.pdf: "):
        corpus_files(partial / "pdfs", "*.pdf")  # there, and empty
    (partial / "pdfs" / "listed.pdf").write_bytes(b"%PDF")
    assert corpus_files(partial / "pdfs", "*.pdf") == [partial / "pdfs" / "listed.pdf"]


def _pytest(shared: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "CHUNKSCOPE_SHARED": str(shared)}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    return run.returncode, run.stdout + run.stderr


def test_without_the_corpus_a_run_stops_at_once_naming_the_variable(tmp_path: Path) -> None:
    code, out = _pytest(tmp_path, "tests/test_layers.py")
    assert code == 1, out
    assert (
        f"the shared corpus lacks {tmp_path / 'corpus' / 'SOURCES.md'}: set CHUNKSCOPE_SHARED"
        in out
    )
    assert "passed" not in out


def test_the_corpus_tests_fail_when_its_files_are_elsewhere(tmp_path: Path) -> None:
    """The loop over the text corpora (which passed with no iteration) and a module
    parametrised over the PDFs, under a corpus folder that holds only its SOURCES.md."""
    (tmp_path / "corpus").mkdir()
    shutil.copy(conftest.SOURCES, tmp_path / "corpus" / "SOURCES.md")
    code, out = _pytest(
        tmp_path,
        "--continue-on-collection-errors",
        "tests/test_tokens.py::test_counts_from_word_edges_equal_real_counts",
        "tests/test_ingest.py",
    )
    assert code == 1, out
    assert "FAILED tests/test_tokens.py::test_counts_from_word_edges_equal_real_counts" in out
    assert "ERROR tests/test_ingest.py" in out
    assert f"the shared corpus lacks {tmp_path / 'corpus'}" in out and "passed" not in out


@pytest.mark.slow
def test_a_process_loads_the_default_model_once() -> None:
    from core.embed import load_encoder

    first, other = load_encoder(device="cpu"), load_encoder(device="cpu", max_tokens=512)
    first.encode_texts(["one"])
    other.encode_texts(["two"])
    assert first.model is other.model  # one set of weights, whichever encoder asks
    deterministic = load_encoder(device="cpu", deterministic=True)
    deterministic.encode_texts(["three"])
    assert deterministic.model is not first.model  # switches torch's algorithms: its own


def test_nothing_is_kept_in_the_working_folder() -> None:
    from core.config import resolve_store
    from core.embed.cache import shared_cache
    from core.evaluate import default_triage_path

    assert os.environ["CHUNKSCOPE_VECTOR_CACHE"] == "off" and shared_cache() is None
    store = resolve_store().path
    assert not store.is_relative_to(Path.cwd().resolve()) and store.name.startswith("default-store")
    assert default_triage_path().parent == store
