"""The Compare page's view model: what its choices reconcile to, and what it shows.

No Streamlit here: the page passes its session state (any mutable mapping) and the
store's index entries (``core.store.IndexedDoc``: ``policy_key``, ``policy``, ``doc_id``,
``method``), and draws what these functions return. Each ``reconcile_*`` function puts a
choice that no longer exists (a policy no longer indexed, a document outside the policy,
a method not offered) back to a valid one before the widget that shows it is drawn, so
the widgets never see an impossible value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

from core import methods as registry
from core.provenance.types import ChunkPolicy
from core.retrieve.comparison import Comparison, hits_at, with_changes
from core.retrieve.rerank import RerankResult, RerankWeights, rerank_top

# Any keys: Streamlit's session state is keyed by str | int, a plain dict by str.
State = MutableMapping[Any, Any]


def indexed_policies(entries: Iterable[Any]) -> dict[str, ChunkPolicy]:
    """``{policy key: policy}`` of the entries, in the order first seen."""
    return {e.policy_key: e.policy for e in entries}


def reconcile_policy(
    state: State, key: str, entries: Sequence[Any], preferred: str | None = None
) -> dict[str, ChunkPolicy]:
    """The indexed policies; ``state[key]`` set, unless it is among them, to ``preferred``
    (a policy key: the default policy, ``core.defaults``) when the index holds it, else to
    the first one."""
    policies = indexed_policies(entries)
    if state.get(key) not in policies:
        state[key] = preferred if preferred in policies else next(iter(policies))
    return policies


def documents_under(entries: Iterable[Any], policy_key: str) -> list[str]:
    """The ids of the documents indexed under the policy, sorted."""
    return sorted({e.doc_id for e in entries if e.policy_key == policy_key})


def reconcile_scope(state: State, key: str, docs: Sequence[str], whole: str) -> list[str]:
    """The scope choices (``whole`` index, then each document); ``state[key]`` set to
    ``whole`` unless it is one of them."""
    choices = [whole, *docs]
    if state.get(key) not in choices:
        state[key] = whole
    return choices


def reconcile_methods(state: State, key: str, offered: Sequence[str]) -> None:
    """Drop from ``state[key]`` the methods that are not offered (order kept)."""
    state[key] = [m for m in state.get(key, []) if m in offered]


def stored_methods(entries: Iterable[Any], policy_key: str, doc_id: str | None) -> set[str]:
    """The methods stored under the policy for the document (any document: ``None``)."""
    return {e.method for e in entries if e.policy_key == policy_key and doc_id in (None, e.doc_id)}


def runnable(chosen: Sequence[str], stored: set[str]) -> tuple[list[str], list[str]]:
    """``(methods, missing)``: the chosen methods whose stored parts are all indexed (a
    fusion needs each of its parts), and the others, both in the order chosen."""
    methods = [m for m in chosen if set(registry.get(m).indexed_parts) <= stored]
    return methods, [m for m in chosen if m not in methods]


def narrowed_default(chosen: Sequence[str], default: Sequence[str], stored: set[str]) -> list[str]:
    """The selection to show: the untouched default (``chosen == default``) narrowed to the
    methods indexed here, so a store without one of them opens on a ranking, not on a
    warning; a selection the user made, or a default none of which is indexed, as it is."""
    if list(chosen) != list(default):
        return list(chosen)
    methods, _ = runnable(chosen, stored)
    return methods or list(chosen)


def demo_query_misfits(
    query: str, demo_query: str, docs: Iterable[str], demo: Iterable[str]
) -> bool:
    """True when the query is the demo's and none of the demo documents is in scope
    (the pump demo's query means nothing to other documents)."""
    return query == demo_query and not set(docs) & set(demo)


def reconcile_rerank(state: State, key: str, methods: Sequence[str]) -> None:
    """The method whose candidates are reranked: the last shown one unless still shown."""
    if state.get(key) not in methods:
        state[key] = methods[-1]


@dataclass(frozen=True, slots=True)
class Picks:
    """The chunks offered for inspection: ``hits`` by chunk id (every method's wide
    results), ``labels`` in the order offered (the ranked chunks, then the reranked
    extras), ``moved`` the one that moved most between methods (the default pick)."""

    hits: dict[str, Any]
    labels: dict[str, str]
    moved: str


def reranked(
    wide: Comparison, stage: str, k: int, *, docs: Any, weights: RerankWeights
) -> RerankResult:
    """The second stage over every candidate ``stage`` ranked (its score curve), reading
    only the records that can reach the new top ``k`` (``core.retrieve.rerank.rerank_top``)."""
    return rerank_top(
        wide.curves.get(stage) or [h.score for h in wide.results[stage]],
        lambda ranks: hits_at(wide, stage, ranks),
        k=k, method=stage, docs=docs, weights=weights,
    )  # fmt: skip


def shown(wide: Comparison, extra: dict[str, Any]) -> Comparison:
    """The comparison as shown: its top ``k`` per method, and the rank changes of those
    and of ``extra`` (the reranked chunks shown beyond them, by chunk id)."""
    return with_changes(wide, list(extra))


def picks(
    wide: Any, changes: dict[str, Any], extra: set[str], label: Callable[[Any], str],
    more: dict[str, Any] | None = None,
) -> Picks:  # fmt: skip
    """``Picks`` of a comparison: ``changes`` are the shown chunks' rank changes by id,
    ``extra`` the reranked chunks shown beyond them (their hits in ``more`` when the
    methods' results do not hold them), ``label`` names a hit."""
    hits = {**(more or {}), **{h.chunk_id: h for m in wide.methods for h in wide.results[m]}}
    order = [*changes, *sorted(extra - set(changes))]
    labels = {c: label(hits[c]) for c in order}
    moved = sorted(labels, key=lambda c: -abs(changes[c].delta or 0) if c in changes else 0)
    return Picks(hits=hits, labels=labels, moved=moved[0] if moved else "")


def reconcile_selected(state: State, key: str, offered: Picks) -> str:
    """The inspected chunk: kept while offered, else the one that moved most."""
    if state.get(key) not in offered.labels:
        state[key] = offered.moved
    return str(state[key])


def score_marks(wide: Any, change: Any, label: str) -> list[tuple[str, int, float, str]]:
    """``(method, rank, score, label)`` of the selected chunk under each method that
    ranks it (none without its rank change)."""
    if change is None:
        return []
    return [
        (m, change.ranks[m], change.scores[m], label)
        for m in wide.methods
        if change.ranks[m] is not None
    ]


def score_curves(wide: Any) -> tuple[dict[str, list[float]], dict[str, registry.ScoreScale]]:
    """Each method's scores in rank order, as deep as it was ranked (its top ``k``
    without a curve), and the scale they are on (its spec's)."""
    held = getattr(wide, "curves", None) or {}
    curves = {m: list(held.get(m) or [h.score for h in wide.results[m]]) for m in wide.methods}
    return curves, {m: registry.get(m).score for m in wide.methods}


def slope_ranks(wide: Any, labels: dict[str, str]) -> dict[str, dict[str, int | None]]:
    """The ranks of every offered chunk under each method, for the slope chart."""
    return {c.chunk_id: c.ranks for c in wide.rank_changes if c.chunk_id in labels}
