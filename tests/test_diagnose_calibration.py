"""The suggestion's confidence and the query's key terms: a cause one kind of evidence
decides while another points elsewhere is weak, with the other as runner-up; key terms
are looked up as a reader would (a word by its stem or a phrase, a hyphenated compound
and a metric whole); a metric
the question asks to compute that the document never names is vocabulary."""

from __future__ import annotations

from core.diagnose.cause import COPY, VOCABULARY, Evidence, decide
from core.diagnose.repairs import Experiment, content_words
from core.diagnose.signals import FUNCTION_WORDS, Hit, gold_copy
from core.diagnose.terms import absence, document_pairs, terms_of


def _exp(
    repair: str, before: int, after: int | None, *, k: int = 5, method: str = ""
) -> Experiment:
    fixes = after is not None and after <= k
    return Experiment(repair=repair, before=before, after=after, fixes=fixes,
                      line=f"{repair}: rank {before} → {after}", method=method)  # fmt: skip


def _absence(query: str, text: str):
    weights = content_words(query, FUNCTION_WORDS)
    return absence(query, weights, terms_of(text), document_pairs("d", str(hash(text)), text))


# -- confidence ---------------------------------------------------------------------------


def test_a_method_miss_is_always_weak_with_what_contradicts_it_as_runner_up():
    # another method ranks the gold first and nothing else points elsewhere: still weak
    found = [_exp("context", 40, 38), _exp("method", 40, 1, method="bm25")]
    clean = decide(found, Evidence(), k=5)
    assert (clean.cause, clean.confidence, clean.runner_up) == ("method", "weak", "")
    # the query's key terms absent from the document: runner-up vocabulary
    worded = decide(found, Evidence(absent=0.2, absent_words=("quick ratio",)), k=5)
    assert (worded.cause, worded.confidence, worded.runner_up) == ("method", "weak", "vocabulary")
    # a repair that moves the gold most of the way to the top k: runner-up that repair
    moved = [_exp("context", 40, 9), _exp("method", 40, 2, method="bm25")]
    repaired = decide(moved, Evidence(), k=5)
    assert (repaired.cause, repaired.confidence, repaired.runner_up) == (
        "method",
        "weak",
        "context",
    )
    # a gold no chunk holds whole (its boundary repair was run): the cut, weak, the
    # method that finds it the runner-up
    cut = decide([_exp("boundary", 40, 9), _exp("method", 40, 2, method="bm25")], Evidence(),
                 k=5)  # fmt: skip
    assert (cut.cause, cut.confidence, cut.runner_up) == ("boundary", "weak", "method")
    # a strong cause is one an experiment fixes: the gold kept whole ranks in the top k
    fixed = decide([_exp("boundary", 40, 2), _exp("method", 40, 9, method="bm25")], Evidence(),
                   k=5)  # fmt: skip
    assert (fixed.cause, fixed.confidence) == ("boundary", "strong")


def test_absent_key_terms_make_a_weak_vocabulary_and_a_metric_to_compute_a_strong_one():
    words = Evidence(absent=0.6, absent_words=("PPNE",))
    alone = decide([_exp("method", 300, 200, method="bm25")], words, k=5)
    assert (alone.cause, alone.confidence, alone.runner_up) == ("vocabulary", "weak", "")
    # another method finding the gold is the runner-up
    found = decide([_exp("method", 300, 3, method="bm25")], words, k=5)
    assert (found.cause, found.confidence, found.runner_up) == ("vocabulary", "weak", "method")
    # a metric the question asks to compute, never named, from the gold's figures: strong
    metric = Evidence(absent=0.3, absent_words=("gross margin",), metric="gross margin",
                      figures=6)  # fmt: skip
    computed = decide([_exp("method", 300, 200, method="bm25")], metric, k=5)
    assert (computed.cause, computed.confidence) == ("vocabulary", "strong")


def test_label_from_the_querys_words_or_a_second_place_is_weak():
    # a top hit holding the query's words the gold lacks: weak (a caption or heading the
    # chunker cut from the gold may hold them)
    words = Evidence(gold_holds=0.1, hit_holds=0.9)
    still = decide([_exp("context", 60, 58)], words, k=5)
    assert (still.cause, still.confidence, still.runner_up) == ("label", "weak", "")
    # the gold's figures and the query's words in a top hit: the answer may stand there,
    # weak (read, not an experiment; four strong ones on sets 19 and 20 were neither
    # reader's cause)
    second = decide([_exp("context", 60, 58)], Evidence(second_place=0.9), k=5)
    assert (second.cause, second.confidence, second.runner_up) == ("label", "weak", "")
    # a repair that moves the gold most of the way: weak, runner-up that repair
    moved = decide([_exp("context", 60, 12)], Evidence(second_place=0.9), k=5)
    assert (moved.cause, moved.confidence, moved.runner_up) == ("label", "weak", "context")


def test_a_fixing_repair_is_weak_when_key_terms_are_absent():
    fixed = [_exp("boundary", 8, 1)]
    assert decide(fixed, Evidence(), k=5).confidence == "strong"
    worded = decide(fixed, Evidence(absent=0.25, absent_words=("wages expense",)), k=5)
    assert (worded.cause, worded.confidence, worded.runner_up) == ("boundary", "weak", "vocabulary")


def test_context_from_its_repair_is_weak():
    """The title, headings and lines above stand outside the chunk: a chunk cut elsewhere
    would hold them too, so a fixing context repair alone is weak (readers called 7 of 12
    such strong suggestions the cut's)."""
    d = decide([_exp("context", 8, 1)], Evidence(), k=5)
    assert (d.cause, d.confidence, d.runner_up) == ("context", "weak", "")


# -- the gold's text standing twice ----------------------------------------------------


def _hit(chunk_id: str, text: str) -> Hit:
    return Hit(chunk_id=chunk_id, doc_id="d", char_start=0, char_end=len(text), text=text)


def test_a_top_hit_holding_the_golds_text_is_its_copy():
    gold = "Net revenue rose 4% on higher card member spending and loan growth."
    hits = [
        _hit("c1", "Expenses fell as marketing was cut back in the second half."),
        _hit("c9", "Overview.\nNet revenue rose 4% on higher card member spending and loan "
                   "growth. Provisions were lower."),
    ]  # fmt: skip
    share, found = gold_copy(gold, hits)
    assert found == "c9" and share == 1.0
    # the same words out of order are not a copy; a gold of a few words is never one
    shuffled = [_hit("c2", "growth loan and spending member card higher on 4% rose revenue Net")]
    assert gold_copy(gold, shuffled)[0] < COPY
    assert gold_copy("Revenue rose.", hits) == (0.0, "")
    # a twin stating another figure is not a copy: the label may be right about its gold
    twin = [_hit("c3", "Net revenue rose 6% on higher card member spending and loan growth.")]
    assert gold_copy(gold, twin) == (0.0, "")
    volts = "Model X-200 operates at 5.2 volts with a rated current of 300 mA."
    assert gold_copy(volts, [_hit("c4", volts.replace("5.2", "2.5"))]) == (0.0, "")
    total = "Net revenue for the full year was $2,629 million in fiscal 2023."
    other = "Net revenue for the full year was $1,629 million in fiscal 2023, up 2% on 2022."
    assert gold_copy(total, [_hit("c5", other)]) == (0.0, "")
    assert gold_copy(total, [_hit("c6", "In brief. " + total)])[0] == 1.0
    # the gold's words scattered in order through a long hit are not the passage again
    said = "Revenue increased in the quarter compared with last year"
    spread = ("Revenue from services, which the board reviewed, increased sharply in a year "
              "of change; in the third quarter, as management compared the outlook with "
              "guidance issued last autumn, the year closed well.")  # fmt: skip
    assert gold_copy(said, [_hit("c7", spread)])[0] < COPY


def test_a_copy_of_the_gold_in_a_top_hit_is_label_unless_a_repair_fixes_it():
    copy = Evidence(copy=0.96, copy_hit="c9")
    d = decide([_exp("context", 30, 28), _exp("method", 30, 1, method="bm25")], copy, k=5)
    assert (d.cause, d.confidence) == ("label", "weak")  # another method finds the gold too
    assert "holds the gold's text (96% of its words, in order)" in d.decided_by
    alone = decide([_exp("context", 30, 28)], copy, k=5)
    assert (alone.cause, alone.confidence) == ("label", "strong")
    fixed = decide([_exp("boundary", 30, 2)], copy, k=5)
    assert fixed.cause == "boundary"  # kept whole, the gold itself ranks: not the label's
    below = decide([_exp("context", 30, 28)], Evidence(copy=0.8), k=5)
    assert below.cause == "unclear"


# -- key terms as phrases ---------------------------------------------------------------


def test_a_compound_term_is_absent_while_its_parts_are_present():
    text = (
        "Acme Corp invests capital in stores. The intensity of competition may intensify. "
        "Our business is retail pharmacy. Capital expenditures were $2.7 billion."
    )
    found = _absence("Is Acme Corp a capital-intensive business?", text)
    assert "capital-intensive" in found.terms
    assert found.share >= VOCABULARY
    # the same words as a compound in the document: present
    held = _absence(
        "Is Acme Corp a capital-intensive business?", text + " A capital-intensive business."
    )
    assert held.share == 0.0 and held.terms == ()


def test_a_two_word_term_is_looked_up_as_a_phrase_and_a_lone_word_by_its_stem():
    text = "Acme reports quick service. The ratio of debt to equity rose. Liquidity is strong."
    found = _absence("What is the quick ratio of Acme for its liquidity?", text)
    assert "quick ratio" in found.terms
    assert "liquidity" not in [t.lower() for t in found.terms]  # alone: by its stem
    assert "Acme" not in found.terms
    assert (
        _absence("What is the quick ratio of Acme?", text + " Its quick ratio is 1.1.").share == 0.0
    )


def test_prompt_words_and_a_defined_term_are_not_key_terms():
    text = "Total current assets were 10. Total current liabilities were 8."
    found = _absence(
        "What is the working capital ratio? Define working capital ratio as total current "
        "assets divided by total current liabilities. Round your answer to two decimal places.",
        text,
    )
    assert not {"working capital", "capital ratio", "Round", "answer", "decimal places"} & set(
        found.terms
    )
    # ... but a defined term the document never names is a metric to compute, weakly
    assert (found.metric, found.defined) == ("working capital ratio", True)
    fcf = _absence("What is Acme's free cash flow? FCF here is defined as: (CFO - capex).", text)
    assert "FCF" not in fcf.terms and (fcf.metric, fcf.defined) == ("FCF", True)
    named = _absence("What is the current ratio? Define current ratio as assets over debts.",
                     "The current ratio was 1.2. Total current assets were 10.")  # fmt: skip
    assert (named.metric, named.defined) == ("", False)  # the document names it
    # a word like "well-defined" defines nothing: the name stays a key term
    kept = _absence("Is Acme's well-defined strategy working?", text)
    assert any(t.startswith("Acme") for t in kept.terms)


# -- a metric to compute ------------------------------------------------------------------


def test_a_metric_to_compute_is_vocabulary_not_boundary_or_method():
    text = (
        "Net sales were $9,300 million and gross profit was $3,600 million in 2022. "
        "Operating income grew. The profit margin of the segment is discussed above."
    )
    found = _absence("What is Acme's gross margin in 2022?", text)
    assert found.metric == "gross margin"
    evidence = Evidence(absent=found.share, absent_words=found.terms, metric=found.metric,
                        figures=2)  # fmt: skip
    fixed = [_exp("boundary", 9, 3), _exp("method", 9, 40, method="bm25")]
    d = decide(fixed, evidence, k=5)
    assert d.cause == "vocabulary"
    assert "gross margin" in d.decided_by and "computed" in d.decided_by
    assert (d.confidence, d.runner_up) == ("weak", "boundary")  # the repair still contradicts
    # another method ranks the gold 2nd: a dense method's miss is its own, a lexical one's
    # is the words it cannot see
    found = [_exp("boundary", 9, 3), _exp("method", 9, 2, method="bm25")]
    dense = decide(found, evidence, k=5)
    assert (dense.cause, dense.confidence, dense.runner_up) == ("method", "weak", "vocabulary")
    lexical = decide(found, evidence, k=5, lexical=True)
    assert lexical.cause == "vocabulary"
    alone = decide([_exp("method", 90, 40, method="bm25")], evidence, k=5)
    assert (alone.cause, alone.confidence) == ("vocabulary", "strong")
    # no figures in the gold to compute it from: the rule does not apply
    bare = decide(found, Evidence(metric="gross margin", figures=0), k=5)
    assert bare.cause == "boundary"
    # the document naming the metric: no metric to compute
    assert (
        _absence("What is Acme's gross margin in 2022?", text + " Gross margin was 39%.").metric
        == ""
    )


def test_a_percent_change_is_a_metric_to_compute():
    found = _absence(
        "What is the % change in Acme's revenue?", "Acme revenue was 10 and 12. Change in control."
    )
    assert found.metric == "% change"


def test_qualifiers_and_adverbs_make_no_phrase_and_a_hyphenated_code_matches_its_joined_form():
    text = "Pfizer acquired three companies, as its 10-K reports; significantly, the main risk"
    found = _absence(
        "What three main companies has Pfizer significantly acquired in the 10K?", text
    )
    assert found.terms == ()  # "three main", "main companies", "10K": no gap a reader would see
    assert found.share == 0.0


# -- a miss another method finds ----------------------------------------------------------

DENSE = frozenset({"naive", "late"})
READS_DOCUMENT = frozenset({"late"})


def test_a_naive_miss_only_late_chunking_finds_is_context_else_method():
    late = _exp("method", 20, 2, method="late")
    bm25 = _exp("method", 20, 3, method="bm25")
    only_late = decide([late], Evidence(), k=5, meaning=DENSE,
                       in_context=READS_DOCUMENT)  # fmt: skip
    assert (only_late.cause, only_late.confidence, only_late.runner_up) == (
        "context", "weak", "method",
    )  # fmt: skip
    assert "reading the chunk in its document" in only_late.decided_by
    both = decide([late, bm25], Evidence(), k=5, meaning=DENSE,
                  in_context=READS_DOCUMENT)  # fmt: skip
    assert both.cause == "method"  # bm25 finds it by its words: the failing method's miss
    # late itself missing, naive finding it: late's own way of scoring
    own = decide([_exp("method", 20, 1, method="naive")], Evidence(), k=5,
                 meaning=DENSE, in_context=READS_DOCUMENT, own_context=True)  # fmt: skip
    assert own.cause == "method"


def test_a_repair_of_the_gold_that_fixes_it_comes_before_another_methods_finding():
    found = [_exp("context", 59, 1), _exp("method", 59, 2, method="bm25")]
    d = decide(found, Evidence(), k=5, meaning=DENSE, in_context=READS_DOCUMENT)
    # the repair decides; another method finding the gold as chunked contradicts it
    assert (d.cause, d.confidence, d.runner_up) == ("context", "weak", "method")
    alone = decide([_exp("context", 59, 1), _exp("method", 59, 8, method="bm25")], Evidence(),
                   k=5, meaning=DENSE, in_context=READS_DOCUMENT)  # fmt: skip
    assert (alone.cause, alone.confidence) == ("context", "weak")
    # only late chunking finds it, reading the chunk in its document: it agrees with context
    late = decide([_exp("context", 59, 1), _exp("method", 59, 2, method="late")], Evidence(),
                  k=5, meaning=DENSE, in_context=READS_DOCUMENT)  # fmt: skip
    assert (late.cause, late.confidence, late.runner_up) == ("context", "weak", "")


def test_a_miss_another_method_finds_stays_vocabulary_when_most_key_terms_are_absent():
    gone = Evidence(absent=0.6, absent_words=("COGS", "PPNE"))
    d = decide([_exp("method", 30, 2, method="bm25")], gone, k=5)
    assert (d.cause, d.confidence, d.runner_up) == ("vocabulary", "weak", "method")
    few = Evidence(absent=0.3, absent_words=("COGS",))
    assert decide([_exp("method", 30, 2, method="bm25")], few, k=5).cause == ("method")


def test_a_lexical_miss_a_dense_method_finds_is_vocabulary_unless_a_repair_fixes_it():
    naive = _exp("method", 90, 1, method="naive")
    gone = Evidence(absent=0.3, absent_words=("legal battles",))
    d = decide([naive], gone, k=5, lexical=True, meaning=DENSE)
    assert (d.cause, d.confidence) == ("vocabulary", "weak")
    assert d.decided_by == (
        "method: rank 90 → 1 by meaning, not by the query's words; the document never uses "
        "legal battles"
    )
    cut = decide([_exp("boundary", 90, 2), naive], gone, k=5,
                 lexical=True, meaning=DENSE)  # fmt: skip
    assert cut.cause == "boundary"
    # found only by late chunking, and the title and headings fix it: context
    late = _exp("method", 90, 1, method="late")
    titled = decide([_exp("context", 90, 3), late], gone, k=5,
                    lexical=True, meaning=DENSE, in_context=READS_DOCUMENT)  # fmt: skip
    assert titled.cause == "context"


def test_a_lexical_miss_of_a_document_using_the_query_words_is_the_method():
    """Every key term of the query stands in the document (absent under ``CONTRADICTS``):
    the gold does not say it in other words; bm25's scoring missed it (readers called
    these misses the method's)."""
    naive = _exp("method", 90, 1, method="naive")
    for absent in (0.0, 0.14):
        d = decide([naive], Evidence(absent=absent), k=5, lexical=True, meaning=DENSE)
        assert (d.cause, d.confidence, d.runner_up) == ("method", "weak", "vocabulary")
        assert d.decided_by == ("method: rank 90 → 1; the document uses the query's key terms")
    # the dense method is no experiment for a dense failure: rule 3 decides there
    dense = decide([_exp("method", 90, 1, method="late")], Evidence(), k=5, meaning=DENSE)
    assert dense.cause == "method"


def test_a_defined_metric_the_document_never_names_is_vocabulary_but_weak():
    defined = Evidence(absent=0.1, metric="ROA", metric_defined=True, figures=12)
    d = decide([_exp("context", 11, 30)], defined, k=5)
    assert (d.cause, d.confidence) == ("vocabulary", "weak")
    named = Evidence(absent=0.1, metric="quick ratio", figures=12)
    assert decide([_exp("context", 11, 30)], named, k=5).confidence == "strong"


def test_a_defined_term_is_looked_up_by_its_content_words():
    """Articles, a possessive name and prompt words before a defined term are not part of
    it: a document that names the term holds it."""
    text = "The quick ratio was 1.1 and return on assets (ROA) was 5 percent."
    for query in (
        "What is the ROA? The ROA is defined as net income over total assets.",
        "What is Acme's quick ratio? Acme's quick ratio is defined as cash over debts.",
    ):
        found = _absence(query, text)
        assert (found.metric, found.defined) == ("", False), query


# -- the gold said again ------------------------------------------------------------------


def test_a_top_hit_restating_the_gold_is_label_weak_unless_a_repair_or_a_method_finds_it():
    said = Evidence(restated=0.86, restated_hit="h1")
    d = decide([_exp("method", 40, 30, method="bm25")], said, k=5, meaning=DENSE)
    assert (d.cause, d.confidence) == ("label", "weak")
    assert "says what the gold says" in d.decided_by and "0.86" in d.decided_by
    # under the model's reading of a paraphrase it is no evidence
    loose = decide([_exp("method", 40, 30, method="bm25")], Evidence(restated=0.7), k=5)
    assert loose.cause == "unclear"
    # a repair of the gold's boundary that fixes it decides; the restatement is runner-up
    fixed = decide([_exp("boundary", 40, 2)], said, k=5)
    assert (fixed.cause, fixed.confidence, fixed.runner_up) == ("boundary", "weak", "label")
    # another method ranking the gold within the top k: the gold can be found as labelled
    found = decide([_exp("method", 40, 1, method="bm25")], said, k=5, meaning=DENSE)
    assert (found.cause, found.runner_up) == ("method", "label")


def test_a_visibly_cut_gold_is_boundary_before_absent_words_short_of_gone():
    """No chunk holds the gold whole (its boundary repair ran, fixing nothing): the cut
    decides, weakly, before key terms absent at a share short of ``WORDS_GONE``; from it
    on, the absent words do."""
    cut = _exp("boundary", 30, 20)
    some = Evidence(absent=0.3, absent_words=("much cash",))
    d = decide([cut], some, k=5)
    assert (d.cause, d.confidence, d.runner_up) == ("boundary", "weak", "vocabulary")
    assert d.decided_by == "no chunk holds the gold whole (boundary: rank 30 → 20)"
    gone = Evidence(absent=0.6, absent_words=("drove growth", "drag"))
    assert decide([cut], gone, k=5).cause == "vocabulary"
    assert decide([], some, k=5).cause == "vocabulary"  # nothing cut: the words decide


def test_a_gold_sunk_in_a_chunk_about_other_things_is_boundary_where_nothing_decides():
    """Nothing else decides and the gold is at most ``SUNK`` of the one chunk holding it:
    weak boundary, said with its share; a larger share stays unclear."""
    sunk = decide([_exp("context", 30, 25)], Evidence(share=0.12), k=5)
    assert (sunk.cause, sunk.confidence) == ("boundary", "weak")
    assert sunk.decided_by == "the gold is 12% of the one chunk holding it, the rest other text"
    assert decide([_exp("context", 30, 25)], Evidence(share=0.35), k=5).cause == "unclear"
    # another method finding the gold decides first (method), as does a repair that fixes it
    found = decide([_exp("method", 30, 2, method="bm25")], Evidence(share=0.12), k=5,
                   meaning=DENSE)  # fmt: skip
    assert found.cause == "method"
    fixed = decide([_exp("context", 30, 2)], Evidence(share=0.12), k=5)
    assert fixed.cause == "context"


def test_adjacent_question_words_the_document_holds_apart_are_no_gap():
    """A question's adjacent words are mostly not a term ("eBay repay", "dollar reduce"):
    a word the document holds by its stem is present though the pair never stands there;
    a word the document never uses is absent, shown alone; a hyphenated compound stays a
    term looked up whole."""
    text = (
        "eBay Inc. reported revenue. Repayment of debt was $1,150 million. The dollar "
        "strengthened and reduced revenue. Results for the prior period are restated."
    )
    found = _absence("How much debt did eBay repay in the quarter?", text)
    assert "eBay repay" not in found.terms
    assert not {"debt", "repay", "eBay"} & set(found.terms)
    gone = _absence("Which geopolitical risks did eBay cite?", text)
    assert "geopolitical" in gone.terms and gone.share > 0
    joined = _absence("How did the prior-year quarter compare?", text)
    assert "prior-year" in joined.terms


def test_a_cut_gold_whose_chunk_lacks_what_its_context_names_is_context():
    """Cut or sunk, nothing fixing it, and the gold's chunk lacks the query's terms that
    its title, headings or the text above it name (``UNLABELLED``): the chunk is a bare
    fragment, weak context with boundary the runner-up; short of it, boundary."""
    cut = _exp("boundary", 30, 20)
    bare = Evidence(outside=0.95, outside_words=("eBay", "cash flows"))
    d = decide([cut], bare, k=5)
    assert (d.cause, d.confidence, d.runner_up) == ("context", "weak", "boundary")
    assert d.decided_by == (
        "the gold's chunk lacks eBay, cash flows, which its title, headings or the text above "
        "it name; no chunk holds the gold whole (boundary: rank 30 → 20)"
    )
    sunk = decide([], Evidence(share=0.1, outside=0.95, outside_words=("eBay",)), k=5)
    assert sunk.cause == "context"
    assert decide([cut], Evidence(outside=0.6, outside_words=("eBay",)), k=5).cause == "boundary"
    # a repair that fixes the failure still decides
    assert decide([_exp("boundary", 30, 2)], bare, k=5).cause == "boundary"


def test_the_words_a_chunk_lacks_are_shown_as_the_query_writes_them():
    from core.diagnose.signals import query_phrases
    from core.methods.lexical import word_spans

    q = "What goodwill risk does Lockheed Martin name in its forward-looking statements?"
    wanted = {"Lockheed", "Martin", "forward", "looking", "statements"}
    terms = {t for a, b, t in word_spans(q) if q[a:b] in wanted}
    assert query_phrases(q, terms) == ("Lockheed Martin", "forward-looking statements")
    assert query_phrases(q, set()) == ()


def test_a_top_hit_holding_a_split_golds_figures_is_not_a_second_place():
    """The answer's figures in a top hit make a label only where one chunk holds the gold
    whole; a gold split over chunks (its boundary repair ran) whose figures also stand in
    a top hit is the cut's (readers called 8 of 12 such label suggestions boundary)."""
    two = Evidence(second_place=0.7)
    whole = decide([_exp("context", 30, 20)], two, k=5)
    assert (whole.cause, whole.decided_by) == (
        "label",
        "a top hit holds the gold's figures and the query's words",
    )
    split = decide([_exp("boundary", 30, 20), _exp("context", 30, 20)], two, k=5)
    assert split.cause == "boundary"


def test_query_words_the_document_uses_only_away_from_the_gold_are_vocabulary_not_unclear():
    """Nothing else decides, and the document uses the query's words only away from the
    gold (not in its section, headings, title or opening): the gold says it in other
    words, weak vocabulary; short of ``ELSEWHERE``, unclear."""
    away = Evidence(elsewhere=0.5, elsewhere_words=("transthyretin amyloid cardiomyopathy",))
    d = decide([_exp("context", 30, 25)], away, k=5)
    assert (d.cause, d.confidence) == ("vocabulary", "weak")
    assert d.decided_by == (
        "the document uses transthyretin amyloid cardiomyopathy only away from the gold: the "
        "gold says it in other words"
    )
    faint = Evidence(elsewhere=0.15, elsewhere_words=("half",))
    assert decide([_exp("context", 30, 25)], faint, k=5).cause == "unclear"
    at = Evidence(elsewhere=0.2, elsewhere_words=("half",))
    assert decide([_exp("context", 30, 25)], at, k=5).cause == "vocabulary"


def test_a_second_place_is_weak_beside_a_sunk_gold():
    """A top hit holding the gold's figures is label, weak even when nothing contests it;
    a gold sunk in its chunk (at most ``SUNK`` of it) is its runner-up."""
    two = Evidence(second_place=0.7)
    assert (decide([], two, k=5).confidence, decide([], two, k=5).runner_up) == ("weak", "")
    sunk = decide([], Evidence(second_place=0.7, share=0.15), k=5)
    assert (sunk.cause, sunk.confidence, sunk.runner_up) == ("label", "weak", "boundary")


def test_a_bm25_miss_of_a_metric_to_compute_stays_vocabulary():
    """Rule 4's method reading needs the document to use the query's terms: a metric the
    question asks to compute that the document never names is vocabulary, its share of
    the query's weight small or not; the line names any absent word."""
    naive = _exp("method", 40, 1, method="naive")
    metric = Evidence(absent=0.14, absent_words=("quick ratio",), metric="quick ratio",
                      figures=4)  # fmt: skip
    d = decide([naive], metric, k=5, lexical=True, meaning=DENSE)
    assert d.cause == "vocabulary"
    one = Evidence(absent=0.1, absent_words=("FY2022",))
    found = decide([naive], one, k=5, lexical=True, meaning=DENSE)
    assert found.cause == "method"
    assert found.decided_by.endswith("the document uses the query's key terms but FY2022")
    # exactly at CONTRADICTS the absent words decide
    at = decide([naive], Evidence(absent=0.15, absent_words=("x",)), k=5, lexical=True,
                meaning=DENSE)  # fmt: skip
    assert at.cause == "vocabulary"


def test_a_hyphenated_compound_is_found_written_as_one_word_and_a_metric_named_once():
    assert (
        _absence("What were the non-cash charges?", "Noncash charges were $5 million.").share == 0
    )
    found = _absence("What is the capital-intensive share?", "Capital intensity and a share.")
    assert found.terms == ("capital-intensive",)
    gross = _absence("What is the gross margin of Acme?", "Acme margin rose.")
    assert gross.terms == ("gross margin",) and gross.metric == "gross margin"


def test_a_sunk_gold_is_boundary_at_sunk_exactly():
    assert decide([], Evidence(share=0.2), k=5).cause == "boundary"
    assert decide([], Evidence(share=0.21), k=5).cause == "unclear"
