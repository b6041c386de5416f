"""``chunkscope embed``: the JSON contract, the table, the progress bar, user errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from test_embed_encoder import make_tiny_model, shared_tiny_dir

from core.cli import main
from tests.conftest import SAMPLE_DOCS

DATASHEET = SAMPLE_DOCS / "datasheets" / "datasheet-corvane-hx40.pdf"


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_tiny_dir(tmp_path_factory)


def run_json(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[dict, str]:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


@pytest.mark.parametrize("method", ["naive", "late", "contextual"])
def test_embed_json_contract(tiny_dir: Path, capsys, method: str) -> None:
    data, err = run_json(
        capsys,
        [
            "embed",
            str(DATASHEET),
            "--policy",
            "structure",
            "--method",
            method,
            "--model",
            str(tiny_dir),
            "--device",
            "cpu",
            "--json",
        ],
    )
    assert data["method"] == method
    assert data["model"] == {
        "name": "tiny-mean",
        "max_tokens": 128,
        "pooling": "mean",
        "dim": 32,
        "device": "cpu",
    }
    assert data["document"]["doc_id"] == "datasheet-corvane-hx40"
    assert data["chunks"]
    for chunk in data["chunks"]:
        for key in (
            "chunk_id",
            "char_start",
            "char_end",
            "text",
            "pages",
            "heading_path",
            "vector",
            "windows",
            "context",
            "truncated_tokens",
        ):
            assert key in chunk
        assert len(chunk["vector"]) == 32
        assert abs(float(np.linalg.norm(chunk["vector"])) - 1) < 1e-5
        assert (chunk["context"] == "none") == (method != "late")
        assert bool(chunk["windows"]) == (method == "late")
    assert ("late" in data) == (method == "late")
    if method == "late":
        # The datasheet (412 tokens) fits the tiny model's 510 content positions: one
        # window over the whole document instead of the model's 126-token limit.
        windows = data["late"]["windows"]
        assert data["late"]["window"] == windows[0]["token_end"] == 412
        assert len(windows) == 1 and windows[0]["token_start"] == 0
    units = len(data["late"]["windows"]) if method == "late" else len(data["chunks"])
    assert f"embedding {method}" in err and f"] {units}/{units}\n" in err


def test_embed_table(tiny_dir: Path, capsys) -> None:
    argv = [
        "embed",
        str(DATASHEET),
        "--policy",
        "fixed",
        "--size",
        "300",
        "--method",
        "late",
        "--window",
        "40",
        "--stride",
        "30",
        "--model",
        str(tiny_dir),
        "--device",
        "cpu",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "context" in out.splitlines()[0]
    assert "chunks embedded with late by tiny-mean" in out
    assert "partial" in out  # small windows leave seam tokens short of context


def test_truncated_chunks_are_reported(tiny_dir: Path, capsys) -> None:
    argv = [
        "embed",
        str(DATASHEET),
        "--policy",
        "fixed",
        "--size",
        "1500",
        "--overlap",
        "0",
        "--max-tokens",
        "64",
        "--model",
        str(tiny_dir),
        "--device",
        "cpu",
    ]
    assert main(argv) == 0
    assert "tokens never seen by the model" in capsys.readouterr().out


def test_user_errors_exit_2_with_one_line(tiny_dir: Path, tmp_path: Path, capsys) -> None:
    cls_dir = make_tiny_model(tmp_path / "tiny-cls", pooling="cls")
    capsys.readouterr()
    cases = [
        (["--model", str(cls_dir), "--method", "late"], "mean-pooled"),
        (["--model", str(tiny_dir), "--method", "late", "--window", "600"], "--window"),
        (["--model", str(tiny_dir), "--max-tokens", "9999"], "--max-tokens"),
        (["--model", str(tmp_path)], "not a model folder"),
    ]
    for extra, message in cases:
        code = main(["embed", str(DATASHEET), "--policy", "structure", "--device", "cpu", *extra])
        err = capsys.readouterr().err
        assert code == 2, extra
        assert err.startswith("error: ") and message in err and err.count("\n") == 1


@pytest.mark.slow
def test_embed_default_model(capsys) -> None:
    data, _ = run_json(
        capsys, ["embed", str(DATASHEET), "--policy", "structure", "--device", "cpu", "--json"]
    )
    assert data["model"]["name"] == "all-MiniLM-L6-v2"
    assert (data["model"]["max_tokens"], data["model"]["pooling"]) == (256, "mean")
    assert len(data["chunks"][0]["vector"]) == 384


def test_progress_bar_redraws_one_line_and_ends_it() -> None:
    import io

    from core.cli.progress import ProgressBar

    out = io.StringIO()
    bar = ProgressBar("work", stream=out, width=10)
    for done in range(0, 1001):
        bar(done, 1000)
    text = out.getvalue()
    assert text.count("\r") == 101  # one redraw per whole percent
    assert text.endswith("\rwork [##########] 1000/1000\n") and text.count("\n") == 1
    bar.close()
    bar(0, 0)  # nothing to do is shown as done
    assert out.getvalue().endswith("[##########] 0/0\n")
    bar(1, 4)
    bar.close()
    bar.close()
    assert out.getvalue().endswith("[##........] 1/4\n")
