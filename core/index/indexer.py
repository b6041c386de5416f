"""The indexing pipeline: document -> blocks -> chunks -> records (per method) -> store.

Each document is parsed and chunked once; its chunks are then made into records once per
stored method (its registered index step: vectors for dense methods, term counts and
prefixes for lexical ones) and stored, so every method holds the same spans. A fusion
asked for is indexed as its parts. At the end, the term index of each lexical method
written to is rebuilt from the store's records and persisted. A (document version, method) already
complete in the store is skipped without parsing or embedding.

Cancellation (``should_cancel()`` returning True) is checked between documents, between
methods, between encoder batches and between store batches; the run then returns a report
with ``cancelled=True``. Whatever was cut short has no completion marker, so the next run
redoes exactly those (document, method) pairs, and upserting by stable chunk id means the
store ends with each chunk once. A store that stops answering (``StoreLostError``) ends the
run the same way, with ``halted`` saying why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from core import methods as registry
from core.chunk import chunk_document
from core.embed.cache import shared_cache
from core.errors import ChunkscopeError, StoreLostError
from core.formats import PARSERS, ParserName, parse_document
from core.index.identity import StoredNames, item_name
from core.index.sources import DocumentFile, collect_files, input_id, refuse_shared_ids
from core.methods.embedding import check_late_pooling
from core.model.tokens import load_tokenizer
from core.protocols import RecordsFn, TextEncoder
from core.provenance.types import Block, Chunk, ChunkPolicy, Document
from core.store.lexical_index import lexical_collection

if TYPE_CHECKING:
    from core.embed import ChunkVector
    from core.embed.cache import VectorCache
    from core.store import ChunkStore

__all__ = [  # what callers import from here (the inputs live in core.index.sources)
    "DocIndexResult",
    "DocumentFile",
    "IndexProgress",
    "IndexReport",
    "IndexSteps",
    "collect_files",
    "default_steps",
    "index_documents",
    "method_records",
]
Stage = Literal["parse", "chunk", "embed", "store", "skip", "done"]


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexProgress:
    """One progress event; ``doc_index`` is 0-based among ``n_docs``.

    ``done``/``total`` count the stage's real units: the document for ``parse`` (0/1,
    then 1/1), chunks for ``chunk`` and ``store``, the encoder's units for ``embed``
    (chunks, or macro-windows for late), methods for ``skip``, documents for ``done``.
    """

    stage: Stage
    doc_id: str
    method: str | None
    done: int
    total: int
    doc_index: int
    n_docs: int


@dataclass(frozen=True, slots=True, kw_only=True)
class DocIndexResult:
    """What happened to one document: methods stored now, methods already complete."""

    doc_id: str
    source: str
    sha256: str
    n_chunks: int | None  # None when every method was skipped (nothing was chunked)
    indexed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    truncated_chunks: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    elapsed_s: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexReport:
    documents: tuple[DocIndexResult, ...]
    policy: ChunkPolicy
    methods: tuple[str, ...]
    model: str
    cancelled: bool
    elapsed_s: float
    halted: str | None = None  # why the run stopped before the last document (store lost)


EmbedFn = RecordsFn  # one stored method's records for a document's chunks


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexSteps:
    """The stage functions the pipeline calls (tests swap ``embed`` for a fake)."""

    parse: Callable[[Document, str], Sequence[Block]]
    chunk: Callable[[Document, Sequence[Block], ChunkPolicy, Any], list[Chunk]]
    embed: EmbedFn


def _parse(doc: Document, parser: str) -> Sequence[Block]:
    from typing import cast

    if parser not in PARSERS:
        raise ChunkscopeError(f"unknown parser {parser!r}: use {' or '.join(PARSERS)}")
    return parse_document(doc, parser=cast(ParserName, parser)).blocks


def _chunk(
    doc: Document, blocks: Sequence[Block], policy: ChunkPolicy, encoder: TextEncoder
) -> list[Chunk]:
    """Chunks counted (and, for token policies, sized) with the encoder's own tokenizer."""
    return chunk_document(doc, blocks, policy, tokenizer=load_tokenizer(encoder.model_dir))


def method_records(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str,
    encoder: TextEncoder,
    *,
    progress: Callable[[int, int], None] | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """The records of one stored method, made by its registered index step."""
    step = registry.get(method).index
    if step is None:
        raise ValueError(f"{method} is a fusion: index its parts")
    return step(doc, chunks, encoder, progress=progress, cache=cache)


def default_steps(embed: EmbedFn | None = None) -> IndexSteps:
    return IndexSteps(parse=_parse, chunk=_chunk, embed=embed or method_records)


@dataclass(slots=True)
class _DocState:
    """What one document's run has finished so far (kept when it is cancelled)."""

    doc_id: str
    source: str
    sha256: str = ""
    indexed: list[str] = field(default_factory=list)
    skipped: tuple[str, ...] = ()
    n_chunks: int | None = None
    truncated: dict[str, int] = field(default_factory=dict)


def _initial_state(item: Document | DocumentFile) -> _DocState:
    doc_id, source = input_id(item)
    sha256 = item.sha256 if isinstance(item, Document) else ""
    return _DocState(doc_id=doc_id, source=source, sha256=sha256)


class IndexCancelled(Exception):
    """Raised inside the pipeline when ``should_cancel()`` says stop; never escapes."""


@dataclass(slots=True)
class _Run:
    """The per-call context every step needs."""

    policy: ChunkPolicy
    methods: tuple[str, ...]
    encoder: TextEncoder
    store: ChunkStore
    parser: str
    steps: IndexSteps
    progress: Callable[[IndexProgress], None] | None
    should_cancel: Callable[[], bool] | None
    cache: VectorCache | None
    force: bool
    n_docs: int
    doc_index: int = 0
    stored: StoredNames | None = None  # read on first use: the guard of core.index.identity

    def emit(self, stage: Stage, doc_id: str, method: str | None, done: int, total: int) -> None:
        if self.progress is not None:
            event = IndexProgress(
                stage=stage,
                doc_id=doc_id,
                method=method,
                done=done,
                total=total,
                doc_index=self.doc_index,
                n_docs=self.n_docs,
            )
            self.progress(event)

    def check(self) -> None:
        if self.should_cancel is not None and self.should_cancel():
            raise IndexCancelled

    def reporter(self, stage: Stage, doc_id: str, method: str) -> Callable[[int, int], None]:
        def report(done: int, total: int) -> None:
            self.emit(stage, doc_id, method, done, total)
            self.check()

        return report


def _pending(run: _Run, identity: tuple[str, str] | None) -> list[str]:
    if run.force or identity is None:
        return list(run.methods)
    doc_id, sha256 = identity
    return [
        m
        for m in run.methods
        if not run.store.is_version_indexed(
            doc_id, sha256, model=run.encoder.name, method=m, policy=run.policy
        )
    ]


def _identity(item: Document | DocumentFile) -> tuple[str, str] | None:
    return item.identity() if isinstance(item, DocumentFile) else (item.doc_id, item.sha256)


def _index_one(run: _Run, item: Document | DocumentFile, state: _DocState) -> None:
    """Index one document for its pending methods; ``state`` records what finished."""
    identity = _identity(item)
    if identity is not None:
        state.doc_id, state.sha256 = identity
    pending = _pending(run, identity)
    if pending and not run.force:
        run.stored = run.stored or StoredNames(run.store)
        run.stored.refuse_other_file(state.doc_id, state.sha256, item_name(item))
    state.skipped = tuple(m for m in run.methods if m not in pending)
    if not pending:
        run.emit("skip", state.doc_id, None, len(run.methods), len(run.methods))
        return
    run.check()
    doc = item.load() if isinstance(item, DocumentFile) else item
    state.doc_id, state.sha256, state.source = doc.doc_id, doc.sha256, doc.source
    run.check()
    run.emit("parse", doc.doc_id, None, 0, 1)
    blocks = run.steps.parse(doc, run.parser)
    run.emit("parse", doc.doc_id, None, 1, 1)
    chunks = run.steps.chunk(doc, blocks, run.policy, run.encoder)
    state.n_chunks = len(chunks)
    run.emit("chunk", doc.doc_id, None, len(chunks), len(chunks))
    for method in pending:
        run.check()
        vectors = run.steps.embed(
            doc,
            chunks,
            method,
            run.encoder,
            progress=run.reporter("embed", doc.doc_id, method),
            cache=run.cache,
        )
        run.check()
        run.store.upsert_document(
            doc,
            chunks,
            vectors,
            model=run.encoder.name,
            method=method,
            policy=run.policy,
            progress=run.reporter("store", doc.doc_id, method),
        )
        state.indexed.append(method)
        state.truncated[method] = sum(1 for v in vectors if v.truncated_tokens > 0)


def _refresh_lexical(run: _Run, results: Sequence[DocIndexResult]) -> None:
    """Build (and persist) the term index of every lexical method this run wrote to, so
    the first query does not pay for it (``core.store.lexical_index``)."""
    written = {m for r in results for m in r.indexed}
    for method in run.methods:
        if method in written and registry.get(method).family == "lexical":
            lexical_collection(run.store, model=run.encoder.name, method=method, policy=run.policy)


def index_documents(
    docs: Sequence[Document | DocumentFile],
    *,
    policy: ChunkPolicy,
    methods: Sequence[str],
    encoder: TextEncoder,
    store: ChunkStore,
    parser: str = "fast",
    progress: Callable[[IndexProgress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    cache: VectorCache | None = None,
    force: bool = False,
    steps: IndexSteps | None = None,
) -> IndexReport:
    """Index every document under every method (see the module docstring).

    ``docs`` may mix loaded documents and ``DocumentFile``s (loaded one at a time, only when
    needed). A ``ChunkscopeError`` raised for one document (unreadable file, wrong
    password, parser failure) is recorded in its result and the run goes on; a lost store
    is recorded on the document it hit and ends the run (``halted``). ``force``
    re-embeds versions that are already complete. ``cache`` defaults to the one on-disk
    cache (``core.embed.cache.shared_cache``): a span any page or command has embedded
    before is read back, not encoded again.
    """
    if not methods or len(set(methods)) != len(methods):
        raise ValueError("methods must be a non-empty list without repeats")
    methods = registry.needs_indexing(methods)  # a fusion is indexed as its parts
    refuse_shared_ids(docs)
    if any(registry.get(m).needs_mean_pooling for m in methods):
        check_late_pooling(encoder)  # refuse before any document is touched
    started = time.perf_counter()
    run = _Run(
        policy=policy,
        methods=tuple(methods),
        encoder=encoder,
        store=store,
        parser=parser,
        steps=steps or default_steps(),
        progress=progress,
        should_cancel=should_cancel,
        cache=cache if cache is not None else shared_cache(),
        force=force,
        n_docs=len(docs),
    )
    results: list[DocIndexResult] = []
    cancelled, halted = False, None
    for i, item in enumerate(docs):
        run.doc_index = i
        doc_started = time.perf_counter()
        state = _initial_state(item)
        error = None
        try:
            run.check()
            _index_one(run, item, state)
        except IndexCancelled:
            cancelled = True
        except StoreLostError as exc:  # every later document would fail the same way
            error = halted = str(exc)
        except ChunkscopeError as exc:
            error = str(exc)
        results.append(
            DocIndexResult(
                doc_id=state.doc_id,
                source=state.source,
                sha256=state.sha256,
                n_chunks=state.n_chunks,
                indexed=tuple(state.indexed),
                skipped=state.skipped,
                truncated_chunks=state.truncated,
                error=error,
                elapsed_s=time.perf_counter() - doc_started,
            )
        )
        if cancelled or halted:
            break
        run.emit("done", state.doc_id, None, i + 1, len(docs))
    if not halted:
        _refresh_lexical(run, results)
    return IndexReport(
        documents=tuple(results),
        policy=policy,
        methods=tuple(methods),
        model=encoder.name,
        cancelled=cancelled,
        elapsed_s=time.perf_counter() - started,
        halted=halted,
    )
