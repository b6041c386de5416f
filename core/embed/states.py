"""Late token states on disk: float16, bounded in size, evicted oldest first.

Late chunking's token states depend on the model, the document and the window policy,
never on the chunk boundaries, so a sweep over N chunk policies needs one forward pass per
document and N poolings. This store keeps each document's owned states (``n_tokens x
dim``, the array ``core.embed.late.late_vectors`` pools from) in
``<folder>/<key hash>.npz``: the states as float16 (2 bytes a value: 768 bytes a token for
a 384-wide model, 0.75 MB per 1,000 tokens) and the key it was written under. An entry is
read only when its stored key matches the one asked for in full (model identity, document
sha256, window policy) and its shape is the one expected, so a changed document (a new
sha256) never finds the states of its old version, and a damaged or foreign file is a miss
that is removed.

The folder holds at most ``max_bytes`` (default 2 GiB, or ``CHUNKSCOPE_STATE_CACHE_MB``
megabytes): after a write, entries are removed oldest first by
last use (a read refreshes an entry's time) until the rest fit. Writes go through a
temporary file and ``os.replace``, so a reader never sees half an entry.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import numpy as np

from core import settings
from core.ingest.revision import PARSE_REVISION

STATE_DTYPE = np.float16


def default_max_bytes() -> int:
    """``CHUNKSCOPE_STATE_CACHE_MB`` (a positive integer of MiB, default 2048) in bytes."""
    return settings.STATE_CACHE_MB.read() * 2**20


def state_key(model: str, doc_sha256: str, policy_key: str) -> str:
    """The full key an entry is written under and checked against on every read (the
    parse revision too: an older reading of the same bytes has other tokens)."""
    return "\x1f".join((model, doc_sha256, policy_key, f"parse-{PARSE_REVISION}"))


class StateStore:
    """float16 token states per (model, document sha256, window policy) in one folder."""

    def __init__(self, folder: str | os.PathLike[str], *, max_bytes: int | None = None):
        max_bytes = default_max_bytes() if max_bytes is None else max_bytes
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        self.folder = Path(folder)
        self.max_bytes = int(max_bytes)
        self.reads = 0
        self.writes = 0
        self._lock = threading.Lock()
        self.folder.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.folder / (hashlib.blake2b(key.encode(), digest_size=16).hexdigest() + ".npz")

    def path_of(self, model: str, doc_sha256: str, policy_key: str) -> Path:
        """The file an entry of this key is written to (it may not exist)."""
        return self._path(state_key(model, doc_sha256, policy_key))

    def get(
        self, model: str, doc_sha256: str, policy_key: str, *, shape: tuple[int, int] | None = None
    ) -> np.ndarray | None:
        """The float16 states, or None: missing, written under another key, or not of
        ``shape`` (when given). A read refreshes the entry's time."""
        key = state_key(model, doc_sha256, policy_key)
        path = self._path(key)
        try:
            with np.load(path, allow_pickle=False) as data:
                written = str(data["key"])
                states = np.asarray(data["states"])
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError):
            path.unlink(missing_ok=True)  # damaged: recomputed and rewritten
            return None
        if written != key or states.ndim != 2 or (shape is not None and states.shape != shape):
            return None
        os.utime(path)
        self.reads += 1
        return states

    def put(self, model: str, doc_sha256: str, policy_key: str, states: np.ndarray) -> None:
        """Write ``states`` as float16 (an entry larger than the bound is not kept)."""
        half = np.ascontiguousarray(states, dtype=STATE_DTYPE)
        if half.nbytes > self.max_bytes:
            return
        key = state_key(model, doc_sha256, policy_key)
        path = self._path(key)
        tmp = path.with_name(f".{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp.npz")
        np.savez(tmp, key=np.array(key), states=half)
        os.replace(tmp, path)
        self.writes += 1
        self.evict()

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self._entries())

    def _entries(self) -> list[Path]:
        return [p for p in self.folder.glob("*.npz") if not p.name.startswith(".")]

    def evict(self) -> int:
        """Remove the least recently used entries until the folder fits; returns how many."""
        with self._lock:
            entries = []
            for path in self._entries():
                try:
                    info = path.stat()
                except FileNotFoundError:
                    continue
                entries.append((info.st_mtime_ns, path.name, info.st_size, path))
            total = sum(e[2] for e in entries)
            removed = 0
            for _, _, size, path in sorted(entries):
                if total <= self.max_bytes:
                    break
                path.unlink(missing_ok=True)
                total -= size
                removed += 1
            return removed
