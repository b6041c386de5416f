"""What the indexer is given: loaded documents or files (``DocumentFile``, loaded only
when needed), the files under folders (``collect_files``), and the check that no two
inputs share a document id (``refuse_shared_ids``), which the plain and the Ray indexer
both make before any work."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from core.errors import ChunkscopeError, UnsupportedFileError
from core.formats import doc_id_for, load_document, sha256_of
from core.formats.format_registry import is_supported_name
from core.ingest.files import read_source
from core.provenance.types import Document


@dataclass(frozen=True, slots=True, kw_only=True)
class DocumentFile:
    """A file to index, loaded only when its version is not already stored.

    ``identity()`` hashes the bytes without parsing, so a re-run over an unchanged folder
    skips every file at the cost of reading it once.
    """

    path: Path
    password: str | None = None

    def identity(self) -> tuple[str, str] | None:
        """``(doc_id, sha256)`` exactly as ``load_document`` assigns them; None if unreadable."""
        try:  # regular files only, bounded: a FIFO or a device must not hang the run
            return doc_id_for(self.path.name), sha256_of(read_source(self.path, str(self.path)))
        except ChunkscopeError:
            return None  # load() raises the same error, reported on the document's line

    def load(self) -> Document:
        return load_document(self.path, password=self.password)


def collect_files(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """Files named, plus the files of every registered format under named folders
    (recursive, sorted, hidden folders such as ``.chunkscope`` skipped); each file once,
    in the order given.

    Raises ``UnsupportedFileError`` for a path that does not exist.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise UnsupportedFileError(f"{raw} does not exist; check the path")
        if path.is_dir():
            found.extend(
                sorted(
                    p
                    for p in path.rglob("*")
                    if p.is_file()
                    and is_supported_name(p)
                    and not any(part.startswith(".") for part in p.relative_to(path).parts)
                )
            )
        else:
            found.append(path)
    return list(dict.fromkeys(found))


def input_id(item: Document | DocumentFile) -> tuple[str, str]:
    """``(doc_id, source)`` of an input, without loading it (a file's id is the one
    ``load_document`` gives it: its name without the extension)."""
    if isinstance(item, DocumentFile):
        return doc_id_for(item.path.name), str(item.path)
    return item.doc_id, item.source


def refuse_shared_ids(docs: Sequence[Document | DocumentFile]) -> None:
    """Two inputs with one doc_id would overwrite each other's records: refuse up front
    (``UnsupportedFileError``, one line naming both)."""
    seen: dict[str, str] = {}
    for item in docs:
        doc_id, source = input_id(item)
        if doc_id in seen:
            raise UnsupportedFileError(
                f"{seen[doc_id]} and {source} would share the document id "
                f"{doc_id!r} (its file name without the extension): rename one of them"
            )
        seen[doc_id] = source
