"""The splitter an imported set's rows name, offered as the live policy that remakes it.

A row names its splitter in its metadata: ``splitter`` (``RecursiveCharacterTextSplitter``,
``langchain:RecursiveCharacterTextSplitter`` or a dotted path such as
``langchain_text_splitters.RecursiveCharacterTextSplitter``), with ``chunk_size`` and
``chunk_overlap`` when it has them (the keys LangChain's and LlamaIndex's splitters take,
which a pipeline copies into the metadata it writes). A bare class name takes the library
of the rows' shape (LangChain Documents: ``langchain``, LlamaIndex TextNodes:
``llamaindex``); plain chunk rows must say the library. Nothing here imports the library:
the name is resolved, and may fail in one line, only when the user takes the offer.

``set_splitter`` sums the rows up: the splitter most rows name, how many do, and the
parameters they agree on (a size or overlap the rows disagree on is left out); rows that
claim pages came from a per-page loader, so the offer runs the splitter page by page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from core.chunk.live_names import PER_PAGE, LiveName, parse_live_name

SPLITTER_KEY = "splitter"
SIZE_KEY = "chunk_size"
OVERLAP_KEY = "chunk_overlap"

_BY_SHAPE = {"langchain": "langchain", "llamaindex": "llamaindex"}
_BY_MODULE = (  # a dotted path's first parts -> the kind of live policy
    ("langchain_text_splitters", "langchain"),
    ("langchain.text_splitter", "langchain"),
    ("llama_index.core.node_parser", "llamaindex"),
    ("llama_index.core", "llamaindex"),
    ("chonkie", "chonkie"),
)
_KINDS = ("langchain", "llamaindex", "chonkie")


@dataclass(frozen=True, slots=True)
class NamedSplitter:
    """A splitter a row names: its live policy's name and the size and overlap it gives."""

    policy: str
    size: int | None = None
    overlap: int | None = None


def _whole(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _policy(text: str, shape: str) -> str | None:
    """The live policy's name for ``text`` as a row writes it, or None."""
    text = text.strip()
    kind, sep, target = text.partition(":")
    if sep and kind in _KINDS and target.isidentifier():
        return LiveName(kind, target).name
    if "." in text:
        module, _, name = text.rpartition(".")
        for prefix, found in _BY_MODULE:
            if (module == prefix or module.startswith(prefix + ".")) and name.isidentifier():
                return LiveName(found, name).name
        return None
    if text.isidentifier() and shape in _BY_SHAPE:
        return LiveName(_BY_SHAPE[shape], text).name
    return None


def splitter_named(meta: Mapping[str, Any], shape: str) -> NamedSplitter | None:
    """The splitter a row's metadata names (see the module doc), or None."""
    named = meta.get(SPLITTER_KEY)
    if not isinstance(named, str) or not named.strip():
        return None
    policy = _policy(named, shape)
    if policy is None:
        return None
    size = _whole(meta.get(SIZE_KEY))
    overlap = _whole(meta.get(OVERLAP_KEY))
    if size is not None and (size < 1 or (overlap is not None and overlap >= size)):
        size = overlap = None  # not a setting a splitter could have run at
    return NamedSplitter(policy=policy, size=size, overlap=overlap)


def set_splitter(
    named: Iterable[NamedSplitter | None], total: int, *, per_page: bool = False
) -> dict[str, Any] | None:
    """What the rows of a set name: ``policy``, ``rows`` naming it of ``of``, and ``size``
    and ``overlap`` when every such row gives the same; None when no row names one.
    ``per_page``: the rows came from a per-page loader (they claim pages), so the splitter
    remakes them page by page (``per_page=True`` in the policy's name)."""
    found = [n for n in named if n is not None]
    if not found:
        return None
    split, rows = Counter(n.policy for n in found).most_common(1)[0]
    policy = parse_live_name(split).with_params({PER_PAGE: True}).name if per_page else split
    own = [n for n in found if n.policy == split]
    sizes = {n.size for n in own}
    overlaps = {n.overlap for n in own}
    size = sizes.pop() if len(sizes) == 1 else None
    overlap = overlaps.pop() if len(overlaps) == 1 and size is not None else None
    return {
        "policy": policy,
        "rows": rows,
        "of": total,
        "size": size,
        "overlap": overlap,
        "per_page": per_page,
        "others": sorted({n.policy for n in found} - {split}),
    }


def offer_line(named: Mapping[str, Any]) -> str:
    """One sentence (no full stop) offering the named splitter as a live policy, with the
    flags to run it."""
    policy = named["policy"]
    rows, of = named["rows"], named["of"]
    share = "Every row names its" if rows == of else f"{rows:,} of {of:,} rows name their"
    setting = ""
    split = parse_live_name(policy)
    flags = f"--policy {split.kind}:{split.target}" + (" --per-page" if split.per_page else "")
    if named.get("size") is not None:
        overlap = named.get("overlap") or 0
        setting = f" at chunk_size {named['size']:,}, chunk_overlap {overlap:,}"
        flags += f" --size {named['size']} --overlap {overlap}"
    return (
        f"{share} splitter, {policy}{setting}: run it live with `{flags}` to move the "
        "boundaries the set only records (Chunks, Evaluate, Tune and `sweep` take it)"
    )
