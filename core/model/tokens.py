"""Tokenizers as the chunkers see them: character spans of tokens and token counts.

A token span is a half-open ``[char_start, char_end)`` range of code points in the string
that was tokenized; special tokens (``[CLS]``, ``[SEP]``, ...) are never counted or
returned. Characters that the tokenizer's normaliser drops (control and format
characters such as ZERO WIDTH JOINER, stripped accents) and whitespace belong to no
token, so token spans need not cover the text.

``count(text)`` is the number of tokens the model sees for ``text`` encoded on its own,
without special tokens. Re-tokenizing a substring can give a different count than the
number of document tokens inside it (a word cut in the middle re-tokenizes differently),
which is why chunkers check sizes with ``count`` and never with a slice of the document's
tokens alone.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from core.errors import ModelError
from core.model.paths import resolve_model_dir

# Texts longer than this are tokenized in pieces cut at word edges (see HFTokenizer).
PIECE_CHARS = 65_536
# A word edge for BERT's pre-tokenizer: whitespace or punctuation (ASCII or Unicode P*).
_EDGE = re.compile(r"[\s!-/:-@\[-`{-~\u00a1-\u00bf\u2000-\u206f\u3000-\u303f]")
# Folder names that say nothing about the model; the parent folder is added to the name.
_GENERIC_DIR_NAMES = frozenset({"model", "models", "tokenizer", "files", "snapshot"})


@runtime_checkable
class Tokenizer(Protocol):
    """What a chunker needs from a tokenizer."""

    name: str

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the tokens of ``text``, in order, without special tokens."""
        ...

    def count(self, text: str) -> int:
        """Number of tokens of ``text`` encoded on its own, without special tokens."""
        ...


class HFTokenizer:
    """The fast (Rust) tokenizer of a local Hugging Face model folder.

    ``tokenizer.json`` is read directly with the ``tokenizers`` library when the folder
    has one (the same file ``AutoTokenizer(use_fast=True)`` would use); otherwise the
    folder is converted through ``transformers.AutoTokenizer`` offline. Truncation and
    padding are switched off, so counts are exact for texts of any length.
    """

    exact_on_word_edges: bool
    """True when the text between two word edges tokenizes exactly as in the whole text.

    Holds for BERT-style tokenizers (per-character normaliser, a pre-tokenizer that
    splits on whitespace and punctuation only, WordPiece per word): then the count of a
    span whose ends are word edges is the number of document tokens inside it.
    """

    def __init__(self, model_dir: str | os.PathLike[str]) -> None:
        path = Path(model_dir)
        self.model_dir = path
        self.name = _model_name(path)
        self._backend = _load_backend(path)
        self._backend.no_truncation()
        self._backend.no_padding()
        self.exact_on_word_edges = _words_are_independent(self._backend)
        processor = self._backend.post_processor
        self.special_tokens_per_text = (
            int(processor.num_special_tokens_to_add(False)) if processor is not None else 0
        )

    def __repr__(self) -> str:
        return f"HFTokenizer({self.name!r})"

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [(start, end) for start, end, _word in self.token_words(text) if end > start]

    def token_words(self, text: str) -> list[tuple[int, int, int]]:
        """``(char_start, char_end, word)`` of every token, zero-width ones included.

        Tokens cut from one pre-tokenizer word share ``word``; a token outside any word
        (an added token) gets a number of its own.
        """
        if not text:
            return []
        out: list[tuple[int, int, int]] = []
        alone, first_word = -1, 0
        for base, piece in self._pieces(text):
            encoding = self._backend.encode(piece, add_special_tokens=False)
            last = first_word - 1
            for (start, end), word in zip(encoding.offsets, encoding.word_ids, strict=True):
                if word is None:
                    number, alone = alone, alone - 1
                else:
                    number = first_word + int(word)
                    last = max(last, number)
                out.append((base + int(start), base + int(end), number))
            first_word = last + 1
        return out

    def count(self, text: str) -> int:
        if not text:
            return 0
        return sum(
            len(self._backend.encode(piece, add_special_tokens=False).ids)
            for _, piece in self._pieces(text)
        )

    def _pieces(self, text: str) -> list[tuple[int, str]]:
        """``(offset, piece)``: ``text`` cut at word edges into pieces of about
        ``PIECE_CHARS`` when that cannot change a token (``exact_on_word_edges``), so a
        long document never becomes one encoding of millions of tokens (0.6 KB each)."""
        if len(text) <= PIECE_CHARS or not self.exact_on_word_edges:
            return [(0, text)]
        return [(a, text[a:b]) for a, b in word_edge_cuts(text, PIECE_CHARS)]

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """``[count(t) for t in texts]``, encoded as one batch (parallel in Rust)."""
        if not texts:
            return []
        encodings = self._backend.encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]


def word_edge_cuts(text: str, size: int) -> list[tuple[int, int]]:
    """``[a, b)`` ranges tiling ``text``, each about ``size`` characters, cut before a
    whitespace or punctuation character (a word edge for a BERT pre-tokenizer); a range
    with no such edge within ``size`` runs on to the next one."""
    cuts: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while n - start > size:
        end = start + size
        cut = _edge_before(text, start, end)
        if cut is None:
            match = _EDGE.search(text, end)
            cut = match.start() if match else n
        cuts.append((start, cut))
        start = cut
    if start < n:
        cuts.append((start, n))
    return cuts


def _edge_before(text: str, start: int, end: int) -> int | None:
    """The last word edge in ``text[start + 1:end]`` (searched in the last quarter)."""
    low = max(start + 1, end - max(1, (end - start) // 4))
    for match in _EDGE.finditer(text[low:end][::-1]):
        return end - match.start() - 1
    return None


def count_many(tokenizer: Tokenizer, texts: Sequence[str]) -> list[int]:
    """Token counts of several texts, batched when the tokenizer can batch."""
    batch = getattr(tokenizer, "count_many", None)
    if batch is not None:
        return list(batch(texts))
    return [tokenizer.count(t) for t in texts]


@functools.lru_cache(maxsize=4)
def _load_cached(model_dir: Path) -> HFTokenizer:
    return HFTokenizer(model_dir)


def load_tokenizer(model_dir: str | os.PathLike[str] | None = None) -> HFTokenizer:
    """The tokenizer of ``model_dir`` (default: ``core.model.paths.resolve_model_dir()``).

    Loaded once per folder and shared; raises ``ModelError`` when the folder has no
    usable tokenizer.
    """
    return _load_cached(resolve_model_dir(model_dir).resolve())


def _words_are_independent(backend) -> bool:  # backend: tokenizers.Tokenizer
    normalizer = type(backend.normalizer).__name__ if backend.normalizer is not None else None
    pre_tokenizer = type(backend.pre_tokenizer).__name__
    model = type(backend.model).__name__
    return (
        normalizer in (None, "BertNormalizer")
        and pre_tokenizer == "BertPreTokenizer"
        and model == "WordPiece"
    )


def _model_name(path: Path) -> str:
    if path.name.lower() in _GENERIC_DIR_NAMES and path.parent.name:
        return f"{path.parent.name}/{path.name}"
    return path.name


def _load_backend(path: Path):  # -> tokenizers.Tokenizer
    from tokenizers import Tokenizer as RustTokenizer

    tokenizer_file = path / "tokenizer.json"
    if tokenizer_file.is_file():
        try:
            return RustTokenizer.from_file(str(tokenizer_file))
        except Exception as exc:  # a broken file is the user's model folder, not a bug
            raise ModelError(f"cannot read {tokenizer_file}: {exc}; fix or replace it") from exc
    try:
        from transformers import AutoTokenizer

        auto = AutoTokenizer.from_pretrained(str(path), use_fast=True, local_files_only=True)
    except Exception as exc:
        raise ModelError(
            f"{path} has no usable tokenizer ({type(exc).__name__}); "
            "pass --model DIR of a model with tokenizer files"
        ) from exc
    backend = getattr(auto, "backend_tokenizer", None)
    if backend is None:
        raise ModelError(f"{path} has only a slow tokenizer; chunking needs a fast one")
    return backend
