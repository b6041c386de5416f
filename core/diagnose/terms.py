"""The words of a query, a chunk and a document as the failure signals read them: the
lexical index's terms (``core.methods.lexical.word_spans``: ``\\w+`` runs, lower-cased,
stopwords out, Snowball stems), with the spans they stand at (half-open, into the text
given) and the shares of chunks that hold them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from core.methods.lexical import word_spans
from core.provenance.types import Chunk

Span = tuple[int, int]
# A fiscal period as questions write it (FY2022, Q2, Q22023, Q2'2023, H1): a date, not a name.
PERIOD = re.compile(r"(?:fy|cy|h[12]|q[1-4])(?:['’]?\d{2,4})?|\d{1,2}q\d{2,4}", re.I)


def name_like(word: str) -> bool:
    """A name, model number or figure: capitalised after the first letter, or with a digit."""
    return (
        any(ch.isdigit() for ch in word)
        or (word[:1].isupper() and not word.isupper())
        or (len(word) > 1 and word.isupper())
    )


_CHUNK_TERMS: dict[str, frozenset[str]] = {}
CHUNK_TERMS_KEPT = 200_000


def chunk_terms(chunk_id: str, text: str) -> frozenset[str]:
    """A chunk's terms, kept by its content-addressed id (at most ``CHUNK_TERMS_KEPT``)."""
    found = _CHUNK_TERMS.get(chunk_id)
    if found is None:
        if len(_CHUNK_TERMS) >= CHUNK_TERMS_KEPT:
            _CHUNK_TERMS.clear()
        found = _CHUNK_TERMS[chunk_id] = frozenset(terms_of(text))
    return found


def chunk_shares(chunks: Sequence[Chunk]) -> dict[str, float]:
    """Each term: the share of ``chunks`` that hold it."""
    counts: dict[str, int] = {}
    for chunk in chunks:
        for term in chunk_terms(chunk.chunk_id, chunk.text):
            counts[term] = counts.get(term, 0) + 1
    return {t: n / max(1, len(chunks)) for t, n in counts.items()}


def first_terms(text: str) -> dict[str, Span]:
    """Each indexed term of ``text`` with the span of its first occurrence."""
    first: dict[str, Span] = {}
    for a, b, term in word_spans(text):
        first.setdefault(term, (a, b))
    return first


def query_terms(query: str) -> dict[str, str]:
    """The query's indexed terms (stems) with the word each came from, in order."""
    return {term: query[a:b] for a, b, term in word_spans(query)}


def terms_of(text: str) -> set[str]:
    """The indexed terms ``text`` holds."""
    return {term for _, _, term in word_spans(text)}


def all_term_spans(text: str) -> dict[str, list[Span]]:
    """Each indexed term of ``text`` with the spans of all its occurrences, in order."""
    spans: dict[str, list[Span]] = {}
    for a, b, term in word_spans(text):
        spans.setdefault(term, []).append((a, b))
    return spans
