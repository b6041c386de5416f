"""Rough edges a real session hit on the workbench, each pinned by the behaviour its fix
gives (AppTest, the fake encoder): a k past the cards, card titles, uploads' messages and
the triage counter."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

from conftest import CORPUS, ROOT, need_corpus
from streamlit.testing.v1 import AppTest

from core.evaluate import CAUSES, TriageStore, load_run, sample_failures
from core.formats import load_document
from core.formats.format_registry import all_formats
from tests.test_app_engine_pages import (
    TIMEOUT_S,
    column,
    fake,
    index_demo,
    open_page,
    ranked,
    store_dir,
)
from workbench.documents import session
from workbench.evaluate import triage
from workbench.state import EngineKey, EvalKey, LibraryKey, tag_widget
from workbench.widgets import result_cards as ins

__all__ = ["TIMEOUT_S", "fake", "store_dir"]  # fixtures, imported for pytest
DATA = ROOT / "tests" / "data" / "formats"


def test_a_k_past_the_cards_is_accepted_and_says_where_the_rest_is(fake, store_dir, monkeypatch):
    monkeypatch.setattr(ins, "MAX_CARDS", 20)  # the demo holds 45 chunks
    index_demo(store_dir, fake, methods=("naive", "bm25"))
    at = open_page("compare")
    box = at.number_input(key=EngineKey.K)
    assert box.max is None or box.max >= 500  # the browser marks nothing red at k = 500
    box.set_value(500).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [i.value for i in at.info if "k = 500" in i.value]
    assert said and "top 20 cards" in said[0] and "Where does a chunk rank?" in said[0]
    for method in ("naive", "bm25"):
        assert [r for r, _ in ranked(at, method)] == list(range(1, 21))
        assert column(at, method).subheader
    table = [d.value for d in at.dataframe if "to enter the top 500" in d.value.columns]
    assert table, "the full-depth panel measures against the k asked for"
    box.set_value(10).run()
    assert not [i for i in at.info if "k = " in i.value]


def _tag_buttons(at) -> dict[str, str]:
    return {c: at.button(key=tag_widget(c)).proto.type for c in CAUSES}


def test_each_method_keeps_its_own_tag_and_the_counter_reads_only_it(fake, store_dir):
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = load_run(store_dir / "runs" / f"{at.session_state[EvalKey.RUN]}.json")
    samples = {m: sample_failures(run, m, n=triage.N_SAMPLE, seed=0) for m in run.methods}
    first, then, shared = next(
        (a, b, q)
        for a in run.methods for b in run.methods if a != b
        for q in [f.query_id for f in samples[a]] if q in {f.query_id for f in samples[b]}
    )  # fmt: skip
    at.selectbox(key=EvalKey.TRIAGE_METHOD).set_value(first).run()
    at.session_state[EvalKey.TRIAGE_POS] = [f.query_id for f in samples[first]].index(shared)
    at.run()
    at.button(key=tag_widget("other")).click().run()  # tagged while reading `first`
    assert not at.exception, [e.value for e in at.exception]
    assert at.get("progress")[-1].proto.text == f"1 of {len(samples[first])} read"

    at.selectbox(key=EvalKey.TRIAGE_METHOD).set_value(then).run()
    n = len(samples[then])
    assert at.get("progress")[-1].proto.text == f"0 of {n} read"  # not the other method's tag
    title = json.loads(at.get("plotly_chart")[-1].proto.spec)["layout"]["title"]["text"]
    assert f"0 tagged of {n} sampled" in title
    at.session_state[EvalKey.TRIAGE_POS] = [f.query_id for f in samples[then]].index(shared)
    at.run()
    panel = [h.proto.body for h in at.html if "Why it failed" in h.proto.body]
    found = re.search(r"suggested: <b[^>]*>(\w+)</b>", panel[0]) if panel else None
    suggested = found.group(1) if found and found.group(1) in CAUSES else ""
    selected = [c for c, kind in _tag_buttons(at).items() if kind == "primary"]
    assert selected == ([suggested] if suggested else [])  # one at most, never the other's
    assert any(f"Under {first}: tagged **other**." in c.value for c in at.caption), [
        c.value for c in at.caption
    ]  # the other method's reading named, not taken for this one's
    at.button(key=tag_widget(suggested or "parse")).click().run()  # a tag of its own
    assert at.get("progress")[-1].proto.text == f"1 of {n} read"
    at.selectbox(key=EvalKey.TRIAGE_METHOD).set_value(first).run()
    assert at.get("progress")[-1].proto.text == f"1 of {len(samples[first])} read"  # kept
    tags = TriageStore(store_dir / "triage.sqlite").tags(run.run_id)
    assert sorted((t.method, t.cause) for t in tags) == sorted(
        [(first, "other"), (then, suggested or "parse")]
    )  # one tag per failure and method: the second overwrote nothing


ACCEPTED = {
    "sample-sigconf.pdf": (ROOT / "sample_docs" / "sample-sigconf.pdf").read_bytes(),
    "notes.txt": b"Plain notes about the pump.\n",
    "manual.md": b"# Manual\n\nPrime the pump first.\n",
    "lecture-3.vtt": (DATA / "lecture-3.vtt").read_bytes(),
    "river.srt": (DATA / "river.srt").read_bytes(),
    "pumps.html": (DATA / "pumps.html").read_bytes(),
    "hlinks.docx": (DATA / "third_party" / "python-docx_par-hlink-frags.docx").read_bytes(),
}
REFUSED = {
    "budget.xlsx": b"PK\x03\x04" + b"\x00" * 64,  # a ZIP of another kind
    "server.log": b"12:00 started\n",  # text, but no format lists .log
    "queries.json": b'{"query": "x"}\n',
}


def test_every_accepted_format_uploads_and_a_refused_one_says_what_is_read(tmp_path, monkeypatch):
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    uploader = at.file_uploader(key=LibraryKey.UPLOADER)
    assert list(uploader.proto.type) == []  # the browser refuses nothing by MIME type itself
    assert all(s in uploader.proto.help for f in all_formats() for s in f.suffixes)
    files = [(n, b, "application/octet-stream") for n, b in {**ACCEPTED, **REFUSED}.items()]
    uploader.set_value(files).run()
    assert not at.exception, [e.value for e in at.exception]
    assert len(at.success) == len(ACCEPTED), [e.value for e in at.error]
    assert len(at.error) == len(REFUSED)
    errors = {name: [e.value for e in at.error if name.replace(".", "\\.") in e.value]
              for name in REFUSED}  # fmt: skip
    for said in errors.values():
        (line,) = said  # one line a refused file
        assert "\n" not in line and "not read here" in line
        shown = line.replace("\\", "")
        assert all(f"{f.label} ({', '.join(f.suffixes)})" in shown for f in all_formats())
    table = at.dataframe[0].value
    assert {Path(n).stem for n in ACCEPTED} <= set(table["document"])


def test_a_query_set_of_another_kind_says_what_a_query_set_is(fake, store_dir):
    at = open_page("evaluate")
    at.segmented_control(key=EvalKey.SOURCE).set_value("upload").run()
    uploader = at.file_uploader(key=EvalKey.UPLOAD)
    assert list(uploader.proto.type) == []  # no MIME-type refusal in the browser
    uploader.set_value([("set.csv", b"query,doc\nwarranty,x\n", "text/csv")]).run()
    assert not at.exception, [e.value for e in at.exception]
    (error,) = [e.value.replace("\\", "") for e in at.error]  # as shown: markdown unescaped
    assert "set.csv" in error and ".jsonl" in error and "\n" not in error


PATH_LINE = re.compile(
    r'<div class="cs-path">(.*?)</div>\s*<div class="cs-words">(.*?)</div>', re.S
)
TEN_Q = CORPUS / "financebench" / "pdfs" / "Pfizer_2023Q2_10Q.pdf"


def test_cards_on_a_10q_are_titled_by_real_headings_and_tell_apart(fake, store_dir):
    doc = load_document(need_corpus(TEN_Q))
    index_demo(store_dir, fake, methods=("naive", "bm25"), docs=[doc])
    at = open_page("compare")
    at.selectbox(key=EngineKey.SCOPE).select(doc.doc_id).run()
    at.text_input(key=EngineKey.QUERY_WIDGET).set_value("six months ended cash flows").run()
    assert not at.exception, [e.value for e in at.exception]
    for method in ("naive", "bm25"):
        bodies = [h.proto.body for h in column(at, method).html]
        cards = [tuple(map(html.unescape, m)) for b in bodies for m in PATH_LINE.findall(b)]
        assert len(cards) == 10
        assert len(set(cards)) == len(cards)  # no two cards read alike
        for head, words in cards:
            assert not re.search(r"months ended|^\(", head, re.I), head  # never a column heading
            assert not words.startswith("Three Months Ended"), words  # its own rows first
    labels = at.selectbox(key=EngineKey.SELECTED).options
    assert len(set(labels)) == len(labels)
    assert any(re.search(r" — “.+” \(\d+ of \d+\)$", label) for label in labels)


def test_a_deep_link_makes_its_document_the_sidebars_once(tmp_path, monkeypatch):
    from core.provenance.cite import Citation
    from core.render.links import source_params

    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    doc = load_document(ROOT / "sample_docs" / "state_of_the_union.md")
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S)
    at.query_params.update(source_params(Citation.of_span(doc, 100, 160)))
    at.switch_page("pages/source.py").run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.sidebar.selectbox[0]
    assert picker.value == doc.doc_id != picker.options[0].split(" (")[0]  # not the first
    picker.set_value(next(o for o in picker.options if "sigconf" in o).split(" (")[0]).run()
    assert "sigconf" in at.sidebar.selectbox[0].value  # the link no longer pulls it back


def test_the_failure_readers_cards_are_titled_like_compares(fake, store_dir):
    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    bodies = [h.proto.body for h in at.html if 'class="cs-hit' in h.proto.body]
    cards = [tuple(map(html.unescape, m)) for b in bodies for m in PATH_LINE.findall(b)]
    assert cards, "the reader shows each method's top k"
    assert all(head.strip() for head, _ in cards)  # a heading line on every card
    for head, words in cards:  # its own words, not its heading again
        assert not words.startswith(head.split(" › ")[-1].split(" · ")[0]), (head, words)
    assert all('class="cs-doc"' in b for b in bodies if "cs-rank" in b)  # five documents


def test_the_workbench_reads_the_model_as_the_encoder_does():
    """One reading of the model folder (``core.embed.modelconfig.model_limits``): the
    sidebar's window and late chunking's one-pass limit are the encoder's own."""
    from core.embed import load_encoder
    from core.model.paths import resolve_model_dir

    encoder = load_encoder()
    info = session._model_info(resolve_model_dir())
    assert info.window_tokens == encoder.max_tokens
    assert info.whole_doc_tokens == encoder.content_position_limit


def test_a_broken_model_folder_is_one_line_on_the_library_page(tmp_path, monkeypatch):
    folder = tmp_path / "broken-model"
    folder.mkdir()
    (folder / "config.json").write_text("{ not json", encoding="utf-8")
    monkeypatch.setenv("CHUNKSCOPE_MODEL", str(folder))
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S).run()
    assert not at.exception, [e.value for e in at.exception]
    errors = [e.value for e in at.error if "broken\\-model" in e.value]
    assert errors and all(len(e.splitlines()) == 1 for e in errors), errors
