"""The method registry: the built-in dense methods carry their embeddings, and a method
registered from outside is dispatched, cached, labelled and offered like a built-in one
(``tests/test_methods.py`` indexes, compares and evaluates a registered toy method)."""

from __future__ import annotations

import types
from dataclasses import replace

import pytest
from test_embed_encoder import make_chunks, make_text_document, shared_tiny_dir

from core import methods
from core.embed import VectorCache, load_encoder
from core.embed.late import WindowPolicy
from core.methods import DenseEmbedding, MethodSpec, embedding
from core.methods.embedding import embed_chunks
from core.provenance.types import ChunkPolicy


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory):
    return load_encoder(shared_tiny_dir(tmp_path_factory), device="cpu")


def test_the_built_in_dense_methods_carry_their_embedding():
    assert methods.embedding_methods() == ("naive", "contextual", "late")
    late = methods.embedding_method(windowed=True)
    assert late.name == "late" and late.needs_mean_pooling
    assert late.progress_unit == "macro-windows"
    assert methods.embedding_method(prefixed=True).name == "contextual"
    assert methods.embedding_method().name == "naive"
    assert all(methods.get(m).embedding is None for m in ("bm25", "hybrid(late,bm25)"))
    with pytest.raises(ValueError, match="only a dense method"):
        replace(methods.get("bm25"), embedding=methods.get("naive").embedding)
    with pytest.raises(ValueError, match="unknown method 'bm25': use one of naive,"):
        embedding.embedding_of("bm25")


def test_cache_keys_of_the_built_in_methods_are_pinned():
    """A changed variant or key orphans every stored vector: these strings stay."""
    text = "Model | Bar\nHX40 | 2\nPumps run at two bar. Valves are checked monthly."
    doc = make_text_document(text, title="Pump manual")
    (plain,) = make_chunks(doc, [(21, len(text))], heading_paths=[("Pumps", "Pressure")])
    policy = ChunkPolicy(name="structure", size=240, unit="tokens", table_header_prefix=True)
    piece = replace(
        plain, policy=policy, header_rows=((0, 11),), header_text=text[0:11],
        block_kinds=("table",),
    )  # fmt: skip
    window = WindowPolicy(window=254, stride=200, margin=27)
    encoder = types.SimpleNamespace(identity="m", max_tokens=256)
    pinned = {
        "naive": [
            ("", "29b0071589111c1fefd2380a986b01aa"),
            ("thp-ca3c648f6f99c678", "07282b54e50cd443813ad958be06233d"),
        ],
        "contextual": [
            ("ctx-10e76e7b92d369f8", "4641882ebb32449bc513863aac7e48ec"),
            ("ctx-10e76e7b92d369f8thp-ca3c648f6f99c678", "5e1c6fd5843ad44b078f4980c253ab1c"),
        ],
        "late": [
            ("w254-s200-m27", "095c6d6d9fa55fbf27f75b1082745c72"),
            ("w254-s200-m27", "095c6d6d9fa55fbf27f75b1082745c72"),
        ],
    }
    for name, want in pinned.items():
        spec = methods.get(name)
        assert spec.embedding is not None
        policy_of = window if spec.embedding.windowed else None
        keys = embedding._cache_keys(doc, [plain, piece], spec, encoder, policy_of)
        assert [(k.variant, k.digest) for k in keys] == want, name


def test_a_registered_embedding_is_dispatched_cached_and_labelled_by_its_spec(tiny, capsys):
    from core.cli import main
    from core.embed.naive import encode_alone, header_variant
    from core.index.indexer import method_records
    from core.methods.dense import embed_step

    calls: list[int] = []

    def upper_vectors(spec, doc, chunks, encoder, *, policy, progress, cache):
        calls.append(len(chunks))
        return encode_alone(
            [c.chunk_id for c in chunks], [c.text.upper() for c in chunks],
            [c.text for c in chunks], encoder, method=spec.name, progress=progress,
        )  # fmt: skip

    spec = MethodSpec(
        name="upper", family="dense", score=methods.COSINE, summary="upper-cased text",
        colour="#000000", order=5, index=embed_step("upper"),
        embedding=DenseEmbedding(vectors=upper_vectors, variant=header_variant),
    )  # fmt: skip
    methods.register(spec)
    try:
        assert "upper" in methods.embedding_methods()
        doc = make_text_document("The pump runs at two bar. Its valves are checked monthly.")
        chunks = make_chunks(doc, [(0, 25), (26, len(doc.text))])
        cache = VectorCache()
        first = embed_chunks(doc, chunks, "upper", tiny, cache=cache)
        again = embed_chunks(doc, chunks, spec, tiny, cache=cache)
        assert calls == [2] and cache.hits == 2
        assert {r.method for r in (*first, *again)} == {"upper"}
        direct = tiny.encode_texts([c.text.upper() for c in chunks])
        assert float(first[0].vector @ direct[0]) > 0.9999
        (record, _) = method_records(doc, chunks, "upper", tiny)
        assert record.method == "upper"
        with pytest.raises(SystemExit):
            main(["embed", "--help"])
        assert "upper" in capsys.readouterr().out
    finally:
        methods.unregister("upper")
    assert "upper" not in methods.embedding_methods()
