"""The dense methods' vectors: the registry's spec of a method composed with the
functions of ``core.embed`` that compute and cache its vectors.

``embed_chunks(doc, chunks, method, encoder)`` is the one call every stage makes for a
dense method's vectors, by name or spec; which encoder can run which method (an
embeddings server gives one vector per text, so it runs only the methods whose vectors
are texts encoded alone) is decided here too, from the same specs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from core import defaults
from core.embed.cache import CacheKey, VectorCache
from core.embed.contextual import contextual_vectors
from core.embed.encoder import Encoder
from core.embed.http import TokenStatesError
from core.embed.late import WindowPolicy, document_tokens, window_policy
from core.embed.late import check_late_pooling as _check_pooling
from core.embed.naive import naive_vectors
from core.embed.records import ChunkVector
from core.errors import ModelError
from core.methods import method_registry as registry
from core.methods.spec import DenseEmbedding, MethodSpec, UnknownMethodError
from core.protocols import TextEncoder
from core.provenance.types import Chunk, Document

Progress = Callable[[int, int], None]
# Computes one method's vectors of some chunks: (doc, chunks, policy, progress, cache).
ChunkVectors = Callable[
    [Document, Sequence[Chunk], WindowPolicy | None, Progress | None, VectorCache | None],
    list[ChunkVector],
]
# The vector functions that read whole texts through ``encode_texts`` and nothing else of
# the encoder (no token ids, no token states): they take any ``TextEncoder``.
_TEXTS_ALONE: tuple[Callable[..., list[ChunkVector]], ...] = (naive_vectors, contextual_vectors)


def encodes_texts_alone(method: str | MethodSpec) -> bool:
    """True when a dense method's vectors are texts encoded alone, so an encoder that
    returns one vector per text (an embeddings server) can make them; False for late
    chunking (token states) and for any embedding not known to need texts only."""
    spec = method if isinstance(method, MethodSpec) else registry.get(method)
    return spec.embedding is not None and any(spec.embedding.vectors is f for f in _TEXTS_ALONE)


def embedding_of(method: str | MethodSpec) -> tuple[MethodSpec, DenseEmbedding]:
    """The spec of a method ``embed_chunks`` encodes, and its embedding; ``ValueError``
    for a name that is not one (unknown, lexical, fused, or a dense method without an
    embedding)."""
    if isinstance(method, MethodSpec):
        spec: MethodSpec | None = method
    else:
        try:
            spec = registry.get(method)
        except UnknownMethodError:
            spec = None
    if spec is None or spec.embedding is None:
        name = method.name if isinstance(method, MethodSpec) else method
        known = ", ".join(registry.embedding_methods())
        raise ValueError(f"unknown method {name!r}: use one of {known}")
    return spec, spec.embedding


def _check_chunks(doc: Document, chunks: Sequence[Chunk]) -> None:
    for chunk in chunks:
        if chunk.doc_sha256 != doc.sha256 or doc.text[chunk.char_start : chunk.char_end] != (
            chunk.text
        ):
            raise ValueError(f"chunk {chunk.chunk_id} is not a span of document {doc.doc_id}")


def _cache_keys(
    doc: Document,
    chunks: Sequence[Chunk],
    spec: MethodSpec,
    encoder: TextEncoder,
    policy: WindowPolicy | None,
) -> list[CacheKey]:
    """Keys by what decides a vector: the model, the method, the span and the method's
    variant (its window policy, prefix or a table's header rows; ``DenseEmbedding.variant``)."""
    _, embedding = embedding_of(spec)
    return [
        CacheKey(
            model=encoder.identity,
            method=spec.name,
            doc_sha256=doc.sha256,
            char_start=c.char_start,
            char_end=c.char_end,
            variant=embedding.variant(doc, c, policy),
            max_tokens=encoder.max_tokens,
        )
        for c in chunks
    ]


def uncached_chunks(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str | MethodSpec,
    encoder: TextEncoder,
    cache: VectorCache | None,
) -> tuple[list[Chunk], WindowPolicy | None]:
    """The chunks whose vectors ``embed_chunks`` would compute (all without a cache), and
    the window policy it would use: what a cost estimate counts before a run. Reads no
    vector and counts no cache hit."""
    spec, embedding = embedding_of(method)
    policy = None
    if isinstance(encoder, Encoder) and embedding.windowed:
        policy = window_policy(encoder, doc_tokens=len(document_tokens(encoder, doc)))
    if cache is None or (embedding.windowed and policy is None):
        return list(chunks), policy  # a windowed method off a local model is never cached
    keys = _cache_keys(doc, chunks, spec, encoder, policy)
    return [c for k, c in zip(keys, chunks, strict=True) if not cache.holds(k)], policy


def embed_chunks(
    doc: Document,
    chunks: Sequence[Chunk],
    method: str | MethodSpec,
    encoder: TextEncoder,
    *,
    window_tokens: int | None = None,
    stride_tokens: int | None = None,
    progress: Progress | None = None,
    cache: VectorCache | None = None,
) -> list[ChunkVector]:
    """One :class:`ChunkVector` per chunk, in the order given.

    ``method`` is a registered method with an embedding
    (``core.methods.method_registry.embedding_methods()``), by name or spec.
    A method whose vectors are texts encoded alone (``encodes_texts_alone``) takes any
    ``TextEncoder``; any other needs a ``core.embed.Encoder`` (late chunking reads its
    token states), and another encoder is a ``ModelError`` that says why.

    ``window_tokens``/``stride_tokens`` size a windowed method's macro-windows in content
    tokens (defaults: ``late.default_window``/``late.default_stride``); other methods
    ignore them. ``progress(done, total)`` counts chunks (naive, contextual) or windows
    (late). With a ``cache``, only spans it has not seen are encoded.
    """
    spec, embedding = embedding_of(method)
    compute = _vector_function(spec, embedding, encoder)
    _check_chunks(doc, chunks)
    policy = None
    if isinstance(encoder, Encoder):
        if spec.needs_mean_pooling:
            check_late_pooling(encoder)
        if embedding.windowed:
            policy = window_policy(
                encoder,
                window_tokens=window_tokens,
                stride_tokens=stride_tokens,
                doc_tokens=len(document_tokens(encoder, doc)),
            )
    if not chunks:
        return []
    if cache is None:
        return compute(doc, chunks, policy, progress, None)
    keys = _cache_keys(doc, chunks, spec, encoder, policy)
    found = [cache.get(k, c.chunk_id) for k, c in zip(keys, chunks, strict=True)]
    missing = [i for i, record in enumerate(found) if record is None]
    if missing:
        fresh = compute(doc, [chunks[i] for i in missing], policy, progress, cache)
        for i, record in zip(missing, fresh, strict=True):
            cache.put(keys[i], record)
            found[i] = record
    elif progress is not None:
        progress(len(chunks), len(chunks))
    return [record for record in found if record is not None]


def _vector_function(
    spec: MethodSpec, embedding: DenseEmbedding, encoder: TextEncoder
) -> ChunkVectors:
    """``embedding.vectors`` bound to ``spec`` and ``encoder``; ``ModelError`` when the
    encoder is not a local ``Encoder`` and the method needs more than texts encoded alone."""
    if isinstance(encoder, Encoder):
        local = encoder

        def on_local(
            doc: Document,
            chunks: Sequence[Chunk],
            policy: WindowPolicy | None,
            progress: Progress | None,
            cache: VectorCache | None,
        ) -> list[ChunkVector]:
            return embedding.vectors(
                spec, doc, chunks, local, policy=policy, progress=progress, cache=cache
            )

        return on_local
    found = next((f for f in _TEXTS_ALONE if embedding.vectors is f), None)
    if found is None:
        needs = (
            "pools the token states of a whole document"
            if embedding.windowed or spec.needs_mean_pooling
            else "encodes token ids"
        )
        raise ModelError(
            f"the {spec.name} method {needs}, and {encoder.name} gives only one vector per "
            "text: use a local model (load_encoder, --model) for it"
        )
    texts_alone = found

    def on_texts(
        doc: Document,
        chunks: Sequence[Chunk],
        policy: WindowPolicy | None,
        progress: Progress | None,
        cache: VectorCache | None,
    ) -> list[ChunkVector]:
        return texts_alone(
            spec, doc, chunks, encoder, policy=policy, progress=progress, cache=cache
        )

    return on_texts


def check_late_pooling(encoder: TextEncoder) -> None:
    """``PoolingError`` when ``encoder`` cannot give late chunking's vectors (not
    mean-pooled), naming the registered methods that can run on it instead."""
    others = [m for m in registry.embedding_methods() if not registry.get(m).needs_mean_pooling]
    _check_pooling(encoder, instead=others)


# -- which methods an embeddings server can run ------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodSupport:
    """``usable``: the methods an :class:`HttpEncoder` can run, in the order asked;
    ``refused``: each other method with the one-line reason."""

    usable: tuple[str, ...]
    refused: Mapping[str, str]


def _part_refusal(part: str) -> str | None:
    """Why the stored method ``part`` cannot run on an embeddings server, or None."""
    spec = registry.get(part)
    if spec.family != "dense" or encodes_texts_alone(spec):
        return None
    if (spec.embedding is not None and spec.embedding.windowed) or spec.needs_mean_pooling:
        return (
            f"{part} pools the token states of a whole document, and an embeddings server "
            "returns only one vector per text"
        )
    return f"{part} encodes token ids with a local model, which an embeddings server does not take"


def method_support(methods: Iterable[str] | None = None) -> MethodSupport:
    """Which of ``methods`` (default: every registered one) run on an
    :class:`HttpEncoder`. Lexical methods need no encoder; a dense method runs when its
    vectors are texts encoded alone; a fusion runs when all its parts do."""
    names = registry.base_methods() if methods is None else tuple(methods)
    usable: list[str] = []
    refused: dict[str, str] = {}
    for raw in names:
        name = registry.get(raw).name
        for part in registry.get(name).indexed_parts:
            reason = _part_refusal(part)
            if reason is not None:
                refused[name] = reason if part == name else f"{name} fuses {part}, and {reason}"
                break
        else:
            usable.append(name)
    return MethodSupport(usable=tuple(dict.fromkeys(usable)), refused=refused)


def http_default_methods() -> tuple[str, ...]:
    """The methods an evaluation over an embeddings server starts on: those of the
    side-by-side comparison's defaults (``core.defaults.COMPARED``) that it can run."""
    return method_support(defaults.COMPARED).usable


def require_usable(methods: Iterable[str]) -> None:
    """``TokenStatesError`` (one line: the first refused method, why, and what to use
    instead) when any of ``methods`` cannot run on an embeddings server."""
    support = method_support(methods)
    if not support.refused:
        return
    name, reason = next(iter(support.refused.items()))
    instead = ", ".join(method_support().usable)
    raise TokenStatesError(
        f"{reason}: with --embed-url use {instead}, or run {name} with a local --model"
    )
