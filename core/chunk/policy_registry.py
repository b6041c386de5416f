"""The policy registry: every chunking policy, registered once, read everywhere.

A policy is a ``PolicySpec``: its name, the units it counts in with a default size and
overlap for each, the function that cuts a document's text into pieces, the options it
accepts and a one-line summary. The CLI choices, the policy controls of the pages, the
sweep grid and the tests ask this registry which policies exist, so a new policy is one
module and one ``register`` call. Built-in entries: ``fixed``, ``sentence`` and
``structure`` (``builtin.py``; their modules document their rules), registered by
``core.chunk`` when it is first imported (``core.registry``).

Live policies (``KIND:TARGET``, ``core.chunk.live_names``) are resolved on first use: a
resolver registered for the kind (``add_resolver``; ``core.imported`` registers
``langchain``, ``llamaindex``, ``chonkie`` and ``py``) builds the spec, which is then
registered under its canonical name like any other, so every command and page that takes
a policy name takes these too.

Options are ``ChunkPolicy`` fields a policy may accept (``OPTIONS``); each is part of
the policy's key (its ``suffix``) and of its ``to_dict`` only when on, so a policy
without options keeps the key and the records it always had.
"""

from __future__ import annotations

from collections.abc import Callable

from core.chunk.live_names import LiveName, is_live, parse_live_name
from core.chunk.policy_spec import OPTIONS, PieceFn, PolicyError, PolicyOption, PolicySpec
from core.provenance.types import ChunkPolicy
from core.registry import Registry

__all__ = ["OPTIONS", "PieceFn", "PolicyError", "PolicyOption", "PolicySpec"]

_REGISTRY: Registry[PolicySpec] = Registry("policy")
_RESOLVERS: dict[str, Callable[[LiveName], PolicySpec]] = {}


def add_resolver(kind: str, resolve: Callable[[LiveName], PolicySpec]) -> None:
    """Let ``KIND:TARGET`` names of ``kind`` resolve: ``resolve`` builds the spec of a
    parsed name (``PolicyError``, one line, for a missing library or an unknown class)."""
    _RESOLVERS[kind] = resolve


def live_kinds() -> tuple[str, ...]:
    """The kinds of live policy a name may start with (``langchain``, ``py``, ...)."""
    return tuple(_RESOLVERS)


def _resolve(name: str) -> PolicySpec | None:
    """The spec of ``name``: registered, else a live name resolved and registered."""
    spec = _REGISTRY.get(name)
    if spec is not None or not is_live(name):
        return spec
    live = parse_live_name(name)
    spec = _REGISTRY.get(live.name)
    if spec is not None:
        return spec
    resolve = _RESOLVERS.get(live.kind)
    if resolve is None:
        kinds = ", ".join(f"{k}:" for k in live_kinds()) or "none (import core.imported)"
        raise PolicyError(f"unknown kind of splitter {live.kind + ':'!r}: use one of {kinds}")
    spec = resolve(live)
    return _REGISTRY.register(spec, replace=True)


def register(spec: PolicySpec, *, replace: bool = False) -> PolicySpec:
    """Add ``spec``; a second entry of the same name is refused unless ``replace``."""
    return _REGISTRY.register(spec, replace=replace)


register_builtins = _REGISTRY.register_all
load_plugins = _REGISTRY.load_plugins  # the chunkscope.policies entry points (core.registry)
unload_plugins = _REGISTRY.unload_plugins


def find(name: str) -> PolicySpec | None:
    """The spec registered as ``name``, or None."""
    return _REGISTRY.get(name)


def fixed_names() -> tuple[str, ...]:
    """The registered policies whose boundaries are fixed (imported chunk sets)."""
    return tuple(n for n, s in _REGISTRY.items() if s.fixed_boundaries)


def unregister_fixed(name: str) -> None:
    """Remove an imported set's policy (a built-in of that name is never removed)."""
    spec = _REGISTRY.get(name)
    if spec is not None and spec.fixed_boundaries:
        _REGISTRY.unregister(name)


unregister = _REGISTRY.unregister  # tests that register a toy policy clean up with this
registered = _REGISTRY.registered  # ``spec`` registered for the duration of a ``with`` block


def policy_names() -> tuple[str, ...]:
    """Registered policy names, simpler first: the choices everywhere."""
    return tuple(s.name for s in _REGISTRY.ordered(lambda s: s.order))


def all_policies() -> tuple[PolicySpec, ...]:
    """Every registered spec, in ``policy_names`` order."""
    return tuple(_REGISTRY[n] for n in policy_names())


def get(name: str) -> PolicySpec:
    """The spec of a registered policy or a live one (resolved on first use);
    ``PolicyError`` (one line) for any other name."""
    spec = _resolve(name)
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
    policy = ChunkPolicy.from_dict(data)
    check_policy(policy)
    return policy


def check_policy(policy: ChunkPolicy) -> ChunkPolicy:
    """``policy`` if the registry knows its name, it counts in the policy's unit and
    accepts every option that is on; else ``ValueError`` saying which (a live name is
    resolved first)."""
    spec = _resolve(policy.name)
    if spec is None:
        raise ValueError(f"unknown policy {policy.name!r}")
    if policy.unit not in spec.sizes:
        raise ValueError(f"the {spec.name} policy counts in {', '.join(spec.units)}")
    for opt in OPTIONS:
        if getattr(policy, opt.name) and opt.name not in spec.options:
            raise ValueError(f"the {spec.name} policy does not take {opt.flag}")
    return policy
