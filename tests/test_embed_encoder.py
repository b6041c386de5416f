"""The encoder: pooling config, sequence limits, and agreement with sentence-transformers.

``make_tiny_model`` builds a randomly initialised two-layer BERT with the default model's
tokenizer in a temporary folder; the other embed tests import it to exercise the
machinery in milliseconds. Tests that run the real model are marked ``slow``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from core.embed import ChunkVector, load_encoder
from core.embed.modelconfig import read_pooling
from core.errors import ModelError
from core.methods.embedding import embed_chunks
from core.model.paths import default_model_dir
from core.provenance.types import Chunk, ChunkPolicy, Document, make_chunk_id

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
    "special_tokens_map.json",
)


def make_tiny_model(
    folder: Path, *, pooling: str | None = "mean", max_seq_length: int | None = 128
) -> Path:
    """A tiny BERT (hidden 32, 2 layers, 512 positions) with the default tokenizer.

    ``pooling`` writes a sentence-transformers ``modules.json`` + ``1_Pooling/config.json``
    (``None``: no pooling config at all).
    """
    import torch
    from transformers import BertConfig, BertModel

    folder.mkdir(parents=True, exist_ok=True)
    source = default_model_dir()
    for name in TOKENIZER_FILES:
        shutil.copy(source / name, folder / name)
    config = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    torch.manual_seed(0)
    BertModel(config).save_pretrained(folder)
    if pooling is not None:
        modules = [
            {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {
                "idx": 1,
                "name": "1",
                "path": "1_Pooling",
                "type": "sentence_transformers.models.Pooling",
            },
        ]
        (folder / "modules.json").write_text(json.dumps(modules))
        (folder / "1_Pooling").mkdir(exist_ok=True)
        (folder / "1_Pooling" / "config.json").write_text(
            json.dumps(
                {
                    "word_embedding_dimension": 32,
                    "pooling_mode_cls_token": pooling == "cls",
                    "pooling_mode_mean_tokens": pooling == "mean",
                    "pooling_mode_max_tokens": False,
                    "pooling_mode_mean_sqrt_len_tokens": False,
                }
            )
        )
    if max_seq_length is not None:
        (folder / "sentence_bert_config.json").write_text(
            json.dumps({"max_seq_length": max_seq_length, "do_lower_case": False})
        )
    return folder


def make_text_document(text: str, *, doc_id: str = "doc", title: str = "A title") -> Document:
    import hashlib

    return Document(
        doc_id=doc_id,
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        source=f"{doc_id}.txt",
        kind="text",
        text=text,
        title=title,
    )


def make_chunks(
    doc: Document,
    spans: list[tuple[int, int]],
    *,
    heading_paths: list[tuple[str, ...]] | None = None,
    policy: ChunkPolicy | None = None,
) -> list[Chunk]:
    policy = policy or ChunkPolicy(name="fixed", size=10_000)
    paths = heading_paths or [() for _ in spans]
    return [
        Chunk(
            chunk_id=make_chunk_id(doc.doc_id, doc.sha256, policy, s, e),
            doc_id=doc.doc_id,
            doc_sha256=doc.sha256,
            char_start=s,
            char_end=e,
            text=doc.text[s:e],
            pages=(),
            heading_path=path,
            block_kinds=("paragraph",),
            token_count=0,
            policy=policy,
        )
        for (s, e), path in zip(spans, paths, strict=True)
    ]


_SHARED: dict[str, object] = {}


def shared_tiny_dir(factory: pytest.TempPathFactory) -> Path:
    """One mean-pooled tiny model folder for the whole session (read-only by convention)."""
    if "tiny" not in _SHARED:
        _SHARED["tiny"] = make_tiny_model(factory.mktemp("tiny") / "tiny-mean")
    return _SHARED["tiny"]  # type: ignore[return-value]


def shared_default_encoder():
    """The default model, loaded once per session."""
    if "default" not in _SHARED:
        _SHARED["default"] = load_encoder(device="cpu")
    return _SHARED["default"]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_tiny_dir(tmp_path_factory)


@pytest.fixture(scope="module")
def real_encoder():
    return shared_default_encoder()


# -- configuration ------------------------------------------------------------------------


def test_default_model_config_is_read() -> None:
    assert read_pooling(default_model_dir()) == "mean"


def test_tiny_model_loads_with_its_config(tiny_dir: Path) -> None:
    enc = load_encoder(tiny_dir, device="cpu")
    assert (enc.name, enc.pooling, enc.max_tokens, enc.position_limit, enc.dim) == (
        "tiny-mean",
        "mean",
        128,
        512,
        32,
    )
    assert enc.specials.count == 2
    assert enc.content_tokens == 126


def test_cls_pooling_is_read(tmp_path: Path) -> None:
    folder = make_tiny_model(tmp_path / "tiny-cls", pooling="cls")
    assert read_pooling(folder) == "cls"
    assert load_encoder(folder, device="cpu").pooling == "cls"


def test_folder_without_pooling_config_demands_explicit_pooling(tmp_path: Path) -> None:
    folder = make_tiny_model(tmp_path / "bare", pooling=None, max_seq_length=None)
    with pytest.raises(ModelError, match="--pooling mean or --pooling cls") as info:
        load_encoder(folder, device="cpu")
    assert "\n" not in str(info.value)
    enc = load_encoder(folder, pooling="cls", device="cpu")
    assert enc.pooling == "cls"
    assert enc.max_tokens == 512  # no sentence-transformers config: the tokenizer's limit


def test_unsupported_pooling_mode_is_a_model_error(tmp_path: Path) -> None:
    folder = make_tiny_model(tmp_path / "maxpool")
    config = folder / "1_Pooling" / "config.json"
    data = json.loads(config.read_text())
    data.update(pooling_mode_mean_tokens=False, pooling_mode_max_tokens=True)
    config.write_text(json.dumps(data))
    with pytest.raises(ModelError, match="pooling_mode_max_tokens"):
        load_encoder(folder, device="cpu")
    assert load_encoder(folder, pooling="mean", device="cpu").pooling == "mean"


@pytest.mark.parametrize("bad", [2, 513, 0])
def test_max_tokens_outside_the_position_limit_is_refused(tiny_dir: Path, bad: int) -> None:
    with pytest.raises(ModelError, match="--max-tokens must be between 3 and 512"):
        load_encoder(tiny_dir, device="cpu", max_tokens=bad)


def test_not_a_model_folder_and_bad_options(tmp_path: Path, tiny_dir: Path) -> None:
    with pytest.raises(ModelError, match="not a model folder"):
        load_encoder(tmp_path, device="cpu")
    with pytest.raises(ModelError, match="unknown pooling"):
        load_encoder(tiny_dir, pooling="max", device="cpu")
    with pytest.raises(ModelError, match="unknown device"):
        load_encoder(tiny_dir, device="tpu")


# -- encoding mechanics (tiny model) ------------------------------------------------------


def test_encode_texts_shape_norm_order_and_batching(tiny_dir: Path) -> None:
    enc = load_encoder(tiny_dir, device="cpu")
    texts = ["short", "a somewhat longer sentence about pumps", "", "x " * 300, "café 😀"]
    seen: list[tuple[int, int]] = []
    big = enc.encode_texts(texts, progress=lambda d, t: seen.append((d, t)))
    one_by_one = np.stack([enc.encode_texts([t], batch_size=1)[0] for t in texts])
    assert big.shape == (5, 32) and big.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(big, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(big, one_by_one, atol=1e-5)
    assert seen[0] == (0, 5) and seen[-1] == (5, 5)
    assert enc.encode_texts([]).shape == (0, 32)
    np.testing.assert_allclose(enc.encode_query("short"), big[0], atol=1e-6)


def test_truncation_is_counted_never_silent(tiny_dir: Path) -> None:
    enc = load_encoder(tiny_dir, device="cpu", max_tokens=16)
    text = " ".join(f"word{i}" for i in range(40))
    doc = make_text_document(text)
    chunks = make_chunks(doc, [(0, len(text)), (0, 11)])
    records = embed_chunks(doc, chunks, "naive", enc)
    full_count = len(enc.content_ids([text])[0])
    assert records[0].token_count == full_count
    assert records[0].truncated_tokens == full_count - 14
    assert records[1].truncated_tokens == 0
    # The vector is the one of the kept tokens: the same as encoding the cut text.
    kept = enc.tokenizer.decode(enc.content_ids([text])[0][:14])
    np.testing.assert_allclose(records[0].vector, enc.encode_texts([kept])[0], atol=1e-5)


def test_chunk_vector_to_dict_is_json_safe() -> None:
    record = ChunkVector(
        chunk_id="c1",
        method="late",
        vector=np.array([0.6, 0.8], dtype=np.float32),
        token_count=3,
        windows=(0, 1),
        context="partial",
        full_context_tokens=2,
    )
    data = json.loads(json.dumps(record.to_dict()))
    assert data["vector"] == pytest.approx([0.6, 0.8])
    assert data["windows"] == [0, 1] and data["context"] == "partial"
    with pytest.raises(ValueError):
        ChunkVector(
            chunk_id="c", method="late", vector=np.zeros(2), token_count=1, full_context_tokens=2
        )


# -- the real model -----------------------------------------------------------------------


@pytest.mark.slow
def test_naive_agrees_with_sentence_transformers(real_encoder) -> None:
    from sentence_transformers import SentenceTransformer

    from tests.conftest import TEXT_CORPORA

    text = (TEXT_CORPORA / "state_of_the_union.md").read_text(encoding="utf-8")[:6_000]
    doc = make_text_document(text)
    step = 700
    spans = [(s, min(len(text), s + 800)) for s in range(0, len(text), step)]
    spans.append((0, 3000))  # far over 256 tokens: truncated by both libraries
    chunks = make_chunks(doc, spans)
    records = embed_chunks(doc, chunks, "naive", real_encoder)
    model = SentenceTransformer(str(default_model_dir()), device="cpu")
    expected = model.encode([c.text for c in chunks], normalize_embeddings=True)
    cosines = np.array([float(r.vector @ e) for r, e in zip(records, expected, strict=True)])
    assert cosines.min() > 0.9999, cosines.min()
    long = records[-1]
    assert long.token_count > 254
    assert long.truncated_tokens == long.token_count - 254
    assert all(r.truncated_tokens == 0 for r in records[:-1] if r.token_count <= 254)


@pytest.mark.slow
def test_raised_max_tokens_agrees_with_sentence_transformers() -> None:
    from sentence_transformers import SentenceTransformer

    enc = load_encoder(device="cpu", max_tokens=512)
    text = "The pump runs quietly and needs little care. " * 60  # ~600 tokens
    model = SentenceTransformer(str(default_model_dir()), device="cpu")
    model.max_seq_length = 512
    expected = model.encode([text], normalize_embeddings=True)[0]
    assert float(enc.encode_texts([text])[0] @ expected) > 0.9999


def test_settings_other_than_the_folders_own_are_part_of_the_name(tiny_dir: Path) -> None:
    """The name keys stored collections: vectors of two settings must never share one."""
    from core.provenance.types import ChunkPolicy
    from core.store import ChunkStore

    own = load_encoder(tiny_dir, device="cpu")
    same = load_encoder(tiny_dir, pooling="mean", device="cpu", max_tokens=128)
    cls = load_encoder(tiny_dir, pooling="cls", device="cpu")
    longer = load_encoder(tiny_dir, device="cpu", max_tokens=256)
    both = load_encoder(tiny_dir, pooling="cls", device="cpu", max_tokens=256)
    assert own.name == same.name == "tiny-mean"
    assert cls.name == "tiny-mean (cls pooling)"
    assert longer.name == "tiny-mean (max 256 tokens)"
    assert both.name == "tiny-mean (cls pooling, max 256 tokens)"
    policy = ChunkPolicy(name="fixed", size=200, overlap=20)
    names = {ChunkStore.collection_name(e.name, "naive", policy) for e in (own, cls, longer, both)}
    assert len(names) == 4


def test_pooling_comes_from_the_environment_when_not_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = make_tiny_model(tmp_path / "bare", pooling=None, max_seq_length=None)
    with pytest.raises(ModelError, match="or set CHUNKSCOPE_POOLING"):
        load_encoder(folder, device="cpu")
    monkeypatch.setenv("CHUNKSCOPE_POOLING", "cls")
    assert load_encoder(folder, device="cpu").pooling == "cls"
    assert load_encoder(folder, pooling="mean", device="cpu").pooling == "mean"  # the flag wins
    monkeypatch.setenv("CHUNKSCOPE_POOLING", "max")
    with pytest.raises(ModelError, match="unknown pooling 'max'"):
        load_encoder(folder, device="cpu")


# -- weights that do not load cleanly -----------------------------------------------------


def _copy_with_config(source: Path, folder: Path, **changes: int) -> Path:
    """``source`` copied to ``folder`` (the weights linked, not copied) with config.json's
    ``changes``."""
    folder.mkdir(parents=True)
    for item in source.iterdir():
        if item.name != "config.json":
            (folder / item.name).symlink_to(item)
    config = json.loads((source / "config.json").read_text())
    config.update(changes)
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def _rewrite_weights(folder: Path, change) -> None:
    """Replace ``folder``'s weights by ``change(tensors)``."""
    from safetensors.torch import load_file, save_file

    path = folder / "model.safetensors"
    tensors = change(load_file(path))
    path.unlink()  # a link into the shared tiny folder: never written through
    save_file(tensors, path, metadata={"format": "pt"})


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"num_hidden_layers": 3}, "missing from the weights: encoder.layer.2."),
        ({"num_hidden_layers": 1}, "unused by config.json's model: encoder.layer.1."),
        ({"intermediate_size": 48}, "shape mismatch: encoder.layer.0."),
        ({"hidden_size": 64}, "shape mismatch: "),
    ],
)
def test_weights_that_do_not_match_the_config_are_refused(
    tiny_dir: Path, tmp_path: Path, changes: dict[str, int], said: str
) -> None:
    """transformers would re-initialise (or drop) these tensors and rank with noise."""
    folder = _copy_with_config(tiny_dir, tmp_path / "changed", **changes)
    encoder = load_encoder(folder, device="cpu")
    with pytest.raises(ModelError) as info:
        encoder.encode_texts(["a short text"])
    message = str(info.value)
    assert message.startswith(f"{folder}: the weights do not match its config.json (")
    assert said in message and "\n" not in message
    assert not encoder.loaded


def test_a_weights_file_that_lacks_a_tensor_is_refused(tiny_dir: Path, tmp_path: Path) -> None:
    folder = _copy_with_config(tiny_dir, tmp_path / "lacking")
    gone = "encoder.layer.1.attention.self.query.weight"
    _rewrite_weights(folder, lambda t: {k: v for k, v in t.items() if k != gone})
    with pytest.raises(ModelError, match=f"missing from the weights: {gone}\\)"):
        load_encoder(folder, device="cpu").encode_texts(["a short text"])


def test_an_unused_pooler_or_head_in_the_weights_still_loads(
    tiny_dir: Path, tmp_path: Path
) -> None:
    """The vectors come from the token states: a checkpoint without the pooler, or with a
    head the model has not (a masked-LM head), gives the same vectors."""
    import torch

    folder = _copy_with_config(tiny_dir, tmp_path / "headed")

    def change(tensors: dict) -> dict:
        kept = {k: v for k, v in tensors.items() if not k.startswith("pooler.")}
        return {**kept, "cls.predictions.bias": torch.zeros(30522)}

    _rewrite_weights(folder, change)
    texts = ["a short text", "another one"]
    got = load_encoder(folder, device="cpu").encode_texts(texts)
    want = load_encoder(tiny_dir, device="cpu").encode_texts(texts)
    assert np.allclose(got, want, atol=1e-6)


@pytest.mark.slow
def test_the_cli_refuses_a_minilm_folder_with_a_changed_config(tmp_path: Path, capsys) -> None:
    from core.cli import main

    folder = _copy_with_config(default_model_dir(), tmp_path / "minilm", num_hidden_layers=8)
    text = tmp_path / "note.txt"
    text.write_text("A short note about chunking.\n")
    argv = ["embed", str(text), "--policy", "structure", "--model", str(folder)]
    code = main([*argv, "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 2
    # the progress bar, drawn before the weights load, ends its line; then the one error line
    line = err.splitlines()[-1]
    assert err.count("error:") == 1 and err.endswith(line + "\n")
    assert line.startswith(f"error: {folder}: the weights do not match its config.json")
    assert "encoder.layer.6." in line
