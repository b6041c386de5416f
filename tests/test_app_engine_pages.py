"""Compare and Evaluate & triage under ``streamlit.testing.v1.AppTest`` (no browser).

Most tests swap the encoder for the deterministic ``FakeEncoder`` (fast); the test marked
``slow`` runs the real model on the bundled datasheet demo and checks that the late column
ranks the asked product's section above where the naive column has it.
"""

from __future__ import annotations

import functools
import html
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qs

import pytest
from fakes import FakeEncoder, fake_embed_chunks
from streamlit.testing.v1 import AppTest

from core import methods as methods_registry
from core.diagnose.track_record import record_of
from core.embed.records import LateWindow
from core.evaluate import TriageStore, export_tags, load_run, run_eval
from core.formats import load_document
from core.index.indexer import default_steps, index_documents
from core.render.markup import escape
from core.store import ChunkStore
from tests.data.injection import INJECTION_NAME, injection_pdf_bytes
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.evaluate import why
from workbench.state import (
    DepthKey,
    EngineKey,
    EvalKey,
    Key,
    policy_widget,
    tag_widget,
    unit_widget,
)
from workbench.widgets.wording import md

TIMEOUT_S = 300
CARD = re.compile(r'<b class="cs-rank">#(\d+)</b>.*?<div class="cs-path">(.*?)</div>', re.S)
ASKED = "Corvane HX40 › Operating temperature"


@pytest.fixture
def store_dir(tmp_path, monkeypatch):
    folder = tmp_path / "store"
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(folder))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    return folder


def one_window(doc) -> list[LateWindow]:
    n = len(doc.text)
    return [
        LateWindow(index=0, token_start=0, token_end=n // 4, owned_token_start=0,
                   owned_token_end=n // 4, char_start=0, char_end=n, owned_char_start=0,
                   owned_char_end=n)
    ]  # fmt: skip


@pytest.fixture
def fake(monkeypatch, store_dir):
    """The pages' engine on the fake encoder: index, compare and evaluate in milliseconds."""
    enc = FakeEncoder()
    monkeypatch.setattr(eng, "encoder", lambda: enc)
    steps = default_steps(fake_embed_chunks)
    monkeypatch.setattr(eng, "index_documents", functools.partial(index_documents, steps=steps))
    monkeypatch.setattr(eng, "windows_of", one_window)
    monkeypatch.setattr(eng, "late_window_tokens", lambda doc_tokens: (254, 510))
    monkeypatch.setattr(run_files, "run_eval", functools.partial(run_eval, embed=fake_embed_chunks))
    monkeypatch.setattr(why, "RANK_EMBED", fake_embed_chunks)  # the failure reader's ranks
    return enc


def index_demo(store_dir, enc, methods=None, docs=None, embed=None, policy=None):
    store = ChunkStore.open(store_dir)
    methods = methods or methods_registry.base_methods()
    report = index_documents(
        docs or list(eng.demo_documents().values()), policy=policy or eng.DEMO_POLICY,
        methods=methods,
        encoder=enc, store=store, steps=default_steps(embed or fake_embed_chunks),
        cache=eng.vector_cache(),
    )  # fmt: skip
    assert not report.cancelled and not any(d.error for d in report.documents)


def open_page(name: str) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    at.switch_page(f"pages/{name}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plain(markdown: str) -> str:
    """What a reader sees of markdown whose signs were escaped (``wording.md``)."""
    return re.sub(r"\\(.)", r"\1", markdown)


def column(at: AppTest, heading: str):
    found = [
        c for c in at.main.columns
        if c.subheader and c.subheader[0].value.replace("\u200b", "") == heading
    ]  # fmt: skip
    assert found, f"no column {heading!r}"
    return found[0]


def ranked(at: AppTest, heading: str) -> list[tuple[int, str]]:
    """``(rank, heading path)`` of every card in a method's column, in order."""
    bodies = [h.proto.body for h in column(at, heading).html]
    return [(int(r), html.unescape(p)) for b in bodies for r, p in CARD.findall(b)]


def wait_for_job(at: AppTest, seconds: float = 60) -> AppTest:
    deadline = time.monotonic() + seconds
    while at.session_state[EngineKey.JOB].running and time.monotonic() < deadline:
        time.sleep(0.2)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


# -- compare ------------------------------------------------------------------------------


def test_compare_indexes_the_demo_with_progress_then_shows_every_method(fake, store_dir):
    at = open_page("compare")
    assert any("Nothing is indexed" in i.value for i in at.info)
    # the form's own policy starts on the demo's, so both buttons index the same chunks
    assert at.button_group(key=policy_widget("index")).value == eng.DEMO_POLICY.name
    assert at.button_group(key=unit_widget("index", eng.DEMO_POLICY.name)).value == "tokens"
    demo = [b for b in at.button if b.label.startswith("Index the demo set")][0]
    demo.click().run()
    wait_for_job(at)
    assert any("5 of 5 document(s) indexed" in plain(s.value) for s in at.success)
    scales = {"naive": "cosine", "late": "cosine", "contextual": "cosine", "bm25": "BM25 score"}
    scales["hybrid(late,bm25;rrf60)"] = "RRF score (sum of 1/(K + rank))"
    for method, scale in scales.items():  # the default columns, each score named
        cards = ranked(at, method)
        assert [r for r, _ in cards] == list(range(1, 11))
        assert column(at, method).caption[0].value == f"45 chunks searched · {scale}"
    bm25 = [h.proto.body for h in column(at, "bm25").html]
    assert all("matched: " in b for b in bm25)  # the words that matched, on every hit
    fused = [h.proto.body for h in column(at, "hybrid(late,bm25;rrf60)").html]
    assert all("parts: late #" in b and "bm25 #" in b for b in fused)
    links = at.get("page_link")
    assert len(links) >= 30
    params = parse_qs(links[0].proto.query_string)
    assert links[0].proto.page.endswith("source") or "source" in links[0].proto.page
    assert set(params) >= {"doc", "span", "sha", "qh"}


def test_indexing_can_be_cancelled_from_the_page(fake, store_dir, monkeypatch):
    started = threading.Event()

    def held(docs, **kwargs):  # waits for the cancel button, then runs (and stops at once)
        started.set()
        deadline = time.monotonic() + 30
        while not kwargs["should_cancel"]() and time.monotonic() < deadline:
            time.sleep(0.02)
        return index_documents(docs, steps=default_steps(fake_embed_chunks), **kwargs)

    monkeypatch.setattr(eng, "index_documents", held)
    at = open_page("compare")
    [b for b in at.button if b.label.startswith("Index the demo set")][0].click().run()
    assert started.wait(10)
    bars = at.get("progress")
    assert bars and "Starting: 5 document(s)" in bars[0].proto.text
    assert not any("Nothing is indexed" in i.value for i in at.info)  # the bar says it
    [b for b in at.button if b.label == "Cancel indexing"][0].click().run()
    wait_for_job(at)
    assert any(plain(w.value).startswith("Cancelled: 0 of 5 document(s)") for w in at.warning)
    assert ChunkStore.open(store_dir).indexed_documents() == [] or all(
        not d.complete for d in ChunkStore.open(store_dir).indexed_documents()
    )


def test_a_cls_model_disables_late_and_every_fusion_of_it_and_says_why(fake, store_dir):
    fake.pooling = "cls"
    index_demo(store_dir, fake, methods=("naive", "contextual", "bm25"))
    at = open_page("compare")
    info = [plain(i.value) for i in at.info if "Late chunking is disabled" in plain(i.value)]
    assert len(info) == 1 and "mean-pooled" in info[0]
    assert len(ranked(at, "naive")) == 10 and len(ranked(at, "contextual")) == 10
    offered = at.multiselect(key=EngineKey.METHODS).options
    assert not any("late" in m for m in offered)  # late, and hybrid(late,bm25), are not
    assert "hybrid(naive,bm25;rrf60)" in offered
    stored = [m for m in methods_registry.base_methods() if m != "late"]
    assert at.multiselect(key=EngineKey.INDEX_METHODS).options == stored


def test_the_rerank_stage_adds_a_column_with_feature_contributions(fake, store_dir):
    index_demo(store_dir, fake)
    at = open_page("compare")
    at.toggle(key=EngineKey.RERANK).set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    cards = ranked(at, "late + rerank")
    assert [r for r, _ in cards] == list(range(1, 11))
    contributions = [d.value for d in at.dataframe if "total" in d.value.columns][0]
    assert {"score", "citation", "heading", "duplicate", "total", "was"} <= set(
        contributions.columns
    )
    sums = contributions[["score", "citation", "heading", "duplicate"]].sum(axis=1)
    assert (abs(sums - contributions["total"]) < 1e-3).all()


def test_one_document_scope_and_the_inspected_chunk(fake, store_dir):
    index_demo(store_dir, fake)
    at = open_page("compare")
    at.selectbox(key=EngineKey.SCOPE).select("datasheet-corvane-hx40").run()
    assert not at.exception, [e.value for e in at.exception]
    for method in ("naive", "late", "contextual"):
        assert column(at, method).caption[0].value == "9 chunks searched · cosine"
        assert all(p.startswith("Corvane HX40") for _, p in ranked(at, method))
    recs = ChunkStore.open(store_dir).scope_records(
        model=fake.name, method="late", policy=eng.DEMO_POLICY, doc_id="datasheet-corvane-hx40"
    )
    label = "Corvane HX40 › Warranty"
    (chunk_id,) = [
        i for i, m in zip(recs.ids, recs.metadatas, strict=True) if "Warranty" in m["heading_path"]
    ]
    at.selectbox(key=EngineKey.SELECTED).set_value(chunk_id).run()
    assert at.session_state[EngineKey.SELECTED] == chunk_id
    scores = [d.value for d in at.dataframe if "method" in d.value.columns][0]
    shown = dict(zip(scores["method"], scores["rank"], strict=True))
    for method in ("naive", "late", "contextual"):
        assert shown[method] == dict((p, r) for r, p in ranked(at, method))[label]


def test_document_text_reaches_the_compare_page_escaped(fake, store_dir):
    doc = load_document(injection_pdf_bytes(), name=INJECTION_NAME)
    index_demo(store_dir, fake, methods=("naive", "late"), docs=[doc])
    at = open_page("compare")
    at.text_input(key=EngineKey.QUERY_WIDGET).set_value("alert script").run()
    bodies = "\n".join(h.proto.body for h in at.html if "cs-hit" in h.proto.body)
    assert "&lt;script&gt;" in bodies or "&lt;img" in bodies
    assert "<script" not in bodies and "<img" not in bodies and "<svg" not in bodies


NOTES_V1 = (
    b"# Pump notes\n\n## Operating temperature\n\nThe Corvane HX40 pump runs from -20 to 60 C "
    b"when a < b & c holds.\n\n## Warranty\n\nTwo years from the date of purchase.\n"
)
BAD_BADGE = '<div class="cs-badge cs-badge-bad">'
NOTES_V2 = b"# Pump notes\n\n" + b"Rewritten: the old offsets now land on other words. " * 8


def test_a_changed_document_shows_the_stored_chunk_stale_not_highlighted(fake, store_dir):
    indexed = load_document(NOTES_V1, name="notes.txt")
    index_demo(store_dir, fake, methods=("naive", "late"), docs=[indexed])
    at = open_page("compare")
    at.session_state[Key.DOCS] = {indexed.doc_id: indexed}
    at.text_input(key=EngineKey.QUERY_WIDGET).set_value(eng.DEMO_QUERY)  # no demo indexed
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    bodies = "\n".join(h.proto.body for h in at.html)
    assert '<mark class="cs-hl"' in bodies and BAD_BADGE not in bodies

    changed = load_document(NOTES_V2, name="notes.txt")
    assert changed.doc_id == indexed.doc_id and changed.sha256 != indexed.sha256
    assert len(changed.text) > len(indexed.text)  # old offsets would land on new words
    at.session_state[Key.DOCS] = {changed.doc_id: changed}
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    bodies = "\n".join(h.proto.body for h in at.html)
    assert '<mark class="cs-hl"' not in bodies and '<mark class="cs-window"' not in bodies
    (badge,) = [h.proto.body for h in at.html if BAD_BADGE in h.proto.body]
    assert "Stale: the loaded notes is not the indexed version" in badge
    recs = ChunkStore.open(store_dir).scope_records(
        model=fake.name, method="naive", policy=eng.DEMO_POLICY, doc_id=indexed.doc_id
    )
    stored = dict(zip(recs.ids, recs.texts, strict=True))[at.session_state[EngineKey.SELECTED]]
    assert escape(stored) in badge and "<" not in re.sub(r"</?(div|strong)[^>]*>", "", badge)
    assert any("differs from the indexed version" in plain(c.value) for c in at.caption)


# -- evaluate and triage ------------------------------------------------------------------


def test_evaluate_runs_the_demo_and_tags_survive_a_restart(fake, store_dir, tmp_path):
    at = open_page("evaluate")
    assert any("No run yet" in i.value for i in at.info)
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = at.dataframe[0].value
    assert list(metrics.columns) == ["metric", "naive", "late", "bm25", "n"]  # first look
    assert set(metrics["n"]) == {"35"}
    assert not at.get("progress")[:-1]  # the run's bar is gone; the reader's stays
    run = load_run(store_dir / "runs" / f"{at.session_state[EvalKey.RUN]}.json")
    failed = {m: sum(q.failed[m] for q in run.queries) for m in run.methods}
    reader = at.selectbox(key=EvalKey.TRIAGE_METHOD)
    assert failed[reader.value] > 0  # the reader opens on a method with failures
    assert reader.format_func(reader.value) == f"{reader.value} ({failed[reader.value]} failed)"
    for cause in ("boundary", "context", "context"):
        at.button(key=tag_widget(cause)).click().run()
        assert not at.exception, [e.value for e in at.exception]
    run_id = at.session_state[EvalKey.RUN]
    tags = TriageStore(store_dir / "triage.sqlite").tags(run_id)
    assert sorted(t.cause for t in tags) == ["boundary", "context", "context"]

    again = open_page("evaluate")  # a new session: what a restart leaves
    assert again.session_state[EvalKey.RUN] == run_id
    bar = again.get("progress")[0].proto.text
    assert re.fullmatch(r"3 of \d+ read", bar)
    assert any(c.value.startswith("Not tagged yet") for c in again.caption)  # first untagged
    assert len(again.get("download_button")) == 2
    run = load_run(store_dir / "runs" / f"{run_id}.json")
    assert export_tags(TriageStore(store_dir / "triage.sqlite"), run, tmp_path / "t.jsonl") == 3


def test_opening_a_query_from_the_scatter_shows_its_card(fake, store_dir):
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    at.session_state[EvalKey.QUERY_ID] = "corvane-hx40-warranty"
    at.run()
    assert any(s.value == "Query opened from the chart" for s in at.subheader)
    assert any("Corvane HX40 warranty period" in h.proto.body for h in at.html)


# -- the real model -----------------------------------------------------------------------


@pytest.mark.slow
def test_compare_late_ranks_the_asked_products_section_higher(store_dir):
    from core.index.indexer import method_records

    index_demo(store_dir, eng.encoder(), embed=method_records)
    at = open_page("compare")
    assert at.text_input(key=EngineKey.QUERY_WIDGET).value == eng.DEMO_QUERY
    assert [s.value for s in at.subheader][:3] == ["naive", "late", "contextual"]
    k = at.number_input(key=EngineKey.K).value
    position = {m: dict((p, r) for r, p in ranked(at, m)) for m in ("naive", "late")}
    late_rank = position["late"][ASKED]
    naive_rank = position["naive"].get(ASKED, k + 1)
    assert late_rank < naive_rank, (late_rank, naive_rank)


def test_the_shared_set_runs_through_its_importer(fake, store_dir):
    at = open_page("evaluate")
    at.segmented_control(key=EvalKey.SOURCE).set_value("shared").run()
    assert at.multiselect(key=EvalKey.CORPORA).value == ["state_of_the_union"]
    at.number_input(key=EvalKey.LIMIT).set_value(4).run()
    assert any(c.value == "Labelled queries: 4 · documents: 1" for c in at.caption)
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = at.dataframe[0].value
    assert set(metrics["n"]) == {"4"}


def test_an_uploaded_query_set_with_a_bad_line_says_which_line(fake, store_dir):
    evidence = [{"text": "The manufacturer guarantees the unit for two years"}]
    good = {"id": "q1", "query": "warranty", "doc": "datasheet-corvane-hx40", "evidence": evidence}
    lines = [json.dumps(good), '{"id": "q2", "query": "no doc"}']
    at = open_page("evaluate")
    at.segmented_control(key=EvalKey.SOURCE).set_value("upload").run()
    files = [("set.jsonl", "\n".join(lines).encode(), "application/jsonl")]
    at.file_uploader(key=EvalKey.UPLOAD).set_value(files).run()
    (error,) = [plain(e.value) for e in at.error]
    assert "set.jsonl:2" in error and "doc" in error and "\n" not in error
    files = [("good.jsonl", lines[0].encode(), "application/jsonl")]
    at.file_uploader(key=EvalKey.UPLOAD).set_value(files).run()
    assert not at.error
    assert any(c.value == "Labelled queries: 1 · documents: 1" for c in at.caption)


# -- a Chroma server ----------------------------------------------------------------------


@pytest.fixture
def chroma_host(tmp_path):
    """``HOST:PORT`` of a fresh ``chroma run`` on loopback (stopped after the test)."""
    program = Path(sys.executable).parent / "chroma"
    if not program.exists():
        pytest.fail("the `chroma` program is missing: it is installed with chromadb")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(program), "run", "--path", str(tmp_path / "chroma"), "--host", "127.0.0.1"]
    log = (tmp_path / "chroma.log").open("wb")
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    server = subprocess.Popen([*command, "--port", str(port)], stdout=log, stderr=log, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1)
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.3)
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=15)
        log.close()


@pytest.mark.server
def test_compare_and_evaluate_work_against_a_chroma_server(
    fake, store_dir, chroma_host, monkeypatch
):
    monkeypatch.setenv("CHUNKSCOPE_CHROMA", chroma_host)
    store = ChunkStore.open(host=chroma_host)
    report = index_documents(
        list(eng.demo_documents().values()), policy=eng.DEMO_POLICY, methods=("naive", "late"),
        encoder=fake, store=store, steps=default_steps(fake_embed_chunks),
    )  # fmt: skip
    assert not any(d.error for d in report.documents)
    at = open_page("compare")
    assert at.session_state[Key.STORE_KIND] == "server"
    assert len(ranked(at, "naive")) == 10 and len(ranked(at, "late")) == 10
    at.switch_page("pages/evaluate.py").run()
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    run_id = at.session_state[EvalKey.RUN]
    assert (store_dir / "runs" / f"{run_id}.json").is_file()  # beside the default triage file


def test_markdown_from_labels_and_file_names_is_shown_as_written():
    assert md("![x](http://example.invalid/a.png)") == (
        "\\!\\[x\\]\\(http\\://example\\.invalid/a\\.png\\)"
    )
    assert md("report_v2 **final** $x$") == "report\\_v2 \\*\\*final\\*\\* \\$x\\$"


@pytest.mark.parametrize("page", ["pages/compare.py", "pages/evaluate.py"])
def test_a_model_folder_without_pooling_stops_the_page_with_one_line(
    page, store_dir, tmp_path, monkeypatch
):
    """No traceback: the reason and what to do, then the page stops; with the
    environment's pooling the same folder loads."""
    from test_embed_encoder import make_tiny_model

    from core.embed import load_encoder

    folder = make_tiny_model(tmp_path / "bare", pooling=None, max_seq_length=None)
    monkeypatch.setenv("CHUNKSCOPE_MODEL", str(folder))
    monkeypatch.delenv("CHUNKSCOPE_POOLING", raising=False)
    monkeypatch.setattr(eng, "encoder", lambda: load_encoder(device="cpu"))
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S)
    at.switch_page(page).run()
    assert not at.exception
    assert [plain(e.value) for e in at.error] == [
        f"{folder} has no sentence-transformers pooling config (modules.json, "
        "1_Pooling/config.json): pass --pooling mean or --pooling cls (or set CHUNKSCOPE_POOLING)"
    ]
    monkeypatch.setenv("CHUNKSCOPE_POOLING", "mean")
    at.run()
    assert not at.exception and not at.error


def test_evaluate_runs_a_fusion_added_with_the_builder(fake, store_dir):
    at = open_page("evaluate")
    at.multiselect(key=EvalKey.METHODS).set_value(["late", "bm25"]).run()
    builder = f"{EvalKey.METHODS}_fuse"
    at.multiselect(key=f"{builder}_parts").set_value(["late", "bm25"]).run()
    at.radio(key=f"{builder}_how").set_value("weighted").run()
    at.number_input(key=f"{builder}_w1").set_value(2.0).run()
    [b for b in at.button if b.label == "Add"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.multiselect(key=EvalKey.METHODS).value == ["late", "bm25", "hybrid(late,bm25;w1,2)"]
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = at.dataframe[0].value
    assert {"late", "bm25", "hybrid(late,bm25;w1,2)"} <= set(metrics.columns)
    pairs = at.selectbox(key=EvalKey.DELTA_PAIR).options
    assert any("hybrid(late,bm25;w1,2)" in p for p in pairs)


def test_any_chunk_ranks_at_full_depth_and_marked_answers_run_on_evaluate(fake, store_dir):
    index_demo(store_dir, fake)
    at = open_page("compare")
    assert any(s.value == "Where does a chunk rank?" for s in at.subheader)
    assert any("What moved this chunk's vectors?" in e.label for e in at.expander)
    at.text_input(key=DepthKey.FIND).set_value("warranty months").run()
    assert not at.exception, [e.value for e in at.exception]
    found = at.selectbox(key=DepthKey.FOUND)
    assert found.options and all("warranty" in o.lower() for o in found.options)
    table = [d.value for d in at.dataframe if "to enter the top 10" in d.value.columns][0]
    assert list(table["method"]) == list(at.multiselect(key=EngineKey.METHODS).value)
    for cell in table["rank"]:  # "rank of scope" at full depth, never "beyond"
        rank, scope = (int(x.replace(",", "")) for x in cell.split(" of "))
        assert 1 <= rank <= scope == 45
    [b for b in at.button if b.label == "Mark as the answer"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert [d.label for d in at.get("download_button")] == ["Download 1 marked"]
    at.switch_page("pages/evaluate.py").run()
    source = at.segmented_control(key=EvalKey.SOURCE)
    assert "Marked in Compare (1)" in source.options
    source.set_value("marked").run()
    assert any("Labelled queries: 1 · documents: 1" in c.value for c in at.caption)
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    metrics = at.dataframe[0].value
    assert set(metrics["n"]) == {"1"}


def test_the_reader_opens_the_diagnoses_the_run_stored_its_suggestions_from(
    fake, store_dir, monkeypatch
):
    """After Run, the suggestions are stored from a diagnosis of every failure; the reader
    opens the first failure from those diagnoses, not by diagnosing its method again."""
    why._diagnoses.clear()
    why._kept().clear()
    calls = []
    real = why.diagnose_run
    monkeypatch.setattr(why, "diagnose_run", lambda *a, **k: calls.append(1) or real(*a, **k))
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    panel = [h.proto.body for h in at.html if "Why it failed" in h.proto.body]
    assert len(panel) == 1 and "suggested: <b" in panel[0]
    assert why._kept() and calls == []  # kept from the stored suggestions, not made again
    why._kept().clear()  # without them, the reader diagnoses the method's failures itself
    at.run()
    assert calls and [h for h in at.html if "Why it failed" in h.proto.body]


def test_the_failure_reader_lays_out_the_evidence_and_stores_the_suggestion(fake, store_dir):
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(re.search(r"first gold chunk: .*rank \d+ of 45", c.value) for c in at.caption)
    panel = [h.proto.body for h in at.html if "Why it failed" in h.proto.body]
    assert len(panel) == 1 and "suggested: <b" in panel[0]
    suggested = re.search(r"suggested: <b[^>]*>(\w+)</b>", panel[0]).group(1)
    titles = [e.label for e in at.expander if " signal(s) hold" in e.label]
    lit = [e for e in at.expander if e.label.startswith(f"{suggested}:")]
    if lit and suggested == "context":  # its spans lit on the rendered datasheet page too
        bodies = [h.proto.body for h in lit[0].html]
        signal = "query terms outside the gold chunk: chars"
        assert any("cs-tip" in b and signal in b for b in bodies)
    # the demo's first failure is late chunking's: its section never names the product, but
    # late chunking reads the datasheet's title in its window, and bm25 ranks the gold 5th
    assert suggested == "method" and "bm25 ranks it 5th" in panel[0]
    # what a suggestion of method has been worth, measured on blind sets
    assert "Measured: " + escape(record_of("method").line()) in panel[0]
    assert "No repair of the gold applies" in panel[0]
    causes = ["parse", "label", "method", "boundary", "vocabulary", "context"]
    assert [t.split(":")[0] for t in titles] == causes
    if suggested != "other":  # the suggested cause is pre-selected until a human tags it
        assert at.button(key=tag_widget(suggested)).proto.type == "primary"
        at.button(key=tag_widget(suggested)).click().run()
        assert any("agreed with 1 of 1 tags" in c.value for c in at.caption)
    run_id = at.session_state[EvalKey.RUN]
    (tag,) = TriageStore(store_dir / "triage.sqlite").tags(run_id)
    assert tag.suggested == (suggested if suggested != "other" else "")


def test_every_failure_of_a_run_is_a_row_with_its_suggestion_and_experiments(fake, store_dir):
    """The failure table: one row per failed query and method, the stored suggestion with
    what decided it and its experiments, filtered by method."""
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = load_run(store_dir / "runs" / f"{at.session_state[EvalKey.RUN]}.json")
    failed = {(q.id, m) for q in run.queries for m in run.methods if q.failed[m]}
    assert not [d for d in at.dataframe if "experiments" in d.value.columns]  # on request
    at.toggle(key=f"{EvalKey.FAILS}on_{run.run_id}").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    (table,) = [d.value for d in at.dataframe if "experiments" in d.value.columns]
    assert set(zip(table["query"], table["method"], strict=True)) == failed
    docs = at.session_state[EvalKey.RUN_DOCS][run.run_id]
    for qid, method, cause, lines in zip(
        table["query"], table["method"], table["suggested"], table["experiments"], strict=True
    ):
        d = why.diagnoses_of(run, method, docs)[qid]  # the reader's own diagnosis
        assert cause == d.suggested and lines == " · ".join(e.line for e in d.experiments)
        assert lines  # every failure shows its experiments
        stored = run.query(qid).suggested[method]  # the saved run holds the same
        assert stored.cause == cause and [e["line"] for e in stored.experiments] == [
            e.line for e in d.experiments
        ]
    one = run.methods[0]
    at.multiselect(key=f"{EvalKey.FAILS}method_{run.run_id}").set_value([one]).run()
    (table,) = [d.value for d in at.dataframe if "experiments" in d.value.columns]
    assert set(table["method"]) <= {one} and len(table) == sum(m == one for _, m in failed)


def test_a_row_of_the_failure_table_opens_that_failure_in_the_reader(fake, store_dir, monkeypatch):
    """Picking a row (the table's selection callback) turns the reader to that method and
    to a sample and position showing that failure, even when the current sample lacks it
    (a sample of one failure: a seed drawing it is found)."""
    from core.evaluate import sample_failures
    from workbench.evaluate import triage

    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    run = load_run(store_dir / "runs" / f"{at.session_state[EvalKey.RUN]}.json")
    keys = [(q.id, m) for q in run.queries for m in run.methods if q.failed[m]]
    assert len({m for _, m in keys}) > 1 or len(keys) > 1
    monkeypatch.setattr(triage, "N_SAMPLE", 1)
    table = f"{EvalKey.FAILS}table_{run.run_id}"
    for row, (qid, method) in enumerate(keys):
        state = {table: {"selection": {"rows": [row], "columns": []}}, EvalKey.TRIAGE_SEED: 0}
        monkeypatch.setattr(triage.st, "session_state", state)
        triage.open_row(run, keys, table)
        assert state[EvalKey.TRIAGE_METHOD] == method
        sample = sample_failures(run, method, n=1, seed=state[EvalKey.TRIAGE_SEED])
        assert sample[state[EvalKey.TRIAGE_POS]].query_id == qid
    monkeypatch.undo()
    # the page reads what the callback set: the reader shows the picked failure
    qid, method = keys[-1]
    seed, pos = triage.reader_place(run, method, qid, 0)
    at.session_state[EvalKey.TRIAGE_METHOD] = method
    at.session_state[EvalKey.TRIAGE_SEED] = seed
    at.session_state[EvalKey.TRIAGE_POS] = pos
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    shown = sample_failures(run, method, n=triage.N_SAMPLE, seed=seed)[pos]
    assert shown.query_id == qid
    assert any(f"Failure {pos + 1} of" in m.value and method in m.value for m in at.markdown)
