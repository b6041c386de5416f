"""Lexical methods: BM25 over the chunk text (``bm25``) or over the contextual prefix
plus the chunk text (``contextual-bm25``), on the same spans as the dense methods.

Terms, stated once and shown in the workbench (``TOKENISATION``): maximal runs of
Unicode word characters (``\\w+``, so ``HX40``, ``458`` and ``2.4`` -> ``2``, ``4`` are
terms), joined across an apostrophe inside a word (``Pfizer's``, ``don't``: one word, so a
possessive never leaves a term ``s``), lower-cased, English stopwords of bm25s left out,
then the Snowball English stemmer (PyStemmer), which drops a possessive ``'s``
(``Pfizer's`` -> ``pfizer``; a typographic apostrophe is read as ``'``). Scores are
bm25s's Lucene BM25 with ``k1 = 1.5``, ``b = 0.75``:
``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` and each term adds
``idf * tf / (tf + k1 * (1 - b + b * len / avg_len))`` (Lucene drops the constant
``k1 + 1`` factor, which changes no rank), summed over the query's terms (a term the
query holds twice counts twice). ``N``, ``df`` and ``avg_len`` are those of the
index searched (a store collection, or an evaluation's whole corpus); a one-document
scope ranks that document's chunks by the same scores, as a dense filter does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from core.embed.contextual import contextual_prefix
from core.embed.records import ChunkVector
from core.methods.spec import BM25, IndexStep, MethodSpec, Progress
from core.native import words as native_words

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.protocols import TextEncoder
    from core.provenance.types import Chunk, Document

K1 = 1.5
B = 0.75
TOKENISATION = (
    "terms are runs of word characters (\\w+, joined across an apostrophe inside a word), "
    "lower-cased, English stopwords removed, "
    f"Snowball English stems; BM25 (Lucene) with k1={K1}, b={B}"
)
_WORD = re.compile(r"\w+(?:['\u2019]\w+)*")  # "Pfizer's" is one word, never "s"
WORD = _WORD  # a word of the lexical index, as other readers of its words match it
_UNIT = np.ones(1, dtype=np.float32)  # Chroma keeps a vector per record; lexical has none


@functools.lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from bm25s.stopwords import STOPWORDS_EN

    return frozenset(STOPWORDS_EN)


@functools.lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, term)`` of every indexed word of ``text``: offsets into ``text``,
    ``term`` its stem (stopwords left out)."""
    found = lowered_words(text)
    stem = _stems(found)
    if native_words.available():
        spans: list[tuple[int, int, str]] = native_words.stemmed(found, stem, grouped=False)
        return spans
    return [(a, b, stem[w]) for a, b, w in found if w in stem]


def term_spans(text: str) -> dict[str, list[tuple[int, int]]]:
    """Each term of ``text`` (``word_spans``) with the ``(start, end)`` of all its words,
    in order."""
    found = lowered_words(text)
    stem = _stems(found)
    if native_words.available():
        grouped: dict[str, list[tuple[int, int]]] = native_words.stemmed(found, stem, grouped=True)
        return grouped
    spans: dict[str, list[tuple[int, int]]] = {}
    for a, b, w in found:
        if w in stem:
            spans.setdefault(stem[w], []).append((a, b))
    return spans


def term_set(text: str) -> set[str]:
    """The terms of ``text`` (``word_spans``'s), each once."""
    return set(_stems(lowered_words(text)).values())


def _stems(found: list[tuple[int, int, str]]) -> dict[str, str]:
    """Each word of ``found`` that is not a stopword, with its stem (each stemmed once)."""
    return stems_of(map(itemgetter(2), found))


def stems_of(words: Iterable[str]) -> dict[str, str]:
    """Each lower-cased word of ``words`` that is not a stopword, with its stem (as
    ``word_spans`` stems a text's words), each stemmed once."""
    unique = list(set(words) - _stopwords())
    return dict(zip(unique, _stemmer().stemWords([_plain(w) for w in unique]), strict=True))


def lowered_words(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, word lower-cased)`` of every match of ``_WORD`` in ``text`` (scanned
    in C when the compiled scanner is built: the same words, ``core.native.words``)."""
    if native_words.available():
        return native_words.scan_terms(text)
    return [(m.start(), m.end(), m.group().lower()) for m in _WORD.finditer(text)]


def terms(text: str) -> list[str]:
    """The terms BM25 indexes for ``text``, in order (repeats kept): ``word_spans``'s
    terms without the offsets (words are found before lower-casing, as there: lower-casing
    can change a word's boundaries, e.g. a dotted capital I)."""
    stop = _stopwords()
    words = [w.lower() for w in _WORD.findall(text)]
    return _stemmer().stemWords([_plain(w) for w in words if w not in stop])


def _plain(word: str) -> str:
    """The word as the stemmer reads it: a typographic apostrophe as ``'``."""
    return word.replace("\u2019", "'")


def matched_words(query: str, text: str) -> list[tuple[int, int]]:
    """Offsets in ``text`` of the words whose term is one of the query's terms."""
    wanted = set(terms(query))
    return [(a, b) for a, b, term in word_spans(text) if term in wanted]


@dataclass(slots=True)
class Bm25Index:
    """A bm25s index over ``n`` texts (rows in the order given)."""

    n: int
    retriever: Any

    @classmethod
    def build(cls, texts: Sequence[str]) -> Bm25Index:
        import bm25s

        retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
        if texts:
            retriever.index([terms(t) for t in texts], show_progress=False)
        return cls(n=len(texts), retriever=retriever)

    def scores(self, query: str) -> np.ndarray:
        """``(n,)`` float32 BM25 score of every text for ``query`` (0 when no term matches)."""
        if not self.n:
            return np.zeros(0, dtype=np.float32)
        vocab = self.retriever.vocab_dict
        known = [t for t in terms(query) if t in vocab]
        if not known:
            return np.zeros(self.n, dtype=np.float32)
        return np.asarray(self.retriever.get_scores(known), dtype=np.float32)

    def score_matrix(self, queries: Sequence[str]) -> np.ndarray:
        """``(len(queries), n)`` scores."""
        if not queries:
            return np.zeros((0, self.n), dtype=np.float32)
        return np.vstack([self.scores(q) for q in queries])


def lexical_step(method: str, *, contextual: bool) -> IndexStep:
    """The index step: one record per chunk, with its term count and (contextual) prefix
    (the encoder and the cache are not used)."""

    def index(
        doc: Document,
        chunks: Sequence[Chunk],
        encoder: TextEncoder,
        *,
        progress: Progress | None = None,
        cache: VectorCache | None = None,
    ) -> list[ChunkVector]:
        out = []
        for chunk in chunks:
            lines = [contextual_prefix(doc, chunk) if contextual else ""]
            header = len(chunk.encoder_text) - len(chunk.text)
            if header > 0:  # a split table's header rows, when the policy asks for them
                lines.append(chunk.encoder_text[:header].strip("\n"))
            prefix = "\n".join(line for line in lines if line)
            indexed = indexed_text(prefix, chunk.text)
            out.append(
                ChunkVector(
                    chunk_id=chunk.chunk_id,
                    method=method,
                    vector=_UNIT,
                    token_count=len(terms(indexed)),
                    prefix=prefix,
                )
            )
        if progress is not None:
            progress(len(chunks), len(chunks))
        return out

    return index


def indexed_text(prefix: str, text: str) -> str:
    """What a lexical record's terms are taken from (as the index step built it)."""
    return f"{prefix}\n\n{text}" if prefix else text


_SPECS = (  # name, what it reads, colour, order (simpler first), contextual prefix
    ("bm25", "BM25 over the chunk text", "#c0392b", 10, False),
    ("contextual-bm25", "BM25 over the title and heading path prefixed to the chunk text",
     "#8e44ad", 25, True),
)  # fmt: skip


def builtin_specs() -> list[MethodSpec]:
    """The built-in lexical methods, for the package to register."""
    return [
        MethodSpec(
            name=name,
            family="lexical",
            score=BM25,
            summary=summary,
            colour=colour,
            order=order,
            index=lexical_step(name, contextual=contextual),
        )
        for name, summary, colour, order, contextual in _SPECS
    ]
