"""Viewers read, editors change the library (``workbench/frame/roles.py``), under AppTest.

With ``CHUNKSCOPE_EDITOR_KEY`` set, a session starts as a viewer: every page opens, no
control that writes is drawn, and a control's value sent by hand (the pages made to draw
the controls while the session stays a viewer) is refused in one line and leaves the
store folder, the library and the triage file byte for byte as they were. The key signs
a session in; a wrong one says so in one line, and more slowly after a few. Without the
setting the workbench is open to edits and the sidebar says so.
"""

from __future__ import annotations

import functools
import hashlib
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fakes import FakeEncoder, fake_embed_chunks
from streamlit.testing.v1 import AppTest

from core.chunk import policy_registry as registry
from core.evaluate import EvalConfig, TriageStore, run_eval, save_run, tag_query
from core.formats import load_document
from core.imported import import_chunks, read_file, save_chunk_set
from core.imported.chunkset import FOLDER_NAME
from core.library import Library
from core.provenance.cite import Citation
from core.render.links import source_params
from core.store import ChunkStore
from core.tune import parse_grid, save_sweep
from core.tune.sweep import run_sweep
from tests.test_app_engine_pages import index_demo, one_window
from tests.test_app_pages import html_of, plain
from tests.test_app_pages import open_page as go
from workbench.engine import resources as eng
from workbench.engine import run_files
from workbench.evaluate import why
from workbench.frame import roles
from workbench.state import (
    EngineKey,
    EvalKey,
    FrameKey,
    ImportKey,
    Key,
    LibraryKey,
    RoleKey,
    RunImportKey,
    TuneKey,
    tag_widget,
)
from workbench.tune import sweep_panel as ut

TIMEOUT_S = 300
KEY = "correct-horse-battery-staple-7"
PAGES = ("library", "parse", "chunks", "source", "compare", "evaluate", "tune")
REPORT = b"# Report\n\nRevenue rose by 4 percent in the quarter.\n\nCosts fell.\n"
CHUNKS_JSONL = b'{"doc": "report", "text": "Revenue rose by 4 percent", "char_start": 10}\n'


# -- a store with something in every place a viewer could write to ------------------------


@pytest.fixture(scope="module")
def filled_template(tmp_path_factory) -> Path:
    """A store holding a kept document, an imported chunk set of it, the demo datasheets
    indexed (fake encoder), a saved run of the demo questions, a triage tag and a
    one-point sweep."""
    folder = tmp_path_factory.mktemp("roles") / "store"
    enc = FakeEncoder()
    index_demo(folder, enc)
    doc = load_document(REPORT, name="report.md")
    Library.of_store(ChunkStore.open(folder)).add(
        REPORT, name="report.md", doc_id=doc.doc_id, sha256=doc.sha256
    )
    shape, rows = read_file(CHUNKS_JSONL, "mine.jsonl")
    chunk_set, _ = import_chunks(rows, [doc], name="mine", shape=shape, origin="mine.jsonl")
    save_chunk_set(folder / FOLDER_NAME, chunk_set)
    queries, docs = run_files.demo_queries(), list(eng.demo_documents().values())
    config = EvalConfig(policy=eng.DEMO_POLICY, methods=("naive", "late"), ks=(1, 5, 10))
    run = run_eval(queries, docs, config, encoder=enc, embed=fake_embed_chunks)
    save_run(run, folder / "runs" / f"{run.run_id}.json")
    failed = next(q for q in run.queries if q.failed["late"])
    tag_query(TriageStore(folder / "triage.sqlite"), run, failed.id, "context", method="late")
    grid = parse_grid(["fixed"], [128], ["0"], "tokens")
    template = EvalConfig(policy=grid[0].policy, methods=("naive",), ks=(1, 5, 10))
    sweep = run_sweep(queries, docs, grid, template, encoder=enc, embed=fake_embed_chunks)
    save_sweep(sweep, folder / "sweeps" / f"{sweep.sweep_id}.json")
    return folder


@pytest.fixture(autouse=True)
def _no_leftover_sets() -> Iterator[None]:
    yield
    for name in registry.fixed_names():  # later tests list the built-in policies only
        registry.unregister_fixed(name)


@pytest.fixture
def store_dir(filled_template, tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "store"
    shutil.copytree(filled_template, folder)
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(folder))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    monkeypatch.delenv(roles.ENV_EDITOR_KEY, raising=False)
    return folder


@pytest.fixture
def fake(monkeypatch, store_dir) -> Path:
    """The pages' engine on the fake encoder (as in ``test_app_engine_pages``)."""
    enc = FakeEncoder()
    monkeypatch.setattr(eng, "encoder", lambda: enc)
    monkeypatch.setattr(eng, "windows_of", one_window)
    monkeypatch.setattr(eng, "late_window_tokens", lambda doc_tokens: (254, 510))
    monkeypatch.setattr(run_files, "run_eval", functools.partial(run_eval, embed=fake_embed_chunks))
    monkeypatch.setattr(why, "RANK_EMBED", fake_embed_chunks)
    monkeypatch.setattr(ut, "embed_step", lambda: fake_embed_chunks)
    return store_dir


class FakeSleep:
    """Stands in for ``time.sleep`` in the sign-in throttle: records each wait."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


@pytest.fixture(autouse=True)
def slept(monkeypatch) -> FakeSleep:
    """A fresh throttle per test, which never really sleeps."""
    sleep = FakeSleep()
    throttle = roles.SignInThrottle(sleep=sleep)
    monkeypatch.setattr(roles, "throttle", lambda: throttle)
    return sleep


@pytest.fixture
def keyed(fake, monkeypatch) -> Path:
    monkeypatch.setenv(roles.ENV_EDITOR_KEY, KEY)
    return fake


# -- helpers ------------------------------------------------------------------------------


def session() -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def sign_in(at: AppTest, key: str) -> AppTest:
    at.sidebar.text_input(key=RoleKey.KEY_INPUT).set_value(key)
    next(b for b in at.sidebar.button if b.label == "Sign in").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def write_controls(at: AppTest) -> set[str]:
    """The controls that write, among those this run drew."""
    found: set[str] = set()
    labels = {b.label for b in at.button}
    keys = {b.key for b in at.button}
    if any(u.key == LibraryKey.UPLOADER for u in at.get("file_uploader")):
        found.add("uploader")
    if LibraryKey.REMOVE_GO in keys:
        found.add("remove")
    if any(e.label == "Import chunks" for e in at.expander) or "Import" in labels:
        found.add("import")
    if "Index" in labels or any(str(label).startswith("Index the demo") for label in labels):
        found.add("index")
    if "Run" in labels:
        found.add("run eval")
    if any(e.label == "Import a run of your retriever" for e in at.expander):
        found.add("import run")
    if "Sweep" in labels:
        found.add("sweep")
    if any(str(k).startswith(EvalKey.TAG) for k in keys):
        found.add("tag")
    if any(t.key == FrameKey.STORE_ADDR_WIDGET for t in at.sidebar.text_input):
        found.add("store")
    return found


def settle(folder: Path) -> None:
    """Read every collection of the store once. Chroma brings a segment's files up to its
    log the first time a process reads it (as any reader would, editor or viewer); done
    first, what a snapshot then compares is only what the session itself wrote."""
    client = ChunkStore.open(folder).client
    for listed in client.list_collections():
        collection = client.get_collection(getattr(listed, "name", listed))
        first = collection.get(limit=1, include=["embeddings"])
        if len(first["ids"]):
            collection.query(query_embeddings=[first["embeddings"][0]], n_results=1)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the sha256 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


REFUSAL = re.compile(r"Only an editor can (.+): sign in to edit in the sidebar\.")


def refusals(at: AppTest) -> list[str]:
    """What this run refused: the action of each one-line refusal."""
    found = [REFUSAL.fullmatch(plain(w.value)) for w in at.warning]
    return [m.group(1) for m in found if m]


def report_link() -> dict[str, str]:
    doc = load_document(REPORT, name="report.md")
    start = doc.text.index("Revenue rose")
    return source_params(Citation.of_span(doc, start, start + len("Revenue rose by 4 percent")))


EDITOR_CONTROLS = {
    "library": {"uploader", "remove", "import", "store"},
    "compare": {"index", "store"},
    "evaluate": {"run eval", "tag", "import run", "store"},
    "tune": {"sweep", "store"},  # a sweep is saved: its form is folded, but drawn
}


# -- every page, as a viewer and as an editor --------------------------------------------


def test_a_viewer_opens_every_page_and_sees_no_control_that_writes(keyed):
    at = session()
    assert any("Viewing:" in c.value for c in at.sidebar.caption)
    for name in PAGES:
        go(at, name)
        assert write_controls(at) == set(), name
    go(at, "library")  # the audit of an imported set is read, not its form
    (sets,) = [e for e in at.expander if e.label == "Imported chunk sets"]
    assert sets.metric and not sets.get("file_uploader")
    go(at, "source", **report_link())
    assert "Verified" in html_of(at) and "<mark" in html_of(at)
    go(at, "evaluate")  # runs, metrics and failures read; Prev and Next kept
    assert at.dataframe and {"Prev", "Next"} <= {b.label for b in at.button}
    assert any(c.value.endswith("Keys: ← previous, → next.") for c in at.caption)
    assert not at.main.text_input  # no note to save with a tag
    go(at, "compare")  # queries run over the index; k at most 50
    assert at.number_input(key=EngineKey.K).proto.max == roles.VIEWER_MAX_K
    at.number_input(key=EngineKey.K).set_value(500).run()  # a k sent by hand
    assert not at.exception and at.session_state[EngineKey.K] <= roles.VIEWER_MAX_K
    assert any("#1" in h.proto.body for h in at.html)  # cards drawn
    go(at, "tune")  # a sweep read; a cell's failures wait until an editor saved its run
    failures = next(b for b in at.button if b.label == "Its failures on the Evaluate page")
    assert failures.disabled and at.get("plotly_chart")
    assert any(str(keyed) in c.value for c in at.sidebar.caption)  # where the store is, read


def test_an_editor_sees_the_controls_on_every_page(keyed):
    at = sign_in(session(), KEY)
    assert any("Signed in to edit" in c.value for c in at.sidebar.caption)
    for name in PAGES:
        go(at, name)
        assert write_controls(at) == EDITOR_CONTROLS.get(name, {"store"}), name
    go(at, "tune")
    sweep = next(e for e in at.expander if e.label == "Run a sweep")
    assert any(b.label == "Sweep" for b in sweep.button)


# -- refusals: a crafted rerun changes nothing ------------------------------------------


def test_every_write_path_refuses_a_viewer_and_nothing_changes(keyed, monkeypatch):
    """The pages are made to draw every control (as if its value were sent by hand); the
    session is still a viewer, so each write refuses in one line."""
    settle(keyed)
    before = snapshot(keyed)
    library_before = [e.sha256 for e in Library.of_store(ChunkStore.open(keyed)).current()]
    monkeypatch.setattr(roles, "editing_enabled", lambda: True)
    at = session()
    assert not roles.is_editor() and write_controls(at) >= {"uploader", "remove", "store"}

    at.file_uploader(key=LibraryKey.UPLOADER).set_value(
        [("notes.txt", b"Plain notes.", "application/octet-stream")]
    ).run()
    assert refusals(at) == ["add documents to the library"]
    assert "notes" not in list(at.dataframe[0].value["document"])
    at.file_uploader(key=LibraryKey.UPLOADER).set_value([])  # refused again while it is there

    at.selectbox(key=LibraryKey.REMOVE_PICK).set_value("report").run()
    at.button(key=LibraryKey.REMOVE_GO).click().run()
    assert refusals(at) == ["remove documents"]

    at.file_uploader(key=ImportKey.UPLOAD).set_value(
        [("mine.jsonl", CHUNKS_JSONL, "application/octet-stream")]
    )
    next(b for b in at.button if b.label == "Import").click().run()
    assert refusals(at) == ["import chunk sets"]

    elsewhere = str(keyed.parent / "elsewhere")
    at.sidebar.text_input(key=FrameKey.STORE_ADDR_WIDGET).set_value(elsewhere).run()
    assert refusals(at) == ["change the store"]
    assert at.session_state[Key.STORE_ADDR] == str(keyed)
    at.sidebar.radio(key=FrameKey.STORE_KIND_WIDGET).set_value("server").run()
    assert at.session_state[Key.STORE_KIND] == "folder" and len(refusals(at)) == 1

    go(at, "compare")
    next(b for b in at.button if b.label == "Index").click().run()
    assert refusals(at) == ["index documents"]
    assert at.session_state[EngineKey.JOB] is None

    go(at, "evaluate")
    next(b for b in at.button if b.label == "Run").click().run()
    assert refusals(at) == ["run evaluations"]
    at.button(key=tag_widget("boundary")).click().run()
    assert refusals(at) == ["tag failures"]
    for uploader in (RunImportKey.TRACE, RunImportKey.LABELS):
        at.file_uploader(key=uploader).set_value([("log.jsonl", b"{}", "application/json")])
    next(b for b in at.button if b.label == "Import the run").click().run()
    assert refusals(at) == ["import runs"]

    go(at, "tune")
    next(b for b in at.button if b.label == "Sweep").click().run()
    assert refusals(at) == ["run sweeps"]
    assert at.session_state[TuneKey.JOB] is None
    next(b for b in at.button if b.label == "Its failures on the Evaluate page").click().run()
    assert refusals(at) == ["save a cell's run for the Evaluate page"]
    assert not at.exception, [e.value for e in at.exception]

    assert snapshot(keyed) == before
    after = [e.sha256 for e in Library.of_store(ChunkStore.open(keyed)).current()]
    assert after == library_before


def test_the_guarded_functions_refuse_a_viewer_when_called_directly(keyed):
    """Each function that writes, called in a viewer's run: nothing is written."""
    settle(keyed)
    before = snapshot(keyed)

    def script() -> None:
        import streamlit as st

        from core.errors import LabelError
        from core.evaluate import load_run

        # the script runs on its own (AppTest.from_function): it imports what it uses
        from workbench.documents import chunk_sets, kept_docs
        from workbench.documents import session as doc_session
        from workbench.engine import resources as eng
        from workbench.engine import run_files
        from workbench.evaluate import run_import, triage
        from workbench.library import uploads
        from workbench.tune import sweep_panel as ut

        doc_session.init_state()
        eng.init_state()
        run_files.init_state()
        ut.init_state()
        docs = list(eng.demo_documents().values())
        run = load_run(next(run_files.runs_dir().glob("run-*.json")))
        failure = type("F", (), {"query_id": run.queries[0].id, "method": "late"})()
        notes = [
            uploads.read_upload("notes.txt", b"Plain notes."),
            kept_docs.keep("notes.txt", b"Plain notes.", docs[0]),
        ]
        st.session_state["notes"] = [getattr(n, "text", n) for n in notes]
        st.session_state["removed"] = kept_docs.remove("report")
        chunk_sets._keep("chunks", [], "mine.jsonl", "mine", 0.9)
        eng.start_index(docs, eng.DEMO_POLICY, ["naive"])
        st.session_state["ran"] = run_files.run_evaluation([], docs, None)
        triage.tag_failure(run, failure, "boundary", "no-note", 1)
        ut.start_sweep([], docs, [], ["naive"])
        st.session_state["imported"] = run_import._imported(None, None, None, None, "", [])
        try:
            triage.triage_store().tag(
                run_id=run.run_id, query_id="q", doc_sha256="s", cause="parse"
            )
        except LabelError as exc:
            st.session_state["tag"] = str(exc)

    at = AppTest.from_function(script, default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["notes"] == [
        "not read: only an editor can add documents",
        "not kept in the library: only an editor can add documents",
    ]
    assert at.session_state["removed"] is None and at.session_state["ran"] is None
    assert at.session_state["imported"] is None
    assert at.session_state["tag"].startswith("only an editor can tag failures")
    assert refusals(at) == [
        "remove documents", "import chunk sets", "index documents", "run evaluations",
        "tag failures", "run sweeps", "import runs",
    ]  # fmt: skip
    assert snapshot(keyed) == before


def test_a_viewer_reads_the_triage_file_without_writing_it(keyed, tmp_path):
    path = keyed / "triage.sqlite"
    before = path.read_bytes()
    run_id = next((keyed / "runs").glob("run-*.json")).stem
    (tag,) = roles.ReadOnlyTriage(path).tags(run_id)
    assert tag.cause == "context" and path.read_bytes() == before
    assert roles.ReadOnlyTriage(tmp_path / "none.sqlite").tags(run_id) == []
    assert not (tmp_path / "none.sqlite").exists()


# -- signing in ---------------------------------------------------------------------------


def test_a_wrong_key_is_one_line_without_a_hint_and_the_right_one_signs_in(keyed, slept):
    at = session()
    sign_in(at, "not-the-key")
    (error,) = at.sidebar.error
    assert error.value == roles.WRONG_KEY
    assert KEY[:4] not in error.value and str(len(KEY)) not in error.value  # no hint
    assert at.sidebar.text_input(key=RoleKey.KEY_INPUT).value == ""  # the box is emptied
    assert "not-the-key" not in repr(at.session_state)
    assert write_controls(at) == set()
    at.run()
    assert not at.sidebar.error  # said once
    sign_in(at, KEY)
    assert not at.sidebar.error and "uploader" in write_controls(at)
    assert RoleKey.KEY_INPUT not in [t.key for t in at.sidebar.text_input]  # the form is gone
    assert KEY not in repr(at.session_state)  # no copy of the key kept in the session
    assert slept.waits == []  # one wrong key costs nothing


def test_wrong_keys_are_answered_more_slowly_after_a_few(keyed, slept):
    at = session()
    for _ in range(roles.FREE_TRIES):
        sign_in(at, "guess")
    assert slept.waits == []
    sign_in(at, "guess")
    sign_in(at, "guess")
    assert slept.waits == [1.0, 2.0]
    assert at.sidebar.error[0].value == roles.WRONG_KEY  # the same line, slower
    sign_in(at, KEY)  # the right key waits too (a guesser cannot tell it sooner)...
    assert slept.waits == [1.0, 2.0, 4.0] and "uploader" in write_controls(at)
    assert list(roles.throttle().counts().values()) == [0]  # ...and starts its count again


def test_the_throttle_doubles_its_delay_to_a_cap_and_compares_in_constant_time(monkeypatch):
    sleep = FakeSleep()
    throttle = roles.SignInThrottle(sleep=sleep)
    compared: list[tuple[bytes, bytes]] = []
    real = roles.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(roles.hmac, "compare_digest", spy)
    for _ in range(10):
        assert not throttle.check("guess", "key", client="ip:10.0.0.9")
    assert sleep.waits == [1.0, 2.0, 4.0, 8.0, 16.0, 16.0, 16.0]
    assert throttle.check("key", "key", client="ip:10.0.0.9")
    assert throttle.failures("ip:10.0.0.9") == 0
    assert compared[-1] == (b"key", b"key") and len(compared) == 11
    assert not throttle.check("", "", client="ip:10.0.0.9")  # an empty key never signs in


def test_a_guesser_slows_only_itself_never_another_client() -> None:
    """The delay is per client: while a guesser's answer waits, an editor elsewhere is
    answered at once (the wait holds only the guesser's own lock)."""
    import threading

    release = threading.Event()
    waiting = threading.Event()

    def blocking_sleep(seconds: float) -> None:
        waiting.set()
        assert release.wait(10), "the guesser's wait was never released"

    throttle = roles.SignInThrottle(sleep=blocking_sleep)
    for _ in range(roles.FREE_TRIES):
        throttle.check("guess", "key", client="ip:203.0.113.7")
    guesser = threading.Thread(
        target=throttle.check, args=("guess", "key"), kwargs={"client": "ip:203.0.113.7"}
    )
    guesser.start()
    try:
        assert waiting.wait(10)  # the guesser's fourth answer is waiting now
        assert throttle.check("key", "key", client="ip:198.51.100.2")  # answered, no wait
        assert throttle.delay_s("ip:198.51.100.2") == 0.0
    finally:
        release.set()
        guesser.join(10)
    assert throttle.counts() == {"ip:203.0.113.7": 4, "ip:198.51.100.2": 0}


def test_the_throttle_remembers_a_bounded_number_of_clients() -> None:
    throttle = roles.SignInThrottle(sleep=lambda s: None, max_clients=2)
    for client in ("session:a", "session:b", "session:c"):
        throttle.check("guess", "key", client=client)
    assert set(throttle.counts()) == {"session:b", "session:c"}  # the longest unseen goes


def test_the_key_is_read_from_secrets_and_a_missing_secrets_file_is_no_error(fake):
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S)
    at.secrets[roles.ENV_EDITOR_KEY] = KEY
    at.run()
    assert not at.exception and write_controls(at) == set()
    sign_in(at, KEY)
    assert "uploader" in write_controls(at)


# -- without the setting ------------------------------------------------------------------


def test_without_a_key_everything_works_as_before_and_the_sidebar_says_so(fake):
    at = session()
    (line,) = [c.value for c in at.sidebar.caption if "can change its library" in c.value]
    assert line.startswith("Open to edits: anyone who can reach this workbench")
    assert roles.ENV_EDITOR_KEY in line and not any(
        e.label == "Sign in to edit" for e in at.expander
    )
    for name in PAGES:
        go(at, name)
        assert write_controls(at) == EDITOR_CONTROLS.get(name, {"store"}), name
    go(at, "library")
    at.file_uploader(key=LibraryKey.UPLOADER).set_value(
        [("notes.txt", b"Plain notes.\n\nMore.", "application/octet-stream")]
    ).run()
    assert not refusals(at) and "notes" in list(at.dataframe[0].value["document"])
    kept = [e.doc_id for e in Library.of_store(ChunkStore.open(fake)).current()]
    assert "notes" in kept


# -- the layout model: an editor's to start, with its time limit --------------------------


@pytest.fixture
def parses(monkeypatch) -> list[tuple[str, float]]:
    """Every parse the workbench starts, as (parser, the layout model's time limit then);
    each runs the fast parser, so no test waits for the model. None were run before."""
    from core.formats import parse_document
    from core.ingest import limits
    from workbench.documents import parse_cache

    started: list[tuple[str, float]] = []

    def spy(doc, *, parser="fast", progress=None):
        started.append((parser, limits.value("layout_s")))
        return parse_document(doc, parser="fast")

    monkeypatch.setattr(parse_cache, "parse_document", spy)
    monkeypatch.setattr(parse_cache, "_parsed_keys", set())
    parse_cache._parse_cached.clear()
    return started


def _on_the_sample_pdf(at: AppTest) -> AppTest:
    from workbench.documents import session as doc_session

    pdf = next(d for d in doc_session.samples() if d.startswith("plumber"))
    at.session_state[Key.DOC] = pdf
    return at


def test_a_viewer_starts_no_layout_model_run_and_reads_the_fast_parse(keyed, parses):
    at = _on_the_sample_pdf(session())
    at.session_state[Key.PARSER] = "layout"  # as if the choice were sent by hand
    go(at, "parse")
    assert [p for p, _ in parses] == ["fast"]  # the layout model never ran
    (line,) = [i.value for i in at.info if "only an editor starts it" in i.value]
    assert "showing the fast parser's blocks" in line
    assert not [n for n in at.number_input if n.label.startswith("Layout model time limit")]
    go(at, "chunks")  # the Chunks page reads the same parse, and starts nothing either
    assert [p for p, _ in parses] == ["fast"]


def test_an_editor_runs_the_layout_model_under_the_time_limit_set_on_the_page(keyed, parses):
    from core.ingest import limits

    at = _on_the_sample_pdf(sign_in(session(), KEY))
    go(at, "parse")
    at.segmented_control(key=Key.PARSER_WIDGET).set_value("layout").run()
    limit = next(n for n in at.number_input if n.label.startswith("Layout model time limit"))
    assert limit.value == limits.value("layout_s")  # the configured one to start with
    assert parses == [("fast", limits.value("layout_s")), ("layout", limits.value("layout_s"))]
    limit.set_value(240).run()  # the layout parse is kept: nothing runs again
    assert not at.exception and len(parses) == 2
    at.segmented_control(key=Key.PARSER_WIDGET).set_value("fast+layout").run()
    assert parses[-1] == ("fast+layout", 240.0)  # the model ran under the editor's limit
    assert limits.value("layout_s") != 240.0  # for that run only, not the process
