"""Context attribution: the full-window cosine is the stored late vector's, and on a
datasheet the product's name in the title is what moved a later section's vector."""

from __future__ import annotations

import numpy as np
import pytest

from core.chunk import chunk_document, policy_from_args
from core.diagnose.attribution import contextual_attribution, late_attribution
from core.formats import load_document, parse_document
from tests.conftest import SAMPLE_DOCS


@pytest.mark.slow
def test_the_product_name_is_what_moved_a_sections_late_vector():
    from test_embed_encoder import shared_default_encoder

    from core.methods.embedding import embed_chunks

    encoder = shared_default_encoder()
    doc = load_document(SAMPLE_DOCS / "datasheets" / "datasheet-corvane-hx40.pdf")
    chunks = chunk_document(doc, parse_document(doc).blocks, policy_from_args("fixed", 300))
    target = next(c for c in reversed(chunks) if "Corvane" not in c.text)
    query = "Corvane HX40 maintenance schedule"
    found = late_attribution(doc, target, query, encoder)
    stored = next(
        v for v in embed_chunks(doc, chunks, "late", encoder) if v.chunk_id == target.chunk_id
    )
    qvec = encoder.encode_query(query)
    assert found.cosine == pytest.approx(
        float(stored.vector @ qvec / np.linalg.norm(qvec)), abs=1e-4
    )
    for part in found.parts:  # every hidden part is a sentence of the window outside the chunk
        assert doc.text[part.char_start : part.char_end] == part.text
        assert part.char_end <= target.char_start or part.char_start >= target.char_end
    best = max(found.parts, key=lambda p: p.delta)
    assert "Corvane" in best.text and best.delta > 0.05
    ctx = contextual_attribution(doc, target, query, encoder)
    assert any(p.text in {"Corvane", "HX40"} and p.delta > 0 for p in ctx.parts)
