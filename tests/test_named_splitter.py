"""An imported set whose rows name their splitter (``metadata.splitter`` with
``chunk_size`` and ``chunk_overlap``) offers it as the live policy that remakes the set:
the import says so with the flags to run it, the Chunks page runs it in the panel with
the set's size and overlap, and Tune fills its sweep with it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.chunk import policy_registry as registry
from core.cli import main
from core.formats import load_document
from core.imported import import_chunks, read_file
from core.imported.named_splitter import NamedSplitter, offer_line, set_splitter, splitter_named
from tests.conftest import SAMPLE_DOCS
from workbench.state import (
    TuneKey,
    live_policy_widget,
    overlap_widget,
    policy_widget,
    size_widget,
    tune_own_overlaps_widget,
    tune_own_sizes_widget,
)

SOTU = SAMPLE_DOCS / "state_of_the_union.md"
SPLITTER = "langchain:RecursiveCharacterTextSplitter"


@pytest.fixture(autouse=True)
def _forget() -> Iterator[None]:
    yield
    for name in registry.fixed_names():
        registry.unregister_fixed(name)
    for name in registry.policy_names():
        if registry.get(name).live:
            registry.unregister(name)


def test_the_ways_a_row_names_its_splitter() -> None:
    meta = {"splitter": "RecursiveCharacterTextSplitter", "chunk_size": 1000, "chunk_overlap": 150}
    assert splitter_named(meta, "langchain") == NamedSplitter(SPLITTER, 1000, 150)
    assert splitter_named(meta, "llamaindex") == NamedSplitter(
        "llamaindex:RecursiveCharacterTextSplitter", 1000, 150
    )
    assert splitter_named(meta, "chunks") is None  # a bare class of plain rows: which library?
    for written in (
        SPLITTER,
        "langchain_text_splitters.RecursiveCharacterTextSplitter",
        "langchain_text_splitters.character.RecursiveCharacterTextSplitter",
    ):
        assert splitter_named({"splitter": written}, "chunks") == NamedSplitter(SPLITTER)
    assert splitter_named(
        {"splitter": "llama_index.core.node_parser.SentenceSplitter", "chunk_size": "512"}, "x"
    ) == NamedSplitter("llamaindex:SentenceSplitter", 512, None)
    assert splitter_named({"splitter": "os.system"}, "langchain") is None  # not a splitter library
    assert splitter_named({"splitter": "py:evil:thing"}, "langchain") is None  # never py:
    # a setting no splitter runs at is left out, the name kept
    bad = {"splitter": SPLITTER, "chunk_size": 100, "chunk_overlap": 150}
    assert splitter_named(bad, "langchain") == NamedSplitter(SPLITTER)
    assert splitter_named({"chunk_size": 100}, "langchain") is None


def test_a_set_sums_up_what_its_rows_name() -> None:
    a, b = NamedSplitter(SPLITTER, 1000, 150), NamedSplitter(SPLITTER, 800, 150)
    assert set_splitter([a, a, None], 3) == {
        "policy": SPLITTER, "rows": 2, "of": 3, "size": 1000, "overlap": 150,
        "per_page": False, "others": [],
    }  # fmt: skip
    mixed = set_splitter([a, b, NamedSplitter("chonkie:TokenChunker")], 3)
    assert mixed is not None
    assert (mixed["rows"], mixed["size"], mixed["overlap"]) == (2, None, None)  # no one size
    assert mixed["others"] == ["chonkie:TokenChunker"]
    assert set_splitter([None, None], 2) is None


def named_rows(size: int = 600, overlap: int = 60) -> list[dict]:
    from langchain_core.documents import Document as LCDocument
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    text = SOTU.read_text(encoding="utf-8")
    docs = RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, add_start_index=True
    ).split_documents([LCDocument(page_content=text, metadata={"source": SOTU.name})])
    rows = [d.model_dump() for d in docs]
    for row in rows:  # as a pipeline records what made its chunks
        row["metadata"] |= {"splitter": "RecursiveCharacterTextSplitter",
                            "chunk_size": size, "chunk_overlap": overlap}  # fmt: skip
    return rows


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_the_import_keeps_and_offers_the_named_splitter(tmp_path: Path, capsys) -> None:
    pytest.importorskip("langchain_text_splitters")
    rows = named_rows()
    shape, chunks = read_file(_jsonl(rows), "rows.jsonl")
    chunk_set, _ = import_chunks(chunks, [load_document(SOTU)], name="mine", shape=shape,
                                 origin="rows.jsonl")  # fmt: skip
    assert chunk_set.checks["splitter"] == {
        "policy": SPLITTER, "rows": len(rows), "of": len(rows), "size": 600, "overlap": 60,
        "per_page": False, "others": [],
    }  # fmt: skip
    (tmp_path / "rows.jsonl").write_bytes(_jsonl(rows))
    store = tmp_path / "store"
    args = ["import-chunks", str(tmp_path / "rows.jsonl"), "--docs", str(SOTU),
            "--store", str(store), "--name", "named"]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    assert (
        f"Every row names its splitter, {SPLITTER} at chunk_size 600, chunk_overlap 60: run it "
        f"live with `--policy {SPLITTER} --size 600 --overlap 60`"
    ) in out
    assert main([*args, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["checks"]["splitter"]["policy"] == SPLITTER
    # the offer holds: the live policy at those settings remakes the imported boundaries
    assert main(["chunk", str(SOTU), "--policy", SPLITTER, "--size", "600", "--overlap", "60",
                 "--json"]) == 0  # fmt: skip
    remade = [c["text"] for c in json.loads(capsys.readouterr().out)["chunks"]]
    assert remade == [r["page_content"] for r in rows]


def _app(store: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(store))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    return AppTest.from_file("../app.py", default_timeout=300).run()


def _keep_set(tmp_path: Path, capsys) -> Path:
    (tmp_path / "rows.jsonl").write_bytes(_jsonl(named_rows()))
    store = tmp_path / "store"
    assert main(["import-chunks", str(tmp_path / "rows.jsonl"), "--docs", str(SOTU),
                 "--store", str(store), "--name", "named"]) == 0  # fmt: skip
    capsys.readouterr()
    return store


def test_the_chunks_page_runs_the_named_splitter_live(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("langchain_text_splitters")
    at = _app(_keep_set(tmp_path, capsys), monkeypatch)
    at.switch_page("pages/chunks.py").run()
    from workbench.state import Key

    at.session_state[Key.DOC] = "state_of_the_union"
    at.run()
    at.segmented_control(key=policy_widget("a")).set_value("named").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(
        "Its rows name their splitter" in c.value and "chunk_size 600" in c.value
        for c in at.caption
    ), [c.value for c in at.caption]
    [b for b in at.button if b.label == "Run its splitter live"][0].click().run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert at.text_input(key=live_policy_widget("a")).value == SPLITTER
    assert at.session_state[size_widget("a", SPLITTER, "chars")] == 600
    assert at.session_state[overlap_widget("a", SPLITTER, "chars")] == 60
    assert any(f"{SPLITTER}-chars-600-60" in m.value for m in at.markdown), [
        m.value for m in at.markdown
    ]


def test_tune_fills_its_sweep_with_the_named_splitter(tmp_path: Path, capsys, monkeypatch) -> None:
    pytest.importorskip("langchain_text_splitters")
    at = _app(_keep_set(tmp_path, capsys), monkeypatch)
    at.switch_page("pages/tune.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("The imported set named names its splitter" in c.value for c in at.caption)
    [b for b in at.button if b.label == "Sweep its splitter"][0].click().run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert at.text_input(key=TuneKey.LIVE_POLICY).value == SPLITTER
    assert at.multiselect(key=tune_own_sizes_widget("chars")).value == [300, 600, 1200]
    assert at.multiselect(key=tune_own_overlaps_widget("chars")).value == ["60"]
    assert any(c.value.startswith("6 points × 3 methods") for c in at.caption), [
        c.value for c in at.caption
    ]  # ours at 3 sizes beside its 3


def test_rows_of_a_per_page_loader_offer_the_splitter_page_by_page(tmp_path: Path) -> None:
    pytest.importorskip("langchain_text_splitters")
    from core.bench.byo_cases import pipeline_rows
    from tests.conftest import CORPUS

    pdf = CORPUS / "financebench" / "pdfs" / "MGMRESORTS_2022Q4_EARNINGS.pdf"
    rows = pipeline_rows([pdf], 1000, 150)  # PyPDFLoader pages through the splitter
    for row in rows:
        row["metadata"] |= {"splitter": "RecursiveCharacterTextSplitter",
                            "chunk_size": 1000, "chunk_overlap": 150}  # fmt: skip
    shape, chunks = read_file(_jsonl(rows), "rows.jsonl")
    chunk_set, _ = import_chunks(chunks, [load_document(pdf)], name="paged", shape=shape,
                                 origin="rows.jsonl")  # fmt: skip
    named = chunk_set.checks["splitter"]
    assert named["policy"] == f"{SPLITTER}(per_page=True)" and named["per_page"]
    assert registry.get(named["policy"]).name == named["policy"]  # a policy that resolves
    assert f"`--policy {SPLITTER} --per-page --size 1000 --overlap 150`" in offer_line(named)
    # without pages (one text split whole) the offer runs it on the whole text
    for row in rows:
        del row["metadata"]["page"], row["metadata"]["page_label"]
    shape, chunks = read_file(_jsonl(rows), "rows.jsonl")
    whole = set_splitter((c.splitter for c in chunks), len(chunks))
    assert whole is not None and whole["policy"] == SPLITTER and not whole["per_page"]
