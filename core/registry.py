"""One small generic registry: named specs registered once, read everywhere.

Each axis that grows has one (docs/layout.md): formats (``core.formats.format_registry``),
chunking policies (``core.chunk.policy_registry``) and retrieval methods
(``core.methods.method_registry``). A registry is a read-only mapping from name to spec,
in registration order; a second entry of one name is refused unless it replaces the first
on purpose. Built-in entries are registered the same way for every axis: the stage's
package registers its ``builtin_specs()`` when it is first imported, so importing any part
of the stage gives the full registry and the registry module itself imports no entry's
module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Generic, Protocol, TypeVar

PLUGIN_GROUPS: dict[str, str] = {
    "policy": "chunkscope.policies",
    "method": "chunkscope.methods",
    "format": "chunkscope.formats",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Plugin:
    """One entry point loaded into a registry: its ``kind`` (``policy``, ``method``,
    ``format``), its entry point ``name``, the ``package`` (distribution) it came from,
    the ``entries`` it registered, and ``error`` (one line) when it could not load."""

    kind: str
    name: str
    package: str
    entries: tuple[str, ...] = ()
    error: str | None = None


_PLUGINS: dict[tuple[str, str, str], Plugin] = {}


def plugins() -> tuple[Plugin, ...]:
    """Every plugin loaded so far, in load order."""
    return tuple(_PLUGINS.values())


class Named(Protocol):
    @property
    def name(self) -> str: ...


S = TypeVar("S", bound=Named)


class Registry(Mapping[str, S], Generic[S]):
    """Specs by name, in registration order. ``kind`` names an entry in messages
    (``"method"``); ``check(spec, entries)`` may refuse a new entry with ``ValueError``
    (a suffix another format claims, a reserved name), before it is added."""

    def __init__(self, kind: str, *, check: Callable[[S, Mapping[str, S]], None] | None = None):
        self.kind = kind
        self._check = check
        self._entries: dict[str, S] = {}

    def __getitem__(self, name: str) -> S:
        return self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._entries)})"

    def register(self, spec: S, *, replace: bool = False) -> S:
        """Add ``spec``; ``ValueError`` for a name already registered (unless
        ``replace``) or one ``check`` refuses."""
        if spec.name in self._entries and not replace:
            raise ValueError(f"{self.kind} {spec.name!r} is already registered")
        if self._check is not None:
            others = {n: s for n, s in self._entries.items() if n != spec.name}
            self._check(spec, others)
        self._entries[spec.name] = spec
        return spec

    def register_all(self, specs: Iterable[S]) -> None:
        """Register built-in entries (the stage's package calls this once)."""
        for spec in specs:
            self.register(spec)

    def unregister(self, name: str) -> None:
        """Remove an entry (tests that register a toy one clean up with this)."""
        self._entries.pop(name, None)

    @contextmanager
    def registered(self, spec: S) -> Iterator[S]:
        """``spec`` registered for the duration of a ``with`` block."""
        self.register(spec)
        try:
            yield spec
        finally:
            self.unregister(spec.name)

    def load_plugins(self) -> tuple[Plugin, ...]:
        """Register the entries of every installed package's entry point in this kind's
        group (``PLUGIN_GROUPS``); returns what was loaded (see the module doc)."""
        group = PLUGIN_GROUPS.get(self.kind)
        if group is None:
            return ()
        loaded = []
        for point in entry_points(group=group):
            package = point.dist.name if point.dist is not None else point.value.split(":")[0]
            try:
                specs = _specs_of(point.load())
                for spec in specs:
                    self.register(spec, replace=spec.name in self and _is_plugin(self, spec))
                plugin = Plugin(kind=self.kind, name=point.name, package=package,
                                entries=tuple(spec.name for spec in specs))  # fmt: skip
            except Exception as exc:  # an installed package's own code: kept, told in one line
                said = str(exc).strip().splitlines()
                error = f"{type(exc).__name__}: {said[0]}" if said else type(exc).__name__
                plugin = Plugin(kind=self.kind, name=point.name, package=package, error=error)
            _PLUGINS[(self.kind, package, point.name)] = plugin
            loaded.append(plugin)
        return tuple(loaded)

    def unload_plugins(self, package: str) -> None:
        """Remove what ``package`` registered here, and its records (a test that installs
        a toy package cleans up with this)."""
        for key, plugin in list(_PLUGINS.items()):
            if plugin.kind == self.kind and plugin.package == package:
                for name in plugin.entries:
                    self.unregister(name)
                del _PLUGINS[key]

    def ordered(self, key: Callable[[S], Any]) -> tuple[S, ...]:
        """The entries sorted by ``key`` (then by name)."""
        return tuple(sorted(self._entries.values(), key=lambda s: (key(s), s.name)))


def _specs_of(found: Any) -> list[Any]:
    """An entry point's object as specs: a spec, a sequence of them, or a callable
    returning either."""
    if callable(found) and not hasattr(found, "name"):
        found = found()
    specs = list(found) if isinstance(found, (list, tuple)) else [found]
    for spec in specs:
        if not isinstance(getattr(spec, "name", None), str):
            raise TypeError(f"{spec!r} is not a spec with a name")
    return specs


def _is_plugin(registry: Registry[Any], spec: Any) -> bool:
    """Whether ``spec``'s name was registered by a plugin of this registry before (loading
    twice replaces it; a plugin never replaces a built-in)."""
    return any(spec.name in p.entries for p in _PLUGINS.values() if p.kind == registry.kind)
