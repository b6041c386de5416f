"""The method registry: every retrieval method, registered once, read everywhere.

The built-in entries are registered by the package (``core.methods``) when it is first
imported; this module holds the entries and never imports a method module itself
(fusions are built from their name by ``fusion.py``, which needs nothing of it).

The CLI choices, the index run, the comparison, the evaluation, the charts and the pages
ask this registry which methods exist, what each needs and what its score means, so a new
method is one module and one ``register`` call. Built-in entries: ``naive``, ``late``,
``contextual`` (``dense.py``), ``bm25``, ``contextual-bm25`` (``lexical.py``). A fusion
``hybrid(a,b,...;rrf60)`` or ``hybrid(a,b;w0.7,0.3)`` is built from its name on demand
(``fusion.py``), so any combination of registered methods is a method.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from core.methods.fusion import fusion_spec
from core.methods.spec import THEIR_RANK, THEIRS, MethodSpec, UnknownMethodError
from core.registry import Registry

# The method lists particular views start on (a pick that is not registered, or not
# runnable, is simply left out). The defaults every command and page starts on (the
# methods evaluated, compared, swept, run beside an imported retriever, embedded) are in
# ``core.defaults``.
FUSED = ("late", "bm25")  # the parts the Add-a-hybrid builder starts on
SUGGESTED_FUSIONS = (
    "hybrid(late,bm25;rrf60)",
    "hybrid(naive,bm25;rrf60)",
    "hybrid(contextual,contextual-bm25;rrf60)",
)
PAIRED = ("naive", "late")  # the pair read first: the scatter, the deltas, the triage


class BenchMethods(NamedTuple):
    """The methods the benchmark times; its case keys and labels are these names."""

    alone: str  # chunks encoded alone: against the model's own library, and the store cases'
    windowed: str  # late chunking: against ``alone``, over policies, its memory, attribution
    lexical: str  # the lexical and failure-signal cases


BENCHED = BenchMethods(alone="naive", windowed="late", lexical="bm25")  # scale: all three


def _check_new(spec: MethodSpec, others: Mapping[str, MethodSpec]) -> None:
    if spec.name.startswith("hybrid("):
        raise ValueError("hybrid(...) names are built from their parts, not registered")


_REGISTRY: Registry[MethodSpec] = Registry("method", check=_check_new)


def register(spec: MethodSpec, *, replace: bool = False) -> MethodSpec:
    """Add ``spec``; a second entry of the same name is refused unless ``replace``."""
    return _REGISTRY.register(spec, replace=replace)


register_builtins = _REGISTRY.register_all
load_plugins = _REGISTRY.load_plugins  # the chunkscope.methods entry points (core.registry)
unregister = _REGISTRY.unregister  # tests that register a toy method clean up with this


def base_methods() -> tuple[str, ...]:
    """Registered (stored) method names, simpler first: the default choices everywhere
    (an external retriever ranks only its own logged queries, so it is never offered)."""
    ordered = _REGISTRY.ordered(lambda s: s.order)
    return tuple(s.name for s in ordered if s.family != "external")


EXTERNAL_ORDER = -100  # deltas read "our method minus yours": positive where ours did better
EXTERNAL_COLOUR = "#6b4c9a"


def external_spec(name: str, *, scored: bool) -> MethodSpec:
    """The spec of the external retriever ``name`` of an imported run, registered
    nowhere (a loaded run answers for it: ``core.evaluate.EvalRun.method``); its scores
    are the logged ones when ``scored``, else ``1 / rank``. A registered method's name,
    or a name that is not letters, digits, '_', '-' or '.', is refused
    (``UnknownMethodError``, one line)."""
    known = _REGISTRY.get(name)
    if known is not None and known.family != "external":
        raise UnknownMethodError(f"{name!r} is one of our methods: name your retriever otherwise")
    if not name or name.startswith("hybrid") or not all(c.isalnum() or c in "_-." for c in name):
        raise UnknownMethodError(
            f"a retriever's name is letters, digits, '_', '-' or '.', got {name!r}"
        )
    return MethodSpec(
        name=name,
        family="external",
        score=THEIRS if scored else THEIR_RANK,
        summary="your retriever, as its log ranked each query (nothing beyond its depth)",
        colour=EXTERNAL_COLOUR,
        order=EXTERNAL_ORDER,
    )


def register_external(name: str, *, scored: bool) -> MethodSpec:
    """Register (or replace) ``external_spec(name, scored=scored)``: what an import does
    while it scores the log beside our methods (reading a saved run registers nothing)."""
    return _REGISTRY.register(external_spec(name, scored=scored), replace=True)


def get(name: str) -> MethodSpec:
    """The spec of a registered method or of a fusion name; ``UnknownMethodError`` else."""
    name = name.strip()
    if name in _REGISTRY:
        return _REGISTRY[name]
    if name.startswith("hybrid"):
        return fusion_spec(name, known=_REGISTRY)
    raise UnknownMethodError(
        f"unknown method {name!r}: use {', '.join(base_methods())} or "
        "hybrid(A,B;rrf60) / hybrid(A,B;w0.5,0.5) of them"
    )


def embedding_methods() -> tuple[str, ...]:
    """Registered methods whose vectors ``core.embed`` makes (those with an
    ``embedding``), simpler first."""
    return tuple(m for m in base_methods() if _REGISTRY[m].embedding is not None)


def embedding_method(*, windowed: bool = False, prefixed: bool = False) -> MethodSpec:
    """The simplest registered method whose embedding has exactly these flags (the late
    attribution labels itself with the windowed one, the prefix attribution with the
    prefixed one); ``UnknownMethodError`` when none has."""
    for name in embedding_methods():
        embedding = _REGISTRY[name].embedding
        if embedding is not None and (embedding.windowed, embedding.prefixed) == (
            windowed,
            prefixed,
        ):
            return _REGISTRY[name]
    raise UnknownMethodError(
        f"no registered dense method has windowed={windowed} and prefixed={prefixed}"
    )


def split_names(text: str) -> list[str]:
    """``"naive,hybrid(late,bm25;rrf60)"`` -> ``["naive", "hybrid(late,bm25;rrf60)"]``:
    commas inside parentheses belong to the fusion."""
    names, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth < 0:
                raise UnknownMethodError(f"unbalanced ')' in the method list {text!r}")
        elif ch == "," and depth == 0:
            names.append(text[start:i])
            start = i + 1
    if depth:
        raise UnknownMethodError(f"unbalanced '(' in the method list {text!r}")
    names.append(text[start:])
    return [n.strip() for n in names if n.strip()]


def parse_methods(text: str | Iterable[str]) -> tuple[str, ...]:
    """Canonical method names, once each, in the order given; ``UnknownMethodError`` on
    a name that is not a method (or an empty list)."""
    raw = split_names(text) if isinstance(text, str) else [str(t).strip() for t in text]
    names = tuple(dict.fromkeys(get(n).name for n in raw if n))
    if not names:
        raise UnknownMethodError(f"no method named in {text!r}: use {', '.join(base_methods())}")
    return names


def needs_indexing(methods: Sequence[str]) -> tuple[str, ...]:
    """The stored methods that ``methods`` need (fusions by their parts), once each."""
    return tuple(dict.fromkeys(p for m in methods for p in get(m).indexed_parts))


def delta_pairs(methods: Sequence[str]) -> list[tuple[str, str]]:
    """``(simpler, elaborate)`` pairs, each method against every other, simpler first by
    the registry's ``order`` (then the order given)."""
    position = {m: (get(m).order, i) for i, m in enumerate(methods)}
    ordered = sorted(methods, key=position.__getitem__)
    return [(a, b) for i, b in enumerate(ordered) for a in ordered[:i]]
