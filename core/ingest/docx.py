"""Word documents (.docx) through python-docx: paragraph styles become typed blocks.

Canonical text, built from the body in document order (paragraphs and tables):

* A paragraph is its ``Paragraph.text`` (runs and hyperlinks; a tab is ``"\\t"``, a line
  break ``"\\n"``) with whitespace trimmed at both ends; empty paragraphs are dropped.
* Styles: ``Title`` and ``Heading N`` are headings (``Title`` level 1; ``Heading N``
  level N, or N + 1 in a document with a ``Title`` paragraph, so the title heads the
  breadcrumb); ``Caption`` a caption; a paragraph in a ``List ...`` style or
  with numbering (``w:numPr``) a list item, consecutive items forming one list block,
  one item a line; every other paragraph is a paragraph block.
* A table is one table block: rows joined by ``"\\n"``, cells by ``"\\t"`` (a merged
  cell once), a cell's paragraphs by ``" "``. Nested tables are read into their cell.
* Blocks are joined by ``"\\n\\n"``. Headers, footers, footnotes, comments and text
  boxes are not read.

Word documents are reflowable: no pages, no boxes; provenance is character offsets only.
"""

from __future__ import annotations

import io
import re
import zipfile

from core.errors import EmptyFileError, UnsupportedFileError
from core.ingest.request import LoadRequest
from core.provenance.types import Document, MarkupBlock, TextLine

MAX_UNPACKED_BYTES = 512 * 2**20
_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


def _paragraph_kind(paragraph) -> tuple[str, int]:  # paragraph: docx.text.paragraph.Paragraph
    name = (paragraph.style.name if paragraph.style is not None else "") or ""
    if name.lower() == "title":
        return "heading", 0  # placed above every Heading N by load_docx
    match = _HEADING_STYLE.match(name.strip())
    if match:
        return "heading", int(match.group(1))
    if name.lower() == "caption":
        return "caption", 0
    numbered = paragraph._p.pPr is not None and paragraph._p.pPr.numPr is not None
    if name.lower().startswith("list") or numbered:
        return "list", 0
    return "paragraph", 0


def _table_text(table) -> str:  # table: docx.table.Table
    rows = []
    for row in table.rows:
        seen: set[int] = set()
        cells = []
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            parts = [p.text.strip() for p in cell.paragraphs if p.text.strip()]
            parts += [_table_text(inner) for inner in cell.tables]
            cells.append(" ".join(parts).replace("\n", " ").replace("\t", " "))
        rows.append("\t".join(cells).strip("\t "))
    return "\n".join(r for r in rows if r)


def _body_items(document) -> list[tuple[str, int, str]]:
    """``(kind, level, text)`` for each non-empty paragraph and table, in order."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    items: list[tuple[str, int, str]] = []
    for element in document.element.body.iterchildren():
        if element.tag == f"{_W}p":
            paragraph = Paragraph(element, document)
            text = paragraph.text.strip()
            if text:
                items.append((*_paragraph_kind(paragraph), text))
        elif element.tag == f"{_W}tbl":
            text = _table_text(Table(element, document))
            if text:
                items.append(("table", 0, text))
    return items


def _check_expansion(req: LoadRequest) -> None:
    """Refuse a package whose parts would expand past ``MAX_UNPACKED_BYTES`` (a ZIP bomb)
    before python-docx reads every part into memory."""
    try:
        with zipfile.ZipFile(io.BytesIO(req.data)) as package:
            unpacked = sum(info.file_size for info in package.infolist())
    except (zipfile.BadZipFile, ValueError):
        return  # python-docx reports the damage
    if unpacked > MAX_UNPACKED_BYTES:
        raise UnsupportedFileError(
            f"{req.name} expands to {unpacked / 2**20:,.0f} MiB (more than "
            f"{MAX_UNPACKED_BYTES // 2**20} MiB); refusing it as a likely ZIP bomb"
        )


def _open(req: LoadRequest):  # -> docx.document.Document
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    _check_expansion(req)
    try:
        return docx.Document(io.BytesIO(req.data))
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise UnsupportedFileError(
            f"{req.name} is not a readable Word document ({type(exc).__name__}); "
            "open it in Word and save it as .docx"
        ) from None
    except Exception as exc:  # lxml's XMLSyntaxError and kin: a damaged package
        if type(exc).__module__.startswith(("lxml", "docx")):
            raise UnsupportedFileError(
                f"{req.name} is a damaged Word document ({type(exc).__name__}); repair it"
            ) from None
        raise


def load_docx(req: LoadRequest) -> Document:
    items = _body_items(_open(req))
    if not items:
        raise EmptyFileError(f"{req.name} holds no text; give a document with content")
    shift = int(any(kind == "heading" and level == 0 for kind, level, _ in items))
    items = [
        (k, (level + shift if level else 1) if k == "heading" else 0, t) for k, level, t in items
    ]
    parts: list[str] = []
    blocks: list[MarkupBlock] = []
    position = 0
    for kind, level, text in items:
        if blocks and kind == "list" and blocks[-1].kind == "list":
            parts.append("\n" + text)  # the next item of the same list
            position += 1 + len(text)
            blocks[-1] = MarkupBlock(
                kind="list", level=0, char_start=blocks[-1].char_start, char_end=position
            )
            continue
        if blocks:
            parts.append("\n\n")
            position += 2
        parts.append(text)
        blocks.append(
            MarkupBlock(kind=kind, level=level, char_start=position, char_end=position + len(text))
        )
        position += len(text)
    text = "".join(parts)
    title = next((text[b.char_start : b.char_end] for b in blocks if b.kind == "heading"), "")
    return Document(
        doc_id=req.doc_id,
        sha256=req.sha256,
        source=req.source,
        kind="docx",
        text=text,
        title=" ".join(title.split())[:200] or req.stem,
        lines=tuple(
            TextLine(
                char_start=b.char_start, char_end=b.char_end, page=0, bbox_pt=None, source_block=i
            )
            for i, b in enumerate(blocks)
        ),
        markup_blocks=tuple(blocks),
    )
