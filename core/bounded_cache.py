"""One bounded, thread-safe, least-recently-used cache for the process-wide memos of core.

A ``BoundedCache`` keeps at most ``max_entries`` entries and, when ``max_bytes`` is given,
at most that many bytes in all (each value weighed by ``size_of``). Past a bound the least
recently used entries leave first: a ``get`` or ``get_or_compute`` that finds its key,
and every ``put``, make that key the most recent. ``peek`` and ``in`` look without
touching the order. A value heavier than ``max_bytes`` on its own is not kept (``put``
says so), and a cache of ``max_entries < 1`` keeps nothing.

Every method takes the cache's lock, so the workbench's threads may share one. On a miss
``get_or_compute`` computes outside the lock, once per key: another thread asking for the
same key meanwhile waits and takes that value (different keys compute in parallel). If the
compute raises, nothing is kept and a waiting thread computes in turn.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

__all__ = ["BoundedCache", "CacheStats"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
_MISSING = object()


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheStats:
    """What a cache holds and has done since it was made.

    ``entries`` and ``nbytes`` (bytes, 0 when sizes are not weighed) now; ``hits`` and
    ``misses`` of ``get`` and ``get_or_compute`` (a miss of ``get_or_compute`` is one
    compute); ``evictions``: entries pushed out by a bound (``clear`` evicts none)."""

    entries: int
    nbytes: int
    hits: int
    misses: int
    evictions: int


class BoundedCache(Generic[K, V]):
    """A least-recently-used map bounded in entries and, optionally, bytes (see the
    module docstring)."""

    __slots__ = (
        "_max_entries", "_max_bytes", "_size_of", "_entries", "_sizes", "_nbytes",
        "_lock", "_pending", "_hits", "_misses", "_evictions",
    )  # fmt: skip

    def __init__(
        self,
        max_entries: int,
        *,
        max_bytes: int | None = None,
        size_of: Callable[[V], int] | None = None,
    ) -> None:
        """``max_entries``: entries kept at most; ``max_bytes`` (bytes) bounds the sum of
        ``size_of(value)`` over the entries, and needs ``size_of``."""
        if (max_bytes is None) != (size_of is None):
            raise ValueError("give max_bytes and size_of together")
        self._max_entries = max_entries
        self._max_bytes = max_bytes
        self._size_of = size_of
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._sizes: dict[K, int] = {}
        self._nbytes = 0
        self._lock = threading.Lock()
        self._pending: dict[K, threading.Event] = {}
        self._hits = 0
        self._misses = 0
        self._evictions = 0

    @property
    def max_entries(self) -> int:
        """Entries kept at most."""
        return self._max_entries

    @property
    def max_bytes(self) -> int | None:
        """Bytes kept at most (None: not bounded by size)."""
        return self._max_bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is kept (its place in the order is left alone)."""
        with self._lock:
            return key in self._entries

    def keys(self) -> list[K]:
        """The keys, least recently used first."""
        with self._lock:
            return list(self._entries)

    def peek(self, key: K) -> V | None:
        """The value of ``key``, or None; neither its place nor the counts change."""
        with self._lock:
            return self._entries.get(key)

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recent), or None on a miss."""
        with self._lock:
            found = self._hit(key)
            if found is _MISSING:
                self._misses += 1
                return None
            return cast(V, found)

    def put(self, key: K, value: V) -> bool:
        """Keep ``value`` as the most recent entry, then evict the least recent past the
        bounds; False (and the cache unchanged) when it cannot be kept at all."""
        size = self._size_of(value) if self._size_of is not None else 0
        with self._lock:
            if self._max_entries < 1 or (self._max_bytes is not None and size > self._max_bytes):
                return False
            self._drop(key)
            self._entries[key] = value
            self._sizes[key] = size
            self._nbytes += size
            self._evict()
            return True

    def get_or_compute(self, key: K, compute: Callable[[], V]) -> V:
        """The value of ``key``, or ``compute()`` kept under it (one compute at a time per
        key; ``compute`` must not ask this cache for the same key)."""
        while True:
            with self._lock:
                found = self._hit(key)
                if found is not _MISSING:
                    return cast(V, found)
                pending = self._pending.get(key)
                if pending is None:
                    pending = self._pending[key] = threading.Event()
                    self._misses += 1
                    break
            pending.wait()  # another thread computes it: take its value, or compute in turn
        try:
            value = compute()
            self.put(key, value)
            return value
        finally:
            with self._lock:
                del self._pending[key]
            pending.set()

    def clear(self) -> None:
        """Forget every entry (the counts stay)."""
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self._nbytes = 0

    def stats(self) -> CacheStats:
        """A snapshot of the cache's size and counts."""
        with self._lock:
            return CacheStats(
                entries=len(self._entries), nbytes=self._nbytes, hits=self._hits,
                misses=self._misses, evictions=self._evictions,
            )  # fmt: skip

    def _hit(self, key: K) -> object:
        """The value of ``key`` made the most recent and counted as a hit, or
        ``_MISSING``; the caller holds the lock."""
        found = self._entries.get(key, _MISSING)
        if found is not _MISSING:
            self._entries.move_to_end(key)
            self._hits += 1
        return found

    def _drop(self, key: K) -> None:
        """Forget ``key`` if kept; the caller holds the lock."""
        if self._entries.pop(key, _MISSING) is not _MISSING:
            self._nbytes -= self._sizes.pop(key)

    def _evict(self) -> None:
        """Evict the least recent entries past the bounds; the caller holds the lock."""
        while len(self._entries) > self._max_entries or (
            self._max_bytes is not None and self._nbytes > self._max_bytes
        ):
            oldest, _ = self._entries.popitem(last=False)
            self._nbytes -= self._sizes.pop(oldest)
            self._evictions += 1
