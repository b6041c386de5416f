"""The user's own splitter as a live policy: run on the canonical text each time a
document is chunked, every piece anchored by the import's machinery (``anchor``).

Kinds (names in ``core.chunk.live_names``):

* ``langchain:CLASS``: a class of ``langchain_text_splitters``;
* ``llamaindex:CLASS``: a text splitter of ``llama_index.core.node_parser``;
* ``chonkie:CLASS``: a chunker of ``chonkie``;
* ``py:package.module:factory``: ``factory(size, overlap, **params)`` returns an object
  with ``split_text(str) -> list[str]``, or a callable ``str -> list[str]``; its unit is
  ``factory.unit`` when set (``chars``, ``tokens`` or ``sentences``), else ``chars``.

``--size`` and ``--overlap`` are the splitter's own ``chunk_size`` and ``chunk_overlap``
(a ``py`` factory's first two arguments), in the splitter's own unit, which the policy's
summary states: characters for LangChain's character splitters and chonkie's default
character tokenizer; the splitter's tokenizer for LangChain's token splitters and for
LlamaIndex (tiktoken), which is not the model's. The sizes Chunkscope reports for a chunk
(``token_count``) are the model tokenizer's, as for every policy.

Each piece is anchored in ``doc.text`` like an imported chunk: ``exact`` when the piece,
its outer whitespace aside, is a slice of the text; ``aligned`` where the splitter
rewrote the text (joined lines, dropped separators), the chunk then holding the canonical
span the piece's words lie in. A piece that is ``ambiguous`` or ``missing`` is in no
chunk. ``anchor_counts`` says how many pieces were placed which way (the CLI's ``chunk``
prints it). With ``per_page=True`` the splitter runs on each page's text in turn and each
piece is anchored on its page.

The libraries are optional (``pip install 'chunkscope[splitters]'``): a missing one, an
unknown class, a splitter that will not build or that raises, ends in one
``SplitterError`` line naming it.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from core.bounded_cache import BoundedCache
from core.chunk import policy_registry as registry
from core.chunk.live_names import LiveName
from core.chunk.policy_spec import PolicyError, PolicySpec
from core.chunk.spans import Piece
from core.imported.anchor import anchor_document
from core.imported.shapes import ForeignChunk
from core.provenance.types import ChunkPolicy, Document

SplitFn = Callable[[str], list[str]]

_CHARS = (800, 100)  # the ``fixed`` policy's defaults, which suit the model's window
_TOKENS = (200, 40)


class SplitterError(PolicyError):
    """The user's splitter is missing, unknown, will not build or raised."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Kind:
    """One library: the module its classes live in, the package that installs it, and
    how a splitter is built (a class with ``chunk_size``/``chunk_overlap`` keywords, or a
    ``py`` factory with the size and overlap as its first arguments)."""

    kind: str
    module: str
    package: str
    build: Callable[[Any, int, int, dict[str, object], str], Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class AnchorCounts:
    """How the pieces of one chunking were placed: ``pieces`` in all, ``exact`` and
    ``aligned`` (in chunks), ``unplaced`` (ambiguous or missing: in no chunk)."""

    pieces: int
    exact: int
    aligned: int
    unplaced: int

    def line(self) -> str:
        text = f"{self.pieces:,} pieces from the splitter: {self.exact:,} exact"
        text += f", {self.aligned:,} aligned"
        if self.aligned:
            text += " (the splitter rewrote their text: the chunks hold the canonical spans)"
        if self.unplaced:
            text += f", {self.unplaced:,} not placed in the text (in no chunk)"
        return text


_PLACED: BoundedCache[tuple[str, str], tuple[list[Piece], AnchorCounts]] = BoundedCache(64)


def anchor_counts(doc: Document, policy: ChunkPolicy) -> AnchorCounts | None:
    """How the pieces of ``doc`` under the live ``policy`` were placed, once it has been
    chunked in this process (None before, or for another kind of policy)."""
    found = _PLACED.peek((doc.sha256, policy.key))
    return None if found is None else found[1]


# -- the libraries ---------------------------------------------------------------------


def _keywords(
    cls: Any, size: int, overlap: int, params: dict[str, object], name: str
) -> dict[str, Any]:
    """``chunk_size``/``chunk_overlap`` where the class takes them; an overlap a class
    cannot take is refused rather than dropped."""
    try:
        accepted: Mapping[str, inspect.Parameter] = inspect.signature(cls).parameters
    except (TypeError, ValueError):
        accepted = {}
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    out: dict[str, Any] = {}
    if "chunk_size" in accepted or open_kwargs:
        out["chunk_size"] = size
    else:  # its pieces would not follow --size: every size would give the same chunks
        raise SplitterError(
            f"{name} takes no chunk_size: import its chunks instead (chunkscope import-chunks)"
        )
    if "chunk_overlap" in accepted or open_kwargs:
        out["chunk_overlap"] = overlap
    elif overlap:
        raise SplitterError(f"{name} takes no chunk_overlap: use --overlap 0")
    return out | params


def _build_class(cls: Any, size: int, overlap: int, params: dict[str, object], name: str) -> Any:
    return cls(**_keywords(cls, size, overlap, params, name))


def _build_factory(
    factory: Any, size: int, overlap: int, params: dict[str, object], name: str
) -> Any:
    return factory(size, overlap, **params)


KINDS: dict[str, Kind] = {
    "langchain": Kind(
        kind="langchain", module="langchain_text_splitters", package="langchain-text-splitters",
        build=_build_class,
    ),
    "llamaindex": Kind(
        kind="llamaindex", module="llama_index.core.node_parser", package="llama-index-core",
        build=_build_class,
    ),
    "chonkie": Kind(kind="chonkie", module="chonkie", package="chonkie", build=_build_class),
    "py": Kind(kind="py", module="", package="", build=_build_factory),
}  # fmt: skip


def _target(live: LiveName) -> tuple[Kind, Any]:
    """The class or factory a live name names; ``SplitterError`` when it cannot be had."""
    kind = KINDS[live.kind]
    if live.kind == "py":
        module_name, _, attr = live.target.partition(":")
        if not attr:
            raise SplitterError(f"py:{live.target}: name the factory as py:package.module:factory")
        package = ""
    else:
        module_name, attr, package = kind.module, live.target, kind.package
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        if live.kind == "py":
            raise SplitterError(f"{live.name}: cannot import {module_name} ({exc})") from None
        raise SplitterError(
            f"{live.name}: {module_name} is not installed: pip install {package}"
        ) from None
    except Exception as exc:  # the user's module failed while importing
        said = _one_line(exc)
        raise SplitterError(f"{live.name}: importing {module_name} raised {said}") from None
    found = getattr(module, attr, None)
    if found is None or not callable(found):
        raise SplitterError(f"{live.name}: {module_name} has no splitter {attr!r}")
    return kind, found


def _unit(live: LiveName, target: Any) -> str:
    if live.kind == "py":
        unit = str(getattr(target, "unit", "chars"))
        if unit not in ("chars", "tokens", "sentences"):
            raise SplitterError(f"{live.name}: its unit {unit!r} is not chars, tokens or sentences")
        return unit
    if live.kind == "llamaindex":
        return "tokens"
    if live.kind == "langchain" and "Token" in live.target:
        return "tokens"
    if live.kind == "chonkie":
        tokenizer = dict(live.params).get("tokenizer", "character")
        return "chars" if tokenizer in ("character", "char") else "tokens"
    return "chars"


def _whose(live: LiveName, unit: str) -> str:
    if unit == "chars":
        return "characters"
    if live.kind == "py":
        return f"{unit}, as the factory counts them"
    return "tokens of the splitter's own tokenizer (not the model's)"


def _texts(result: Any, name: str) -> list[tuple[str, int | None]]:
    """A splitter's pieces as ``(text, claimed start)``: strings, or objects with
    ``text``/``page_content`` (chonkie's chunks carry ``start_index``)."""
    if isinstance(result, str) or not hasattr(result, "__iter__"):
        raise SplitterError(f"{name} returned {type(result).__name__}, not a list of strings")
    out: list[tuple[str, int | None]] = []
    for item in result:
        if isinstance(item, str):
            out.append((item, None))
            continue
        text = getattr(item, "text", None) or getattr(item, "page_content", None)
        if not isinstance(text, str):
            raise SplitterError(f"{name} returned a {type(item).__name__}, not a string")
        start = getattr(item, "start_index", None)
        out.append((text, start if isinstance(start, int) else None))
    return out


def splitter_for(live: LiveName, size: int, overlap: int) -> SplitFn:
    """The user's splitter at ``size``/``overlap``, as ``str -> list[str]``."""
    kind, target = _target(live)
    params = live.splitter_params()
    try:
        built = kind.build(target, size, overlap, params, live.name)
    except SplitterError:
        raise
    except Exception as exc:  # the user's code: any failure is theirs, told in one line
        raise SplitterError(f"{live.name} would not build: {_one_line(exc)}") from None
    for method in ("split_text", "chunk"):
        split = getattr(built, method, None)
        if callable(split):
            return split
    if callable(built):
        return built
    kind_name = type(built).__name__
    raise SplitterError(f"{live.name}: {kind_name} has no split_text and is not callable")


def _one_line(exc: BaseException) -> str:
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


# -- pieces ----------------------------------------------------------------------------


def _split(split: SplitFn, text: str, name: str) -> list[tuple[str, int | None]]:
    try:
        result = split(text)
    except Exception as exc:  # the user's splitter raised
        raise SplitterError(f"{name} raised {_one_line(exc)}") from None
    return _texts(result, name)


def live_pieces(doc: Document, policy: ChunkPolicy, live: LiveName) -> list[Piece]:
    """The pieces of ``doc`` under the live ``policy``, anchored (see the module doc)."""
    key = (doc.sha256, policy.key)
    found = _PLACED.get(key)
    if found is not None:
        return found[0]
    split = splitter_for(live, policy.size, policy.overlap)
    foreign: list[ForeignChunk] = []
    if live.per_page and doc.is_paged:
        for number, page in enumerate(doc.pages, start=1):
            for text, _ in _split(split, doc.text[page.char_start : page.char_end], live.name):
                foreign.append(_foreign(len(foreign), text, doc, number, None))
    else:
        for text, start in _split(split, doc.text, live.name):
            foreign.append(_foreign(len(foreign), text, doc, None, start))
    foreign = [f for f in foreign if f.text.strip()]
    anchors = anchor_document(doc, foreign)
    pieces = []
    exact = aligned = 0
    for a in anchors:
        if a.char_start is None or a.char_end is None:
            continue
        exact += a.anchor == "exact"
        aligned += a.anchor == "aligned"
        oversize = policy.unit == "chars" and a.char_end - a.char_start > policy.size
        pieces.append(Piece(char_start=a.char_start, char_end=a.char_end, oversize=oversize))
    counts = AnchorCounts(
        pieces=len(foreign), exact=exact, aligned=aligned, unplaced=len(foreign) - exact - aligned
    )
    _PLACED.put(key, (pieces, counts))
    return pieces


def _foreign(index: int, text: str, doc: Document, page: int | None, start: int | None):
    return ForeignChunk(
        index=index, text=text, source=doc.doc_id, claimed_start=start,
        claimed_end=None if start is None else start + len(text), page=page, foreign_id=None,
    )  # fmt: skip


def resolve(live: LiveName) -> PolicySpec:
    """The spec of a live name: the splitter is found now (a missing library or an
    unknown class fails here, in one line) and run when a document is chunked."""
    _, target = _target(live)
    unit = _unit(live, target)
    sizes = {"tokens": _TOKENS, "sentences": (5, 1)}.get(unit, _CHARS)
    if live.kind == "chonkie" and "chunk_overlap" not in _accepted(target):
        sizes = (sizes[0], 0)
    where = "page by page" if live.per_page else "on the whole text"
    summary = (
        f"your {live.kind} splitter {live.target}, run {where}: the size and overlap are its "
        f"chunk_size and chunk_overlap in {_whose(live, unit)}; each piece anchored in the "
        "text, exact or aligned"
    )

    def pieces(analysis: Any, _index: Any, policy: ChunkPolicy) -> list[Piece]:
        return live_pieces(analysis.doc, policy, live)

    return PolicySpec(
        name=live.name,
        summary=summary,
        sizes={unit: sizes},  # type: ignore[dict-item]
        unit=unit,  # type: ignore[arg-type]
        pieces=pieces,
        overlap_help="The splitter's chunk_overlap, in its own unit.",
        order=60,
        live=True,
    )


def _accepted(target: Any) -> set[str]:
    try:
        return set(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return set()


def register_resolvers() -> None:
    """Let every kind's names resolve (``core.imported`` calls this when imported)."""
    for kind in KINDS:
        registry.add_resolver(kind, resolve)
