"""Vector cache: content-addressed, so moving a slider re-embeds only new spans.

A vector is keyed by what determines it: the model (and its sequence limit), the method,
the document's ``sha256``, the character span, and the method's variant (late: the
window policy; contextual: a hash of the prefix that was encoded). The chunk id is *not*
part of the key: the same span under another chunking policy reuses the vector.

Late chunking also keeps, per (model, document, window policy), the owned token states of
the most recently used documents (float32, ``n_tokens x dim``; at most ``state_docs``
documents and ``state_bytes`` bytes in all), so a new span of a seen document costs only
pooling, no forward pass.

In memory by default; with ``folder`` each vector is also written to
``<folder>/<key hash>.npz`` (the vector plus its record fields) and read back on a miss,
and late token states go to a ``core.embed.states.StateStore`` in ``<folder>/states/``
(float16, at most ``state_disk_bytes`` (default: ``states.default_max_bytes()``),
oldest first out; ``state_folder`` puts them
elsewhere, or on disk without a vector folder). A state read from disk is float16: its
pooled vectors agree with fresh ones to a cosine of 0.9999 or more, not bit for bit.

``shared_cache()`` is the one on-disk cache every page and command uses when it is not
given another: ``$CHUNKSCOPE_VECTOR_CACHE`` (a folder; ``off`` keeps no cache), else
``vectors/`` inside the store folder (``core.config.resolve_store``), else, for a Chroma
server, ``vectors/`` under the user's cache folder. A vector is then computed once per
(model, method, span, variant) and read back by any later run, in any process.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from core import settings
from core.bounded_cache import BoundedCache
from core.config import resolve_store
from core.embed.records import ChunkVector
from core.embed.states import StateStore
from core.errors import ChunkscopeError

VECTOR_DIRNAME = "vectors"


@dataclass(frozen=True, slots=True, kw_only=True)
class CacheKey:
    model: str
    method: str
    doc_sha256: str
    char_start: int
    char_end: int
    variant: str
    max_tokens: int

    @property
    def digest(self) -> str:
        raw = "\x1f".join(
            str(x)
            for x in (
                self.model,
                self.method,
                self.doc_sha256,
                self.char_start,
                self.char_end,
                self.variant,
                self.max_tokens,
            )
        )
        return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()


class VectorCache:
    """Thread-safe cache of :class:`ChunkVector` records and late token states."""

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        state_docs: int = 4,
        state_bytes: int = 512 * 2**20,
        state_folder: str | os.PathLike[str] | None = None,
        state_disk_bytes: int | None = None,
    ):
        self.folder = Path(folder) if folder is not None else None
        if state_folder is None and self.folder is not None:
            state_folder = self.folder / "states"
        self.state_store = (
            StateStore(state_folder, max_bytes=state_disk_bytes) if state_folder else None
        )
        self.hits = 0
        self.misses = 0
        self._vectors: dict[CacheKey, ChunkVector] = {}
        # (model, sha256, window policy) -> owned token states, bounded in documents and bytes
        self._states: BoundedCache[tuple[str, str, str], np.ndarray] = BoundedCache(
            state_docs, max_bytes=state_bytes, size_of=_nbytes
        )
        self._lock = threading.Lock()
        if self.folder is not None:
            self.folder.mkdir(parents=True, exist_ok=True)

    def __len__(self) -> int:
        return len(self._vectors)

    @property
    def state_docs(self) -> int:
        """Documents whose token states are kept in memory at most."""
        return self._states.max_entries

    @property
    def state_bytes(self) -> int:
        """Bytes of token states kept in memory at most."""
        assert self._states.max_bytes is not None
        return self._states.max_bytes

    def get(self, key: CacheKey, chunk_id: str) -> ChunkVector | None:
        """The cached record for ``key``, re-labelled with ``chunk_id``; None on a miss."""
        with self._lock:
            found = self._vectors.get(key)
        if found is None and self.folder is not None:
            found = self._read(key)
            if found is not None:
                with self._lock:
                    self._vectors[key] = found
        with self._lock:
            if found is None:
                self.misses += 1
                return None
            self.hits += 1
        return found if found.chunk_id == chunk_id else replace(found, chunk_id=chunk_id)

    def holds(self, key: CacheKey) -> bool:
        """Whether ``key`` is cached (in memory or on disk), without reading it or
        counting a hit or miss: what a cost estimate asks before a run."""
        with self._lock:
            if key in self._vectors:
                return True
        return self.folder is not None and self._path(key).is_file()

    def put(self, key: CacheKey, record: ChunkVector) -> None:
        with self._lock:
            self._vectors[key] = record
        if self.folder is not None:
            self._write(key, record)

    def get_states(
        self, model: str, doc_sha256: str, policy_key: str, *, shape: tuple[int, int] | None = None
    ) -> np.ndarray | None:
        """Owned token states from memory, else from the state store (float16); None on a
        miss or when they are not of ``shape``."""
        key = (model, doc_sha256, policy_key)
        found = self._states.get(key)
        if found is None and self.state_store is not None:
            found = self.state_store.get(model, doc_sha256, policy_key, shape=shape)
            if found is not None:
                self._states.put(key, found)
        if found is None or (shape is not None and found.shape != shape):
            return None
        return found

    def holds_states(self, model: str, doc_sha256: str, policy_key: str) -> bool:
        """Whether token states are kept for this key (in memory or as a file), without
        reading them: what a cost estimate asks."""
        if (model, doc_sha256, policy_key) in self._states:
            return True
        if self.state_store is None:
            return False
        return self.state_store.path_of(model, doc_sha256, policy_key).is_file()

    def put_states(self, model: str, doc_sha256: str, policy_key: str, states: np.ndarray) -> None:
        if self.state_store is not None:
            self.state_store.put(model, doc_sha256, policy_key, states)
        self._states.put((model, doc_sha256, policy_key), states)

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()
        self._states.clear()

    def _path(self, key: CacheKey) -> Path:
        assert self.folder is not None
        return self.folder / f"{key.digest}.npz"

    def _write(self, key: CacheKey, record: ChunkVector) -> None:
        meta = record.to_dict()
        del meta["vector"]
        path = self._path(key)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
        np.savez(tmp, vector=record.vector, meta=np.array(json.dumps(meta)))
        os.replace(tmp, path)

    def _read(self, key: CacheKey) -> ChunkVector | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as data:
                vector = np.asarray(data["vector"], dtype=np.float32)
                meta = json.loads(str(data["meta"]))
        except (OSError, ValueError, KeyError):
            return None  # a damaged entry is recomputed and rewritten
        return ChunkVector(
            chunk_id=meta["chunk_id"],
            method=meta["method"],
            vector=vector,
            token_count=int(meta["token_count"]),
            truncated_tokens=int(meta["truncated_tokens"]),
            windows=tuple(int(w) for w in meta["windows"]),
            context=meta["context"],
            full_context_tokens=int(meta["full_context_tokens"]),
            prefix=str(meta.get("prefix", "")),
        )


def _nbytes(states: np.ndarray) -> int:
    """The bytes an array of token states holds."""
    return int(states.nbytes)


def default_cache_folder() -> Path | None:
    """Where ``shared_cache`` keeps vectors (see the module docstring); None when
    ``$CHUNKSCOPE_VECTOR_CACHE`` is ``off``."""
    chosen = settings.VECTOR_CACHE.read()
    if chosen == "off":
        return None
    if isinstance(chosen, Path):
        return chosen.resolve()
    try:
        store = resolve_store()
    except ChunkscopeError:  # a malformed server address: the vectors need no store
        store = None
    if store is not None and store.path is not None:
        return store.path / VECTOR_DIRNAME
    base = os.environ.get("XDG_CACHE_HOME", "").strip() or Path.home() / ".cache"
    return Path(base) / "chunkscope" / VECTOR_DIRNAME


_SHARED: dict[Path, VectorCache] = {}
_SHARED_LOCK = threading.Lock()


def shared_cache(folder: str | os.PathLike[str] | None = None) -> VectorCache | None:
    """The process's one cache on ``folder`` (default: ``default_cache_folder()``), made
    on first use and then reused, so every run in this process shares its memory and every
    process shares its files; None when the default is switched off."""
    where = Path(folder).expanduser().resolve() if folder is not None else default_cache_folder()
    if where is None:
        return None
    with _SHARED_LOCK:
        if where not in _SHARED:
            _SHARED[where] = VectorCache(where)
        return _SHARED[where]
