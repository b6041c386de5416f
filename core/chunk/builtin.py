"""The built-in policies as registry entries (``core.chunk.policy_registry``).

Default sizes suit all-MiniLM-L6-v2, whose window is 256 tokens including ``[CLS]`` and
``[SEP]``: ``fixed`` 800/100 chars (English prose runs about 4-5 chars a token) or 200/40
tokens; ``sentence`` 5/1 sentences; ``structure`` 240/24 tokens or 1000/100 chars.
``fixed`` counts chars unless told otherwise (the usual baseline); ``structure`` counts
tokens, because chars are a poor proxy outside English (1000 chars of the German GeoTopo
thesis are about 420 tokens, far over the window).
"""

from __future__ import annotations

from core.chunk.fixed import fixed_pieces
from core.chunk.policy_spec import PolicySpec
from core.chunk.sentence import sentence_pieces
from core.chunk.structure import EXCLUDED_KINDS, structure_pieces

_SPECS: tuple[PolicySpec, ...] = (
    PolicySpec(
        name="fixed",
        summary="windows of a fixed size with overlap, blind to blocks and sentences",
        sizes={"chars": (800, 100), "tokens": (200, 40)},
        unit="chars",
        pieces=fixed_pieces,
        options=frozenset({"skip_garbled"}),
        overlap_help="How much of each window's end the next window repeats.",
        order=0,
    ),
    PolicySpec(
        name="sentence",
        summary="windows of whole sentences, block boundaries as hard breaks",
        sizes={"sentences": (5, 1)},
        unit="sentences",
        pieces=sentence_pieces,
        options=frozenset({"skip_garbled"}),
        overlap_help="How many sentences of each window the next one repeats.",
        order=1,
    ),
    PolicySpec(
        name="structure",
        summary="sections and blocks kept whole; headings start chunks; headers left out",
        sizes={"chars": (1000, 100), "tokens": (240, 24)},
        unit="tokens",
        pieces=structure_pieces,
        options=frozenset({"table_header_prefix", "skip_garbled"}),
        leaves_out=EXCLUDED_KINDS,
        overlap_help="Used only where one block is too big for a chunk and is split at "
        "sentences: the pieces repeat up to this much. Chunks of separate blocks never "
        "overlap.",
        order=2,
    ),
)


def builtin_specs() -> tuple[PolicySpec, ...]:
    """The built-in policies, registered by ``core.chunk`` when it is first imported."""
    return _SPECS
