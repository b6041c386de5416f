"""BM25 reads a possessive as one word: "Pfizer's" is the term ``pfizer``, never a term
``s`` that then shows as a matched word all over a filing."""

from __future__ import annotations

from core.methods.lexical import Bm25Index, matched_words, terms


def test_a_possessive_is_one_word_and_leaves_no_s() -> None:
    assert terms("Pfizer's") == ["pfizer"] == terms("Pfizer\u2019s")
    assert "s" not in terms("JnJ's US sales and MGM's regions, the companies' revenue")
    text = "Pfizer's revenue fell; MGM's EBITDAR rose. Its sales were flat."
    asked = "Which region had Pfizer's biggest drop in sales?"
    shown = [text[a:b] for a, b in matched_words(asked, text)]
    assert shown == ["Pfizer's", "sales"]  # no lone "s" of "MGM's" or "Its"


def test_a_possessive_query_finds_the_plain_name() -> None:
    index = Bm25Index.build(["Pfizer reported revenue", "Moderna reported revenue"])
    scores = index.scores("Pfizer's revenue")
    assert scores[0] > scores[1]
