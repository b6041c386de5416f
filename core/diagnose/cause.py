"""The suggested cause of one failure: the smallest repair that makes it succeed, measured
(``core.diagnose.repairs``), else the evidence a reader can check, else ``unclear``.

In order:

1. **parse**, weak, when no repair of the gold's boundary or parse fixes it and the gold's
   text is damaged, in running headers or footers, on a page without text or in no chunk
   (``DAMAGED``: the OCR reading could not be ranked, or read no better).
2. **label**, when a top hit holds the gold's figures and the query's terms (the answer in
   a second place, ``SECOND_PLACE``), or the gold's own text holds at most ``LABEL_GOLD`` of
   the query's content
   weight, one sentence of a top hit of the failing method holds at least ``LABEL_HIT`` (and
   ``LABEL_GAP`` more), and no repair of the gold's boundary or parse fixes the failure:
   the label points at the wrong passage, or at a broader page. A context repair that
   ranks the gold is then the heading's words, not the gold's (shown as the runner-up).
3. the **repairs of the gold text** that fix the failure (its rank within the top k):
   parse, boundary, context. One alone: that cause, ``strong``; several: the one ranking
   the gold highest (ties in that order, the smaller repair first), ``weak``, the next as
   runner-up.
4. **vocabulary**, when at least ``VOCABULARY`` of the query's content weight (names and
   figures weigh 2; prompt words like "please", "explain" left out) is in words the
   gold's document never uses: ``strong``, or ``weak`` when another method ranks the
   gold (runner-up method).
5. **method**, when another method of the run ranks the gold within the top k: ``strong``
   when the failing method's own repairs were tried and none fixed it, else ``weak``.
6. **unclear** otherwise; the runner-up is the repair that moved the gold most, when it
   moved it at least halfway to the top k, or label when only some of its evidence holds.

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
VOCABULARY = 0.34
DAMAGED = 0.5  # the strongest parse signal (damaged, furniture, no text): parse evidence
SECOND_PLACE = 0.5  # the "answer in two places" signal: label evidence


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """What a reader can check without a repair: the share of the query's content weight
    absent from the gold's document (``absent``, with those words), held by the gold's own
    text (``gold_holds``) and by the failing method's best top hit (``hit_holds``, that
    hit's chunk id), the strongest parse signal (``damage``: the gold's text not language,
    in running headers, on a page without text, in no chunk) and the answer standing in a
    second place (``second_place``: a top hit holding the gold's figures and the query's
    terms)."""

    absent: float = 0.0
    absent_words: tuple[str, ...] = ()
    gold_holds: float = 0.0
    hit_holds: float = 0.0
    hit: str = ""
    damage: float = 0.0
    second_place: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "absent": round(self.absent, 3), "absent_words": list(self.absent_words),
            "gold_holds": round(self.gold_holds, 3), "hit_holds": round(self.hit_holds, 3),
            "hit": self.hit, "damage": round(self.damage, 3),
            "second_place": round(self.second_place, 3),
        }  # fmt: skip


@dataclass(frozen=True, slots=True, kw_only=True)
class Decision:
    cause: str
    confidence: str
    decided_by: str
    runner_up: str = ""


def _after(e: Experiment) -> int:
    return e.after if e.after is not None else 10**9


def decide(
    experiments: Sequence[Experiment], evidence: Evidence, *, k: int, repaired: bool
) -> Decision:
    """The suggested cause (see the module docstring). ``repaired``: whether the failing
    method's own repairs could be run (an encoder given, a dense or lexical method)."""
    text_fixes = sorted(
        (e for e in experiments if e.repair in TEXT_REPAIRS and e.fixes),
        key=lambda e: (_after(e), TEXT_REPAIRS.index(e.repair)),
    )
    others = sorted((e for e in experiments if e.repair == "method" and e.fixes), key=_after)
    words = (
        evidence.gold_holds <= LABEL_GOLD
        and evidence.hit_holds >= LABEL_HIT
        and evidence.hit_holds - evidence.gold_holds >= LABEL_GAP
    )
    label = words or evidence.second_place >= SECOND_PLACE
    hard_fixes = [e for e in text_fixes if e.repair != "context"]
    if evidence.damage >= DAMAGED and not hard_fixes:
        return Decision(
            cause="parse", confidence="weak", decided_by=f"{evidence.damage:.0%} of the gold's "
            "text is damaged or left out (no OCR reading to rank)",
        )  # fmt: skip
    if label and not hard_fixes:
        line = (
            f"the gold holds {evidence.gold_holds:.0%} of the query's words, a top hit "
            f"{evidence.hit_holds:.0%}"
            if words
            else "a top hit holds the gold's figures and the query's words"
        )
        if text_fixes:
            return Decision(cause="label", confidence="weak", decided_by=line,
                            runner_up="context")  # fmt: skip
        return Decision(cause="label", confidence="strong", decided_by=line)
    if text_fixes:
        first = text_fixes[0]
        rest = [e.repair for e in text_fixes[1:] if e.repair != first.repair]
        if rest:
            return Decision(cause=first.repair, confidence="weak", decided_by=first.line,
                            runner_up=rest[0])  # fmt: skip
        return Decision(cause=first.repair, confidence="strong", decided_by=first.line)
    if evidence.absent >= VOCABULARY:
        line = (
            f"the gold's document never uses {', '.join(evidence.absent_words)} "
            f"({evidence.absent:.0%} of the query's weight)"
        )
        if others:
            return Decision(cause="vocabulary", confidence="weak", decided_by=line,
                            runner_up="method")  # fmt: skip
        return Decision(cause="vocabulary", confidence="strong", decided_by=line)
    if others:
        return Decision(cause="method", confidence="strong" if repaired else "weak",
                        decided_by=others[0].line)  # fmt: skip
    runner = ""
    moved = [
        e for e in experiments
        if e.repair in TEXT_REPAIRS and e.before is not None and e.after is not None
        and e.before - e.after >= max(1, (e.before - k) / 2)
    ]  # fmt: skip
    if moved:
        runner = max(moved, key=lambda e: (e.before or 0) - _after(e)).repair
    elif evidence.hit_holds - evidence.gold_holds >= LABEL_GAP:
        runner = "label"
    return Decision(
        cause="unclear", confidence="unclear", runner_up=runner,
        decided_by="no repair fixes it and no evidence decides",
    )  # fmt: skip
