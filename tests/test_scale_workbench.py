"""The workbench on an index built by ``chunkscope index --engine ray``.

Three shared PDFs are indexed with every stored method by the real command on a local
Ray cluster (2 CPUs, a 100 MiB object store, no dashboard, no usage statistics; shut
down after the module) into a Chroma server on loopback; the encoder is a tiny randomly
initialised BERT (``make_tiny_model``), so the run takes seconds and the ranks mean
nothing, but every step is the real one. The workbench is then opened on that server
(``$CHUNKSCOPE_CHROMA``, the sidebar's default): Library lists the documents from the
server's library, Compare ranks chunks under every method, and a citation link of a
ranked chunk opens on Source in a fresh session, verified and highlighted exactly.
"""

from __future__ import annotations

import html
import re
import shutil
from urllib.parse import parse_qs

import pytest
from conftest import PDF_DIR, ROOT
from streamlit.testing.v1 import AppTest
from test_chroma_server import _free_port, serving
from test_embed_encoder import make_tiny_model

from core import methods as registry
from core.formats import load_document

ray = pytest.importorskip("ray", reason="Ray is the optional scale extra (requirements-dev.txt)")
local_runtime_env = pytest.importorskip("core.scale.cluster").local_runtime_env

pytestmark = pytest.mark.server
TIMEOUT_S = 120
PDFS = (
    "pypdfsf_multicolumn.pdf",
    "pypdfsf_pdflatex-outline.pdf",
    "pypdfsf_google-doc-document.pdf",
)
QUERY = "columns of text and an outline of sections"
FUSION = "hybrid(late,bm25;rrf60)"
CARD = re.compile(r'<b class="cs-rank">#(\d+)</b>', re.S)


@pytest.fixture(scope="module")
def local_ray():
    mp = pytest.MonkeyPatch()
    mp.setenv("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False,
             object_store_memory=100 * 1024**2, _node_ip_address="127.0.0.1",
             log_to_driver=False, runtime_env=local_runtime_env())  # fmt: skip
    try:
        yield
    finally:
        ray.shutdown()
        mp.undo()


@pytest.fixture(scope="module")
def ray_index(local_ray, tmp_path_factory):
    """``(HOST:PORT, tiny model folder, indexed files)``: the command's run, done once."""
    from core.cli import main

    folder = tmp_path_factory.mktemp("ray-pdfs")
    for name in PDFS:
        shutil.copy(PDF_DIR / name, folder / name)
    model = make_tiny_model(tmp_path_factory.mktemp("tiny") / "tiny-mean")
    port = _free_port()
    with serving(tmp_path_factory.mktemp("ray-server"), port):
        host = f"127.0.0.1:{port}"
        rc = main(["index", str(folder), "--engine", "ray", "--workers", "2",
                   "--chroma-host", host, "--model", str(model)])  # fmt: skip
        assert rc == 0
        yield host, model, sorted(folder.iterdir())


@pytest.fixture
def on_server(ray_index, monkeypatch):
    """The workbench's defaults pointed at the server and the tiny model; the process-wide
    caches (encoder, tokenizer, model facts) cleared before and after."""
    import streamlit as st

    host, model, files = ray_index
    monkeypatch.setenv("CHUNKSCOPE_CHROMA", host)
    monkeypatch.setenv("CHUNKSCOPE_MODEL", str(model))
    monkeypatch.delenv("CHUNKSCOPE_STORE", raising=False)
    monkeypatch.chdir(ROOT)
    st.cache_resource.clear()
    st.cache_data.clear()
    yield files
    st.cache_resource.clear()
    st.cache_data.clear()


def session(page: str, **query: str) -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S)
    at.query_params.update(query)
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def page_html(at: AppTest) -> str:
    return "\n".join(h.proto.body for h in at.html)


def column_ranks(at: AppTest, method: str) -> list[int]:
    found = [c for c in at.main.columns
             if c.subheader and c.subheader[0].value.replace("\u200b", "") == method]  # fmt: skip
    assert found, f"no column {method!r}"
    return [int(r) for h in found[0].html for r in CARD.findall(h.proto.body)]


def test_library_compare_and_source_work_on_a_ray_built_index(on_server):
    docs = {p.stem: load_document(p) for p in on_server}

    library = session("library")
    rows = library.dataframe[0].value
    listed = rows[rows["document"].isin(list(docs))]
    assert sorted(listed["document"]) == sorted(docs)
    assert set(listed["source"]) == {"library"}  # the server's library, not a local file

    compare = session("compare")
    assert compare.session_state["cs_store_kind"] == "server"
    every = [*registry.base_methods(), FUSION]
    compare.multiselect(key="cs_cmp_methods").set_value(every).run()
    compare.text_input(key="cs_w_cmp_query").set_value(QUERY).run()
    assert not compare.exception, [e.value for e in compare.exception]
    assert not compare.warning, [w.value for w in compare.warning]  # every method indexed
    for method in every:
        assert column_ranks(compare, method) == list(range(1, 11)), method

    links = [p for p in compare.get("page_link") if "source" in p.proto.page]
    assert len(links) >= 10 * len(every)
    params = {k: v[0] for k, v in parse_qs(links[0].proto.query_string).items()}
    doc = docs[params["doc"]]
    start, end = map(int, params["span"].split("-"))
    assert params["sha"] == doc.sha256

    source = session("source", **params)  # a fresh session: only the server in common
    body = page_html(source)
    assert "Verified" in body and "cs-badge-ok" in body
    lit = re.findall(r'<mark class="cs-hl"[^>]*>(.*?)</mark>', body, flags=re.S)
    shown = "".join(html.unescape(re.sub(r"<[^>]+>", "", m)) for m in lit)
    assert shown == doc.text[start:end]
