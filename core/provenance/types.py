"""Provenance records shared by every stage.

Every span is half-open, ``[char_start, char_end)``, in characters (Python ``str``
indices, i.e. code points) of one document's canonical text ``Document.text``. The
invariant ``doc.text[char_start:char_end] == text`` holds for every block, chunk and
citation; records check what they can in ``__post_init__``.

Page numbers are 1-based everywhere. Boxes are ``bbox_pt = (x0, y0, x1, y1)`` in PDF
points (1/72 inch) with the origin at the top-left corner of the page as rendered
(PyMuPDF's page coordinates: y grows downwards); ``core.provenance.geometry`` holds the box type
and its geometry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np

from core.provenance.cues import Cue as Cue  # re-exported: a Document holds its cues
from core.provenance.cues import cue_time_ranges as cue_time_ranges
from core.provenance.geometry import BBox as BBox  # re-exported: records name their boxes by it

DocKind = str  # the name of the document's format in ``core.formats.format_registry``
BlockKind = Literal[
    "heading", "paragraph", "list", "table", "code", "caption", "header", "footer", "turn"
]
BLOCK_KINDS: tuple[str, ...] = get_args(BlockKind)
PolicyUnit = Literal["chars", "tokens", "sentences"]


def _check_span(owner: str, char_start: int, char_end: int, text: str) -> None:
    if not 0 <= char_start <= char_end:
        raise ValueError(f"{owner}: bad span [{char_start}, {char_end})")
    if len(text) != char_end - char_start:
        raise ValueError(
            f"{owner}: text has {len(text)} chars but span [{char_start}, {char_end}) "
            f"has {char_end - char_start}"
        )


def _check_header_rows(
    owner: str, rows: tuple[tuple[int, int], ...], low: int, high: int | None
) -> None:
    """Header row spans are non-empty, ordered, disjoint and (for a block) inside it."""
    previous = low
    for start, end in rows:
        if not previous <= start < end or (high is not None and end > high):
            raise ValueError(f"{owner}: bad header row span [{start}, {end})")
        previous = end


@dataclass(frozen=True, slots=True, kw_only=True)
class Page:
    """One PDF page: its slice of the canonical text and its size in points."""

    number: int
    char_start: int
    char_end: int
    width_pt: float
    height_pt: float
    has_text: bool
    rotation_deg: int = 0
    # The page's characters were read from its image by OCR (``core.ingest.ocr``).
    read_by_ocr: bool = False

    def __post_init__(self) -> None:
        if self.number < 1:
            raise ValueError(f"page numbers are 1-based, got {self.number}")
        if not 0 <= self.char_start <= self.char_end:
            raise ValueError(f"page {self.number}: bad span")


@dataclass(frozen=True, slots=True, kw_only=True)
class TextLine:
    """One laid-out line of the source, in reading order; the raw material of parsers.

    ``source_block`` numbers PyMuPDF's text blocks on the page (reading order), so lines
    sharing it were one block in the layout. For reflowable text, each physical line of
    the file is a ``TextLine`` with ``page == 0`` and no box or font.
    """

    char_start: int
    char_end: int
    page: int
    bbox_pt: BBox | None
    source_block: int
    font: str = ""
    size_pt: float = 0.0
    bold: bool = False
    italic: bool = False
    monospace: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class OcrLine:
    """A line of the canonical text read from a page image by OCR: its span (the line's
    characters, the spaces between its words included), its 1-based page and the
    engine's confidence for the line, 0-1 (``core.ingest.ocr``)."""

    char_start: int
    char_end: int
    page: int
    confidence: float

    def __post_init__(self) -> None:
        if not 0 <= self.char_start < self.char_end:
            raise ValueError(f"OcrLine: bad span [{self.char_start}, {self.char_end})")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"OcrLine: confidence {self.confidence} is not in [0, 1]")


@dataclass(frozen=True, slots=True, kw_only=True)
class OutlineEntry:
    """A bookmark of the PDF outline (table of contents): level is 1-based."""

    level: int
    title: str
    page: int
    y_pt: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkupBlock:
    """A block the source's own markup declares (an HTML element, a Word paragraph
    style): its kind, heading level (0 for other kinds) and span of the canonical text."""

    kind: str
    level: int
    char_start: int
    char_end: int


_SHORT_SPAN = 4096  # characters up to which a span's pages are read without numpy's sort


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class Document:
    """A source file and its canonical text.

    For PDFs, ``char_page[i]`` is the 1-based page of ``text[i]`` (0 for characters the
    builder inserted, such as line breaks) and ``char_bbox_pt[i]`` its box (NaN for
    inserted characters). Reflowable documents (every format but PDF) have no pages and
    both maps are ``None``. ``kind`` names the format (``core.formats.format_registry``).
    Transcripts have ``cues``, sorted by ``char_start`` and not overlapping. Formats
    with markup (HTML, Word) list the blocks it declares in ``markup_blocks``. For HTML,
    ``char_raw_span[i]`` is the half-open byte range of ``source_bytes`` (the raw file)
    that ``text[i]`` came from, ``(-1, -1)`` for inserted characters. A PDF's lines read
    by OCR are listed in ``ocr_lines`` (sorted, disjoint): their characters' provenance is
    the engine's, with its confidence.
    """

    doc_id: str
    sha256: str
    source: str
    kind: DocKind
    text: str
    title: str
    pages: tuple[Page, ...] = ()
    lines: tuple[TextLine, ...] = ()
    outline: tuple[OutlineEntry, ...] = ()
    char_page: np.ndarray | None = None
    char_bbox_pt: np.ndarray | None = None
    cues: tuple[Cue, ...] = ()
    markup_blocks: tuple[MarkupBlock, ...] = ()
    ocr_lines: tuple[OcrLine, ...] = ()
    char_raw_span: np.ndarray | None = None
    source_bytes: bytes | None = field(default=None, repr=False)
    pdf_bytes: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.char_page is not None and len(self.char_page) != len(self.text):
            raise ValueError("char_page must have one entry per character of text")
        if self.char_bbox_pt is not None and len(self.char_bbox_pt) != len(self.text):
            raise ValueError("char_bbox_pt must have one row per character of text")
        if self.char_raw_span is not None and len(self.char_raw_span) != len(self.text):
            raise ValueError("char_raw_span must have one row per character of text")

    @property
    def is_paged(self) -> bool:
        """Whether the document has pages (and so boxes and a rendered image)."""
        return bool(self.pages)

    @property
    def pages_without_text(self) -> tuple[int, ...]:
        return tuple(p.number for p in self.pages if not p.has_text)

    def pages_of(self, char_start: int, char_end: int) -> tuple[int, ...]:
        """Sorted 1-based pages that hold at least one character of the span."""
        if self.char_page is None or char_end <= char_start:
            return ()
        if char_end - char_start <= _SHORT_SPAN:  # a chunk's or a word's: read as a list
            held = set(self.char_page[char_start:char_end].tolist())
            return tuple(sorted(p for p in held if p > 0))
        found = np.unique(self.char_page[char_start:char_end])
        return tuple(int(p) for p in found if p > 0)

    def time_range(self, char_start: int, char_end: int) -> tuple[float, float] | None:
        """``(start_s, end_s)`` of the cues that hold a character of the span, or ``None``
        (no cues, or the span holds only characters outside every cue)."""
        return cue_time_ranges(self.cues, [(char_start, char_end)])[0]

    def raw_range(self, char_start: int, char_end: int) -> tuple[int, int] | None:
        """The byte range of the raw source the span came from: from its first mapped
        character's first byte to its last one's end; ``None`` without a raw map or when
        the span holds only inserted characters."""
        if self.char_raw_span is None or char_end <= char_start:
            return None
        rows = self.char_raw_span[char_start:char_end]
        mapped = rows[rows[:, 0] >= 0]
        if not len(mapped):
            return None
        return int(mapped[:, 0].min()), int(mapped[:, 1].max())

    def slice(self, char_start: int, char_end: int) -> str:
        return self.text[char_start:char_end]


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """A typed region of the document: one contiguous span of the canonical text.

    A transcript ``turn`` carries its ``speaker`` ("" if unknown) and its time range in
    seconds (``start_s``/``end_s``); other blocks have ``None`` times.
    """

    doc_id: str
    doc_sha256: str
    kind: BlockKind
    char_start: int
    char_end: int
    text: str
    page: int
    bbox_pt: BBox | None
    heading_path: tuple[str, ...] = ()
    level: int = 0
    speaker: str = ""
    start_s: float | None = None
    end_s: float | None = None
    # A table's column-heading rows: half-open spans, in order, inside the block.
    header_rows: tuple[tuple[int, int], ...] = ()
    # The text is not language (core.parse.garbled): its offsets hold, its words do not.
    garbled: bool = False

    def __post_init__(self) -> None:
        _check_span("Block", self.char_start, self.char_end, self.text)
        if self.kind not in BLOCK_KINDS:
            raise ValueError(f"unknown block kind {self.kind!r}")
        if (self.kind == "heading") != (self.level > 0):
            raise ValueError("a heading has a level >= 1, other blocks level 0")
        if self.header_rows:
            _check_header_rows("Block", self.header_rows, self.char_start, self.char_end)
            if self.kind != "table":
                raise ValueError("only a table block has header rows")


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkPolicy:
    """A chunking policy as data: hashable, printable, stored with every chunk.

    Plain data: ``name`` names a policy of the registry (``core.chunk.policy_registry``), which
    checks, where policies are made from input (``policy_from_args``,
    ``registry.policy_from_dict``) and where one is used (``chunk_document``), that it
    exists, counts in ``unit`` and accepts every option that is on. ``size``/``overlap`` are
    counted in ``unit``: characters, tokens of the configured tokenizer, or sentences.
    Options (each ends the key with its suffix, and appears in ``to_dict``, only when on):
    ``table_header_prefix`` (``-thp``): a piece of a split table leaves room for its
    table's header rows, which the encoder reads before it (``Chunk.encoder_text``);
    ``skip_garbled`` (``-ng``): blocks flagged garbled are in no chunk.
    """

    name: str
    size: int
    overlap: int = 0
    unit: PolicyUnit = "chars"
    table_header_prefix: bool = False
    skip_garbled: bool = False

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ValueError("size must be at least 1")
        if not 0 <= self.overlap < self.size:
            raise ValueError("overlap must be at least 0 and smaller than size")

    @property
    def key(self) -> str:
        """Stable short name, e.g. ``fixed-chars-800-100`` (``...-thp``, ``...-ng`` with
        the options)."""
        base = f"{self.name}-{self.unit}-{self.size}-{self.overlap}"
        return base + "-thp" * self.table_header_prefix + "-ng" * self.skip_garbled

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "name": self.name,
            "size": self.size,
            "overlap": self.overlap,
            "unit": self.unit,
        }
        if self.table_header_prefix:
            out["table_header_prefix"] = True
        if self.skip_garbled:
            out["skip_garbled"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> ChunkPolicy:
        """The policy ``to_dict`` wrote (unchecked: ``registry.policy_from_dict`` checks)."""
        return cls(
            name=str(data["name"]),
            size=int(data["size"]),  # type: ignore[call-overload]
            overlap=int(data.get("overlap", 0)),  # type: ignore[call-overload]
            unit=data.get("unit", "chars"),  # type: ignore[arg-type]
            table_header_prefix=bool(data.get("table_header_prefix", False)),
            skip_garbled=bool(data.get("skip_garbled", False)),
        )


def chunk_id_maker(doc_id: str, doc_sha256: str, policy: ChunkPolicy) -> Callable[[int, int], str]:
    """``(start, end) -> chunk_id`` for one document version and policy (the prefix of the
    hashed bytes is built once, so chunking a whole document pays it once)."""
    prefix = f"{doc_id}\x1f{doc_sha256}\x1f{policy.key}\x1f"
    blake2b = hashlib.blake2b

    def chunk_id(start: int, end: int) -> str:
        return "c" + blake2b(f"{prefix}{start}\x1f{end}".encode(), digest_size=10).hexdigest()

    return chunk_id


def make_chunk_id(doc_id: str, doc_sha256: str, policy: ChunkPolicy, start: int, end: int) -> str:
    """Stable id: same document bytes, policy and span give the same id in every run."""
    return chunk_id_maker(doc_id, doc_sha256, policy)(start, end)


@dataclass(frozen=True, slots=True, kw_only=True)
class Chunk:
    """A retrievable unit: one contiguous span, identical under every embedding method.

    ``oversize`` is set when a single unit that may not be cut (a sentence, a list item,
    a table row) alone exceeds the policy size, so the chunk is larger than asked.
    ``start_s``/``end_s``: the time range in seconds of a transcript chunk's cues
    (``Document.time_range``), ``None`` for other documents.

    ``header_rows`` are the spans of the column-heading rows of the table the chunk
    starts in (the rows may lie before the chunk, when a long table was split), and
    ``header_text`` their texts joined by ``"\n"``: they travel like the heading path.
    """

    chunk_id: str
    doc_id: str
    doc_sha256: str
    char_start: int
    char_end: int
    text: str
    pages: tuple[int, ...]
    heading_path: tuple[str, ...]
    block_kinds: tuple[str, ...]
    token_count: int
    policy: ChunkPolicy
    oversize: bool = False
    start_s: float | None = None
    end_s: float | None = None
    header_rows: tuple[tuple[int, int], ...] = ()
    header_text: str = ""
    garbled: bool = False  # overlaps a block whose text is not language (core.parse.garbled)

    def __post_init__(self) -> None:
        _check_span("Chunk", self.char_start, self.char_end, self.text)
        if self.header_rows:
            _check_header_rows("Chunk", self.header_rows, 0, None)
            if self.header_rows[0][0] >= self.char_end:
                raise ValueError("Chunk: header rows must start before the chunk ends")

    @property
    def encoder_text(self) -> str:
        """What an encoder reads for this chunk: its text, after its table's header rows
        when the policy asks for that prefix and the rows lie before the chunk."""
        prefixed = self.policy.table_header_prefix and self.header_rows
        if prefixed and self.header_rows[0][0] < self.char_start:
            return f"{self.header_text}\n{self.text}"
        return self.text

    def to_dict(self, *, with_text: bool = True) -> dict[str, object]:
        out: dict[str, object] = {
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "doc_sha256": self.doc_sha256,
            "char_start": self.char_start,
            "char_end": self.char_end,
            "pages": list(self.pages),
            "heading_path": list(self.heading_path),
            "block_kinds": list(self.block_kinds),
            "token_count": self.token_count,
            "policy": self.policy.to_dict(),
            "oversize": self.oversize,
            "header_rows": [list(span) for span in self.header_rows],
        }
        if self.start_s is not None:
            out["start_s"], out["end_s"] = self.start_s, self.end_s
        if with_text:
            out["text"] = self.text
            out["header_text"] = self.header_text
        return out
