"""The datasheet demo: why late chunking exists.

Five invented pumps, one datasheet each, with the same sections. A product is named once,
at the top of its datasheet; its later sections say only "the unit"/"it". For every
product x section query ("<product> <behaviour>"), the rank of that product's section
chunk among all chunks of all datasheets is compared across methods. Run with ``-s`` to
see the table.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import SAMPLE_DOCS

DATASHEETS = SAMPLE_DOCS / "datasheets"


def load_generator():
    spec = importlib.util.spec_from_file_location(
        "make_datasheets", SAMPLE_DOCS / "make_datasheets.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_datasheets", module)
    spec.loader.exec_module(module)
    return module


def test_shipped_datasheets_are_what_the_generator_writes(tmp_path: Path) -> None:
    gen = load_generator()
    written = gen.main(tmp_path)
    assert len(written) == len(gen.PRODUCTS) >= 4
    for path in written:
        shipped = DATASHEETS / path.name
        assert shipped.read_bytes() == path.read_bytes(), f"regenerate {shipped.name}"
    assert (DATASHEETS / "README.md").is_file()


def test_each_product_is_named_once_then_only_the_unit() -> None:
    from core.formats import load_document

    gen = load_generator()
    for product in gen.PRODUCTS:
        doc = load_document(DATASHEETS / f"datasheet-{gen.slug(product)}.pdf")
        assert doc.text.count(product) == 1
        assert doc.text.index(product) < 40  # the title, on page 1
        assert doc.pages_of(0, len(product)) == (1,)
        for other in gen.PRODUCTS:
            assert other == product or other not in doc.text


def section_ranks(scores: np.ndarray, targets: list[list[int]]) -> np.ndarray:
    """1-based rank of the best target chunk of each query (rows of ``scores``)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranks = np.empty(len(targets), dtype=int)
    for q, wanted in enumerate(targets):
        ranks[q] = int(np.flatnonzero(np.isin(order[q], wanted))[0]) + 1
    return ranks


@pytest.mark.slow
def test_late_ranks_the_named_products_section_higher_than_naive() -> None:
    from test_embed_encoder import shared_default_encoder

    from core.chunk import chunk_document, policy_from_args
    from core.embed import contextual_text
    from core.formats import load_document, parse_document
    from core.methods.embedding import embed_chunks

    gen = load_generator()
    encoder = shared_default_encoder()
    policy = policy_from_args("structure")
    docs, chunks = [], []
    for product in gen.PRODUCTS:
        doc = load_document(DATASHEETS / f"datasheet-{gen.slug(product)}.pdf")
        docs.append(doc)
        chunks.append(chunk_document(doc, parse_document(doc).blocks, policy))
    flat = [(d, c) for d, cs in zip(docs, chunks, strict=True) for c in cs]
    queries, targets = [], []
    for doc, product in zip(docs, gen.PRODUCTS, strict=True):
        for section, behaviour in gen.SECTION_QUERIES.items():
            queries.append(f"{product} {behaviour}")
            targets.append(
                [
                    i
                    for i, (d, c) in enumerate(flat)
                    if d is doc and c.heading_path and c.heading_path[-1] == section
                ]
            )
    assert all(targets), "the parser should find every section heading"
    query_vectors = encoder.encode_texts(queries)
    trained_window = encoder.content_tokens
    runs = {
        "naive": ("naive", {}),
        "contextual": ("contextual", {}),
        "late (default window)": ("late", {}),
        f"late ({trained_window}-token windows)": ("late", {"window_tokens": trained_window}),
    }
    ranks, windows = {}, {}
    for label, (method, options) in runs.items():
        records = [
            r
            for doc, cs in zip(docs, chunks, strict=True)
            for r in embed_chunks(doc, cs, method, encoder, **options)
        ]
        matrix = np.stack([r.vector for r in records])
        ranks[label] = section_ranks(query_vectors @ matrix.T, targets)
        windows[label] = [records[t[0]].windows for t in targets]
    doc_tokens = [len(encoder.content_ids([d.text])[0]) for d in docs]
    print(
        f"\n{len(queries)} queries over {len(flat)} chunks of {len(docs)} datasheets "
        f"({min(doc_tokens)}-{max(doc_tokens)} tokens each)"
    )
    print(f"{'method':<24}{'mean rank':>10}{'top-1':>8}")
    for label, r in ranks.items():
        print(f"{label:<24}{r.mean():>10.2f}{(r == 1).mean():>8.2f}")
    # Trained-length windows: sections that share window 0 with the product name vs the rest.
    short = ranks[f"late ({trained_window}-token windows)"]
    with_name = np.array([0 in w for w in windows[f"late ({trained_window}-token windows)"]])
    print(
        f"late ({trained_window}-token windows): {with_name.sum()} queries whose section shares "
        f"a window with the product name: mean rank {short[with_name].mean():.2f} "
        f"(naive {ranks['naive'][with_name].mean():.2f}); the other {(~with_name).sum()}: "
        f"{short[~with_name].mean():.2f} (naive {ranks['naive'][~with_name].mean():.2f})"
    )
    example = flat[targets[1][0]]
    print("contextual text of one target:\n  " + contextual_text(*example).replace("\n", "\n  "))

    # Each datasheet fits the model's positions, so the default is one whole-document window.
    assert trained_window < max(doc_tokens) <= encoder.content_position_limit
    assert all(w == (0,) for w in windows["late (default window)"])
    assert ranks["late (default window)"].mean() < ranks["naive"].mean()
    # With trained-length windows, late helps exactly where the window holds the name.
    assert with_name.any()
    assert short[with_name].mean() < ranks["naive"][with_name].mean()
    assert ranks["contextual"].mean() <= ranks["naive"].mean()
