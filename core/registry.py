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
from typing import Any, Generic, Protocol, TypeVar


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

    def ordered(self, key: Callable[[S], Any]) -> tuple[S, ...]:
        """The entries sorted by ``key`` (then by name)."""
        return tuple(sorted(self._entries.values(), key=lambda s: (key(s), s.name)))
