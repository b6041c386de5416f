"""The gold said again in a top hit: the closest pair of a gold sentence and a hit
sentence of the gold's document, compared by the encoder's vectors, a hit sentence
lacking one of the gold sentence's figures left out."""

from __future__ import annotations

import numpy as np

from core.diagnose.restated import restatement, sentences
from core.diagnose.signals import Hit

GOLD = "The Corvane pump runs quietly at night. It weighs 12 kg in all."
SAID = "At night the Corvane pump is very quiet indeed."
OTHER = "Rain fell on the factory roof all week long."
HEAVIER = "In all the pump weighs 14 kg when it is full."
SAME_WEIGHT = "In all the pump weighs 12 kg when it is full."
AXES = {
    "The Corvane pump runs quietly at night.": (1.0, 0.0, 0.0),
    "It weighs 12 kg in all.": (0.0, 0.0, 1.0),
    SAID: (0.9, 0.1, 0.0),
    OTHER: (0.0, 1.0, 0.0),
    HEAVIER: (0.0, 0.0, 1.0),
    SAME_WEIGHT: (0.1, 0.0, 0.95),
}


def _vector(text: str) -> np.ndarray:
    v = np.asarray(AXES[text], np.float32)
    return v / np.linalg.norm(v)


def _doc(*hits: str) -> tuple[str, list[Hit]]:
    text = GOLD + " " + " ".join(hits)
    out, at = [], len(GOLD) + 1
    for i, h in enumerate(hits):
        out.append(Hit(chunk_id=f"h{i}", doc_id="d", char_start=at, char_end=at + len(h), text=h))
        at += len(h) + 1
    return text, out


def test_sentences_of_five_words_or_more_with_their_offsets():
    text = "  Too short.  " + GOLD
    found = sentences(text, 100)
    assert [t for _, t in found] == ["The Corvane pump runs quietly at night.",
                                     "It weighs 12 kg in all."]  # fmt: skip
    for (a, b), t in found:
        assert text[a - 100 : b - 100] == t


def test_the_closest_pair_is_the_restatement_with_both_sentences_and_their_places():
    text, hits = _doc(OTHER, SAID)
    found = restatement([(0, len(GOLD))], "d", text, hits, _vector)
    assert found is not None and found.chunk_id == "h1"
    assert found.similarity > 0.99 * float(_vector(SAID) @ _vector(GOLD.split(". ")[0] + "."))
    assert text[slice(*found.hit)] == SAID == found.hit_text
    assert text[slice(*found.gold)] == found.gold_text == "The Corvane pump runs quietly at night."


def test_a_sentence_alike_but_for_its_figures_or_in_another_document_is_no_restatement():
    text, hits = _doc(HEAVIER)
    alone = restatement([(GOLD.index("It"), len(GOLD))], "d", text, hits, _vector)
    assert alone is None  # 14 kg, not 12: another pump's weight, though the model reads it alike
    text, hits = _doc(SAME_WEIGHT)
    same = restatement([(GOLD.index("It"), len(GOLD))], "d", text, hits, _vector)
    assert same is not None and same.similarity > 0.9
    elsewhere = [Hit(chunk_id="x", doc_id="other", char_start=0, char_end=len(SAID), text=SAID)]
    assert restatement([(0, len(GOLD))], "d", GOLD, elsewhere, _vector) is None


def test_while_the_book_collects_every_sentence_is_asked_for_and_none_is_found():
    text, hits = _doc(OTHER, SAID)
    asked: list[str] = []

    def collecting(t: str) -> None:
        asked.append(t)
        return None

    assert restatement([(0, len(GOLD))], "d", text, hits, collecting) is None
    assert set(asked) == {*AXES} - {HEAVIER, SAME_WEIGHT}  # (the extra one is added later)


def test_a_pair_is_compared_only_where_the_hit_sentence_holds_what_the_query_asks():
    """With the query's content words: the gold sentence must hold some of them and the
    hit sentence at least as much (a sentence alike in form about another line says
    something else); a hit sentence stating a figure the gold sentence does not is out."""
    text, hits = _doc(SAID)
    gold = [(0, len(GOLD))]
    asked = {"corvan": 1.0, "night": 1.0}  # stems, as content_words gives them
    found = restatement(gold, "d", text, hits, _vector, asked)
    assert found is not None and found.chunk_id == "h0"
    elsewhere = {"rain": 1.0}  # neither sentence holds the query: nothing to compare
    assert restatement(gold, "d", text, hits, _vector, elsewhere) is None
    more = "It weighs 12 kg in all, 3 kg more than the 2019 model."
    AXES[more] = (0.0, 0.05, 1.0)
    try:
        text, hits = _doc(more)
        assert restatement([(GOLD.index("It"), len(GOLD))], "d", text, hits, _vector) is None
    finally:
        del AXES[more]
