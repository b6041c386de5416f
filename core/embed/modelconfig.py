"""What a model folder says about itself: pooling mode, sequence limit, positions.

Read from the sentence-transformers files next to the weights (``modules.json``, the
pooling module's ``config.json``, ``sentence_bert_config.json``) and from the
transformers config. Nothing here loads weights.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from core.errors import ModelError

Pooling = Literal["mean", "cls"]
POOLINGS: tuple[str, ...] = ("mean", "cls")
# Models whose position ids start after the padding index (two positions are unusable).
_OFFSET_POSITION_MODELS = frozenset(
    {"roberta", "xlm-roberta", "xlm-roberta-xl", "camembert", "mpnet", "longformer"}
)


def read_pooling(model_dir: Path) -> Pooling | None:
    """Pooling mode from the sentence-transformers config, or None if the folder has none.

    Raises ModelError for a pooling mode other than mean or CLS.
    """
    modules_file = model_dir / "modules.json"
    if not modules_file.is_file():
        return None
    try:
        modules = json.loads(modules_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{modules_file} is unreadable: fix it or pass --pooling") from exc
    entries = [m for m in modules if str(m.get("type", "")).endswith("Pooling")]
    if not entries:
        return None
    config_file = model_dir / str(entries[0].get("path", "")) / "config.json"
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{config_file} is missing or unreadable: pass --pooling") from exc
    mode = config.get("pooling_mode")
    if mode in POOLINGS:
        return mode
    if config.get("pooling_mode_cls_token"):
        return "cls"
    if config.get("pooling_mode_mean_tokens"):
        return "mean"
    active = sorted(k for k, v in config.items() if k.startswith("pooling_mode") and v)
    raise ModelError(
        f"pooling {', '.join(active) or 'unknown'} of {model_dir.name} is not supported: "
        "pass --pooling mean or --pooling cls"
    )


def sentence_config(model_dir: Path) -> dict[str, Any]:
    path = model_dir / "sentence_bert_config.json"
    if not path.is_file():
        return {}
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path} is unreadable: fix or remove it") from exc


def position_limit(config: Any, tokenizer: Any) -> int:
    positions = getattr(config, "max_position_embeddings", None)
    if positions is None:
        declared = int(getattr(tokenizer, "model_max_length", 512))
        return declared if declared < 1_000_000 else 512
    if config.model_type in _OFFSET_POSITION_MODELS:
        return int(positions) - int(config.pad_token_id or 0) - 1
    return int(positions)


@dataclass(frozen=True)
class ModelLimits:
    """What a model folder lets the encoder read, in tokens (special tokens included):
    ``seq_tokens`` per pass by default (the folder's ``max_seq_length``, else the
    tokenizer's limit, never past the positions), ``position_tokens`` at most (the
    position table, less RoBERTa-style offsets)."""

    seq_tokens: int
    position_tokens: int


def model_limits(model_dir: Path, config: Any, tokenizer: Any) -> ModelLimits:
    """The limits of a loaded config and tokenizer: the one reading of them that the
    encoder and the workbench share."""
    limit = position_limit(config, tokenizer)
    default_max = sentence_config(model_dir).get("max_seq_length") or getattr(
        tokenizer, "model_max_length", limit
    )
    return ModelLimits(seq_tokens=min(int(default_max or limit), limit), position_tokens=limit)


# What the encoder reads from a transformers config before any weight is loaded.
_PLAIN_CONFIG_KEYS = ("hidden_size", "max_position_embeddings")


def read_config(model_dir: Path) -> Any:
    """The folder's transformers config: read as plain JSON when ``config.json`` names
    ``hidden_size`` and ``max_position_embeddings`` itself (BERT-like models: no torch
    import), else through ``transformers.AutoConfig`` (which imports torch) for the
    models whose config names them otherwise. ``ModelError`` (one line) if unreadable."""
    path = model_dir / "config.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path} is unreadable: fix it or use another model") from exc
    if isinstance(raw, dict) and all(isinstance(raw.get(k), int) for k in _PLAIN_CONFIG_KEYS):
        return SimpleNamespace(**{"model_type": "", "pad_token_id": None, **raw})
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(model_dir, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read the model in {model_dir}: {exc}".splitlines()[0]) from exc


def load_tokenizer(model_dir: Path) -> Any:
    """The folder's fast tokenizer, by the class its ``tokenizer_config.json`` names (so
    ``transformers.AutoTokenizer``, which imports torch, is only the fallback).
    ``ModelError`` (one line) if it cannot be loaded or is not a fast tokenizer."""
    import transformers
    from transformers.utils import logging as hf_logging

    named = ""
    path = model_dir / "tokenizer_config.json"
    try:
        if path.is_file():
            named = str(json.loads(path.read_text(encoding="utf-8")).get("tokenizer_class") or "")
    except (OSError, ValueError, AttributeError):
        named = ""
    cls = getattr(transformers, named, None) if named.isidentifier() else None
    if cls is None or not hasattr(cls, "from_pretrained"):
        cls = transformers.AutoTokenizer
    bar_was_on = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = cls.from_pretrained(model_dir, local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot load a model from {model_dir}: {exc}".splitlines()[0]) from exc
    finally:
        if bar_was_on:
            hf_logging.enable_progress_bar()
    if not getattr(tokenizer, "is_fast", False):
        raise ModelError(f"{model_dir} has no fast tokenizer (tokenizer.json): offsets need one")
    return tokenizer


def read_model_limits(model_dir: Path) -> ModelLimits:
    """``model_limits`` from the folder's config and tokenizer, without the weights;
    ``ModelError`` (one line) for a folder they cannot be read from."""
    return model_limits(model_dir, read_config(model_dir), load_tokenizer(model_dir))
