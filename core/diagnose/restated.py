"""The gold said again in other words: a sentence of a top hit that the model reads as
saying what a sentence of the gold says.

A copy of the gold's text in a top hit (``core.diagnose.signals.gold_copy``) is the
answer standing twice, word for word. Texts that are not filings restate more often than
they copy: an article's summary says again what its body says, an abstract what its
results say, a news story what its lead said. A reader who finds the gold's statement in
a hit calls the failure a label on one place of two; so does this evidence, read as the
reader reads it, sentence beside sentence:

- the gold's sentences and the sentences of the failing method's top hits (those that do
  not overlap the gold), each of at least ``MIN_WORDS`` words, are embedded with the
  run's encoder (normalised);
- a hit sentence is compared only when it stands in the gold's document (a query's gold
  lies in one document: a like sentence about another product or filing is no second
  place of this answer), states the figures the gold sentence states and no other (a
  sentence alike in all but its figures speaks of another year, model or amount), and
  holds at least as much of the query's content words as the gold sentence, which holds
  some (a sentence alike in form about another line of a table says something else);
- the pair with the highest cosine is the restatement; at ``core.diagnose.cause.RESTATED``
  or more (the model's reading of a paraphrase) it is evidence for label, weak (no
  experiment decides it).

Only texts are embedded, in the run's batch (``ScoreBook``); nothing is re-indexed. The
threshold was read on the development sets of ``eval/diagnose_blind`` (sets 7 to 13).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from core.chunk.sentence_bounds import sentence_spans
from core.chunk.spans import strip_span
from core.diagnose.repairs import held_share
from core.diagnose.terms import figure_list

Span = tuple[int, int]
MIN_WORDS = 5  # shorter sentences ("Table 2.", a heading) say too little to compare
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class Restatement:
    """The closest pair: a sentence of the gold (offsets in its document) and a sentence
    of a top hit (offsets in the hit's document), their cosine under the encoder."""

    similarity: float
    chunk_id: str
    hit_doc: str
    gold: Span
    hit: Span
    gold_text: str
    hit_text: str

    def to_dict(self) -> dict[str, object]:
        return {
            "similarity": round(self.similarity, 3), "chunk_id": self.chunk_id,
            "hit_doc": self.hit_doc, "gold": list(self.gold), "hit": list(self.hit),
            "gold_text": self.gold_text, "hit_text": self.hit_text,
        }  # fmt: skip


class HitText(Protocol):
    """What the evidence reads of a hit (``core.diagnose.signals.Hit`` has these)."""

    @property
    def chunk_id(self) -> str: ...
    @property
    def doc_id(self) -> str: ...
    @property
    def char_start(self) -> int: ...
    @property
    def text(self) -> str: ...


def sentences(text: str, offset: int = 0) -> list[tuple[Span, str]]:
    """The sentences of ``text`` of at least ``MIN_WORDS`` words, with offsets plus
    ``offset``, their text stripped."""
    out = []
    for a, b in sentence_spans(text):
        a, b = strip_span(text, a, b)
        if len(_WORD.findall(text[a:b])) >= MIN_WORDS:
            out.append(((offset + a, offset + b), text[a:b]))
    return out


def restatement(
    gold: Sequence[Span], doc_id: str, doc_text: str, hits: Sequence[HitText],
    vector: Callable[[str], np.ndarray | None], weights: Mapping[str, float] | None = None,
) -> Restatement | None:  # fmt: skip
    """The closest pair of a gold sentence and a hit sentence of the gold's document
    ``doc_id`` (see the module doc), or None when no pair may be compared or ``vector``
    has none yet (a ``ScoreBook`` collecting: every text is asked for, so a second call
    after ``fill`` reads them all). With the query's content ``weights``, a pair is
    compared only where the gold sentence holds some of the query and the hit sentence
    at least as much (a sentence alike in form about another line of a table, "net
    revenue" for "operating expenses", says something else)."""
    golds = [s for a, b in gold for s in sentences(doc_text[a:b], a)]
    ours = [h for h in hits if h.doc_id == doc_id]
    theirs = [(h, s) for h in ours for s in sentences(h.text, h.char_start)]
    wanted = [text for _, text in golds] + [text for _, (_, text) in theirs]
    vectors = [vector(text) for text in wanted]  # every one asked for, even when collecting
    if not golds or not theirs or any(v is None for v in vectors):
        return None
    g = np.stack(vectors[: len(golds)])  # type: ignore[arg-type]
    h = np.stack(vectors[len(golds) :])  # type: ignore[arg-type]
    cos = (h @ g.T).astype(np.float64)
    figures = [set(figure_list(text)) for _, (_, text) in theirs]
    asks = [held_share(weights, text) if weights else 1.0 for _, (_, text) in theirs]
    for col, (_, text) in enumerate(golds):
        own, share = set(figure_list(text)), held_share(weights, text) if weights else 1.0
        for row in range(len(theirs)):
            if figures[row] != own or share <= 0 or asks[row] < share:
                cos[row, col] = -np.inf  # other figures, or not about what the query asks
    row, col = (int(x) for x in np.unravel_index(int(np.argmax(cos)), cos.shape))
    if not np.isfinite(cos[row, col]):
        return None
    hit, (hit_span, hit_text) = theirs[row]
    gold_span, gold_text = golds[col]
    return Restatement(
        similarity=float(cos[row, col]), chunk_id=hit.chunk_id, hit_doc=hit.doc_id,
        gold=gold_span, hit=hit_span, gold_text=gold_text, hit_text=hit_text,
    )  # fmt: skip
