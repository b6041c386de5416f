"""The map: which chunks are drawn (all, or a stated seeded sample that keeps the query's
top k and the gold), one projection fitted on every method at once, the numbers beside
it, the link that opens it on a failure, and the page under AppTest (a click opens the
chunk)."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from fakes import (
    FakeEncoder,
    index_by_paragraphs,
    make_document,
)
from streamlit.proto.WidgetStates_pb2 import WidgetState
from test_diagnose_depth import TOPICS as PUMP_TOPICS

from core.errors import ChunkscopeError
from core.projection import group_cohesion, layout, read_scope
from core.projection.cohesion import gold_chunks, query_cosines
from core.provenance.types import ChunkPolicy
from core.render.links import parse_span
from core.store import ChunkStore
from tests.test_app_engine_pages import fake, index_demo, open_page, store_dir
from workbench.engine import resources as eng
from workbench.widgets.map_links import map_link

__all__ = ["fake", "store_dir"]  # fixtures, imported for pytest

POLICY = ChunkPolicy(name="fixed", size=300)
TOPICS = PUMP_TOPICS[:4]


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    store = ChunkStore.open(tmp_path_factory.mktemp("map") / "store")
    enc = FakeEncoder()
    docs = [
        make_document(f"d{i}", "\n\n".join(f"Unit {i}: {t} Model {i}." for t in TOPICS))
        for i in range(6)
    ]
    index_by_paragraphs(docs, policy=POLICY, encoder=enc, store=store)
    return store, enc, {d.doc_id: d for d in docs}


def test_the_scope_draws_every_chunk_under_every_dense_method(filled):
    store, enc, docs = filled
    drawn = read_scope(store, model=enc.name, methods=["naive", "bm25", "late"], policy=POLICY)
    assert drawn.methods == ("naive", "late")  # a map draws stored vectors only
    assert len(drawn.chunks) == drawn.scope_size == 24 and not drawn.sampled
    assert [c.doc_id for c in drawn.chunks] == sorted(c.doc_id for c in drawn.chunks)
    for c in drawn.chunks:  # provenance holds for what a hover shows and a click opens
        assert docs[c.doc_id].text[c.char_start : c.char_end] == c.text
    recs = store.scope_records(model=enc.name, method="late", policy=POLICY)
    row = {cid: i for i, cid in enumerate(recs.ids)}
    for i, c in enumerate(drawn.chunks):
        assert np.array_equal(drawn.vectors["late"][i], recs.matrix[row[c.chunk_id]])
    assert drawn.sample_line() == "all 24 chunks of the scope"


def test_a_large_scope_is_a_seeded_sample_that_keeps_what_is_asked(filled):
    store, enc, _ = filled
    ask = dict(model=enc.name, methods=["naive", "late"], policy=POLICY)
    plain = read_scope(store, **ask, max_points=10)
    assert plain.sampled and len(plain.chunks) == 5 and plain.scope_size == 24
    missed = [c for c in read_scope(store, **ask).row_of if c not in plain.row_of]
    kept = read_scope(store, **ask, max_points=10, keep=missed[:3])
    assert set(missed[:3]) <= set(kept.row_of) and set(kept.kept) == set(missed[:3])
    assert [kept.chunks[i].chunk_id for i in kept.fit_rows] == [c.chunk_id for c in plain.chunks]
    assert "seeded sample of 5 of 24 chunks" in kept.sample_line()
    assert "plus 3 kept" in kept.sample_line()


def test_one_projection_serves_every_panel(filled):
    store, enc, _ = filled
    drawn = read_scope(store, model=enc.name, methods=["naive", "late"], policy=POLICY)
    query = enc.encode_query("filter replaced after hours")
    lay = layout(drawn, "pca", query_vec=query)
    assert set(lay.xy) == {"naive", "late"} and lay.xy["late"].shape == (24, 2)
    # the query is one vector, so it sits at one place in every panel; a chunk whose
    # vector is the same under both methods sits at the same place in both
    twin = {**drawn.vectors, "late": drawn.vectors["naive"].copy()}
    from dataclasses import replace

    same = layout(replace(drawn, vectors=twin, version="twin"), "pca")
    assert np.allclose(same.xy["naive"], same.xy["late"])
    again = layout(drawn, "pca", query_vec=query)
    assert again.reused and np.array_equal(again.xy["late"], lay.xy["late"])
    assert "PCA" in lay.note and lay.query_xy is not None
    with pytest.raises(ChunkscopeError, match="no projection"):
        layout(drawn, "tsne")


def test_a_sampled_scope_places_the_kept_chunks_by_the_fitted_projection(filled):
    store, enc, _ = filled
    ask = dict(model=enc.name, methods=["naive", "late"], policy=POLICY)
    every = read_scope(store, **ask)
    keep = [every.chunks[3].chunk_id]
    small = read_scope(store, **ask, max_points=10, keep=keep)
    lay = layout(small, "pca")
    from sklearn.decomposition import PCA

    fit = [small.vectors[m][small.fit_rows] for m in small.methods]
    unit = [v / np.linalg.norm(v, axis=1, keepdims=True) for v in fit]
    pca = PCA(n_components=2, random_state=0).fit(np.concatenate(unit))
    row = small.row_of[keep[0]]
    vec = small.vectors["late"][row]
    assert np.allclose(lay.xy["late"][row], pca.transform((vec / np.linalg.norm(vec))[None])[0])


def test_group_cohesion_leaves_the_chunk_out_of_its_own_centroid(filled):
    store, enc, _ = filled
    drawn = read_scope(store, model=enc.name, methods=["naive"], policy=POLICY)
    labels = [c.doc_id for c in drawn.chunks]
    found = group_cohesion(drawn, labels)["naive"]
    unit = drawn.vectors["naive"] / np.linalg.norm(drawn.vectors["naive"], axis=1, keepdims=True)
    own, other = [], []
    cents = {d: unit[[i for i, x in enumerate(labels) if x == d]].sum(0) for d in set(labels)}
    for i, d in enumerate(labels):
        rest = cents[d] - unit[i]
        own.append(rest @ unit[i] / np.linalg.norm(rest))
        other.append(np.mean([
            cents[e] @ unit[i] / np.linalg.norm(cents[e]) for e in cents if e != d
        ]))  # fmt: skip
    assert found.own == pytest.approx(np.mean(own)) and found.other == pytest.approx(np.mean(other))
    assert (
        found.groups == 6
        and found.chunks == 24
        and found.gap == pytest.approx(found.own - found.other)
    )
    alone = group_cohesion(drawn, [c.chunk_id for c in drawn.chunks])["naive"]
    assert alone.own is None  # no chunk shares a group: no own centroid to measure


def test_gold_chunks_are_the_drawn_chunks_overlapping_a_gold_span(filled):
    store, enc, docs = filled
    drawn = read_scope(store, model=enc.name, methods=["naive"], policy=POLICY)
    first = next(c for c in drawn.chunks if c.doc_id == "d2")
    assert gold_chunks(drawn, "d2", None, [(first.char_end - 1, first.char_end)]) == [
        first.chunk_id
    ]
    assert gold_chunks(drawn, "d2", None, [(first.char_end, first.char_end)]) != [first.chunk_id]
    assert gold_chunks(drawn, "d2", "another-version", [(0, 10)]) == []
    cos = query_cosines(drawn, enc.encode_query(first.text))["naive"]
    assert int(np.argmax(cos)) == drawn.row_of[first.chunk_id]


def test_the_map_link_carries_the_query_and_its_gold():
    link = map_link(
        "pump temperature range", "datasheet a&b", [(10, 42), (50, 60)], doc_sha256="ab"
    )
    parsed = urlparse(link)
    assert parsed.path == "map"
    params = {k: v[0] for k, v in parse_qs(parsed.query).items()}
    assert params["q"] == "pump temperature range" and params["doc"] == "datasheet a&b"
    assert [parse_span(p) for p in params["gold"].split(",")] == [(10, 42), (50, 60)]
    assert params["sha"] == "ab"


def click_map(at, chunk_id: str) -> None:
    """Click ``chunk_id``'s point on the map (the selection the frontend sends)."""
    (chart,) = [c for c in at.get("plotly_chart") if "cs_map_chart" in c.proto.id]
    spec = json.loads(chart.proto.spec)
    trace_no, index = next(
        (t, i)
        for t, trace in enumerate(spec["data"])
        for i, d in enumerate(trace.get("customdata") or [])
        if d[0] == chunk_id
    )
    trace = spec["data"][trace_no]  # positions may come as typed arrays: the callback reads
    point = {  # only the customdata
        "curve_number": trace_no, "point_number": index, "point_index": index,
        "x": 0.0, "y": 0.0, "customdata": trace["customdata"][index],
    }  # fmt: skip
    selection = {"selection": {"points": [point], "point_indices": [index], "box": [], "lasso": []}}
    states = at._tree.get_widget_states()
    states.widgets.append(WidgetState(id=chart.proto.id, string_value=json.dumps(selection)))
    at._run(states)
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.app
def test_the_map_opens_on_a_failure_link_and_a_click_opens_the_chunk(fake, store_dir):
    index_demo(store_dir, fake, methods=["naive", "late"])
    at = open_page("compare")  # the session's frame, then the map through its link
    store = ChunkStore.open(store_dir)
    recs = store.scope_records(model=fake.name, method="late", policy=eng.DEMO_POLICY)
    gold_row = next(i for i, m in enumerate(recs.metadatas) if m["doc_id"].endswith("hx40"))
    meta = recs.metadatas[gold_row]
    link = urlparse(
        map_link(eng.DEMO_QUERY, meta["doc_id"], [(meta["char_start"], meta["char_end"])])
    )
    at.query_params.update({k: v[0] for k, v in parse_qs(link.query).items()})
    at.switch_page("pages/map.py").run()
    assert not at.exception, [e.value for e in at.exception]
    (chart,) = [c for c in at.get("plotly_chart") if "cs_map_chart" in c.proto.id]
    names = [t.get("name") for t in json.loads(chart.proto.spec)["data"]]
    assert {"query", "gold", "top k (each panel its method's)"} <= set(names)
    assert [s.value for s in at.subheader][:2] == [
        "The numbers behind the picture",
        "Where does it rank?",
    ]
    target = recs.ids[(gold_row + 3) % len(recs.ids)]
    click_map(at, target)
    assert "The picked chunk" in [s.value for s in at.subheader]
    picked = recs.metadatas[recs.ids.index(target)]
    links = [p.proto.page for p in at.get("page_link")]
    assert any("source" in p for p in links)
    assert any(f"{picked['char_start']}" in str(p.proto) for p in at.get("page_link"))


@pytest.mark.slow  # numba compiles UMAP's kernels on a process's first fit
def test_umap_is_seeded_and_places_every_chunk_and_the_query(filled):
    from core.projection import fit

    store, enc, _ = filled
    drawn = read_scope(store, model=enc.name, methods=["naive", "late"], policy=POLICY)
    query = enc.encode_query("warranty three years")
    first = layout(drawn, "umap", query_vec=query)
    fit._FITTED.clear()
    second = layout(drawn, "umap", query_vec=query)
    assert not second.reused and "UMAP (seed 0" in first.note
    for m in drawn.methods:
        assert first.xy[m].shape == (24, 2) and np.isfinite(first.xy[m]).all()
        assert np.allclose(first.xy[m], second.xy[m])
    assert first.query_xy == pytest.approx(second.query_xy)
