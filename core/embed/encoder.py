"""The encoder: one local Hugging Face model, its pooling mode, its sequence limit.

Texts are encoded exactly as sentence-transformers encodes them: the fast tokenizer's
tokens, the model's special tokens around them, truncation of the content to
``max_tokens`` (which *includes* the special tokens) from the tokenizer's truncation
side, then pooling as the model was trained (``mean`` over the attention mask, special
tokens included, or the ``cls`` token's state) and L2 normalisation. Batches are sorted
by token length so padding stays small.

Models load only from local folders (``HF_HUB_OFFLINE=1``); nothing is downloaded.
``load_encoder`` reads the tokenizer, the config and the limits without importing torch;
the weights (and torch, its thread count, deterministic algorithms when asked, the device
"auto" picks) load when a text is first encoded, so a run whose vectors are all cached
never pays for them.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core import settings
from core.embed.modelconfig import (
    POOLINGS,
    Pooling,
    load_tokenizer,
    model_limits,
    read_config,
    read_pooling,
    sentence_config,
)
from core.errors import ModelError
from core.model.paths import ENV_POOLING, default_model_dir, pooling_choice, resolve_model_dir

DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class SpecialTokens:
    """Special-token ids the tokenizer puts before and after a single sequence."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]

    @property
    def count(self) -> int:
        return len(self.prefix) + len(self.suffix)

    def wrap(self, content: Sequence[int]) -> list[int]:
        return [*self.prefix, *content, *self.suffix]


class Encoder:
    """A model: use :func:`load_encoder` to build one.

    ``max_tokens`` is the sequence limit *including* special tokens (the model's
    ``max_seq_length``; at most ``position_limit``); ``content_tokens`` is what is left
    for text. ``encode_texts`` returns float32 rows of shape ``(n, dim)``, L2-normalised.

    ``model`` is the torch module: given, or loaded by ``load_model(device)`` on first use
    (then ``dim``, the config's hidden size, is checked against it). ``device`` may be
    ``auto``: it is resolved (importing torch) when first read.
    """

    def __init__(
        self,
        *,
        name: str,
        model_dir: Path,
        tokenizer: Any,
        pooling: Pooling,
        max_tokens: int,
        position_limit: int,
        device: str,
        model: Any = None,
        load_model: Callable[[str], Any] | None = None,
        dim: int | None = None,
        lowercase: bool = False,
    ) -> None:
        if model is None and load_model is None:
            raise ValueError("give the model or a load_model function")
        self.model_dir = model_dir
        self.name = name
        self._model = model
        self._load_model = load_model
        self._lock = threading.Lock()
        self.tokenizer = tokenizer
        self.pooling: Pooling = pooling
        self.max_tokens = max_tokens
        self.position_limit = position_limit
        self._device = device  # as asked: auto, cpu or cuda
        self._chosen = device if device == "cpu" else None  # checked when first read
        self.lowercase = lowercase
        self._dim = int(model.config.hidden_size) if model is not None else dim
        self._resolved: tuple[Path, Path] | None = None  # (model_dir, its resolved path)
        self.specials = _special_tokens(tokenizer)
        self.pad_id = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0)
        self.uses_token_types = "token_type_ids" in tokenizer.model_input_names
        self.forward_passes = 0  # sequences run through the model (tests and benchmarks)
        self.forward_tokens = 0  # their real tokens (specials included)
        self.padded_tokens = 0  # pad positions run beside them (the padded share's numerator)
        self.forward_seconds = 0.0  # wall time of those passes: the rate a cost estimate uses
        self.doc_token_cache: OrderedDict[tuple[str, int, int], Any] = OrderedDict()

    def __repr__(self) -> str:
        return (
            f"Encoder(name={self.name!r}, pooling={self.pooling!r}, "
            f"max_tokens={self.max_tokens}, dim={self._dim}, device={self._device!r})"
        )

    @property
    def loaded(self) -> bool:
        """Whether the weights are in memory (False until a text is first encoded)."""
        return self._model is not None

    @property
    def model(self) -> Any:
        """The torch module, loaded on first use."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    assert self._load_model is not None
                    model = self._load_model(self.device)
                    hidden = int(model.config.hidden_size)
                    if self._dim is not None and hidden != self._dim:
                        raise ModelError(
                            f"{self.model_dir}: the weights have {hidden} dimensions, "
                            f"its config.json says {self._dim}"
                        )
                    self._dim, self._model = hidden, model
        return self._model

    @model.setter
    def model(self, value: Any) -> None:
        self._model = value

    @property
    def device(self) -> str:
        """``cpu`` or ``cuda``: ``auto`` is resolved, and ``cuda`` checked, on first read."""
        if self._chosen is None:
            self._chosen = _choose_device(self._device)
        return self._chosen

    @device.setter
    def device(self, value: str) -> None:
        self._device = self._chosen = value

    @property
    def dim(self) -> int:
        """Vector width: the config's hidden size (the weights' once they are loaded)."""
        if self._dim is None:
            return int(self.model.config.hidden_size)
        return self._dim

    @property
    def identity(self) -> str:
        """What makes two encoders give the same vectors: folder and pooling (cache keys)."""
        if self._resolved is None or self._resolved[0] != self.model_dir:
            self._resolved = (self.model_dir, self.model_dir.resolve())
        return f"{self.name}|{self._resolved[1]}|{self.pooling}"

    @property
    def padded_share(self) -> float:
        """Share of the positions run so far that were padding (0 before any pass)."""
        run = self.forward_tokens + self.padded_tokens
        return self.padded_tokens / run if run else 0.0

    @property
    def content_tokens(self) -> int:
        """Tokens of text that fit in one sequence next to the special tokens."""
        return self.max_tokens - self.specials.count

    @property
    def content_position_limit(self) -> int:
        """Tokens of text that fit in the model's positions next to the special tokens."""
        return self.position_limit - self.specials.count

    def prepare(self, text: str) -> str:
        """The text as the model's library feeds it to the tokenizer (lowercased if asked)."""
        return text.lower() if self.lowercase else text

    def prepare_offsets(self, text: str) -> str:
        """Like :meth:`prepare`, but one character out per character in, so offsets hold.

        ``str.lower`` never shortens a character; where it lengthens one (e.g. ``İ``),
        that character is left as it is.
        """
        if not self.lowercase:
            return text
        lowered = text.lower()
        if len(lowered) == len(text):
            return lowered
        return "".join(c.lower() if len(c.lower()) == 1 else c for c in text)

    def content_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, without special tokens and without truncation."""
        if not texts:
            return []
        enc = self.tokenizer(
            [self.prepare(t) for t in texts],
            add_special_tokens=False,
            return_attention_mask=False,
            return_token_type_ids=False,
            verbose=False,
        )
        return [list(ids) for ids in enc["input_ids"]]

    def truncate(self, content: Sequence[int], limit: int | None = None) -> list[int]:
        """Content ids cut to ``limit`` (default ``content_tokens``) as the tokenizer would."""
        keep = self.content_tokens if limit is None else limit
        if len(content) <= keep:
            return list(content)
        if self.tokenizer.truncation_side == "left":
            return list(content[len(content) - keep :])
        return list(content[:keep])

    def encode_texts(
        self,
        texts: Sequence[str],
        *,
        progress: Progress | None = None,
        batch_size: int = 32,
    ) -> np.ndarray:
        """Encode each text alone: ``(len(texts), dim)`` float32, L2-normalised."""
        return self.encode_ids(self.content_ids(texts), progress=progress, batch_size=batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        """One query text: ``(dim,)`` float32, L2-normalised."""
        return self.encode_texts([text])[0]

    def encode_ids(
        self,
        contents: Sequence[Sequence[int]],
        *,
        progress: Progress | None = None,
        batch_size: int = 32,
    ) -> np.ndarray:
        """Encode content ids (no specials): truncated, wrapped, pooled, normalised."""
        import torch

        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        rows = [self.specials.wrap(self.truncate(c)) for c in contents]
        out = np.zeros((len(rows), self.dim), dtype=np.float32)
        order = sorted(range(len(rows)), key=lambda i: len(rows[i]), reverse=True)
        done = 0
        if progress is not None:
            progress(0, len(rows))
        for lo in range(0, len(order), batch_size):
            batch = order[lo : lo + batch_size]
            states, mask = self.forward([rows[i] for i in batch])
            pooled = self.pool(states, mask)
            pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            out[batch] = pooled.float().cpu().numpy()
            done += len(batch)
            if progress is not None:
                progress(done, len(rows))
        return out

    def forward(self, rows: Sequence[Sequence[int]]) -> tuple[Any, Any]:
        """Run full id rows (specials included) padded to the longest.

        Returns ``(states, mask)``: last hidden states ``(b, L, dim)`` and the attention
        mask ``(b, L)``, both on the encoder's device.
        """
        import torch

        width = max(len(r) for r in rows)
        if width > self.position_limit:
            raise ValueError(f"a row of {width} tokens exceeds {self.position_limit} positions")
        ids = np.full((len(rows), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(rows), width), dtype=np.int64)
        for i, row in enumerate(rows):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        inputs = {
            "input_ids": torch.from_numpy(ids).to(self.device),
            "attention_mask": torch.from_numpy(mask).to(self.device),
        }
        if self.uses_token_types:
            inputs["token_type_ids"] = torch.zeros_like(inputs["input_ids"])
        started = time.perf_counter()
        with torch.inference_mode():
            states = self.model(**inputs).last_hidden_state
        self.forward_seconds += time.perf_counter() - started
        self.forward_passes += len(rows)
        real = sum(len(r) for r in rows)
        self.forward_tokens += real
        self.padded_tokens += width * len(rows) - real
        return states, inputs["attention_mask"]

    def pool(self, states: Any, mask: Any) -> Any:
        """Pool ``(b, L, dim)`` states as the model was trained; ``(b, dim)`` unnormalised."""
        import torch

        if self.pooling == "cls":
            return states[:, 0]
        weights = mask.unsqueeze(-1).to(states.dtype)
        summed = (states * weights).sum(dim=1)
        counts = torch.clamp(weights.sum(dim=1), min=1e-9)
        return summed / counts


def _special_tokens(tokenizer: Any) -> SpecialTokens:
    """Find the special ids around a single sequence by tokenising a probe both ways."""
    probe = "hello"
    bare = list(tokenizer(probe, add_special_tokens=False)["input_ids"])
    full = list(tokenizer(probe, add_special_tokens=True)["input_ids"])
    for start in range(len(full) - len(bare) + 1):
        if full[start : start + len(bare)] == bare:
            return SpecialTokens(
                prefix=tuple(full[:start]), suffix=tuple(full[start + len(bare) :])
            )
    raise ModelError("the tokenizer changes a text when it adds special tokens: not supported")


def _choose_device(device: str) -> str:
    import torch

    if device not in DEVICES:
        raise ModelError(f"unknown device {device!r}: use auto, cpu or cuda")
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise ModelError("CUDA is not available on this machine: use --device cpu")
    return device


def _configure_threads() -> None:
    """Use ``$CHUNKSCOPE_TORCH_THREADS`` if set, else never more threads than usable cores."""
    import torch

    wanted = settings.TORCH_THREADS.read()
    if wanted is not None:
        torch.set_num_threads(wanted)
        return
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if usable and torch.get_num_threads() > usable:
        torch.set_num_threads(usable)


def _model_name(path: Path) -> str:
    """The folder name; the packaged default model lives in a folder called ``model``."""
    if path.resolve() == default_model_dir().resolve():
        return DEFAULT_MODEL_NAME
    return path.name


def _configured_pooling(path: Path, *, required: bool) -> str | None:
    """The folder's own pooling; an unreadable config only matters when none is given."""
    try:
        return read_pooling(path)
    except ModelError:
        if required:
            raise
        return None


def _variant_name(
    base: str, other_pooling: bool, other_limit: bool, pooling: str, max_tokens: int
) -> str:
    """``base``, plus the settings that differ from the model folder's own."""
    changed = []
    if other_pooling:
        changed.append(f"{pooling} pooling")
    if other_limit:
        changed.append(f"max {max_tokens} tokens")
    return f"{base} ({', '.join(changed)})" if changed else base


# The encoder reads only the token states (``last_hidden_state``): the pooler head, when a
# checkpoint lacks it or has one the config does not, changes no vector.
_UNUSED_MODULES = frozenset({"pooler"})


def loading_problems(model: Any, info: dict[str, Any]) -> list[str]:
    """What of ``model`` did not come from its weights file, in words (empty: it loaded
    cleanly). ``info`` is ``from_pretrained(..., output_loading_info=True)``'s second value.

    A tensor the model has but the file lacks (missing), one whose shape differs
    (mismatched) and one the file has inside a module the model uses but the model does not
    (unexpected: the config names fewer layers than were trained) each change the vectors;
    the first two would be randomly initialised. Tensors of heads the model does not have
    (a masked-LM head, say) and of the unused pooler are ignored.
    """

    def top(key: str) -> str:
        return key.split(".", 1)[0]

    used = {name for name, _ in model.named_children()} - _UNUSED_MODULES
    missing = sorted(k for k in info.get("missing_keys", ()) if top(k) not in _UNUSED_MODULES)
    unexpected = sorted(k for k in info.get("unexpected_keys", ()) if top(k) in used)
    mismatched = sorted(
        (str(key), tuple(file_shape), tuple(model_shape))
        for key, file_shape, model_shape in info.get("mismatched_keys", ())
    )
    problems = []
    if missing:
        problems.append(f"missing from the weights: {_some(missing)}")
    if mismatched:
        key, file_shape, model_shape = mismatched[0]
        first = f"{key} is {list(file_shape)} in the weights, {list(model_shape)} by config.json"
        more = f" and {len(mismatched) - 1} more" if len(mismatched) > 1 else ""
        problems.append(f"shape mismatch: {first}{more}")
    if unexpected:
        problems.append(f"unused by config.json's model: {_some(unexpected)}")
    problems.extend(str(msg).splitlines()[0] for msg in info.get("error_msgs", ()) if msg)
    return problems


def _some(keys: list[str]) -> str:
    """The first key and how many more."""
    return keys[0] + (f" and {len(keys) - 1} more" if len(keys) > 1 else "")


def _weights_loader(model_dir: Path, *, deterministic: bool) -> Callable[[str], Any]:
    """``device -> model``: what the encoder calls when a text is first encoded."""

    def load(device: str) -> Any:
        import torch
        from transformers import AutoModel
        from transformers.utils import logging as hf_logging

        if deterministic:
            torch.use_deterministic_algorithms(True)
        _configure_threads()
        bar_was_on = hf_logging.is_progress_bar_enabled()
        verbosity = hf_logging.get_verbosity()
        hf_logging.disable_progress_bar()
        # transformers reports what it re-initialised as a multi-line table; the refusal
        # below says it in one line instead
        hf_logging.set_verbosity_error()
        try:
            model, info = AutoModel.from_pretrained(
                model_dir,
                local_files_only=True,
                output_loading_info=True,
                ignore_mismatched_sizes=True,  # listed in ``info`` and refused below
            )
        except (OSError, ValueError) as exc:
            line = f"cannot load a model from {model_dir}: {exc}".splitlines()[0]
            raise ModelError(line) from exc
        finally:
            hf_logging.set_verbosity(verbosity)
            if bar_was_on:
                hf_logging.enable_progress_bar()
        problems = loading_problems(model, info)
        if problems:
            raise ModelError(
                f"{model_dir}: the weights do not match its config.json ({'; '.join(problems)}):"
                " use the config.json saved with these weights, or the folder they came from"
            )
        return model.eval().to(device)

    return load


def load_encoder(
    model_dir: str | os.PathLike[str] | None = None,
    *,
    pooling: str | None = None,
    device: str = "auto",
    max_tokens: int | None = None,
    deterministic: bool = False,
) -> Encoder:
    """Load a local model folder (default: all-MiniLM-L6-v2 from its package).

    ``pooling`` (else ``$CHUNKSCOPE_POOLING``) overrides the folder's sentence-transformers
    config and is required when the folder has none. ``max_tokens`` (special tokens
    included) defaults to the model's ``max_seq_length`` and may be raised up to the
    position limit.

    The encoder's ``name`` keys its stored collections and runs, so a setting that
    changes the vectors away from the folder's own (a pooling other than its config's, a
    different sequence limit) is written into it: ``all-MiniLM-L6-v2 (cls pooling)``.
    Vectors of two settings then never share a collection.

    Nothing here imports torch: the weights load when a text is first encoded (with
    ``torch.use_deterministic_algorithms(True)`` first when ``deterministic``), and the
    device ``auto`` is resolved then.
    """
    pooling = pooling_choice(pooling)
    if pooling is not None and pooling not in POOLINGS:
        raise ModelError(f"unknown pooling {pooling!r}: use mean or cls")
    path = resolve_model_dir(model_dir)
    configured = _configured_pooling(path, required=pooling is None)
    chosen = pooling or configured
    if chosen is None:
        raise ModelError(
            f"{path} has no sentence-transformers pooling config (modules.json, "
            f"1_Pooling/config.json): pass --pooling mean or --pooling cls (or set {ENV_POOLING})"
        )
    if device not in DEVICES:
        raise ModelError(f"unknown device {device!r}: use auto, cpu or cuda")
    tokenizer = load_tokenizer(path)
    config = read_config(path)
    limits = model_limits(path, config, tokenizer)
    limit, own_limit = limits.position_tokens, limits.seq_tokens
    st_config = sentence_config(path)
    seq_limit = int(max_tokens if max_tokens is not None else own_limit)
    encoder = Encoder(
        name=_variant_name(
            _model_name(path), chosen != configured, seq_limit != own_limit, chosen, seq_limit
        ),
        model_dir=path,
        load_model=_weights_loader(path, deterministic=deterministic),
        dim=int(config.hidden_size),
        tokenizer=tokenizer,
        pooling=chosen,  # type: ignore[arg-type]
        max_tokens=seq_limit,
        position_limit=limit,
        device=device,
        lowercase=bool(st_config.get("do_lower_case", False)),
    )
    if not encoder.specials.count < seq_limit <= limit:
        raise ModelError(
            f"--max-tokens must be between {encoder.specials.count + 1} and {limit} "
            f"for {_model_name(path)}, got {seq_limit}"
        )
    return encoder
