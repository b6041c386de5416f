"""Reflowable documents: plain text and Markdown.

Canonical text: the bytes decoded as UTF-8 (a leading byte-order mark is dropped) with
every CRLF and lone CR turned into LF. That is exactly what Python's text-mode reading
(``open(path, encoding="utf-8-sig")``, universal newlines) returns, so character offsets
made by other tools that read the file that way index the same string. Nothing else is
changed: no whitespace folding, no Unicode normalisation.

Reflowable documents have no pages, no character maps and no boxes. Each physical line of
the text is one ``TextLine`` (``page == 0``, ``bbox_pt is None``); ``source_block`` counts
the blank-line-separated paragraphs, starting at 0.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.errors import EmptyFileError, UnsupportedFileError
from core.ingest import limits
from core.provenance.types import Document, MarkupBlock, TextLine

_NEWLINES = re.compile(r"\r\n?")
_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_TITLE_MAX_CHARS = 120


def decode_text(data: bytes, name: str) -> str:
    """UTF-8 bytes to canonical text (BOM dropped, newlines normalised to ``\\n``)."""
    if b"\x00" in data:
        raise UnsupportedFileError(f"{name} is a binary file, not text; check the file")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UnsupportedFileError(
            f"{name} is not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8"
        ) from None
    return _NEWLINES.sub("\n", text)


def text_lines(text: str) -> tuple[TextLine, ...]:
    """One ``TextLine`` per physical line (the ``\\n`` itself belongs to no line)."""
    lines: list[TextLine] = []
    start = 0
    paragraph = 0
    previous_blank = False
    for raw in text.split("\n"):
        end = start + len(raw)
        blank = not raw.strip()
        if previous_blank and not blank:
            paragraph += 1
        previous_blank = blank and bool(lines)
        lines.append(
            TextLine(char_start=start, char_end=end, page=0, bbox_pt=None, source_block=paragraph)
        )
        start = end + 1
    return tuple(lines)


def guess_text_title(text: str, *, is_markdown: bool, fallback: str) -> str:
    """First Markdown heading (``# Title`` or a line underlined with ``===``/``---``),
    else the first non-blank line if short, else ``fallback``."""
    first_line = ""
    paragraph: list[str] = []  # the lines since the last blank one (a setext heading's)
    for raw in text.split("\n", 200)[:200]:
        line = raw.strip()
        if not line:
            paragraph = []
            continue
        if is_markdown:
            match = _ATX_HEADING.match(raw)
            if match:
                return match.group(1).strip()
            if paragraph and _SETEXT_UNDERLINE.match(raw):
                return " ".join(paragraph)
            paragraph.append(line)
        if not first_line:
            first_line = line
            if not is_markdown:
                break
    if first_line and len(first_line) <= _TITLE_MAX_CHARS and any(c.isalpha() for c in first_line):
        return first_line.lstrip("#").strip() or fallback
    return fallback


def load_text(
    data: bytes,
    *,
    name: str,
    source: str,
    ids: tuple[str, str, str],
    kind: str = "text",
    markup: Callable[[str, tuple[TextLine, ...], str], tuple[MarkupBlock, ...]] | None = None,
) -> Document:
    """Build a reflowable ``Document`` of format ``kind`` (``"text"`` or ``"markdown"``,
    which only changes how the title is found); raises ``EmptyFileError`` when it holds
    no text and ``LimitExceededError`` past the ``chars`` or ``lines`` limit (or one
    ``markup`` checks).

    ``ids`` is ``(doc_id, sha256, file stem)``; ``name`` is the file name. ``markup(text,
    lines, name)``, when given, reads the blocks the text declares (Markdown's).
    """
    doc_id, sha256, stem = ids
    text = decode_text(data, name)
    limits.check("chars", len(text), name)
    limits.check("lines", text.count("\n") + 1, name)
    if not text.strip():
        raise EmptyFileError(f"{name} holds no text; give a file with some content")
    lines = text_lines(text)
    return Document(
        doc_id=doc_id,
        sha256=sha256,
        source=source,
        kind=kind,
        text=text,
        title=guess_text_title(text, is_markdown=kind == "markdown", fallback=stem),
        lines=lines,
        markup_blocks=markup(text, lines, name) if markup is not None else (),
    )
