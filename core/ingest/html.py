"""HTML documents: canonical text from the parsed markup, every character tied to the
bytes of the raw file it came from.

The file is decoded as UTF-8 (BOM dropped) and tokenised by the standard library's HTML
parser (``html.parser``, character references left unconverted so each one's source is
known); no script runs and the text of ``script``, ``style``, ``template``, ``noscript``,
``iframe``, ``object``, ``svg`` and ``head`` never becomes text (``<title>`` gives the
document's title). Neither selectolax nor lxml reports where a text node sits in the
source, so offsets taken from their DOM would have to be searched for; the tokeniser
reports each token's position, which is what makes the raw map exact.

Canonical text rules:

* Blocks: ``h1``-``h6`` are headings (level = the digit); ``ul``/``ol``/``dl`` one list
  (items on their own lines, nested lists inside it); ``table`` one table (rows by
  ``"\\n"``, cells by ``"\\t"``); ``pre`` code; ``caption``/``figcaption`` captions;
  ``p``, ``div``, ``blockquote``, ``section`` and the other block elements paragraphs;
  inside a list or table they are read inline. Blocks are joined by ``"\\n\\n"``.
* Whitespace: outside ``pre``, runs of ASCII whitespace (space, tab, CR, LF, FF) fold to
  one space and are trimmed at block edges; ``<br>`` is a line break. Inside ``pre``
  the text is kept, CRLF and CR read as LF. U+00A0 (``&nbsp;``) is kept as itself.
* Character references (``&amp;``, ``&#233;``) are decoded; one that names nothing
  stays as written. An unclosed comment or tag at the end of the file is dropped.

Maps: ``char_raw_span[i] = (b0, b1)`` is the half-open byte range of ``source_bytes``
that ``text[i]`` came from: one character's bytes, a whole character reference, or the
whitespace run a folded space stands for; ``(-1, -1)`` for inserted separators and line
breaks. So ``html.unescape(raw[b0:b1])`` equals the character for every mapped
non-space character, and a span's raw range runs from its first mapped character's
``b0`` to its last one's ``b1``. Reflowable: no pages or boxes.
"""

from __future__ import annotations

import html
import re
from array import array
from html.parser import HTMLParser

import numpy as np

from core.errors import EmptyFileError, UnsupportedFileError
from core.ingest.request import LoadRequest
from core.provenance.types import Document, MarkupBlock, TextLine

_SKIPPED = frozenset(
    {"script", "style", "template", "noscript", "iframe", "object", "svg", "head", "math"}
)
_PARAGRAPHS = frozenset(
    {
        "p", "div", "blockquote", "section", "article", "main", "header", "footer", "nav",
        "aside", "address", "figure", "form", "fieldset", "details", "summary", "dt", "dd",
        "center", "body", "html",
    }
)  # fmt: skip
_LISTS = frozenset({"ul", "ol", "dl", "menu"})
_IN_HEAD = frozenset({"title", "meta", "link", "style", "script", "base", "noscript", "template"})
_HEADINGS = {f"h{n}": n for n in range(1, 7)}
_SPACE = re.compile(r"[ \t\n\r\f]+")
_WORD_OR_SPACE = re.compile(r"[ \t\n\r\f]+|[^ \t\n\r\f]+")
_REFERENCE = re.compile(r"&(?:#[0-9]{1,8};?|#[xX][0-9a-fA-F]{1,8};?|[A-Za-z][A-Za-z0-9]{0,40};?)")
INSERTED = -1


class _Builder(HTMLParser):
    """Collects canonical characters with their raw character ranges, block by block."""

    def __init__(self, source: str) -> None:
        super().__init__(convert_charrefs=False)
        self.source = source
        self.line_starts = [0, *(m.end() for m in re.finditer("\n", source))]
        self.chars: list[str] = []
        self.raw_a = array("q")  # raw character range of each canonical character
        self.raw_b = array("q")
        self.blocks: list[MarkupBlock] = []
        self.kind, self.level, self.block_start = "paragraph", 0, 0
        self.pending_space: tuple[int, int] | None = None
        self.skipping: list[str] = []  # open skipped elements, innermost last
        self.pre_depth = 0
        self.list_depth = 0
        self.table_depth = 0
        self.in_title = False
        self.title_parts: list[str] = []
        self.at_end = False
        self.dropping_tail = False

    # -- positions and output ------------------------------------------------------------
    def _pos(self) -> int:
        line, column = self.getpos()
        return self.line_starts[line - 1] + column

    def _map(self, a: int, b: int, count: int = 1) -> None:
        """Map ``count`` more canonical characters to the raw characters ``[a, b)``."""
        if count == 1:
            self.raw_a.append(a)
            self.raw_b.append(b)
        else:
            self.raw_a.extend([a] * count)
            self.raw_b.extend([b] * count)

    def _has_content(self) -> bool:
        return len(self.chars) > self.block_start

    def _emit(self, text: str, raw: tuple[int, int]) -> None:
        if self.pending_space is not None and self._has_content():
            self.chars.append(" ")
            self._map(*self.pending_space)
        self.pending_space = None
        self.chars.extend(text)
        self._map(*raw, count=len(text))

    def _insert(self, text: str) -> None:
        """A separator the builder adds (maps to no raw bytes); none at a block's start."""
        self.pending_space = None
        if self._has_content():
            self.chars.extend(text)
            self._map(INSERTED, INSERTED, count=len(text))

    def open_block(self, kind: str, level: int = 0) -> None:
        """End the current block (kept if it holds text) and start one of ``kind``."""
        self.pending_space = None
        while self._has_content() and self.chars[-1] in "\n\t":
            self.chars.pop()
            self.raw_a.pop()
            self.raw_b.pop()
        if self._has_content():
            self.blocks.append(
                MarkupBlock(
                    kind=self.kind,
                    level=self.level,
                    char_start=self.block_start,
                    char_end=len(self.chars),
                )
            )
            self.chars.extend("\n\n")
            self._map(INSERTED, INSERTED, count=2)
        self.kind, self.level, self.block_start = kind, level, len(self.chars)

    def _inline_only(self) -> bool:
        """Inside a list, table or pre, block elements are read inline."""
        return bool(self.list_depth or self.table_depth or self.pre_depth)

    def _context(self) -> str:
        return "table" if self.table_depth else ("list" if self.list_depth else "paragraph")

    # -- tokens --------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skipping == ["head"] and tag not in _IN_HEAD:
            self.skipping.clear()  # content without </head>: the head has ended
        if tag == "title" and self.skipping in ([], ["head"]):  # not an <svg> <title>
            self.in_title = True
            return
        if self.skipping or tag in _SKIPPED:
            if tag in _SKIPPED:
                self.skipping.append(tag)
            return
        if tag == "br":
            self._insert("\n" if self.kind in ("paragraph", "code", "heading") else " ")
        elif tag in _HEADINGS and not (self.list_depth or self.table_depth):
            self.open_block("heading", _HEADINGS[tag])
        elif tag == "pre" and not (self.list_depth or self.table_depth):
            self.pre_depth += 1
            self.open_block("code")
        elif tag in ("caption", "figcaption"):
            self.open_block("caption")
        elif tag in _LISTS:
            if not (self.list_depth or self.table_depth):
                self.open_block("list")
            self.list_depth += 1
        elif tag in ("li", "dt", "dd") and self.list_depth:
            self._insert("\n")
        elif tag == "table":
            if not self.table_depth and not self.list_depth:
                self.open_block("table")
            self.table_depth += 1
        elif tag == "tr" and self.table_depth:
            self._insert("\n")
        elif tag in ("td", "th") and self.table_depth:
            if self._has_content() and self.chars[-1] != "\n":
                self._insert("\t")
        elif (tag in _PARAGRAPHS or tag == "hr") and not self._inline_only():
            self.open_block("paragraph")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _SKIPPED:  # <script/> opens nothing
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self.in_title:
            self.in_title = False
            return
        if self.skipping:
            if tag in self.skipping:
                del self.skipping[self.skipping.index(tag) :]
            return
        if tag in _HEADINGS and self.kind == "heading":
            self.open_block(self._context())
        elif tag == "pre" and self.pre_depth:
            self.pre_depth -= 1
            self.open_block(self._context())
        elif tag in ("caption", "figcaption") and self.kind == "caption":
            self.open_block(self._context())
        elif tag in _LISTS and self.list_depth:
            self.list_depth -= 1
            if not self.list_depth and not self.table_depth:
                self.open_block("paragraph")
        elif tag == "table" and self.table_depth:
            self.table_depth -= 1
            if not self.table_depth and not self.list_depth:
                self.open_block("paragraph")
        elif tag in _PARAGRAPHS and not self._inline_only():
            self.open_block("paragraph")

    def close(self) -> None:
        self.at_end = True
        super().close()

    def handle_data(self, data: str) -> None:
        if self.at_end and (self.dropping_tail or data.startswith("<")):
            self.dropping_tail = True  # an unclosed comment or tag at the end of the file
            return
        start = self._pos()
        if self.in_title:
            self.title_parts.append(data)
            return
        if self.skipping or not data:
            return
        if self.pre_depth:
            self._verbatim(data, start)
            return
        if _SPACE.search(data) is None:  # one word (a lone "<" or "&" among them)
            self._emit_run(data, start)
            return
        for match in _WORD_OR_SPACE.finditer(data):
            a, b = start + match.start(), start + match.end()
            if match.group()[0] in " \t\n\r\f":
                if self.pending_space is None and self._has_content():
                    self.pending_space = (a, b)
            else:
                self._emit_run(match.group(), a)

    def _emit_run(self, text: str, raw_start: int) -> None:
        self._emit(text[0], (raw_start, raw_start + 1))
        self.chars.extend(text[1:])
        self.raw_a.extend(range(raw_start + 1, raw_start + len(text)))
        self.raw_b.extend(range(raw_start + 2, raw_start + len(text) + 1))

    def _verbatim(self, data: str, start: int) -> None:
        i = 0
        while i < len(data):
            if data[i] == "\r":
                width = 2 if data[i + 1 : i + 2] == "\n" else 1
                self._raw_char("\n", (start + i, start + i + width))
                i += width
            else:
                self._raw_char(data[i], (start + i, start + i + 1))
                i += 1

    def _raw_char(self, char: str, raw: tuple[int, int]) -> None:
        if not self._has_content() and char in " \t\n\r\f":
            return  # a pre block starts at its first visible character
        self.chars.append(char)
        self._map(*raw)

    def _reference(self) -> None:
        start = self._pos()
        match = _REFERENCE.match(self.source, start)
        if match is None:
            return
        token = match.group()
        if self.in_title:
            self.title_parts.append(html.unescape(token))
            return
        if self.skipping:
            return
        decoded = html.unescape(token)
        if self.pre_depth:
            for char in decoded:
                self._raw_char(char, match.span())
        elif decoded == token:
            self._emit_run(token, start)
        else:
            self._emit(decoded, match.span())

    def handle_entityref(self, name: str) -> None:
        self._reference()

    def handle_charref(self, name: str) -> None:
        self._reference()


def _byte_offsets(source: str, bom: int) -> np.ndarray:
    """``offsets[i]`` = byte offset of ``source[i]`` in the UTF-8 file (``len + 1``
    entries, the last one the file's length)."""
    codes = np.frombuffer(source.encode("utf-32-le"), dtype=np.uint32)
    widths = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
    offsets = np.empty(len(codes) + 1, dtype=np.int64)
    offsets[0] = bom
    np.cumsum(widths, out=offsets[1:])
    offsets[1:] += bom
    return offsets


def _decode(req: LoadRequest) -> tuple[str, int]:
    """The source as text and the length of its byte-order mark (0 or 3 bytes)."""
    data = req.data
    bom = 3 if data.startswith(b"\xef\xbb\xbf") else 0
    if b"\x00" in data:
        raise UnsupportedFileError(f"{req.name} is a binary file, not HTML; check the file")
    try:
        return data[bom:].decode("utf-8"), bom
    except UnicodeDecodeError as exc:
        raise UnsupportedFileError(
            f"{req.name} is not UTF-8 HTML (bad byte at offset {exc.start + bom}); save it as UTF-8"
        ) from None


def _byte_map(builder: _Builder, source: str, bom: int) -> np.ndarray:
    """The builder's raw character ranges as byte ranges of the file (``(n, 2)`` int64)."""
    raw = np.stack(
        [
            np.frombuffer(builder.raw_a, dtype=np.int64),
            np.frombuffer(builder.raw_b, dtype=np.int64),
        ],
        axis=1,
    )
    offsets = _byte_offsets(source, bom)
    mapped = raw[:, 0] >= 0
    char_raw = np.full_like(raw, INSERTED)
    char_raw[mapped, 0] = offsets[raw[mapped, 0]]
    char_raw[mapped, 1] = offsets[raw[mapped, 1]]
    return char_raw


def load_html(req: LoadRequest) -> Document:
    """An HTML ``Document`` (see the module docstring for the rules and the raw map)."""
    source, bom = _decode(req)
    builder = _Builder(source)
    builder.feed(source)
    builder.close()
    builder.open_block("paragraph")
    if builder.chars[-2:] == ["\n", "\n"]:
        del builder.chars[-2:], builder.raw_a[-2:], builder.raw_b[-2:]
    text = "".join(builder.chars)
    if not text.strip():
        raise EmptyFileError(f"{req.name} holds no visible text; give a page with content")
    blocks = tuple(builder.blocks)
    title = " ".join("".join(builder.title_parts).split()) or next(
        (text[b.char_start : b.char_end] for b in blocks if b.kind == "heading"), ""
    )
    return Document(
        doc_id=req.doc_id,
        sha256=req.sha256,
        source=req.source,
        kind="html",
        text=text,
        title=" ".join(title.split())[:200] or req.stem,
        lines=tuple(
            TextLine(
                char_start=b.char_start, char_end=b.char_end, page=0, bbox_pt=None, source_block=i
            )
            for i, b in enumerate(blocks)
        ),
        markup_blocks=blocks,
        char_raw_span=_byte_map(builder, source, bom),
        source_bytes=req.data,
    )
