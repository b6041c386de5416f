"""The guard against silent replacement across index runs.

A document id is its file name without the extension (``core.formats.doc_id_for``), so
``report.md`` and ``report.pdf``, or ``My Report.pdf`` and ``My-Report.pdf``, share one.
Within one run two such files are refused up front; across runs, a file whose id is
already stored from a file of another name, with other bytes, is refused too (its line
says so; ``--force`` replaces the stored one). A file of the same name with new bytes is
a new version of that document and replaces it, as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.errors import ChunkscopeError
from core.protocols import IndexListing


def item_name(item: Any) -> str:
    """The file name of a ``DocumentFile`` (its path) or a ``Document`` (its source)."""
    path = getattr(item, "path", None)
    return Path(str(path if path is not None else item.source)).name


class StoredNames:
    """The file names each stored document id came from, with their sha256, read from
    the store once (on first use) for a whole run."""

    def __init__(self, store: IndexListing) -> None:
        self.store = store
        self._names: dict[str, set[tuple[str, str]]] | None = None

    def _load(self) -> dict[str, set[tuple[str, str]]]:
        if self._names is None:
            self._names = {}
            for stored in self.store.indexed_documents():
                name = Path(stored.source).name
                self._names.setdefault(stored.doc_id, set()).add((stored.sha256, name))
        return self._names

    def refuse_other_file(self, doc_id: str, sha256: str | None, name: str) -> None:
        """Raise when ``doc_id`` is stored from a file named other than ``name`` with
        bytes other than ``sha256`` (None: the file was unreadable; nothing to check)."""
        if sha256 is None:
            return
        for stored_sha, other in sorted(self._load().get(doc_id, ())):
            if stored_sha != sha256 and other and other != name:
                raise ChunkscopeError(
                    f"{name} would replace the stored records of {other} (both have the "
                    f"document id {doc_id!r}); rename {name}, or pass --force to replace {other}"
                )
