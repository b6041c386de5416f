"""The policy registry: every chunking policy, registered once, read everywhere.

A policy is a ``PolicySpec``: its name, the units it counts in with a default size and
overlap for each, the function that cuts a document's text into pieces, the options it
accepts and a one-line summary. The CLI choices, the policy controls of the pages, the
sweep grid and the tests ask this registry which policies exist, so a new policy is one
module and one ``register`` call. Built-in entries: ``fixed``, ``sentence`` and
``structure`` (their modules document their rules).

Options are ``ChunkPolicy`` fields a policy may accept (``OPTIONS``); each is part of
the policy's key (its ``suffix``) and of its ``to_dict`` only when on, so a policy
without options keeps the key and the records it always had.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import ChunkscopeError

if TYPE_CHECKING:
    from core.chunk.analysis import DocAnalysis
    from core.chunk.annotate import BlockIndex
    from core.chunk.spans import Piece
    from core.types import ChunkPolicy, PolicyUnit

PieceFn = Callable[["DocAnalysis", "BlockIndex", "ChunkPolicy"], "list[Piece]"]


class PolicyError(ChunkscopeError):
    """A policy that cannot be built from what the user asked for."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyOption:
    """A boolean ``ChunkPolicy`` field some policies accept: ``suffix`` ends the policy
    key when it is on, ``flag`` is its CLI flag, ``label``/``help`` its checkbox."""

    name: str
    suffix: str
    flag: str
    label: str
    help: str


OPTIONS: tuple[PolicyOption, ...] = (
    PolicyOption(
        name="table_header_prefix",
        suffix="thp",
        flag="--table-header-prefix",
        label="Table header prefix",
        help="Pieces of a split table leave room for its header rows, which the encoder "
        "reads first.",
    ),
    PolicyOption(
        name="skip_garbled",
        suffix="ng",
        flag="--skip-garbled",
        label="Leave garbled blocks out",
        help="Blocks flagged garbled (glyph soup, unmapped glyphs) are in no chunk, and no "
        "chunk spans across one.",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicySpec:
    """One registered policy (see the module docstring).

    ``sizes`` maps each unit the policy counts in (``chars``, ``tokens``, ``sentences``)
    to its default ``(size, overlap)`` in that unit; ``unit`` is the default unit.
    ``pieces`` returns the stripped, exact spans of the chunks of one document (any
    order; ``chunk_document`` sorts them and builds the records). ``options`` names the
    ``OPTIONS`` it accepts; ``leaves_out`` the block kinds no chunk of it holds (its
    coverage excludes them). ``order`` sorts policies in lists (simpler first).
    ``fixed_boundaries``: the pieces do not depend on size or overlap (an imported chunk
    set, ``core.imported``): its one size is its longest chunk, and no control offers
    another.
    """

    name: str
    summary: str
    sizes: dict[PolicyUnit, tuple[int, int]]
    unit: PolicyUnit
    pieces: PieceFn
    options: frozenset[str] = frozenset()
    leaves_out: frozenset[str] = frozenset()
    overlap_help: str = ""
    order: int = 100
    fixed_boundaries: bool = False

    def __post_init__(self) -> None:
        if not self.name or not all(ch.isalnum() or ch == "_" for ch in self.name):
            raise ValueError(f"a policy name is letters, digits and '_': {self.name!r}")
        if self.unit not in self.sizes:
            raise ValueError(f"policy {self.name}: default unit {self.unit!r} has no sizes")
        for unit, (size, overlap) in self.sizes.items():
            if size < 1 or not 0 <= overlap < size:
                raise ValueError(f"policy {self.name}: bad default sizes for {unit}")
        if unknown := self.options - {o.name for o in OPTIONS}:
            raise ValueError(f"policy {self.name}: unknown options {sorted(unknown)}")

    @property
    def units(self) -> tuple[PolicyUnit, ...]:
        """The units it counts in, in the order of ``sizes`` (the order of the choices)."""
        return tuple(self.sizes)

    def default_policy(self) -> ChunkPolicy:
        """The policy at its default unit and sizes, no option on."""
        from core.types import ChunkPolicy

        size, overlap = self.sizes[self.unit]
        return ChunkPolicy(name=self.name, size=size, overlap=overlap, unit=self.unit)


_REGISTRY: dict[str, PolicySpec] = {}
_LOADED = False


def _load_builtins() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
        from core.chunk import builtin

        for spec in builtin.SPECS:
            _REGISTRY.setdefault(spec.name, spec)


def register(spec: PolicySpec, *, replace: bool = False) -> PolicySpec:
    """Add ``spec``; a second entry of the same name is refused unless ``replace``."""
    _load_builtins()
    if spec.name in _REGISTRY and not replace:
        raise ValueError(f"policy {spec.name!r} is already registered")
    _REGISTRY[spec.name] = spec
    return spec


def find(name: str) -> PolicySpec | None:
    """The spec registered as ``name``, or None."""
    _load_builtins()
    return _REGISTRY.get(name)


def fixed_names() -> tuple[str, ...]:
    """The registered policies whose boundaries are fixed (imported chunk sets)."""
    _load_builtins()
    return tuple(n for n, s in _REGISTRY.items() if s.fixed_boundaries)


def unregister_fixed(name: str) -> None:
    """Remove an imported set's policy (a built-in of that name is never removed)."""
    spec = _REGISTRY.get(name)
    if spec is not None and spec.fixed_boundaries:
        del _REGISTRY[name]


def unregister(name: str) -> None:
    """Remove a registered policy (tests that register a toy one clean up with this)."""
    _REGISTRY.pop(name, None)


@contextmanager
def registered(spec: PolicySpec) -> Iterator[PolicySpec]:
    """``spec`` registered for the duration of a ``with`` block."""
    register(spec)
    try:
        yield spec
    finally:
        unregister(spec.name)


def policy_names() -> tuple[str, ...]:
    """Registered policy names, simpler first: the choices everywhere."""
    _load_builtins()
    return tuple(sorted(_REGISTRY, key=lambda n: (_REGISTRY[n].order, n)))


def all_policies() -> tuple[PolicySpec, ...]:
    """Every registered spec, in ``policy_names`` order."""
    return tuple(_REGISTRY[n] for n in policy_names())


def get(name: str) -> PolicySpec:
    """The spec of a registered policy; ``PolicyError`` (one line) for any other name."""
    _load_builtins()
    spec = _REGISTRY.get(name)
    if spec is None:
        raise PolicyError(f"unknown policy {name!r}: use one of {', '.join(policy_names())}")
    return spec


def option(name: str) -> PolicyOption:
    """The ``OPTIONS`` entry of that ``ChunkPolicy`` field."""
    return next(o for o in OPTIONS if o.name == name)


def accepting(option_name: str) -> tuple[str, ...]:
    """The registered policies that accept the option."""
    return tuple(s.name for s in all_policies() if option_name in s.options)


def all_units() -> tuple[str, ...]:
    """Every unit some registered policy counts in (the CLI's ``--unit`` choices)."""
    return tuple(dict.fromkeys(u for s in all_policies() for u in s.sizes))


def check_policy(policy: ChunkPolicy) -> None:
    """``ValueError`` unless the registry knows the policy's name, it counts in the
    policy's unit, and it accepts every option that is on (``ChunkPolicy`` calls this)."""
    spec = _REGISTRY.get(policy.name) if _LOADED else None
    if spec is None:
        _load_builtins()
        spec = _REGISTRY.get(policy.name)
    if spec is None:
        raise ValueError(f"unknown policy {policy.name!r}")
    if policy.unit not in spec.sizes:
        raise ValueError(f"the {spec.name} policy counts in {', '.join(spec.units)}")
    for opt in OPTIONS:
        if getattr(policy, opt.name) and opt.name not in spec.options:
            raise ValueError(f"the {spec.name} policy does not take {opt.flag}")
