"""The suggested cause of one failure: the smallest repair that makes it succeed, measured
(``core.diagnose.repairs``), else the evidence a reader can check, else ``unclear``.

In order:

1. **parse**, weak, when no repair of the gold's boundary or parse fixes it and the gold's
   text is damaged, in running headers or footers, on a page without text or in no chunk
   (``DAMAGED``: the OCR reading could not be ranked, or read no better).
2. **label**, when a top hit holds the gold's text (``COPY`` of its words, in order: the
   passage stands twice and the label marks one copy) or, where one chunk holds the gold
   whole, the gold's figures and the query's terms (the answer in a second place,
   ``SECOND_PLACE``, always weak; a gold split over chunks whose figures a top hit also
   holds readers called the cut's), and no repair of the gold's boundary or parse fixes
   the failure.
3. For a method that does not count words, when another method ranks the gold within
   the top k and no repair of the gold's text fixes it (the question does reach the
   gold): **context**, weak, when only dense methods that read a chunk with its document
   (late chunking, a contextual prefix) find it and the failing method does not read it so;
   else **boundary**, weak (runner-up method), when no chunk holds the gold whole (its
   boundary repair was run and did not fix it: readers call a visibly cut gold the cut's
   even where another method finds it); else **method** (weak, runner-up vocabulary,
   where the question asks for a metric to compute, which a fix of the gold's text does
   not contradict), unless the question's key terms are mostly absent from the document
   (``WORDS_GONE``): then on to 5.
4. For a lexical method (BM25) whose miss a method embedding with the model finds
   (unless a repair of the gold's boundary or parse fixes it, or only a method reading
   the document finds it and the title and headings fix it): **method**, weak (runner-up
   vocabulary), when the document uses the query's key terms (those absent weigh under
   ``CONTRADICTS``: bm25's scoring missed a gold it could match; readers called these
   misses the method's); else **vocabulary**, weak: the gold says it in other words.
5. **vocabulary**, when the question asks for a metric to compute ("quick ratio", "gross
   margin", "capital-intensive", "% change", or a term it defines, "ROA is defined as",
   weak) that the gold's document never names while the gold holds figures (at least
   ``INPUTS``): the answer must be computed from them.
6. **label**, weak, when a top hit says what the gold says: its sentence closest in
   meaning to a sentence of the gold, in the gold's document and stating its figures, at
   ``RESTATED`` or more under the encoder (``core.diagnose.restated``), and no repair of
   the gold's boundary or parse fixes the failure: the label marks one place of two.
7. **label**, when the gold's own text holds at most ``LABEL_GOLD`` of the query's content
   weight, one sentence of a top hit of the failing method holds at least ``LABEL_HIT``
   (and ``LABEL_GAP`` more), and no repair of the gold's boundary or parse fixes the
   failure: the label points at the wrong passage, or at a broader page. Weak: the
   query's words may stand in a caption or heading the chunker cut from the gold.
8. the **repairs of the gold text** that fix the failure (its rank within the top k):
   parse, boundary, context; several: the one ranking the gold highest (ties in that
   order, the smaller repair first), the next as runner-up.
9. **boundary**, weak, when no chunk holds the gold whole (its boundary repair was run)
   and the query's key terms absent from the document weigh under ``WORDS_GONE``: the
   cut is there to see, and absent words short of that were mostly question words
   ("much", "drove", "fast") beside a cut readers named.
   **vocabulary**, weak, when at least ``VOCABULARY`` of the query's content weight is in
   key terms the gold's document never uses (``core.diagnose.terms.absence``: a word by
   its stem or in one of its phrases, a hyphenated compound and a metric to compute
   looked up whole; names and figures weigh 2; prompt words like "please", "explain", "analyst",
   "perspective" left out). Always weak: absent words are evidence a reader checks, not an
   experiment, and beside them the readers often saw a context or label failure (a metric
   the question asks to compute, rule 5, may be strong).
10. **method**, when another method of the run ranks the gold within the top k.
11. **boundary**, weak, when the gold is at most ``SUNK`` of the one chunk holding it
    (sunk in text about other things, whether or not its own paragraph as a chunk
    ranks; a gold no chunk holds whole was decided at 9 or before); **vocabulary**,
    weak, when the document uses the query's words only away from the gold (not in its
    section, headings, title or opening) at ``ELSEWHERE`` of the query's weight or
    more: the gold says it in other words; **unclear** otherwise; the runner-up is the
    repair that moved the gold most, when it moved it at least halfway to the top k, or
    label when only some of its evidence holds.
    A cut or sunk gold whose chunk lacks the query's terms that its title, headings or
    the text above it name (their context signal at ``UNLABELLED`` or more) is
    **context**, weak, runner-up boundary, instead (rules 9 and 11): a bare fragment,
    a table's rows without their title, which readers called the label's absence.

The **drowned repair** (the gold's own paragraph as its chunk, for a gold that one chunk
holds whole but drowns; ``core.diagnose.repairs``) is read only after rules 1 to 11 (in
them, "a repair of the gold's boundary" is the one that places a chunk). It decides,
always weakly, where it fixes the failure and nothing stronger stands: no other repair
of the gold's text fixes it, and the cause above is unclear, context or a method miss
read from another method's rank (3), a vocabulary gap (4, 9) or label read from a
restatement or the query's words (6, 7), or a cut or sunk gold (9, 11); that cause,
unless unclear or boundary, becomes the runner-up (a boundary keeps its own). The
gold's text damaged, a copy of it or its figures in a top hit, a metric to compute, and
every strong cause keep their place. It contradicts nothing, whether it fixes the
failure or only moves the gold: where it does not decide, the cause and confidence are
those of rules 1 to 11 (a short paragraph can rank well for reasons of its own; readers
call some of those misses the method's).

Each rule was written on development sets and measured on blind ones
(``eval/diagnose_blind``, docs/diagnosis.md).

**Confidence.** A cause is ``strong`` only when what decided it is uncontested: the
deciding experiment fixes the failure (or, for a cause the evidence decides, every
experiment but the drowned repair leaves the gold where it was) and no other kind of
evidence points elsewhere.
Otherwise it is ``weak``, with the first contradicting cause as runner-up:

- a repair that fixes the failure, or moves the gold at least halfway to the top k,
  contradicts a cause decided otherwise (vocabulary, label, method);
- another method ranking the gold within the top k contradicts every cause but method,
  a repair of the failing method's text that fixes it too (the gold as chunked can be
  found: readers called such misses the method's);
- key terms the document never uses (at least ``CONTRADICTS`` of the query's weight)
  contradict a cause other than vocabulary;
- label evidence in part (a top hit's sentence holding ``LABEL_GAP`` more of the query
  than the gold) contradicts a cause other than label;
- a second repair that fixes the failure contradicts the first;
- a second place (a top hit holding the gold's figures) is weak, runner-up boundary,
  beside a gold at most ``SUNK`` of its chunk: the sunk gold explains the miss too;
- context from its repair is always weak: the title, headings and lines above that fix
  it stand outside the chunk, so a chunk cut elsewhere would hold them too (over sets
  7-17 the readers called 7 of 12 strong context repairs boundary, **not blind**);
- method is always weak: another method's rank shows the gold can be found, not that the
  failing method's scoring is what missed it (no repair of the failing method's own text
  is an experiment for it; readers given the same ranks called a third of those misses a
  label on another passage or a drowned gold); parse decided by damage alone is always
  weak.

So a strong cause is one an experiment fixes (a repair of the gold's text other than the
drowned one ranks it in the top k, no other method finding the gold), a metric the
question asks to compute, the gold's text or its figures standing in a top hit (a second
place), each uncontested; shares of the query's words (absent from the document, held by
a hit more than by the gold), a restatement and another method's finding make a cause
weak.

The experiments are shown with the suggestion: they are the explanation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.diagnose.repairs import Experiment

TEXT_REPAIRS = ("parse", "boundary", "context")  # the smaller repair first
LABEL_GOLD = 0.5
LABEL_HIT = 0.75
LABEL_GAP = 0.34
VOCABULARY = 0.25
WORDS_GONE = 0.5  # key terms absent at this share keep a miss vocabulary that another method finds
CONTRADICTS = 0.15  # key terms absent at this share contradict a cause other than vocabulary
INPUTS = 2  # figures in the gold (years aside) that a computed metric reads
DAMAGED = 0.5  # the strongest parse signal (damaged, furniture, no text): parse evidence
SECOND_PLACE = 0.5  # the "answer in two places" signal: label evidence
COPY = 0.9  # a top hit holding this share of the gold's words, in order: the gold's copy
RESTATED = 0.8  # a top hit's sentence this close to a gold sentence: the gold said again
SUNK = 0.2  # a gold at most this share of the one chunk holding it: sunk in other text
ELSEWHERE = 0.2  # the weight of the query's words the document uses only away from the gold
UNLABELLED = 0.9  # the query's terms its context names and the gold chunk lacks: unlabelled


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """What a reader can check without a repair: the share of the query's content weight
    absent from the gold's document (``absent``, with those words), held by the gold's own
    text (``gold_holds``) and by the failing method's best top hit (``hit_holds``, that
    hit's chunk id), the strongest parse signal (``damage``: the gold's text not language,
    in running headers, on a page without text, in no chunk), the answer standing in a
    second place (``second_place``: a top hit holding the gold's figures and the query's
    terms) and the gold's text standing there (``copy``: the share of its words a top hit,
    ``copy_hit``, holds in order; ``core.diagnose.signals.gold_copy``); the gold's share
    of the one chunk holding it (``share``; 1.0 where several chunks or none hold it: not
    sunk), the weight of the query's terms its context names and its chunk lacks
    (``outside``, the context signal's strength, with those words) and of the query's
    words the document uses only away from the gold (``elsewhere``, with those words)."""

    absent: float = 0.0
    absent_words: tuple[str, ...] = ()
    metric: str = ""
    metric_defined: bool = False
    figures: int = 0
    gold_holds: float = 0.0
    hit_holds: float = 0.0
    hit: str = ""
    damage: float = 0.0
    second_place: float = 0.0
    copy: float = 0.0
    copy_hit: str = ""
    restated: float = 0.0
    restated_hit: str = ""
    share: float = 1.0
    outside: float = 0.0
    outside_words: tuple[str, ...] = ()
    elsewhere: float = 0.0
    elsewhere_words: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        return {
            "absent": round(self.absent, 3), "absent_words": list(self.absent_words),
            "metric": self.metric, "metric_defined": self.metric_defined,
            "figures": self.figures,
            "gold_holds": round(self.gold_holds, 3), "hit_holds": round(self.hit_holds, 3),
            "hit": self.hit, "damage": round(self.damage, 3),
            "second_place": round(self.second_place, 3),
            "copy": round(self.copy, 3), "copy_hit": self.copy_hit,
            "restated": round(self.restated, 3), "restated_hit": self.restated_hit,
            "share": round(self.share, 3),
            "outside": round(self.outside, 3), "outside_words": list(self.outside_words),
            "elsewhere": round(self.elsewhere, 3),
            "elsewhere_words": list(self.elsewhere_words),
        }  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    cause: str
    confidence: str
    decided_by: str
    runner_up: str = ""


def _after(e: Experiment) -> int:
    return e.after if e.after is not None else 10**9


def _moved(e: Experiment, k: int) -> bool:
    """A repair that fixes the failure or moves the gold at least halfway to the top k."""
    if e.fixes:
        return True
    if e.before is None or e.after is None:
        return False
    return e.before - e.after >= max(1, (e.before - k) / 2)


def decide(
    experiments: Sequence[Experiment],
    evidence: Evidence,
    *,
    k: int,
    lexical: bool = False,
    meaning: frozenset[str] = frozenset(),
    in_context: frozenset[str] = frozenset(),
    own_context: bool = False,
) -> Decision:
    """The suggested cause and its confidence (see the module docstring). ``lexical``: the
    failing method counts words (BM25); ``meaning``: the
    run's methods that embed with the model (dense); ``in_context``: those that read a
    chunk with its document (late chunking, a contextual prefix); ``own_context``: the
    failing method is one of them."""
    rest = [e for e in experiments if not e.drowned]
    found = _decide(
        rest, evidence, k=k, lexical=lexical, meaning=meaning, in_context=in_context,
        own_context=own_context,
    )  # fmt: skip
    drowned = next((e for e in experiments if e.drowned and e.fixes), None)
    if drowned is None or any(e.repair in TEXT_REPAIRS and e.fixes for e in rest):
        return found  # another repair of the gold's text decides, or none of this kind
    decided_by_evidence = (
        evidence.damage >= DAMAGED
        or evidence.copy >= COPY
        or evidence.second_place >= SECOND_PLACE
        or (bool(evidence.metric) and evidence.figures >= INPUTS)
    )
    if found.confidence == "strong" or decided_by_evidence:
        return found
    runner = {"unclear": "", "boundary": found.runner_up}.get(found.cause, found.cause)
    return Decision(cause="boundary", confidence="weak", decided_by=drowned.line,
                    runner_up=runner)  # fmt: skip


def _decide(
    experiments: Sequence[Experiment],
    evidence: Evidence,
    *,
    k: int,
    lexical: bool,
    meaning: frozenset[str],
    in_context: frozenset[str],
    own_context: bool,
) -> Decision:
    """``decide``'s rules 1 to 11 over ``experiments``."""
    text_fixes = sorted(
        (e for e in experiments if e.repair in TEXT_REPAIRS and e.fixes),
        key=lambda e: (_after(e), TEXT_REPAIRS.index(e.repair)),
    )
    moved = sorted(
        (e for e in experiments if e.repair in TEXT_REPAIRS and _moved(e, k)),
        key=lambda e: (_after(e), TEXT_REPAIRS.index(e.repair)),
    )
    others = sorted((e for e in experiments if e.repair == "method" and e.fixes), key=_after)
    words = (
        evidence.gold_holds <= LABEL_GOLD
        and evidence.hit_holds >= LABEL_HIT
        and evidence.hit_holds - evidence.gold_holds >= LABEL_GAP
    )
    restated = evidence.restated >= RESTATED
    label = words or evidence.second_place >= SECOND_PLACE or restated
    some_label = label or evidence.hit_holds - evidence.gold_holds >= LABEL_GAP
    hard_fixes = [e for e in text_fixes if e.repair != "context"]

    def against(cause: str, *, repairs: Sequence[Experiment] = ()) -> list[str]:
        """The causes other evidence points at, first the strongest (another method
        finding the gold contradicts every cause but method, a repair of the failing
        method's text that fixes it too: the gold as chunked can be found)."""
        out = [e.repair for e in repairs if e.repair != cause]
        if others and cause != "method":
            out.append("method")
        if evidence.absent >= CONTRADICTS and cause != "vocabulary":
            out.append("vocabulary")
        if some_label and cause != "label":
            out.append("label")
        return out

    def decided(cause: str, line: str, contra: Sequence[str], *, weak: bool = False) -> Decision:
        runner = next((c for c in contra if c != cause), "")
        confidence = "weak" if weak or runner else "strong"
        return Decision(cause=cause, confidence=confidence, decided_by=line, runner_up=runner)

    def cut_or_unlabelled(line: str) -> Decision:
        """A gold cut or sunk, where nothing fixes it: context instead when the chunk
        lacks the query's terms that its title, headings or the text above it name."""
        if evidence.outside >= UNLABELLED and evidence.outside_words:
            told = (
                f"the gold's chunk lacks {', '.join(evidence.outside_words)}, which its "
                f"title, headings or the text above it name; {line}"
            )
            return decided("context", told, ["boundary", *against("context", repairs=moved)],
                           weak=True)  # fmt: skip
        return decided("boundary", line, against("boundary", repairs=moved), weak=True)

    if evidence.damage >= DAMAGED and not hard_fixes:
        line = (
            f"{evidence.damage:.0%} of the gold's text is damaged or left out "
            "(no OCR reading to rank)"
        )
        return decided("parse", line, against("parse", repairs=moved), weak=True)
    computed = bool(evidence.metric) and evidence.figures >= INPUTS
    if evidence.copy >= COPY and not hard_fixes:
        line = (
            f"a top hit holds the gold's text ({evidence.copy:.0%} of its words, in order): "
            "the passage stands twice and the label marks the other copy"
        )
        return decided("label", line, against("label", repairs=moved))
    cut = next((e for e in experiments if e.repair == "boundary"), None)
    if evidence.second_place >= SECOND_PLACE and not hard_fixes and cut is None:
        line = "a top hit holds the gold's figures and the query's words"
        sunk = ["boundary"] if evidence.share <= SUNK else []  # a sunk gold explains it too
        # weak: figures standing in a top hit are read, not an experiment (the four strong
        # suggestions of this kind on sets 19 and 20 were neither reader's cause)
        return decided("label", line, [*sunk, *against("label", repairs=moved)], weak=True)
    finds = bool(others) and not lexical and (computed or not text_fixes)
    if finds and not own_context and not computed and {e.method for e in others} <= in_context:
        line = f"{others[0].line}, reading the chunk in its document"
        return decided("context", line, against("context", repairs=moved), weak=True)
    # the gold cut across chunks: its boundary repair was run (no chunk holds it whole)
    if finds and cut is not None and not computed and evidence.absent < WORDS_GONE:
        line = f"no chunk holds the gold whole ({cut.line}); {others[0].line}"
        contra = ["method", *against("boundary", repairs=moved)]
        return decided("boundary", line, contra, weak=True)
    if finds and (computed or evidence.absent < WORDS_GONE):
        contra = against("method", repairs=moved)
        contra = ["vocabulary", *contra] if computed else contra
        return decided("method", others[0].line, contra, weak=True)
    by_meaning = [e for e in others if e.method in meaning]
    context_fixes = any(e.repair == "context" for e in text_fixes)
    if context_fixes and {e.method for e in by_meaning} <= in_context:
        by_meaning = []  # found only by a method reading the document, and the heading fixes it
    bm25_missed = lexical and by_meaning and not hard_fixes and not computed
    if bm25_missed and evidence.absent < CONTRADICTS:
        # the query's key terms in the document: bm25's scoring missed the gold
        line = f"{by_meaning[0].line}; the document uses the query's key terms"
        if evidence.absent_words:
            line += f" but {', '.join(evidence.absent_words)}"
        contra = [
            "boundary" if cut is not None else "vocabulary",
            *against("method", repairs=moved),
        ]
        return decided("method", line, contra, weak=True)
    if lexical and by_meaning and not hard_fixes:
        gone = f"; the document never uses {', '.join(evidence.absent_words)}"
        line = f"{by_meaning[0].line} by meaning, not by the query's words"
        line += gone if evidence.absent >= CONTRADICTS and evidence.absent_words else ""
        return decided("vocabulary", line, against("vocabulary", repairs=moved), weak=True)
    if computed:
        line = (
            f"the question asks for {evidence.metric}, which the gold's document never "
            f"names; the gold holds {evidence.figures} figures: the answer must be computed"
        )
        return decided("vocabulary", line, against("vocabulary", repairs=moved),
                       weak=evidence.metric_defined)  # fmt: skip
    if restated and not hard_fixes:
        line = (
            f"a top hit says what the gold says, in other words (a sentence of each at "
            f"{evidence.restated:.2f} under the model): the label marks one place of two"
        )
        return decided("label", line, against("label", repairs=moved), weak=True)
    if words and not hard_fixes:  # (a second place decided above)
        line = (
            f"the gold holds {evidence.gold_holds:.0%} of the query's words, a top hit "
            f"{evidence.hit_holds:.0%}"
        )
        return decided("label", line, against("label", repairs=moved), weak=True)
    if text_fixes:
        first = text_fixes[0]
        contra = against(first.repair, repairs=text_fixes)
        if first.repair == "context" and {e.method for e in others} <= in_context:
            contra = [c for c in contra if c != "method"]  # reading the document: it agrees
        # a chunk given what stands before it is also a chunk cut elsewhere: readers
        # called 7 of 12 strong context repairs the cut's (a caption, a paragraph's start)
        return decided(first.repair, first.line, contra, weak=first.repair == "context")
    if cut is not None and evidence.absent < WORDS_GONE:  # the cut there to see
        return cut_or_unlabelled(f"no chunk holds the gold whole ({cut.line})")
    if evidence.absent >= VOCABULARY:
        line = (
            f"the gold's document never uses {', '.join(evidence.absent_words)} "
            f"({evidence.absent:.0%} of the query's weight)"
        )
        return decided("vocabulary", line, against("vocabulary", repairs=moved), weak=True)
    if others:
        return decided("method", others[0].line, against("method", repairs=moved), weak=True)
    if evidence.share <= SUNK:  # the gold sunk in a chunk about other things
        return cut_or_unlabelled(
            f"the gold is {evidence.share:.0%} of the one chunk holding it, the rest other text"
        )
    if evidence.elsewhere >= ELSEWHERE and evidence.elsewhere_words:  # said in other words
        line = (
            f"the document uses {', '.join(evidence.elsewhere_words)} only away from the "
            "gold: the gold says it in other words"
        )
        return decided("vocabulary", line, against("vocabulary", repairs=moved), weak=True)
    runner = ""
    if moved:
        runner = max(moved, key=lambda e: (e.before or 0) - _after(e)).repair
    elif evidence.hit_holds - evidence.gold_holds >= LABEL_GAP:
        runner = "label"
    return Decision(
        cause="unclear", confidence="unclear", runner_up=runner,
        decided_by="no repair fixes it and no evidence decides",
    )  # fmt: skip
