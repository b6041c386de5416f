"""A chunk picked by clicking it on its rendered page (``core.render.page_pick``), in
Compare's "where does a chunk rank?" panel and in the failure reader, under AppTest.

AppTest has no browser, so a click is simulated as Streamlit's frontend reports it: the
chart's widget value becomes the selection (the clicked marker with its ``customdata``),
and the next run fires the chart's ``on_select`` callback.
"""

from __future__ import annotations

import json

from streamlit.proto.WidgetStates_pb2 import WidgetState

from core.render.page_pick import PickTarget, chunk_pick_figure, pick_lines, pick_points
from tests.test_app_engine_pages import fake, index_demo, open_page, plain, store_dir
from workbench.engine import resources as eng
from workbench.state import DepthKey, EngineKey, EvalKey, WhyKey

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest


def pick_charts(at, prefix: str) -> list:
    return [c for c in at.get("plotly_chart") if f"{prefix}_fig_" in c.proto.id]


def click(at, chart, chunk_id: str) -> None:
    """Click the first marker of ``chunk_id`` in ``chart``: the selection the frontend
    sends (point fields as Streamlit's plotly selection writes them), then a rerun."""
    spec = json.loads(chart.proto.spec)
    trace_no, trace = next(
        (i, t) for i, t in enumerate(spec["data"]) if t.get("name") == "chunks"
    )  # fmt: skip
    index = next(i for i, d in enumerate(trace["customdata"]) if d[0] == chunk_id)
    point = {
        "curve_number": trace_no, "point_number": index, "point_index": index,
        "x": trace["x"][index], "y": trace["y"][index], "customdata": trace["customdata"][index],
    }  # fmt: skip
    selection = {"selection": {"points": [point], "point_indices": [index], "box": [], "lasso": []}}
    states = at._tree.get_widget_states()
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(selection)))
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]


def rank_table(at):
    return [d.value for d in at.dataframe if "to enter the top 10" in d.value.columns][0]


def test_click_markers_cover_every_line_of_every_chunk_on_the_page():
    doc = eng.demo_documents()["datasheet-corvane-hx40"]
    cuts = list(range(0, len(doc.text), 300)) + [len(doc.text)]
    targets = [
        PickTarget(chunk_id=f"c{i}", char_start=a, char_end=min(b + 40, len(doc.text)), label="x")
        for i, (a, b) in enumerate(zip(cuts, cuts[1:], strict=False))
    ]  # fmt: skip
    lines = pick_lines(doc, targets, 1)
    points = pick_points(lines)
    for n, line in enumerate(lines):
        x0, y0, x1, y1 = line.bbox_pt
        xs = sorted(p[0] for p in points if p[2] == n)
        assert xs and x0 < xs[0] <= x0 + 6 and x1 - 6 <= xs[-1] < x1
        assert all(b - a <= 6.0 + 1e-9 for a, b in zip(xs, xs[1:], strict=False))
        assert all(y0 < p[1] < y1 for p in points if p[2] == n)
        if len(line.covering) > 1:  # shared characters: the later chunk takes the click
            assert line.owner == max(line.covering)
    fig = chunk_pick_figure(doc, targets, 1, selected="c1")
    (trace,) = [t for t in fig.data if t.name == "chunks"]
    assert {d[0] for d in trace.customdata} == {targets[ln.owner].chunk_id for ln in lines}
    assert [t.name for t in fig.data].count("picked") == 1
    assert fig.layout.yaxis.range == (doc.pages[0].height_pt, 0)  # top-left origin


def test_a_chunk_clicked_on_its_page_ranks_at_full_depth_in_compare(fake, store_dir):
    index_demo(store_dir, fake)
    at = open_page("compare")
    (chart,) = pick_charts(at, DepthKey.PICK)
    inspected = at.session_state[EngineKey.SELECTED]
    spec = json.loads(chart.proto.spec)
    clickable = [d[0] for t in spec["data"] if t.get("name") == "chunks" for d in t["customdata"]]
    other = next(c for c in dict.fromkeys(clickable) if c != inspected)
    click(at, chart, other)
    assert at.session_state[DepthKey.CLICKED] == (inspected, other)
    (line,) = [c.value for c in at.caption if c.value.startswith("Ranked: ")]
    assert "the chunk clicked on the page" in plain(line)
    table = rank_table(at)
    assert list(table["method"]) == list(at.multiselect(key=EngineKey.METHODS).value)
    from core.diagnose.depth import full_depth_ranks
    from core.store import ChunkStore

    methods = list(at.multiselect(key=EngineKey.METHODS).value)
    policy = eng.DEMO_POLICY
    query = at.session_state[EngineKey.QUERY]
    want = full_depth_ranks(
        query, other, methods=methods, encoder=fake, store=ChunkStore.open(store_dir),
        policy=policy, k=10,
    )  # fmt: skip
    assert list(table["rank"]) == [f"{want[m].rank:,} of {want[m].scope_size:,}" for m in methods]
    (chart,) = pick_charts(at, DepthKey.PICK)  # redrawn with the clicked chunk lit
    assert any(t.get("name") == "picked" for t in json.loads(chart.proto.spec)["data"])
    [b for b in at.button if b.label == "Mark as the answer"][0].click().run()
    (marked,) = at.session_state[DepthKey.MARKED]
    gold = marked.gold[0]
    assert (gold.char_start, gold.char_end) == tuple(
        int(x.replace(",", "")) for x in line.split(" chars ")[1].split(":")[0].split("-")
    )


def test_a_chunk_clicked_on_the_failures_page_ranks_at_full_depth_in_the_reader(fake, store_dir):
    from fakes import fake_embed_chunks

    from core.chunk import chunk_document
    from core.diagnose.run_depth import RunRanker
    from core.evaluate import load_run
    from core.formats import parse_document
    from core.provenance.types import ChunkPolicy

    at = open_page("evaluate")
    [b for b in at.button if b.label == "Run"][0].click().run()
    assert not at.exception, [e.value for e in at.exception]
    run = load_run(store_dir / "runs" / f"{at.session_state[EvalKey.RUN]}.json")
    (line,) = [c.value for c in at.caption if c.value.startswith("Ranked: ")]
    assert "the first gold chunk" in plain(line)  # before any click: the gold chunk
    (chart,) = pick_charts(at, WhyKey.PICK)
    query_id = chart.proto.id.split(f"{run.run_id}:")[1].rsplit("_", 1)[0]
    record = run.query(query_id)
    spec = json.loads(chart.proto.spec)
    clickable = [d[0] for t in spec["data"] if t.get("name") == "chunks" for d in t["customdata"]]
    policy = ChunkPolicy.from_dict(dict(run.policy))
    docs = eng.demo_documents()

    def chunker(doc):
        return chunk_document(doc, parse_document(doc).blocks, policy)

    ranker = RunRanker(run, docs, encoder=fake, chunker=chunker, embed=fake_embed_chunks)
    outside = [  # a chunk of the page beyond the failed method's top k
        c for c in dict.fromkeys(clickable)
        if (r := ranker.full_depth(record.query, record.doc_id, c)[run.methods[0]].rank)
        and r > run.text_k
    ]  # fmt: skip
    assert outside, "the page should hold a chunk outside the top k"
    picked = outside[0]
    click(at, chart, picked)
    (line,) = [c.value for c in at.caption if c.value.startswith("Ranked: ")]
    assert "the chunk clicked on the page" in plain(line)
    want = ranker.full_depth(record.query, record.doc_id, picked)
    table = [d.value for d in at.dataframe if f"to enter the top {run.text_k}" in d.value.columns]
    assert list(table[0]["method"]) == list(run.methods)
    assert list(table[0]["rank"]) == [
        f"{want[m].rank:,} of {want[m].scope_size:,}" for m in run.methods
    ]
    assert all(want[m].scope_size == record.scope_size for m in run.methods)
