"""Late chunking against independent computations; contextual text; the method contract."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_embed_encoder import (
    make_chunks,
    make_text_document,
    make_tiny_model,
    shared_default_encoder,
    shared_tiny_dir,
)

from core.embed import contextual_text, late_windows, load_encoder
from core.embed.late import window_policy
from core.errors import ModelError, PoolingError
from core.methods import embedding_methods
from core.methods.embedding import embed_chunks
from core.model.paths import default_model_dir

PARAGRAPH = (
    "The circulation pump keeps hot water moving through the building's radiators. "
    "It starts softly, ramps up when the thermostats open, and slows again overnight. "
    "Its rotor runs in the pumped water, which cools and lubricates the bearings, so "
    "nothing needs greasing. In winter the unit protects itself from frost by running "
    "briefly every few hours; in summer it turns the shaft once a day to stop it seizing. "
    "Résumé of the café test: naïve users should never open the housing 😀."
)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_tiny_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def tiny(tiny_dir: Path):
    return load_encoder(tiny_dir, device="cpu")


def independent_states(model, tokenizer, text: str, lo: int, hi: int):
    """Token states of document tokens ``[lo, hi)`` run as one sequence with specials."""
    import torch

    ids = tokenizer(text, add_special_tokens=False)["input_ids"][lo:hi]
    row = [tokenizer.cls_token_id, *ids, tokenizer.sep_token_id]
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([row]), attention_mask=torch.ones(1, len(row)))
    return out.last_hidden_state[0, 1:-1].numpy()


def span_token_indices(tokenizer, text: str, start: int, end: int) -> list[int]:
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)[
        "offset_mapping"
    ]
    return [i for i, (s, e) in enumerate(offsets) if s < end and max(e, s + 1) > start]


def normalised(v: np.ndarray) -> np.ndarray:
    return v / np.linalg.norm(v)


AWKWARD_SPANS = [(0, 4), (4, 83), (60, 200), (83, 84), (150, 151), (200, len(PARAGRAPH))]


@pytest.mark.slow
def test_late_one_window_equals_independent_computation() -> None:
    from transformers import AutoModel, AutoTokenizer

    encoder = shared_default_encoder()
    doc = make_text_document(PARAGRAPH)
    n_tokens = len(encoder.content_ids([PARAGRAPH])[0])
    assert n_tokens <= encoder.content_tokens  # one window
    records = embed_chunks(doc, make_chunks(doc, AWKWARD_SPANS), "late", encoder)
    tokenizer = AutoTokenizer.from_pretrained(default_model_dir(), local_files_only=True)
    model = AutoModel.from_pretrained(default_model_dir(), local_files_only=True).eval()
    # The whole text with its specials in one pass; specials are not pooled.
    import torch

    full = tokenizer(PARAGRAPH, return_offsets_mapping=True, return_special_tokens_mask=True)
    with torch.inference_mode():
        states = (
            model(
                input_ids=torch.tensor([full["input_ids"]]),
                attention_mask=torch.tensor([full["attention_mask"]]),
            )
            .last_hidden_state[0]
            .numpy()
        )
    for (s, e), record in zip(AWKWARD_SPANS, records, strict=True):
        picked = [
            i
            for i, ((ts, te), special) in enumerate(
                zip(full["offset_mapping"], full["special_tokens_mask"], strict=True)
            )
            if not special and ts < e and max(te, ts + 1) > s
        ]
        expected = normalised(states[picked].mean(axis=0))
        assert float(record.vector @ expected) > 0.99999, (s, e)
        assert record.token_count == len(picked)
        assert record.windows == (0,) and record.context == "full"
        assert record.full_context_tokens == record.token_count
        assert record.truncated_tokens == 0


def test_late_multi_window_equals_independent_ownership(tiny) -> None:
    text = " ".join(PARAGRAPH.split()[:60])
    doc = make_text_document(text)
    window, stride = 16, 12
    n = len(tiny.content_ids([text])[0])
    spans = [(0, 30), (25, 140), (100, 101), (140, len(text)), (0, len(text))]
    records = embed_chunks(
        doc, make_chunks(doc, spans), "late", tiny, window_tokens=window, stride_tokens=stride
    )
    starts = list(range(0, n - window, stride)) + [n - window]
    states = np.zeros((n, tiny.dim))
    owner = np.zeros(n, dtype=int)
    for t in range(n):  # furthest from a window edge (a document edge is no edge)
        scores = []
        for lo in starts:
            hi = lo + window
            if not lo <= t < hi:
                scores.append(-1)
                continue
            left = t - lo if lo > 0 else n
            right = hi - 1 - t if hi < n else n
            scores.append(min(left, right))
        owner[t] = int(np.argmax(scores))
    for k, lo in enumerate(starts):
        window_states = independent_states(tiny.model, tiny.tokenizer, text, lo, lo + window)
        mine = np.flatnonzero(owner == k)
        states[mine] = window_states[mine - lo]
    for (s, e), record in zip(spans, records, strict=True):
        picked = span_token_indices(tiny.tokenizer, text, s, e)
        expected = normalised(states[picked].mean(axis=0))
        np.testing.assert_allclose(record.vector, expected, atol=2e-5)
        assert record.windows == tuple(sorted(set(owner[picked].tolist())))
        assert record.context in ("full", "partial")
        assert 0 <= record.full_context_tokens <= record.token_count == len(picked)
    assert records[-1].windows == tuple(range(len(starts)))
    assert records[-1].context == "partial"  # seams leave some tokens short of the margin


def test_whitespace_only_chunk_takes_the_next_token(tiny) -> None:
    text = "alpha beta   \n\t  gamma delta"
    doc = make_text_document(text)
    gap = (text.index("beta") + 4, text.index("gamma"))
    records = embed_chunks(doc, make_chunks(doc, [gap, (0, len(text))]), "late", tiny)
    assert records[0].token_count == 0 and records[0].full_context_tokens == 0
    states = independent_states(tiny.model, tiny.tokenizer, text, 0, 10**6)
    gamma = span_token_indices(tiny.tokenizer, text, text.index("gamma"), len(text))[0]
    np.testing.assert_allclose(records[0].vector, normalised(states[gamma]), atol=1e-5)


def test_late_windows_match_the_plan(tiny) -> None:
    text = " ".join(PARAGRAPH.split()[:60])
    doc = make_text_document(text)
    windows = late_windows(doc, tiny, window_tokens=16, stride_tokens=12)
    assert [w.index for w in windows] == list(range(len(windows)))
    assert windows[0].token_start == 0 and windows[0].char_start == 0
    assert windows[-1].token_end == len(tiny.content_ids([text])[0])
    assert windows[-1].char_end == len(text)
    for prev, nxt in zip(windows, windows[1:], strict=False):
        assert nxt.owned_token_start == prev.owned_token_end
        assert nxt.token_start < prev.token_end  # they overlap
        assert prev.owned_char_end <= nxt.owned_char_start
    assert all(w.n_tokens == 16 for w in windows)
    default = late_windows(doc, tiny)
    assert len(default) == 1 and default[0].n_tokens == windows[-1].token_end


def test_cls_model_is_refused_for_late(tmp_path: Path) -> None:
    encoder = load_encoder(make_tiny_model(tmp_path / "tiny-cls", pooling="cls"), device="cpu")
    doc = make_text_document(PARAGRAPH)
    chunks = make_chunks(doc, [(0, 50)])
    with pytest.raises(PoolingError, match="mean-pooled model.*CLS token") as info:
        embed_chunks(doc, chunks, "late", encoder)
    assert "\n" not in str(info.value)
    assert len(embed_chunks(doc, chunks, "naive", encoder)) == 1


def test_window_policy_limits(tiny) -> None:
    assert window_policy(tiny).window == 126  # the model's own limit less [CLS], [SEP]
    assert window_policy(tiny).stride == 126 - 126 // 8
    assert window_policy(tiny, window_tokens=510).window == 510
    with pytest.raises(ModelError, match="--window must be between 1 and 510"):
        window_policy(tiny, window_tokens=511)
    with pytest.raises(ModelError, match="--stride"):
        window_policy(tiny, window_tokens=100, stride_tokens=101)


def test_methods_share_spans_and_order(tiny) -> None:
    doc = make_text_document(PARAGRAPH, title="Pump  notes")
    chunks = make_chunks(
        doc,
        [(0, 80), (80, 200), (200, len(PARAGRAPH))],
        heading_paths=[(), ("Care",), ("Care", "Frost")],
    )
    by_method = {m: embed_chunks(doc, chunks, m, tiny) for m in embedding_methods()}
    for method, records in by_method.items():
        assert [r.chunk_id for r in records] == [c.chunk_id for c in chunks]
        assert all(r.method == method for r in records)
        assert all(abs(float(np.linalg.norm(r.vector)) - 1) < 1e-5 for r in records)
    for naive, ctx in zip(by_method["naive"], by_method["contextual"], strict=True):
        assert naive.token_count == ctx.token_count  # the chunk's own tokens
        assert naive.context == ctx.context == "none" and naive.windows == ()
    assert not np.allclose(by_method["naive"][1].vector, by_method["late"][1].vector)


def test_contextual_text_format() -> None:
    doc = make_text_document("Body one. Body two.", title="  Pump\nnotes ")
    a, b = make_chunks(doc, [(0, 9), (10, 19)], heading_paths=[(), ("Care", "Frost  guard")])
    assert contextual_text(doc, a) == "Pump notes\n\nBody one."
    assert contextual_text(doc, b) == "Pump notes\nCare > Frost guard\n\nBody two."
    untitled = make_text_document("Body one.", title="")
    (c,) = make_chunks(untitled, [(0, 9)])
    assert contextual_text(untitled, c) == "Body one."


def test_chunks_of_another_document_are_rejected(tiny) -> None:
    doc = make_text_document(PARAGRAPH)
    other = make_text_document(PARAGRAPH + " More.", doc_id="other")
    with pytest.raises(ValueError, match="is not a span of document"):
        embed_chunks(doc, make_chunks(other, [(0, 10)]), "naive", tiny)
    with pytest.raises(ValueError, match="unknown method"):
        embed_chunks(doc, make_chunks(doc, [(0, 10)]), "colbert", tiny)


def test_document_without_tokens(tiny) -> None:
    doc = make_text_document(" \n\t ")
    (record,) = embed_chunks(doc, make_chunks(doc, [(0, 4)]), "late", tiny)
    assert record.token_count == 0 and record.windows == (0,)
    np.testing.assert_allclose(record.vector, tiny.encode_texts([""])[0], atol=1e-6)
