"""CLI end to end: import, eval (fake encoder through the model seam), triage; one
real-model eval (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.cli import main, options
from core.evaluate import read_queries
from tests.conftest import EVAL_DIR, TEXT_CORPORA
from tests.fakes import FakeEncoder, fake_embed_chunks

NOTES = """# Field notes

## Harbour

The harbour master logs every ship that docks after dark, with its cargo and crew.

## Glacier

The glacier retreats a few metres each summer; the survey team marks the ice edge.

## Orchard

Apple trees in the orchard are pruned in late winter before the buds open.
"""
RECIPES = """# Recipes

Bread needs flour, water, salt and yeast, kneaded for ten minutes and left to rise.

Soup starts with onions softened in butter before the stock goes in.
"""
QUERY_KEYS = {
    "run_id",
    "model",
    "policy",
    "methods",
    "n_queries",
    "metrics",
    "deltas",
    "unresolved",
    "queries",
}


def _span(text: str, part: str) -> dict[str, object]:
    start = text.index(part)
    return {"char_start": start, "char_end": start + len(part)}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "notes.md").write_text(NOTES, "utf-8")
    (docs / "recipes.md").write_text(RECIPES, "utf-8")
    lines = [
        {
            "id": "harbour",
            "query": "who logs ships that dock at night",
            "doc": "notes.md",
            "gold": [_span(NOTES, "The harbour master logs every ship")],
        },
        {
            "id": "glacier",
            "query": "how fast does the glacier retreat",
            "doc": "notes",
            "evidence": [{"text": "The glacier  retreats a few\nmetres each summer", "page": None}],
        },
        {
            "id": "bread",
            "query": "what goes into bread",
            "doc": "recipes",
            "gold": [_span(RECIPES, "Bread needs flour"), _span(RECIPES, "left to rise")],
        },
        {
            "id": "soup",
            "query": "how to start a soup",
            "doc": "recipes",
            "evidence": [{"text": "Soup starts with onions softened in butter"}],
        },
        {
            "id": "ghost",
            "query": "anything",
            "doc": "recipes",
            "evidence": [{"text": "This sentence was never written in the recipes."}],
        },
    ]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n", "utf-8")
    monkeypatch.setattr(
        options, "load_model", lambda args: (FakeEncoder(), fake_embed_chunks, None)
    )
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    return tmp_path


def _eval(ws: Path, *extra: str) -> list[str]:
    return [
        "eval",
        "--queries",
        str(ws / "q.jsonl"),
        "--docs",
        str(ws / "docs"),
        "--methods",
        "naive,late,contextual",
        "--k",
        "1,3",
        "--policy",
        "fixed",
        "--size",
        "200",
        "--overlap",
        "20",
        *extra,
    ]


def test_eval_json_has_the_documented_keys(workspace: Path, capsys) -> None:
    assert main(_eval(workspace, "--json", "--out", str(workspace / "run.json"))) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= QUERY_KEYS
    assert out["methods"] == ["naive", "late", "contextual"] and out["n_queries"] == 4
    assert out["policy"]["key"] == "fixed-chars-200-20"
    for method in out["methods"]:
        assert {
            "hit@1",
            "hit@3",
            "recall@1",
            "recall@3",
            "mrr",
            "ndcg@10",
            "precision",
            "iou",
            "duplicate_rate",
            "span_validity",
            "doc_hit@1",
        } <= set(out["metrics"][method])
        assert out["n"][method]["hit@1"] == 4
    assert set(out["deltas"]) == {"contextual-naive", "late-naive", "late-contextual"}
    assert set(out["deltas"]["late-naive"]["mrr"]) >= {"delta", "low", "high", "n"}
    assert [u["id"] for u in out["unresolved"]] == ["ghost"]
    for query in out["queries"]:
        assert set(query["ranks"]) == set(out["methods"]) == set(query["failed"])
        assert "top" not in query
    saved = json.loads((workspace / "run.json").read_text("utf-8"))
    assert saved["run_id"] == out["run_id"] and saved["queries"][0]["top"]["late"]


def test_eval_twice_gives_the_same_numbers(workspace: Path, capsys) -> None:
    outputs = []
    for _ in range(2):
        assert main(_eval(workspace, "--json")) == 0
        data = json.loads(capsys.readouterr().out)
        data.pop("created_at"), data.pop("timings")
        outputs.append(data)
    assert outputs[0] == outputs[1]


def test_eval_table_shows_methods_counts_and_deltas(workspace: Path, capsys) -> None:
    assert main(_eval(workspace, "--scope", "doc")) == 0
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if line.startswith("metric"))
    assert header.split() == ["metric", "naive", "late", "contextual", "n"]
    assert "late-naive" in out and "ghost" in out and "scope doc" in out
    mrr = next(line for line in out.splitlines() if line.startswith("mrr"))
    assert mrr.split()[-1] == "4"
    assert "per document (hit@3 / mrr)" in out
    notes = next(line for line in out.splitlines() if line.startswith("notes "))
    assert notes.split()[-1] == "2"


def test_triage_commands(workspace: Path, capsys) -> None:
    run_file = str(workspace / "run.json")
    assert main([*_eval(workspace, "--k", "1", "--out", run_file)]) == 0
    capsys.readouterr()
    assert main(["triage", "sample", run_file, "--n", "5", "--seed", "0", "--json"]) == 0
    sample = json.loads(capsys.readouterr().out)
    assert sample["method"] == "late" and sample["failed"] == len(sample["sample"])
    run = json.loads(Path(run_file).read_text("utf-8"))
    query_id = run["queries"][0]["id"]
    assert main(["triage", "tag", run_file, query_id, "boundary", "--note", "cut"]) == 0
    assert "as boundary (cut)" in capsys.readouterr().out
    assert (workspace / "store" / "triage.sqlite").is_file()
    assert main(["triage", "counts", run_file, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["counts"]["boundary"] == 1
    out_file = workspace / "regression.jsonl"
    assert main(["triage", "export", run_file, "--out", str(out_file)]) == 0
    (regression,) = read_queries(out_file)
    assert regression.id == query_id and regression.meta["tag"] == "boundary"
    assert main(["triage", "sample", run_file]) == 0
    text = capsys.readouterr().out
    assert "failed under late" in text
    assert main(["triage", "tag", run_file, "nope", "label"]) == 2
    assert "not in run" in capsys.readouterr().err


def test_the_regression_set_runs_again(workspace: Path, capsys) -> None:
    run_file = str(workspace / "run.json")
    assert main([*_eval(workspace, "--out", run_file)]) == 0
    run = json.loads(Path(run_file).read_text("utf-8"))
    for query in run["queries"]:
        assert main(["triage", "tag", run_file, query["id"], "other"]) == 0
    assert main(["triage", "export", run_file, "--out", str(workspace / "r.jsonl")]) == 0
    capsys.readouterr()
    rerun = [
        "eval",
        "--queries",
        str(workspace / "r.jsonl"),
        "--docs",
        str(workspace / "docs"),
        "--methods",
        "naive",
        "--json",
    ]
    assert main(rerun) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["n_queries"] == 4 and again["unresolved"] == []


def test_import_qa_resolves_with_docs(workspace: Path, capsys) -> None:
    table = workspace / "qa.csv"
    table.write_text(
        "question,evidence,page,file\n"
        "Who logs ships?,The harbour master logs every ship,,notes.md\n"
        "What is missing?,Nothing of this text is in the notes at all,,notes.md\n",
        "utf-8",
    )
    out = workspace / "qa.jsonl"
    argv = [
        "import-qa",
        str(table),
        "--question",
        "question",
        "--evidence",
        "evidence",
        "--page",
        "page",
        "--doc",
        "file",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    assert all(q.evidence and not q.gold for q in read_queries(out))
    assert main([*argv, "--docs", str(workspace / "docs" / "notes.md")]) == 0
    captured = capsys.readouterr()
    assert "1 query resolved: 1 exact, 0 aligned; 1 span; 1 unresolved" in captured.out
    assert "unresolved qa-1" in captured.err
    first, second = read_queries(out)
    assert first.gold[0].method == "exact" and first.doc_sha256 and not second.gold
    assert NOTES[first.gold[0].char_start : first.gold[0].char_end] == first.gold[0].text


def test_import_chunking_eval_command(tmp_path: Path, capsys) -> None:
    out = tmp_path / "shared.jsonl"
    assert main(["import-chunking-eval", str(EVAL_DIR), "--out", str(out)]) == 0
    assert "wrote 472 queries (790 gold spans verified, 5 documents)" in capsys.readouterr().out
    assert len(read_queries(out)) == 472


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--methods", "naive,fancy"], "unknown method 'fancy'"),
        (["--k", "0"], "at least 1"),
        (["--k", "a,b"], "positive integers"),
        (["--policy", "sentence", "--unit", "chars"], "counts in"),
    ],
)
def test_eval_user_errors(workspace: Path, capsys, extra: list[str], message: str) -> None:
    assert main([*_eval(workspace), *extra]) == 2
    assert message in capsys.readouterr().err


def test_missing_inputs_are_user_errors(workspace: Path, capsys) -> None:
    assert (
        main(
            ["eval", "--queries", str(workspace / "none.jsonl"), "--docs", str(workspace / "docs")]
        )
        == 2
    )
    assert "not found" in capsys.readouterr().err
    assert (
        main(
            ["eval", "--queries", str(workspace / "q.jsonl"), "--docs", str(workspace / "nowhere")]
        )
        == 2
    )
    assert "does not exist" in capsys.readouterr().err
    assert main(["triage", "sample", str(workspace / "none.json")]) == 2


@pytest.mark.slow
def test_eval_with_the_real_model(tmp_path: Path, capsys) -> None:
    text = (TEXT_CORPORA / "chatlogs.md").read_text("utf-8")[:8_000]
    (tmp_path / "chatlogs.md").write_text(text, "utf-8")
    shared = tmp_path / "shared.jsonl"
    assert main(["import-chunking-eval", str(EVAL_DIR), "--out", str(shared)]) == 0
    lines = [
        json.loads(line)
        for line in shared.read_text("utf-8").splitlines()
        if '"doc": "chatlogs"' in line
    ]
    small = [
        {k: v for k, v in x.items() if k != "doc_sha256"}
        for x in lines
        if all(g["char_end"] <= len(text) for g in x["gold"])
    ]
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(x) for x in small), "utf-8")
    capsys.readouterr()
    argv = [
        "eval",
        "--queries",
        str(tmp_path / "q.jsonl"),
        "--docs",
        str(tmp_path / "chatlogs.md"),
        "--methods",
        "naive,late",
        "--k",
        "1,5",
        "--json",
    ]
    assert main(argv) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["model"] == "all-MiniLM-L6-v2" and out["n_queries"] == len(small)
    assert out["metrics"]["naive"]["hit@5"] > 0.3
    assert "indexing (naive, late)" in captured.err


def test_an_out_path_that_cannot_be_written_is_refused_before_the_work(
    workspace: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a regular file no folder can be made: each writing command says so in one
    line, and eval says it before it loads the model or embeds anything."""
    blocker = workspace / "afile"
    blocker.write_text("", "utf-8")
    monkeypatch.setattr(options, "load_model", lambda args: pytest.fail("model loaded"))
    commands = [
        [*_eval(workspace), "--out", str(blocker / "run.json")],
        ["import-chunking-eval", str(EVAL_DIR), "--out", str(blocker / "q.jsonl")],
        ["import-qa", str(workspace / "q.jsonl"), "--question", "q", "--evidence", "e",
         "--page", "p", "--doc", "d", "--out", str(blocker / "deeper" / "q.jsonl")],
        ["triage", "export", str(workspace / "run.json"), "--out", str(blocker / "x.csv")],
    ]  # fmt: skip
    for argv in commands:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"error: cannot write --out {blocker}/"), err
        assert err.count("\n") == 1 and f"{blocker} is not a writable folder" in err
    assert main([*_eval(workspace), "--out", str(workspace)]) == 2
    assert capsys.readouterr().err == f"error: --out {workspace} is a folder: name a file\n"


def test_the_suggestions_repairs_read_the_runs_vector_cache(
    workspace: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.cli import eval_cmd
    from core.embed import VectorCache

    seen: list[object] = []
    real = eval_cmd.with_suggestions

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(kwargs["embed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(eval_cmd, "with_suggestions", spy)
    cache = workspace / "vectors"
    assert main(_eval(workspace, "--cache", str(cache))) == 0
    capsys.readouterr()
    [embed] = seen
    kept = getattr(embed, "keywords", {}).get("cache")
    assert isinstance(kept, VectorCache) and kept.folder == cache  # the late states it made
