"""What a chunking policy is: ``PolicySpec`` (its name, units and default sizes, the
function that cuts a document into pieces, the options it takes) and the options
(``OPTIONS``) a ``ChunkPolicy`` may turn on. The registry (``core.chunk.policy_registry``) keeps
the specs; the built-in ones are in ``core.chunk.builtin``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.errors import ChunkscopeError
from core.provenance.types import ChunkPolicy

if TYPE_CHECKING:
    from core.chunk.analysis import DocAnalysis
    from core.chunk.annotate import BlockIndex
    from core.chunk.spans import Piece
    from core.provenance.types import PolicyUnit

_LIVE_NAME = re.compile(r"^[a-z][a-z0-9_]*:\S")
PieceFn = Callable[["DocAnalysis", "BlockIndex", "ChunkPolicy"], "list[Piece]"]


class PolicyError(ChunkscopeError):
    """A policy that cannot be built from what the user asked for."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyOption:
    """A boolean ``ChunkPolicy`` field some policies accept: ``suffix`` ends the policy
    key when it is on, ``flag`` is its CLI flag, ``label``/``help`` its checkbox."""

    name: str
    suffix: str
    flag: str
    label: str
    help: str


OPTIONS: tuple[PolicyOption, ...] = (
    PolicyOption(
        name="table_header_prefix",
        suffix="thp",
        flag="--table-header-prefix",
        label="Table header prefix",
        help="Pieces of a split table leave room for its header rows, which the encoder "
        "reads first.",
    ),
    PolicyOption(
        name="skip_garbled",
        suffix="ng",
        flag="--skip-garbled",
        label="Leave garbled blocks out",
        help="Blocks flagged garbled (glyph soup, unmapped glyphs) are in no chunk, and no "
        "chunk spans across one.",
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicySpec:
    """One registered policy (see the module docstring).

    ``sizes`` maps each unit the policy counts in (``chars``, ``tokens``, ``sentences``)
    to its default ``(size, overlap)`` in that unit; ``unit`` is the default unit.
    ``pieces`` returns the stripped, exact spans of the chunks of one document (any
    order; ``chunk_document`` sorts them and builds the records). ``options`` names the
    ``OPTIONS`` it accepts; ``leaves_out`` the block kinds no chunk of it holds (its
    coverage excludes them). ``order`` sorts policies in lists (simpler first).
    ``fixed_boundaries``: the pieces do not depend on size or overlap (an imported chunk
    set, ``core.imported``): its one size is its longest chunk, and no control offers
    another. ``live``: the user's own splitter (``core.chunk.live_names``), whose size and
    overlap are the splitter's parameters in its own unit. ``revision``: what its pieces
    depend on beyond its name and sizes (an imported set's anchored spans, which a check
    of its claims or a new import under its name changes), for the caches of its chunks.
    """

    name: str
    summary: str
    sizes: dict[PolicyUnit, tuple[int, int]]
    unit: PolicyUnit
    pieces: PieceFn
    options: frozenset[str] = frozenset()
    leaves_out: frozenset[str] = frozenset()
    overlap_help: str = ""
    order: int = 100
    fixed_boundaries: bool = False
    live: bool = False
    revision: str = ""

    def __post_init__(self) -> None:
        live = _LIVE_NAME.match(self.name) is not None  # KIND:TARGET (core.chunk.live_names)
        if not live and (not self.name or not all(ch.isalnum() or ch == "_" for ch in self.name)):
            raise ValueError(f"a policy name is letters, digits and '_': {self.name!r}")
        if self.unit not in self.sizes:
            raise ValueError(f"policy {self.name}: default unit {self.unit!r} has no sizes")
        for unit, (size, overlap) in self.sizes.items():
            if size < 1 or not 0 <= overlap < size:
                raise ValueError(f"policy {self.name}: bad default sizes for {unit}")
        if unknown := self.options - {o.name for o in OPTIONS}:
            raise ValueError(f"policy {self.name}: unknown options {sorted(unknown)}")

    @property
    def units(self) -> tuple[PolicyUnit, ...]:
        """The units it counts in, in the order of ``sizes`` (the order of the choices)."""
        return tuple(self.sizes)

    def default_policy(self) -> ChunkPolicy:
        """The policy at its default unit and sizes, no option on."""
        size, overlap = self.sizes[self.unit]
        return ChunkPolicy(name=self.name, size=size, overlap=overlap, unit=self.unit)
