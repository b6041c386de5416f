"""Parse and chunk results for the pages, cached by (doc id, sha256, parameters).

Parse and chunk results are immutable (tuples of frozen records), so they are shared with
``st.cache_resource(max_entries=…)``: ``st.cache_data`` would unpickle a copy on every
access (77 ms for the 3,459 blocks of a 117-page PDF, several times per slider move).
The first parse of a big document, or any run of the layout model, shows its progress.

A parser other than the fast one runs the layout model (about half a second a page): only
an editor starts it. A viewer reads what is already parsed in this process (by an editor)
and is shown the fast parser's blocks otherwise, with a line saying so (``usable_parser``),
however the parser's name reached this module. An editor may set the model's time limit
for their session (``Key.LAYOUT_LIMIT_S``; else ``core.ingest.limits``'s ``layout_s``).
"""

from __future__ import annotations

import time
from typing import cast

import streamlit as st

from core.chunk import ChunkStats, chunk_document, chunk_stats, policy_registry
from core.errors import ChunkscopeError
from core.formats import PARSERS, ParseResult, ParserName, parse_document
from core.ingest import limits
from core.provenance.types import Block, Chunk, ChunkPolicy, Document
from workbench.documents import session
from workbench.documents.reads import read_seconds
from workbench.frame import roles
from workbench.state import Key
from workbench.widgets.wording import md

BIG_DOCUMENT_PAGES = 20  # the fast parser shows a status box from this many pages


@st.cache_resource(max_entries=24, show_spinner=False)
def _parse_cached(
    doc_id: str, sha256: str, parser: str, _doc: Document, _done: ParseResult | None = None
) -> ParseResult:
    """The cached parse; ``_done`` hands in a result parsed outside (with a progress bar,
    which must not be drawn inside a cached function: Streamlit would replay it)."""
    # parse_document refuses a name outside PARSERS with a user error
    return _done if _done is not None else parse_document(_doc, parser=cast(ParserName, parser))


_parsed_keys: set[tuple[str, str, str]] = set()


def usable_parser(doc: Document, parser: str) -> str:
    """``parser``, or ``"fast"`` where this session is a viewer and nobody has run
    ``parser`` on this version of ``doc`` in this process (a viewer starts no model run)."""
    if parser == "fast" or roles.is_editor() or (doc.doc_id, doc.sha256, parser) in _parsed_keys:
        return parser
    return "fast"


def parsed(doc: Document, parser: str, *, quiet: bool = False) -> ParseResult:
    """Blocks of ``doc`` by ``parser`` (``usable_parser``: a viewer's fall back to the fast
    parser, with a line saying why); the first parse of a version shows its progress.
    A parse that fails with a user error (the layout model past its time limit) shows
    its line in place and stops the page there. ``quiet``: nothing drawn, for a caller
    inside a cached function (Streamlit replays what a cached function draws: a status
    box drawn there comes back on every cache hit as a spinner that never ends)."""
    if quiet and usable_parser(doc, parser) == "fast":  # the layout model is never run quietly
        _parsed_keys.add((doc.doc_id, doc.sha256, "fast"))
        return _parse_cached(doc.doc_id, doc.sha256, "fast", doc)
    if (used := usable_parser(doc, parser)) != parser:
        st.info(
            f"The {md(parser)} parser has not been run on {md(doc.doc_id)} yet, and only an "
            "editor starts it (it runs the layout model, about half a second a page): "
            "showing the fast parser's blocks. Sign in to edit in the sidebar to run it.",
            icon=":material/lock:",
        )
    try:
        return _parsed(doc, used)
    except ChunkscopeError as exc:
        st.error(md(str(exc)))
        if used != "fast" and roles.is_editor():
            st.caption("An editor can raise the layout model's time limit on the Parse page.")
        st.stop()


def layout_limit_s() -> float:
    """The layout model's time limit for this session, in seconds: an editor's own, else
    the configured one (``CHUNKSCOPE_LAYOUT_TIMEOUT_S``, default 60)."""
    own = st.session_state.get(Key.LAYOUT_LIMIT_S)
    return float(own) if own else limits.value("layout_s")


def _parsed(doc: Document, parser: str) -> ParseResult:
    key = (doc.doc_id, doc.sha256, parser)
    quick = parser == "fast" and len(doc.pages) < BIG_DOCUMENT_PAGES
    if key in _parsed_keys or quick:
        result = _parse_cached(*key, doc)
    else:
        size = f"{len(doc.pages)} pages" if doc.is_paged else f"{len(doc.text):,} chars"
        by_page = doc.is_paged and parser == "layout"  # the layout model reads page by page
        label = f"Parsing {doc.doc_id} ({size}) with the {parser} parser…"
        with st.status(label, expanded=by_page) as status:
            started = time.perf_counter()
            bar = st.progress(0.0) if by_page else None

            def tick(done: int, total: int) -> None:
                if bar is not None:
                    bar.progress(
                        done / max(total, 1), text=f"Layout model: {done} of {total} pages read"
                    )

            with limits.override(layout_s=layout_limit_s() if parser != "fast" else None):
                done = parse_document(doc, parser=cast(ParserName, parser), progress=tick)
            result = _parse_cached(*key, doc, done)
            if bar is not None:
                bar.empty()
            status.update(
                label=f"Parsed {size} into {len(result.blocks):,} blocks in "
                f"{time.perf_counter() - started:.1f} s ({parser} parser)",
                state="complete",
                expanded=False,
            )
        _parsed_keys.add(key)
    st.session_state[Key.PARSE_TIMES][key] = result.elapsed_s
    return result


@st.cache_resource(max_entries=96, show_spinner=False)
def _chunk_cached(
    doc_id: str,
    sha256: str,
    parser: str,
    policy_key: str,
    _doc: Document,
    _blocks: tuple[Block, ...],
    _policy: ChunkPolicy,
) -> tuple[Chunk, ...]:
    return tuple(chunk_document(_doc, _blocks, _policy, tokenizer=session.tokenizer()))


def _policy_key(policy: ChunkPolicy) -> str:
    """The policy's key, with the revision of its pieces where they can change under it
    (an imported set checked, or imported again: ``PolicySpec.revision``)."""
    spec = policy_registry.find(policy.name)
    return f"{policy.key}@{spec.revision}" if spec is not None and spec.revision else policy.key


def chunked(
    doc: Document, parser: str, policy: ChunkPolicy, *, quiet: bool = False
) -> tuple[Chunk, ...]:
    """Chunks of ``doc`` under ``policy`` (its parse comes from the parse cache; ``quiet``
    as for ``parsed``)."""
    parser = usable_parser(doc, parser)
    blocks = parsed(doc, parser, quiet=quiet).blocks
    key = _policy_key(policy)
    return _chunk_cached(doc.doc_id, doc.sha256, parser, key, doc, blocks, policy)


@st.cache_resource(max_entries=96, show_spinner=False)
def _stats_cached(
    doc_id: str,
    sha256: str,
    parser: str,
    policy_key: str,
    window: int,
    _doc: Document,
    _chunks: tuple[Chunk, ...],
    _blocks: tuple[Block, ...],
) -> ChunkStats:
    return chunk_stats(_doc, _chunks, _blocks, session.tokenizer(), window)


def stats_of(doc: Document, parser: str, policy: ChunkPolicy, window: int) -> ChunkStats:
    """``core.chunk.chunk_stats`` of the cached chunks, itself cached."""
    parser = usable_parser(doc, parser)
    blocks = parsed(doc, parser).blocks
    chunks = chunked(doc, parser, policy)
    key = (doc.doc_id, doc.sha256, parser, _policy_key(policy), window)
    return _stats_cached(*key, doc, chunks, blocks)


def parse_times_line(doc: Document) -> str:
    """``Parse time: fast 0.4 s · layout not run yet``: the time each parser took on this
    version, after the time reading it took (its text, character map and, for a PDF,
    table search), when it was read in this process."""
    times = st.session_state[Key.PARSE_TIMES]
    parts = []
    for name in PARSERS:
        took = times.get((doc.doc_id, doc.sha256, name))
        parts.append(f"{name} {took:.2f} s" if took is not None else f"{name} not run yet")
    line = "Parse time: " + " · ".join(parts)
    read = read_seconds(doc)
    if read is None:
        return line
    what = "text, character map and tables" if doc.kind == "pdf" else "text"
    return f"{line}; reading it took {read:.2f} s ({what})"
