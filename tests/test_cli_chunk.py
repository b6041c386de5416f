"""``chunkscope chunk``: JSON contract, readable table, user errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import BAD_PDFS, PDF_DIR, ROOT, TEXT_CORPORA

from core.chunk import policy_registry as registry
from core.cli import main

SIGCONF = PDF_DIR / "sample-sigconf.pdf"
CHUNK_FIELDS = {
    "chunk_id",
    "doc_id",
    "doc_sha256",
    "char_start",
    "char_end",
    "text",
    "pages",
    "heading_path",
    "block_kinds",
    "token_count",
    "policy",
    "oversize",
    "header_rows",
    "header_text",
}


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["chunk", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("policy", registry.policy_names())
def test_json_contract_on_a_pdf(capsys: pytest.CaptureFixture[str], policy: str) -> None:
    out = run_json(capsys, str(SIGCONF), "--policy", policy, "--with-text")
    assert set(out) == {"document", "policy", "chunks"}
    document = out["document"]
    assert document["kind"] == "pdf" and document["doc_id"] == "sample-sigconf"
    assert {"doc_id", "sha256", "source", "kind", "pages", "text"} <= set(document)
    assert out["policy"]["name"] == policy
    text = document["text"]
    assert out["chunks"]
    for chunk in out["chunks"]:
        assert set(chunk) == CHUNK_FIELDS
        assert text[chunk["char_start"] : chunk["char_end"]] == chunk["text"]
        assert chunk["doc_sha256"] == document["sha256"] and chunk["policy"] == out["policy"]
        assert all(1 <= p <= len(document["pages"]) for p in chunk["pages"])


def test_json_options_and_text_only_with_flag(capsys: pytest.CaptureFixture[str]) -> None:
    path = TEXT_CORPORA / "state_of_the_union.md"
    argv = [str(path), "--policy", "fixed", "--size", "120", "--overlap", "30", "--unit", "tokens"]
    out = run_json(capsys, *argv)
    assert "text" not in out["document"] and out["document"]["pages"] == []
    assert out["policy"] == {"name": "fixed", "size": 120, "overlap": 30, "unit": "tokens"}
    assert all(c["token_count"] <= 120 and c["pages"] == [] for c in out["chunks"])
    again = run_json(capsys, *argv)
    assert [c["chunk_id"] for c in again["chunks"]] == [c["chunk_id"] for c in out["chunks"]]


def test_encrypted_file_with_password(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        str(PDF_DIR / "crazyones-encrypted-256.pdf"),
        "--password",
        "password",
        "--policy",
        "sentence",
        "--parser",
        "fast",
    )
    assert out["chunks"] and out["chunks"][0]["pages"] == [1]


def test_table_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chunk", str(SIGCONF), "--policy", "structure"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["#", "chars", "pages", "tokens"]
    assert "ABSTRACT" in out
    assert any(
        line.startswith("sample-sigconf: ") and "chunks under structure" in line for line in lines
    )
    assert "time load+parse" in out


@pytest.mark.parametrize(
    "args, message",
    [
        ([str(PDF_DIR / "crazyones-encrypted-256.pdf"), "--policy", "fixed"], "password"),
        (
            [str(PDF_DIR / "crazyones-encrypted-256.pdf"), "--policy", "fixed", "--password", "x"],
            "password",
        ),
        ([str(PDF_DIR / next(iter(BAD_PDFS))), "--policy", "fixed"], ""),
        ([str(SIGCONF), "--policy", "sentence", "--unit", "tokens"], "sentences"),
        ([str(SIGCONF), "--policy", "fixed", "--size", "10", "--overlap", "10"], "--overlap"),
        ([str(SIGCONF), "--policy", "fixed", "--size", "0"], "--size"),
        (["/nonexistent/file.pdf", "--policy", "fixed"], "does not exist"),
        ([str(SIGCONF), "--policy", "paragraph"], "unknown policy 'paragraph'"),
        ([str(SIGCONF), "--policy", "fixed", "--table-header-prefix"], "structure policy only"),
    ],
)
def test_user_errors_exit_2_with_one_line(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["chunk", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("error: ") and message in line


def test_skip_garbled_is_in_the_policy_and_leaves_garbled_text_out(capsys) -> None:
    path = str(PDF_DIR / "elstest-5p.pdf")
    plain = run_json(capsys, path, "--policy", "structure", "--with-text")
    out = run_json(capsys, path, "--policy", "structure", "--skip-garbled", "--with-text")
    assert out["policy"] == {**plain["policy"], "skip_garbled": True}
    from core.formats import load_document, parse_document

    garbled = [b for b in parse_document(load_document(path)).blocks if b.garbled]

    def touches(chunks: list) -> bool:
        spans = [(b.char_start, b.char_end) for b in garbled]
        return any(a < c["char_end"] and c["char_start"] < b for c in chunks for a, b in spans)

    assert garbled and touches(plain["chunks"])
    assert out["chunks"] and not touches(out["chunks"])
    text = out["document"]["text"]
    assert all(text[c["char_start"] : c["char_end"]] == c["text"] for c in out["chunks"])


def test_runs_as_a_module() -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "core",
            "chunk",
            str(PDF_DIR / "pypdfsf_multicolumn.pdf"),
            "--policy",
            "structure",
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["chunks"]
