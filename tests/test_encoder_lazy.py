"""The encoder loads its weights, and imports torch, only when a text is first encoded:
a run whose vectors are all cached never pays for them; name, identity, limits, width and
the tokenizer are there without torch."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_embed_encoder import make_chunks, make_text_document, shared_tiny_dir

from core.embed import VectorCache, load_encoder
from core.methods.embedding import embed_chunks

ROOT = Path(__file__).resolve().parents[1]
TEXT = "Torque limits. The bolt takes 40 Nm. The nut takes 12 Nm and no more than that."
SPANS = [(0, 14), (15, 36), (37, len(TEXT))]

CHILD = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from core.embed import VectorCache, load_encoder
    from core.methods.embedding import embed_chunks
    from test_embed_encoder import make_chunks, make_text_document

    folder, cache_dir, text, spans = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
    enc = load_encoder(folder, device="auto")
    seen = {
        "name": enc.name, "identity": enc.identity, "dim": enc.dim,
        "max_tokens": enc.max_tokens, "content_tokens": enc.content_tokens,
        "ids": enc.content_ids(["The bolt takes 40 Nm."])[0], "repr": repr(enc),
    }
    doc = make_text_document(text)
    chunks = make_chunks(doc, [tuple(s) for s in spans])
    cache = VectorCache(cache_dir)
    rows = [r.vector for r in embed_chunks(doc, chunks, "naive", enc, cache=cache)]
    seen["cached_rows"] = np.stack(rows).tolist()
    seen["torch_after_cached"] = "torch" in sys.modules
    seen["loaded_after_cached"] = enc.loaded
    seen["new_row"] = enc.encode_texts(["A text no cache holds."])[0].tolist()
    seen["torch_after_encode"] = "torch" in sys.modules
    seen["loaded_after_encode"] = enc.loaded
    seen["device"] = enc.device
    print(json.dumps(seen))
    """
)


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_tiny_dir(tmp_path_factory)


def test_cached_vectors_never_import_torch_and_the_first_encode_loads_it(tiny_dir, tmp_path):
    enc = load_encoder(tiny_dir, device="cpu")
    doc = make_text_document(TEXT)
    chunks = make_chunks(doc, SPANS)
    cache = VectorCache(tmp_path / "vectors")
    expected = np.stack([r.vector for r in embed_chunks(doc, chunks, "naive", enc, cache=cache)])
    fresh = enc.encode_texts(["A text no cache holds."])[0]

    answer = subprocess.run(
        [sys.executable, "-c", CHILD, str(tiny_dir), str(tmp_path / "vectors"), TEXT,
         json.dumps(SPANS)],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
        env={"PYTHONPATH": f"{ROOT}{':'}{ROOT / 'tests'}", "HF_HUB_OFFLINE": "1",
             "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert answer.returncode == 0, answer.stderr[-3000:]
    seen = json.loads(answer.stdout.strip().splitlines()[-1])
    assert (seen["name"], seen["dim"], seen["max_tokens"]) == (enc.name, 32, 128)
    assert seen["identity"] == enc.identity
    assert seen["content_tokens"] == enc.content_tokens
    assert seen["ids"] == enc.content_ids(["The bolt takes 40 Nm."])[0]
    assert "device='auto'" in seen["repr"]  # not resolved: that would import torch
    np.testing.assert_array_equal(np.asarray(seen["cached_rows"], dtype=np.float32), expected)
    assert not seen["torch_after_cached"] and not seen["loaded_after_cached"]
    assert seen["torch_after_encode"] and seen["loaded_after_encode"]
    assert seen["device"] == "cpu"
    np.testing.assert_allclose(np.asarray(seen["new_row"]), fresh, atol=1e-6)


def test_the_weights_load_once_on_first_use_with_deterministic_algorithms(tiny_dir):
    import torch

    was = torch.are_deterministic_algorithms_enabled()
    try:
        torch.use_deterministic_algorithms(False)
        enc = load_encoder(tiny_dir, device="cpu", deterministic=True)
        assert not enc.loaded and not torch.are_deterministic_algorithms_enabled()
        first = enc.encode_texts(["one text"])
        assert enc.loaded and torch.are_deterministic_algorithms_enabled()
        model = enc.model
        np.testing.assert_array_equal(enc.encode_texts(["one text"]), first)
        assert enc.model is model and first.shape == (1, enc.dim)
    finally:
        torch.use_deterministic_algorithms(was)
