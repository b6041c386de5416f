"""Bring your own chunks: chunks a pipeline already made, anchored in our canonical text.

``import_chunks`` ties the modules together: each chunk's document is the one its source
names among the documents given (by ``doc_id``, file name or file name without suffix; a
path's folders are ignored); a chunk whose source names none of them is reported with
that reason, never guessed. With one document and no source on any chunk, the chunks are
that document's.

Modules:

- ``shapes``: LangChain Documents, LlamaIndex TextNodes, plain rows, Chroma collections
  read as ``ForeignChunk`` records;
- ``anchor``: each chunk's span in the canonical text (``exact``, ``aligned``,
  ``ambiguous``, ``missing``) and the verdicts on the offset and page it claimed (``ok``,
  ``wrong``, ``absent``, ``unchecked``);
- ``loader_text``: a per-page loader's own text of a PDF's pages (pypdf, PyMuPDF);
- ``loader_check``: a chunk's text found in that text, the extractor a set was made with
  and the number of its first page;
- ``claim_check``: a set imported with ``check_later`` (placed by our text, its claims
  pending) checked in the loader's text afterwards, in a background job;
- ``named_splitter``: the splitter a set's rows name (``metadata.splitter``), offered as
  the live policy that remakes the set;
- ``chunkset``: the anchored set kept under its name beside the index and offered as a
  policy whose boundaries are the imported ones;
- ``live``: the user's own splitter (LangChain, LlamaIndex, chonkie, a factory) as a live
  policy, its pieces anchored like imported chunks.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

from core.imported.anchor import (
    CLAIMS,
    DEFAULT_THRESHOLD,
    PAGE_CLAIMS,
    Anchor,
    DocumentText,
    LoaderEvidence,
    anchor_document,
    span_ratio,
)
from core.imported.chunkset import (
    ChunkSet,
    ImportedChunk,
    check_name,
    chunk_sets,
    now,
    register_chunk_sets,
    save_chunk_set,
    sets_folder,
)
from core.imported.live import register_resolvers
from core.imported.loader_check import choose_extractor, page_shift_by_places, shifted
from core.imported.loader_text import EXTRACTORS, extractor_label
from core.imported.named_splitter import set_splitter
from core.imported.shapes import (
    DEFAULT_KEYS,
    SHAPES,
    ForeignChunk,
    ImportChunksError,
    read_chroma,
    read_file,
)
from core.provenance.types import Document

__all__ = [
    "CLAIMS",
    "DEFAULT_THRESHOLD",
    "EXTRACTORS",
    "PAGE_CLAIMS",
    "SHAPES",
    "Anchor",
    "ChunkSet",
    "ForeignChunk",
    "ImportChunksError",
    "ImportedChunk",
    "Timing",
    "check_name",
    "chunk_sets",
    "headline",
    "import_chunks",
    "pending_note",
    "read_chroma",
    "read_file",
    "register_chunk_sets",
    "report_dict",
    "save_chunk_set",
    "sets_folder",
]

register_resolvers()  # langchain:, llamaindex:, chonkie:, py: names resolve


@dataclass(frozen=True, slots=True, kw_only=True)
class Timing:
    """Seconds spent anchoring, and the chunks anchored in that time."""

    anchor_s: float
    chunks: int


@lru_cache(maxsize=4096)  # a set's chunks name a few sources, each thousands of times
def _names(source: str) -> tuple[str, ...]:
    """The names a source may match: itself, its file name, its stem (URI and Windows
    paths included)."""
    text = source.removeprefix("file://")
    names = [text]
    for pure in (PurePosixPath(text), PureWindowsPath(text)):
        names += [pure.name, pure.stem]
    return tuple(n for n in dict.fromkeys(names) if n)


def _doc_finder(docs: Sequence[Document]) -> dict[str, list[Document]]:
    by_name: dict[str, list[Document]] = {}
    for doc in docs:
        source = PurePath(doc.source)
        for name in {doc.doc_id, source.name, source.stem}:
            if name and doc not in by_name.setdefault(name, []):
                by_name[name].append(doc)
    return by_name


def _which(
    chunk: ForeignChunk, by_name: dict[str, list[Document]], docs: Sequence[Document]
) -> Document | str:
    """The chunk's document, or why there is none (one line)."""
    if chunk.source is None:
        if len(docs) == 1:
            return docs[0]
        return "it names no document (no source) and several documents were given"
    for name in _names(chunk.source):
        found = by_name.get(name, [])
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            ids = ", ".join(sorted(d.doc_id for d in found))
            return f"its source {chunk.source!r} names several documents ({ids})"
    return f"its source {chunk.source!r} is none of the documents given"


def _unplaced(chunk: ForeignChunk, why: str) -> Anchor:
    return Anchor(
        index=chunk.index,
        doc_id=None,
        doc_sha256=None,
        anchor="missing",
        char_start=None,
        char_end=None,
        coverage=None,
        pages=(),
        claim="absent" if chunk.claimed_start is None else "unchecked",
        claimed_start=chunk.claimed_start,
        places=0,
        detail=why,
        page_claim="absent" if chunk.page is None else "unchecked",
        claimed_page=chunk.page,
    )


def _page_shifts(shape: str, page_base: int | None) -> tuple[int, list[int]]:
    """The base the pages were read with, and the shifts to try: none when the base was
    given, else the other numbering too (a 1-based set read as 0-based moves by -1)."""
    base = DEFAULT_KEYS[shape].page_base if page_base is None else page_base
    if page_base is not None:
        return base, [0]
    return base, [0, -1 if base == 0 else 1]


def _checkable(doc: Document, own: Sequence[ForeignChunk]) -> bool:
    """Whether ``doc``'s chunks claim pages a per-page loader's text can check."""
    return doc.pdf_bytes is not None and doc.is_paged and any(c.page is not None for c in own)


def _loaders(
    per_doc: dict[str, list[ForeignChunk]], doc_of: dict[str, Document], extractor: str | None,
    shifts: list[int], folder: Path | None,
) -> tuple[dict[str, LoaderEvidence], int | None, dict[str, object]]:  # fmt: skip
    """Each PDF's loader text (where one reproduces its chunks), the page shift it
    decided, and how (``checks`` of the set); ``folder``: where page texts are kept."""
    found: dict[str, LoaderEvidence] = {}
    shift: int | None = None
    tried: list[str] = []
    how = "given" if extractor else None
    for doc_id in sorted(per_doc, key=lambda d: -len(per_doc[d])):
        doc, own = doc_of[doc_id], per_doc[doc_id]
        if not _checkable(doc, own):
            continue
        hints = Counter(c.loader for c in own if c.loader)
        if extractor:
            order = [extractor]
        elif hints:
            top = hints.most_common(1)[0][0]
            order = [top] + [e for e in EXTRACTORS if e != top]
        else:
            order = list(EXTRACTORS)
        tries = shifts if shift is None else [shift]
        pages, chosen, here = choose_extractor(doc, own, order, tries, folder)
        tried += [t for t in here if t not in tried]
        if pages is None:
            continue
        if how is None:
            how = "metadata" if hints and pages.extractor == order[0] else "trial"
        found[doc_id] = LoaderEvidence(pages=pages)
        if shift is None:
            shift = chosen
    checks: dict[str, object] = {
        "extractors": {d: found[d].label if d in found else None for d in per_doc},
        "extractor_how": how if found else None,
        "tried": [extractor_label(t) for t in tried],
    }
    return found, shift, checks


def import_chunks(
    chunks: Sequence[ForeignChunk],
    docs: Sequence[Document],
    *,
    name: str,
    shape: str,
    origin: str,
    threshold: float = DEFAULT_THRESHOLD,
    extractor: str | None = None,
    page_base: int | None = None,
    loader_folder: Path | None = None,
    check_later: bool = False,
) -> tuple[ChunkSet, Timing]:
    """Anchor ``chunks`` in ``docs`` and audit their claims; the set is not saved here.
    ``extractor``: the per-page loader's extractor (``pypdf``, ``pymupdf``), else found
    from the rows' metadata or by trial; ``page_base``: the first page's number the
    chunks were read with when it was given (else it is detected); ``loader_folder``:
    where the loader's page texts are kept between imports
    (``core.imported.loader_text``; they are kept in memory either way).
    ``check_later``: the loader's text is not read now: the chunks of PDFs whose pages
    they claim are placed by our text alone, their offset and page claims ``pending``
    (``checks["pending"]`` says how to check them: ``core.imported.claim_check``)."""
    check_name(name)
    if not 0 < threshold <= 1:
        raise ImportChunksError(f"--threshold is a share in (0, 1], got {threshold}")
    if extractor is not None and extractor not in EXTRACTORS:
        raise ImportChunksError(f"--extractor {extractor!r}: use one of {', '.join(EXTRACTORS)}")
    by_name = _doc_finder(docs)
    per_doc: dict[str, list[ForeignChunk]] = {}
    anchors: dict[int, Anchor] = {}
    doc_of: dict[str, Document] = {}
    for chunk in chunks:
        found = _which(chunk, by_name, docs)
        if isinstance(found, str):
            anchors[chunk.index] = _unplaced(chunk, found)
        else:
            per_doc.setdefault(found.doc_id, []).append(chunk)
            doc_of[found.doc_id] = found
    started = time.perf_counter()
    base, shifts = _page_shifts(shape, page_base)
    later = [d for d, own in sorted(per_doc.items()) if check_later and _checkable(doc_of[d], own)]
    loaders: dict[str, LoaderEvidence] = {}
    if later:
        shift = None
        checks: dict[str, object] = {"extractors": {d: None for d in per_doc},
                                     "extractor_how": None, "tried": []}  # fmt: skip
    else:
        loaders, shift, checks = _loaders(per_doc, doc_of, extractor, shifts, loader_folder)
    texts = {doc_id: DocumentText(doc) for doc_id, doc in doc_of.items()}
    paged = [c for d, own in per_doc.items() if doc_of[d].is_paged for c in own]
    how = "given" if page_base is not None else "default"
    if shift is None and len(shifts) > 1 and any(c.page is not None for c in paged):
        where = {c.index: d for d, own in per_doc.items() for c in own}

        def pages_of_text(chunk: ForeignChunk) -> set[int]:
            text = texts[where[chunk.index]]
            return {n for a, b in text.places(chunk.text, None)[:20]
                    for n in text.doc.pages_of(a, b)}  # fmt: skip

        shift = page_shift_by_places(paged, shifts, pages_of_text)
    if len(shifts) > 1 and shift is not None:
        how = "detected"
    shift = shift or 0
    if any(c.page is not None for c in chunks):
        checks |= {"page_base": base - shift, "page_base_how": how}
    if later:
        hints = {d: Counter(c.loader for c in per_doc[d] if c.loader) for d in per_doc}
        checks["pending"] = {
            "docs": later, "extractor": extractor, "page_base": page_base, "shift": shift,
            "hints": {d: h.most_common(1)[0][0] for d, h in hints.items() if h},
            "given": {d.doc_id: d.sha256 for d in docs},
        }  # fmt: skip
    per_page = any(c.page is not None for c in chunks if c.splitter is not None)
    if named := set_splitter((c.splitter for c in chunks), len(chunks), per_page=per_page):
        checks["splitter"] = named  # offered as the live policy that remakes the set
    moved: dict[int, ForeignChunk] = {}
    for doc_id, own in per_doc.items():
        own = shifted(own, shift)
        moved.update((c.index, c) for c in own)
        for anchor in anchor_document(doc_of[doc_id], own, threshold=threshold,
                                      text=texts[doc_id], loader=loaders.get(doc_id),
                                      pending=doc_id in later):  # fmt: skip
            anchors[anchor.index] = anchor
    elapsed = time.perf_counter() - started
    for evidence in loaders.values():
        evidence.pages.save()
    kept = tuple(
        ImportedChunk(given=moved.get(c.index, c), anchor=anchors[c.index]) for c in chunks
    )
    chunk_set = ChunkSet(
        name=name,
        shape=shape,
        origin=origin,
        created_at=now(),
        threshold=threshold,
        docs={doc_id: doc.sha256 for doc_id, doc in doc_of.items()},
        chunks=kept,
        checks=checks,
    )
    return chunk_set, Timing(anchor_s=elapsed, chunks=sum(map(len, per_doc.values())))


def _n(count: int, word: str) -> str:
    return f"{count:,} {word}"


def pending_note(chunk_set: ChunkSet) -> str:
    """Why a set's claims are pending, and in which text they will be checked."""
    info = chunk_set.pending()
    if info is None:
        return "not checked yet"
    named = set(dict(info.get("hints") or {}).values())
    name = info.get("extractor") or (named.pop() if len(named) == 1 else None)
    text = f"{extractor_label(name)}'s" if name in EXTRACTORS else "the loader's"
    return f"placed by our text, checked in {text} page text once it is read"


def headline(chunk_set: ChunkSet) -> list[str]:
    """What the audit checked, one line each for the offsets and the pages: "0 wrong of
    1,977 checked", or why they could not be checked; never a bare count of wrong ones."""
    counts = chunk_set.counts()
    claims, pages = counts["claim"], counts["page_claim"]
    checks = chunk_set.checks
    used = sorted({v for v in dict(checks.get("extractors") or {}).values() if v})
    lines = []
    checked = claims["ok"] + claims["wrong"]
    parts = []
    if checked:
        where = f" (in {', '.join(used)}'s page text)" if used else ""
        parts.append(f"{claims['wrong']:,} wrong of {checked:,} checked{where}")
    if claims["unchecked"]:
        tried = list(checks.get("tried") or [])
        why = (
            f"their loader's text could not be reproduced (tried {', '.join(tried)})"
            if tried and not used
            else "their offsets are into a text we do not have"
        )
        parts.append(f"{claims['unchecked']:,} unchecked: {why}")
    waiting = pending_note(chunk_set)
    if claims["pending"]:
        parts.append(f"{claims['pending']:,} pending: {waiting}")
    if claims["absent"]:
        parts.append(f"{claims['absent']:,} without an offset")
    lines.append("Offsets: " + "; ".join(parts))
    if sum(pages.values()) > pages["absent"]:
        page_checked = pages["ok"] + pages["wrong"]
        base = checks.get("page_base")
        numbered = (
            f" (numbered from {base} in the import, {checks.get('page_base_how', 'default')}; "
            "shown from 1)"
            if base is not None
            else ""
        )
        said = []
        if page_checked or not pages["pending"]:
            said.append(f"{pages['wrong']:,} wrong of {page_checked:,} checked")
        if pages["pending"]:
            said.append(f"{pages['pending']:,} pending")
        text = f"Pages: {'; '.join(said)}{numbered}"
        if pages["unchecked"]:
            text += f"; {pages['unchecked']:,} unchecked (the chunk was not found)"
        if pages["absent"]:
            text += f"; {pages['absent']:,} without a page"
        lines.append(text)
    return lines


def report_dict(chunk_set: ChunkSet, docs: Sequence[Document] = ()) -> dict[str, object]:
    """The ``--json`` report: every chunk's anchor, claim and page claim, the counts and
    the headline; with ``docs``, each anchored span's length against its chunk's
    (``span_ratio``, whitespace aside)."""
    texts = {d.doc_id: d for d in docs if chunk_set.docs.get(d.doc_id) == d.sha256}
    ratios = {
        c.anchor.index: round(span_ratio(texts[c.anchor.doc_id].text[a:b], c.given.text), 3)
        for c in chunk_set.chunks
        for a, b in [(c.anchor.char_start, c.anchor.char_end)]
        if a is not None and b is not None and c.anchor.doc_id in texts
    }
    rows = []
    for chunk in chunk_set.chunks:
        a = chunk.anchor
        rows.append(
            {
                "index": a.index,
                "foreign_id": chunk.given.foreign_id,
                "doc_id": a.doc_id,
                "anchor": a.anchor,
                "char_start": a.char_start,
                "char_end": a.char_end,
                "coverage": a.coverage,
                "pages": list(a.pages) if a.pages else None,
                "claim": a.claim,
                "claimed_start": a.claimed_start,
                "page_claim": a.page_claim,
                "claimed_page": a.claimed_page,
                "span_chars": None if a.char_start is None else (a.char_end or 0) - a.char_start,
                "chunk_chars": len(chunk.given.text.strip()),
                "span_ratio": ratios.get(a.index),
                "detail": a.detail or None,
            }
        )
    return {
        "name": chunk_set.name,
        "shape": chunk_set.shape,
        "origin": chunk_set.origin,
        "docs": dict(chunk_set.docs),
        "chunks": rows,
        "counts": chunk_set.counts(),
        "checks": dict(chunk_set.checks),
        "headline": headline(chunk_set),
    }
