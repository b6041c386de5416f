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

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from core.chunk import builtin
from core.chunk.policy_spec import OPTIONS, PieceFn, PolicyError, PolicyOption, PolicySpec

if TYPE_CHECKING:
    from core.types import ChunkPolicy

__all__ = ["OPTIONS", "PieceFn", "PolicyError", "PolicyOption", "PolicySpec"]

_REGISTRY: dict[str, PolicySpec] = {}
_LOADED = False


def _load_builtins() -> None:
    global _LOADED
    if not _LOADED:
        _LOADED = True
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


def policy_from_dict(data: dict[str, object]) -> ChunkPolicy:
    """A stored policy (``ChunkPolicy.to_dict``), checked against the registry."""
    from core.types import ChunkPolicy

    policy = ChunkPolicy.from_dict(data)
    check_policy(policy)
    return policy


def check_policy(policy: ChunkPolicy) -> ChunkPolicy:
    """``policy`` if the registry knows its name, it counts in the policy's unit and
    accepts every option that is on; else ``ValueError`` saying which."""
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
    return policy
