"""Golden files pin the ``--json`` contracts of parse, chunk, query and eval.

Each output is normalised (timings, dates, code versions and temporary paths replaced by
placeholders) and compared with ``tests/data/golden/<name>.json``. After an intended
change of a contract, regenerate them on purpose with ``CHUNKSCOPE_UPDATE_GOLDEN=1
make test`` and review the diff; CI fails while that flag is set.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fakes import FakeEncoder, fake_embed_chunks

import core.embed
import core.methods.embedding
from core.cli import main

GOLDEN = Path(__file__).parent / "data" / "golden"
UPDATE = os.environ.get("CHUNKSCOPE_UPDATE_GOLDEN") == "1"
PUMP = """# Pump P-200

## Overheating

When the motor passes 90 degrees Celsius, the unit stops and the red lamp blinks.
However, it restarts by itself once cool.

## Cleaning

Rinse the intake grille every month; the unit keeps its airflow steady.
"""
LEDGER = (
    "A ledger records every payment made by the shop, with its date and amount.\n\n"
    "Entries are never edited, only reversed by a new entry that cancels them.\n"
)
VOLATILE = {"elapsed_s", "created_at", "code_version", "timings", "updated_at"}


def _normalise(value, tmp: str):
    if isinstance(value, dict):
        return {k: "<volatile>" if k in VOLATILE else _normalise(v, tmp) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v, tmp) for v in value]
    if isinstance(value, str) and tmp in value:
        return value.replace(tmp, "<tmp>")
    return value


def _check(name: str, output: str, tmp: Path) -> None:
    found = _normalise(json.loads(output), str(tmp))
    path = GOLDEN / f"{name}.json"
    if UPDATE:
        path.write_text(json.dumps(found, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    expected = json.loads(path.read_text(encoding="utf-8"))
    assert found == expected, f"{name}: the --json contract changed (see {path})"


def _run(capsys, *argv) -> str:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert rc == 0, err
    return out


@pytest.fixture()
def files(tmp_path, monkeypatch):
    monkeypatch.setattr(core.embed, "load_encoder", lambda *a, **k: FakeEncoder())
    monkeypatch.setattr(core.methods.embedding, "embed_chunks", fake_embed_chunks)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pump.md").write_text(PUMP, encoding="utf-8")
    (tmp_path / "ledger.txt").write_text(LEDGER, encoding="utf-8")
    return tmp_path


def test_parse_and_chunk_json(files, capsys):
    _check("parse", _run(capsys, "parse", files / "pump.md", "--json", "--with-text"), files)
    out = _run(capsys, "chunk", files / "pump.md", "--policy", "sentence", "--json", "--with-text")
    _check("chunk", out, files)


def test_query_json(files, capsys):
    store = files / "store"
    fixed = ["--policy", "fixed", "--size", "120", "--overlap", "0"]
    _run(capsys, "index", files, *fixed, "--methods", "naive,bm25", "--store", store, "--json")
    methods = "naive,bm25,hybrid(naive,bm25;rrf60)"
    out = _run(
        capsys,
        "query",
        "motor too hot",
        "--methods",
        methods,
        "--store",
        store,
        "--k",
        "2",
        "--json",
        *fixed,
    )
    _check("query", out, files)


def test_eval_json(files, capsys):
    text = (files / "pump.md").read_text(encoding="utf-8")
    start = text.index("When the motor")
    gold = {"char_start": start, "char_end": start + 81}
    lines = [
        {
            "id": "hot",
            "query": "what happens when the motor overheats",
            "doc": "pump",
            "gold": [gold],
        }
    ]
    (files / "q.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = _run(
        capsys, "eval", "--queries", files / "q.jsonl", "--docs", files / "pump.md",
        "--methods", "naive,bm25", "--k", "1,5", "--policy", "fixed", "--size", "120",
        "--overlap", "0", "--json",
    )  # fmt: skip
    _check("eval", out, files)


def test_the_regeneration_flag_is_never_left_on_in_ci():
    assert not (UPDATE and os.environ.get("CI")), "CHUNKSCOPE_UPDATE_GOLDEN is set in CI"
