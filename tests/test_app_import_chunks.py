"""Imported chunks in the workbench: the Library's import form and audit, the set offered
as a policy on Chunks with its wrong claims shown beside the true place, and a set kept by
the command line offered the same way, and Compare ranking exactly the imported spans."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs

import pymupdf
import pytest
from langchain_core.documents import Document as LCDocument
from langchain_text_splitters import RecursiveCharacterTextSplitter
from streamlit.testing.v1 import AppTest

from core.chunk import policy_registry as registry
from core.cli import main
from core.evaluate import load_run
from core.evaluate.imported_run import claims_pending
from core.formats import load_document
from core.imported import import_chunks, read_file, save_chunk_set
from core.imported.shapes import ForeignChunk
from core.methods import unregister
from core.provenance.types import Document
from tests.conftest import SAMPLE_DOCS
from tests.fakes import FakeEncoder
from tests.test_app_engine_pages import fake, wait_for_job
from tests.test_app_engine_pages import open_page as engine_page
from tests.test_app_pages import app, html_of, open_page, plain, store_dir
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.evaluate import run_import
from workbench.state import EngineKey, EvalKey, ImportKey, RunImportKey, policy_widget

__all__ = ["app", "fake", "store_dir"]  # fixtures, imported for pytest

SOTU = SAMPLE_DOCS / "state_of_the_union.md"


@pytest.fixture(autouse=True)
def _no_leftover_sets() -> Iterator[None]:
    yield
    for name in registry.fixed_names():  # later tests list the built-in policies only
        registry.unregister_fixed(name)
    unregister("yours")  # an imported retriever stays out of later tests' registry


def rows_with_a_wrong_claim() -> tuple[bytes, int, int]:
    """LangChain rows of the sample speech; row 4 claims 7 characters too far on."""
    text = SOTU.read_text(encoding="utf-8")
    docs = RecursiveCharacterTextSplitter(
        chunk_size=600, chunk_overlap=60, add_start_index=True
    ).split_documents([LCDocument(page_content=text, metadata={"source": SOTU.name})])
    rows = [d.model_dump() for d in docs]
    truth = rows[3]["metadata"]["start_index"]
    rows[3]["metadata"]["start_index"] = truth + 7
    return "".join(json.dumps(r) + "\n" for r in rows).encode(), len(rows), truth


def test_import_form_audits_and_the_chunks_page_draws_the_set(app: AppTest) -> None:
    data, count, truth = rows_with_a_wrong_claim()
    app.file_uploader(key=ImportKey.UPLOAD).set_value(
        [("speech.jsonl", data, "application/octet-stream")]
    )
    app.text_input[0].set_value("speech")  # the set name of the file form
    next(b for b in app.button if b.label == "Import").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    values = {m.label: m.value for m in app.metric}
    assert values["Chunks"] == f"{count:,}" and values["Exact"] == f"{count:,}"
    assert "Wrong claims" not in values  # a bare count read as a clean bill
    lines = [plain(m.value) for m in app.markdown]
    assert f"**Offsets: 1 wrong of {count:,} checked**" in lines, lines
    table = app.dataframe[-1].value
    assert list(table["#"]) == [4] and list(table["claim"]) == ["wrong"]
    assert table["why"][0] == f"offset wrong: text at {truth:,}"  # short, read whole
    assert f"text is at {truth:,}" in table["detail"][0]  # the full line stays
    assert table["open"][0].startswith("source?doc=state_of_the_union")

    at = open_page(app, "chunks")
    app.sidebar.selectbox[0].set_value("state_of_the_union").run()
    at.segmented_control(key=policy_widget("a")).set_value("speech").run()
    assert not at.exception
    captions = " ".join(plain(c.value) for c in at.caption)
    assert "Boundaries as imported" in captions
    assert f"{count:,} imported chunks of this document: exact {count:,}" in captions
    assert "1 wrong claimed offsets, 0 wrong claimed pages" in captions
    assert f"Where it is: chars {truth:,}-" in captions
    assert "Where it claims to be" in captions
    assert not [s for s in at.slider if s.label.startswith("Size")]  # fixed boundaries
    assert 'class="cs-hl"' in html_of(at)


def test_a_chunk_has_one_number_in_the_audit_and_on_the_chunks_page(app: AppTest) -> None:
    """Rows in reverse text order: the wrong claim, the file's row 4 from the end, is
    chunk 4 where the Chunks page draws the set, and the audit says 4 too."""
    data, count, truth = rows_with_a_wrong_claim()
    reversed_rows = "".join(reversed(data.decode().splitlines(keepends=True))).encode()
    app.file_uploader(key=ImportKey.UPLOAD).set_value(
        [("backwards.jsonl", reversed_rows, "application/octet-stream")]
    )
    app.text_input[0].set_value("backwards")
    next(b for b in app.button if b.label == "Import").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    table = app.dataframe[-1].value
    assert list(table["claim"]) == ["wrong"]
    in_audit = int(table["#"].iloc[0])

    at = open_page(app, "chunks")
    app.sidebar.selectbox[0].set_value("state_of_the_union").run()
    at.segmented_control(key=policy_widget("a")).set_value("backwards").run()
    assert not at.exception
    drawn = re.search(rf"chunk (\d+): chars {truth}-", html_of(at))
    assert drawn is not None
    assert in_audit == int(drawn.group(1)) == 4
    assert list(table["row"]) == [count - 3]  # where to find it in the file
    lines = [plain(m.value) for m in at.markdown]
    assert any(line.startswith(f"**Chunk 4** (row {count - 3};") for line in lines), lines


def test_a_set_kept_by_the_command_line_is_offered(app: AppTest, store_dir, capsys) -> None:
    data, _, _ = rows_with_a_wrong_claim()
    file = store_dir.parent / "cli.jsonl"
    file.write_bytes(data)
    code = main(["import-chunks", str(file), "--docs", str(SOTU), "--name", "from_cli",
                 "--store", str(store_dir)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    at = open_page(app, "chunks")
    assert "from_cli" in at.segmented_control(key=policy_widget("a")).options
    lib = open_page(app, "library")
    assert "from_cli" in lib.selectbox(key=ImportKey.PICK).options


def test_the_panel_shows_the_set_just_imported(app: AppTest, store_dir, capsys) -> None:
    data, count, _ = rows_with_a_wrong_claim()
    file = store_dir.parent / "cli.jsonl"
    file.write_bytes(data)
    for name in ("aaa", "bbb"):  # two sets kept before, both ahead of "speech"
        code = main(["import-chunks", str(file), "--docs", str(SOTU), "--name", name,
                     "--store", str(store_dir)])  # fmt: skip
        assert code == 0, capsys.readouterr().err
    lib = open_page(app, "library")
    assert lib.selectbox(key=ImportKey.PICK).value == "aaa"  # nothing imported yet here
    lib.file_uploader(key=ImportKey.UPLOAD).set_value(
        [("speech.jsonl", data, "application/octet-stream")]
    )
    lib.text_input[0].set_value("speech")
    next(b for b in lib.button if b.label == "Import").click().run()
    assert not lib.exception and not lib.error, [e.value for e in lib.error]
    assert lib.selectbox(key=ImportKey.PICK).value == "speech"
    done = [plain(s.value) for s in lib.success]
    assert any(f"Imported speech: {count:,} chunks of 1 document(s)" in d for d in done), done
    assert any("**speech** from speech.jsonl" in plain(c.value) for c in lib.caption)


def test_compare_ranks_exactly_the_imported_spans(fake, store_dir) -> None:
    """Index the demo datasheets under an imported set (another extractor's page text cut
    into windows) and find every card of every method on one of the set's spans."""

    from core.imported.shapes import ForeignChunk

    docs = list(eng.demo_documents().values())
    chunks: list[ForeignChunk] = []
    for doc in docs:
        with pymupdf.open(doc.source) as pdf:
            text = "".join(page.get_text() for page in pdf)
        for start in range(0, len(text), 300):
            chunks.append(ForeignChunk(index=len(chunks), text=text[start : start + 400],
                                       source=doc.doc_id, claimed_start=None, claimed_end=None,
                                       page=1, foreign_id=f"w{len(chunks)}"))  # fmt: skip
    chunk_set, _ = import_chunks(chunks, docs, name="windows", shape="chunks", origin="test")
    save_chunk_set(store_dir / "chunksets", chunk_set)
    spans = {(c.anchor.doc_id, c.anchor.char_start, c.anchor.char_end) for c in chunk_set.chunks}
    at = engine_page("compare")
    at.button_group(key=policy_widget("index")).set_value("windows").run()
    at.multiselect(key=EngineKey.INDEX_DOCS).set_value([d.doc_id for d in docs]).run()
    next(b for b in at.button if b.label == "Index").click().run()
    wait_for_job(at)
    links = [parse_qs(link.proto.query_string) for link in at.get("page_link")]
    cited = [(q["doc"][0], *map(int, q["span"][0].split("-"))) for q in links if "span" in q]
    assert len(cited) >= 30
    assert set(cited) <= spans


def import_speech_run(store_dir, methods: list[str], *, wait: bool = True) -> AppTest:
    """Evaluate with a retriever's log over an imported set of the speech imported beside
    ``methods``: four queries, its gold ranked first for two; with ``wait``, once our
    methods have joined the run."""
    from core.library import Library

    data, _, _ = rows_with_a_wrong_claim()
    doc = load_document(SOTU)
    Library.in_folder(store_dir / "library").add(
        SOTU.read_bytes(), name=SOTU.name, doc_id=doc.doc_id, sha256=doc.sha256
    )
    shape, rows = read_file(data, "speech.jsonl")
    chunk_set, _ = import_chunks(rows, [doc], name="speech", shape=shape, origin="speech.jsonl")
    save_chunk_set(store_dir / "chunksets", chunk_set)
    placed = [c for c in chunk_set.chunks if c.anchor.char_start is not None]
    texts = [c.given.text for c in placed]
    labels, log = [], []
    for i in range(4):  # the gold is chunk 10 i; the log ranks it first for two queries
        gold = placed[10 * i].anchor
        labels.append(
            {
                "id": f"q{i}",
                "query": f"question {i}",
                "doc": doc.doc_id,
                "gold": [{"char_start": gold.char_start, "char_end": gold.char_start + 40}],
            }
        )
        order = [texts[10 * i], texts[3]] if i < 2 else [texts[3], texts[4], "Not in the speech."]
        log.append({"query_id": f"q{i}", "hits": [{"text": t} for t in order]})
    at = engine_page("evaluate")
    at.file_uploader(key=RunImportKey.TRACE).set_value(
        [("log.jsonl", "".join(json.dumps(x) + "\n" for x in log).encode(), "application/json")]
    )
    at.file_uploader(key=RunImportKey.LABELS).set_value(
        [("q.jsonl", "".join(json.dumps(x) + "\n" for x in labels).encode(), "application/json")]
    )
    at.multiselect(key=RunImportKey.METHODS).set_value(methods)
    next(b for b in at.button if b.label == "Import the run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return wait_for_methods(at) if wait else at


def wait_for_methods(at: AppTest, seconds: float = 60) -> AppTest:
    """The page once the job adding our methods to the shown run has ended."""
    job = run_import.live_jobs().get(at.session_state[EvalKey.RUN])
    deadline = time.monotonic() + seconds
    while job is not None and job.running and time.monotonic() < deadline:
        time.sleep(0.1)
    at.run()  # the job's summary, then the page again with the grown run
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_evaluate_imports_a_run_and_reads_its_failures(fake, store_dir) -> None:
    """A retriever's log over an imported set of the speech: scored as `yours` beside
    bm25, its failures read first, what the import could not place said above."""
    at = import_speech_run(store_dir, ["bm25"])
    table = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    mrr = table[table["metric"] == "mrr"]
    assert float(mrr["yours"].iloc[0]) == 0.5 and "4" in str(mrr["n"].iloc[0]).split("/")
    captions = " ".join(plain(c.value) for c in at.caption)
    assert "**yours** imported from log.jsonl (hits) over chunk set **speech**" in captions
    assert "2 of 10 hits outside the set" in captions
    assert "yours: hit@5, hit@10," in captions and "(past its log's depth of 3)" in captions
    assert at.selectbox(key=EvalKey.TRIAGE_METHOD).value == "yours"
    unregister("yours")  # a fresh session knows the retriever from the run file alone
    run_files._load_run.clear()  # read again from the file
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.selectbox(key=EvalKey.TRIAGE_METHOD).value == "yours"
    cards = " ".join(h.proto.body for h in at.get("html"))
    assert "1/rank" in cards  # its hits' scores named by the run's own scale


def test_the_deltas_open_on_yours_against_our_best_method(fake, store_dir) -> None:
    at = import_speech_run(store_dir, ["bm25", "naive"])
    table = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    hit = table[table["metric"] == "hit@10"].iloc[0]
    mrr = table[table["metric"] == "mrr"].iloc[0]
    ours = ["bm25", "naive"]
    best = max(ours, key=lambda m: (float(hit[m]), float(mrr[m])))
    picker = at.selectbox(key=EvalKey.DELTA_PAIR)
    assert len(picker.options) == 3  # every pair of the three methods
    assert set(picker.value.split("-")) == {"yours", best}, (picker.value, best)


def test_a_pdf_loaders_set_shows_wrong_pages_and_offsets_in_its_text(
    app: AppTest, store_dir, capsys
) -> None:
    from core.imported.loader_text import extractor_label
    from tests.test_loader_claims import SIGCONF, page_texts, rows_of, seeded

    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    moved_offset, minus_one, moved_page = seeded(rows, page_texts(SIGCONF, "pypdf"))
    file = store_dir.parent / "pdf_rows.jsonl"
    file.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    code = main(["import-chunks", str(file), "--docs", str(SIGCONF), "--name", "paper",
                 "--store", str(store_dir)])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    label = extractor_label("pypdf")
    lib = open_page(app, "library")
    lib.selectbox(key=ImportKey.PICK).set_value("paper").run()
    lines = [plain(m.value) for m in lib.markdown]
    assert f"**Offsets: 2 wrong of {len(rows)} checked (in {label}'s page text)**" in lines
    table = lib.dataframe[-1].value
    assert set(table["#"]) == {moved_offset + 1, minus_one + 1, moved_page + 1}
    claimed = rows[moved_page]["metadata"]["page"] + 1
    cell = table[table["#"] == moved_page + 1]["page"].iloc[0]
    assert cell.startswith(f"claims p. {claimed}, is on p. ")
    why = dict(zip(table["#"], table["why"], strict=True))
    assert why[moved_page + 1] == "page wrong"  # the page cell says which, not again here
    assert why[moved_offset + 1].startswith("offset wrong: text at ")
    on_page = rows[moved_offset]["metadata"]["page"] + 1
    assert why[moved_offset + 1].endswith(f"in {label}'s p. {on_page}")
    assert all(len(w) <= 60 for w in table["why"]), list(table["why"])

    at = open_page(app, "chunks")
    app.sidebar.selectbox[0].set_value(SIGCONF.stem).run()
    at.segmented_control(key=policy_widget("a")).set_value("paper").run()
    assert not at.exception
    captions = " ".join(plain(c.value) for c in at.caption)
    assert f"2 wrong claimed offsets (checked in {label}'s page text), 1 wrong claimed pages" in (
        captions
    )
    assert f"of {label}'s text of p. 1" in captions  # the moved offset, in the loader's text


class GatedEncoder(FakeEncoder):
    """The fake encoder, each call held until ``gate`` opens: our methods cannot finish
    before the test lets them (the retriever's run encodes nothing)."""

    def __init__(self, gate: threading.Event) -> None:
        super().__init__()
        self.gate = gate

    def encode_texts(self, texts, progress=None):
        assert self.gate.wait(60), "the test never opened the gate"
        return super().encode_texts(texts, progress=progress)


def metric_columns(at: AppTest) -> list[str]:
    table = next(d.value for d in at.dataframe if "metric" in d.value.columns)
    return [c for c in table.columns if c not in ("metric", "n")]


def test_your_failures_are_read_while_our_methods_are_computed(
    fake, store_dir, monkeypatch
) -> None:
    gate = threading.Event()
    gated = GatedEncoder(gate)
    monkeypatch.setattr(eng, "encoder", lambda: gated)
    at = import_speech_run(store_dir, ["bm25", "naive"], wait=False)
    run_id = at.session_state[EvalKey.RUN]
    job = run_import.live_jobs()[run_id]
    assert job.running  # ours are held at the gate; yours is on the page already
    names = ", ".join(job.methods)
    assert set(job.methods) == {"naive", "bm25"}
    assert metric_columns(at) == ["yours"]  # no column of a method the run does not hold
    reader = at.selectbox(key=EvalKey.TRIAGE_METHOD)
    assert reader.value == "yours" and len(reader.options) == 1
    assert '<div class="cs-query">question 2</div>' in html_of(at)  # a failure of yours
    lines = [bar.proto.text for bar in at.get("progress")]
    assert any(t.startswith(f"{names}: being computed over the set's spans") for t in lines)
    picker = at.selectbox(key=EvalKey.RUN)
    assert picker.options[0].endswith(f"· yours ({names} being added) · 4 queries")
    kept = sorted((store_dir / "runs").glob("run-*.json"))
    assert [p.stem for p in kept] == [run_id]

    gate.set()
    at = wait_for_methods(at)
    assert at.session_state[EvalKey.RUN] == run_id
    assert set(metric_columns(at)) == {"yours", "naive", "bm25"}
    assert not any("being computed" in bar.proto.text for bar in at.get("progress"))
    assert not any("being computed" in plain(i.value) for i in at.info)
    assert at.selectbox(key=EvalKey.RUN).options[0].endswith("· 4 queries")
    assert "being added" not in at.selectbox(key=EvalKey.RUN).options[0]
    assert len(at.selectbox(key=EvalKey.TRIAGE_METHOD).options) == 3
    assert [p.stem for p in (store_dir / "runs").glob("run-*.json")] == [run_id]  # one run


def test_our_methods_stopped_leave_yours_and_say_they_were_not_added(
    fake, store_dir, monkeypatch
) -> None:
    gate = threading.Event()
    monkeypatch.setattr(eng, "encoder", lambda: GatedEncoder(gate))
    at = import_speech_run(store_dir, ["naive"], wait=False)
    next(b for b in at.button if b.label == "Stop adding naive").click().run()
    gate.set()
    at = wait_for_methods(at)
    said = " ".join(plain(w.value) for w in at.warning)
    assert "naive were not added to this run" in said, said
    assert metric_columns(at) == ["yours"]
    assert (
        at.selectbox(key=EvalKey.RUN).options[0].endswith("· yours (naive not added) · 4 queries")
    )


def _library_with(store_dir, path: Path) -> Document:
    from core.library import Library

    doc = load_document(path)
    Library.in_folder(store_dir / "library").add(
        path.read_bytes(), name=path.name, doc_id=doc.doc_id, sha256=doc.sha256
    )
    return doc


def _held_claim_checks(monkeypatch) -> threading.Event:
    """Every claim check held until the returned gate opens (the loader's text is 'read'
    only then)."""
    from core.imported import claim_check

    gate = threading.Event()
    real = claim_check.check_claims

    def held(*args, **kwargs):
        assert gate.wait(60), "the test never opened the gate"
        return real(*args, **kwargs)

    monkeypatch.setattr(claim_check, "check_claims", held)
    return gate


def _claims_checked(at: AppTest, name: str, seconds: float = 60) -> AppTest:
    from workbench.documents import chunk_sets

    job = chunk_sets.claim_job(name)
    deadline = time.monotonic() + seconds
    while job is not None and job.running and time.monotonic() < deadline:
        time.sleep(0.1)
    at.run()  # the check's summary, then the page again with the checked set
    assert not at.exception, [e.value for e in at.exception]
    return at.run()


def test_a_pdf_loaders_set_is_placed_at_once_and_its_claims_checked_after(
    app: AppTest, store_dir, monkeypatch
) -> None:
    from core.imported import loader_text
    from core.imported.loader_text import extractor_label
    from tests.test_loader_claims import SIGCONF, page_texts, rows_of, seeded

    _library_with(store_dir, SIGCONF)
    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    moved_offset, minus_one, moved_page = seeded(rows, page_texts(SIGCONF, "pypdf"))
    loader_text.forget()  # a first import: the pages are read by the check
    gate = _held_claim_checks(monkeypatch)
    app.run()
    app.file_uploader(key=ImportKey.UPLOAD).set_value(
        [("paper.jsonl", "".join(json.dumps(r) + "\n" for r in rows).encode(), "text/plain")]
    )
    app.text_input[0].set_value("paper")
    next(b for b in app.button if b.label == "Import").click().run()
    assert not app.exception and not app.error, [e.value for e in app.error]
    label = extractor_label("pypdf")
    lines = [plain(m.value) for m in app.markdown]
    assert (
        f"**Offsets: {len(rows)} pending: placed by our text, checked in {label}'s page text "
        "once it is read**"
    ) in lines, lines
    assert not app.success or "Every chunk" not in " ".join(s.value for s in app.success)
    bars = [bar.proto.text for bar in app.get("progress")]
    # reading the pages, or (the pages read, the check held) checking the claims
    assert any(t.startswith("paper: ") and f"{label}'s text" in t for t in bars), bars

    at = open_page(app, "chunks")
    app.sidebar.selectbox[0].set_value(SIGCONF.stem).run()
    at.segmented_control(key=policy_widget("a")).set_value("paper").run()
    captions = " ".join(plain(c.value) for c in at.caption)
    assert "every claimed offset and page pending" in captions
    assert "0 wrong claimed" not in captions  # no clean bill before the check

    gate.set()
    lib = _claims_checked(open_page(app, "library"), "paper")
    lib.selectbox(key=ImportKey.PICK).set_value("paper").run()
    lines = [plain(m.value) for m in lib.markdown]
    assert f"**Offsets: 2 wrong of {len(rows)} checked (in {label}'s page text)**" in lines
    table = lib.dataframe[-1].value
    assert set(table["#"]) == {moved_offset + 1, minus_one + 1, moved_page + 1}
    said = [plain(s.value) for s in lib.success]  # both lines outlive the check's rerun
    assert any(line.startswith(f"Imported paper: {len(rows)} chunks") for line in said), said
    assert any(line.startswith("paper: every claim checked in the loader's text") for line in said)


def test_a_run_imported_while_its_sets_claims_are_pending_is_made_again_after(
    fake, store_dir, monkeypatch
) -> None:
    from core.imported.claim_check import is_pending
    from tests.test_claim_check import _log_and_labels
    from tests.test_loader_claims import SIGCONF, rows_of

    doc = _library_with(store_dir, SIGCONF)
    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    for k, row in enumerate(rows):
        row["id"] = f"row-{k}"
    shape, chunks = read_file("".join(json.dumps(r) + "\n" for r in rows).encode(), "p.jsonl")
    first_set, _ = import_chunks(chunks, [doc], name="paper", shape=shape, origin="p.jsonl",
                                 check_later=True)  # fmt: skip
    save_chunk_set(store_dir / "chunksets", first_set)
    gate = _held_claim_checks(monkeypatch)
    logged, labelled = _log_and_labels(first_set, doc)  # the retriever's ids, as logged
    log = [{"query_id": q.query_id, "hits": [{"chunk_id": h.chunk_id} for h in q.hits]}
           for q in logged]  # fmt: skip
    labels = [q.to_dict() for q in labelled]
    at = engine_page("evaluate")
    at.file_uploader(key=RunImportKey.TRACE).set_value(
        [("log.jsonl", "".join(json.dumps(x) + "\n" for x in log).encode(), "application/json")]
    )
    at.file_uploader(key=RunImportKey.LABELS).set_value(
        [("q.jsonl", "".join(json.dumps(x) + "\n" for x in labels).encode(), "application/json")]
    )
    at.selectbox(key=RunImportKey.CHUNK_SET).set_value("paper")
    at.multiselect(key=RunImportKey.METHODS).set_value([])
    next(b for b in at.button if b.label == "Import the run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    first = load_run(store_dir / "runs" / f"{at.session_state[EvalKey.RUN]}.json")
    first_created = first.created_at
    assert claims_pending(first)
    assert at.selectbox(key=EvalKey.TRIAGE_METHOD).value == "yours"  # its failures read now
    bars = [bar.proto.text for bar in at.get("progress")]
    assert any(t.endswith("then this run is made again over the checked set") for t in bars), bars

    gate.set()
    at = wait_for_methods(at)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    kept = [p.stem for p in (store_dir / "runs").glob("run-*.json")]
    assert len(kept) == 1 and at.session_state[EvalKey.RUN] == kept[0]  # one run, shown
    assert not any("pending" in plain(w.value) for w in at.warning)
    from core.imported.chunkset import load_chunk_set

    assert not is_pending(load_chunk_set(store_dir / "chunksets" / "paper.json"))
    shown = load_run(store_dir / "runs" / f"{kept[0]}.json")
    assert not claims_pending(shown) and shown.created_at.startswith(first_created[:16])
