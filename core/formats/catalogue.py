"""The formats Chunkscope ships (``builtin_specs``), registered by ``core.formats`` when
it is first imported.

Each spec composes a loader of ``core.ingest`` with a parser of ``core.parse``. The PDF
ones are imported when a PDF is first read, and markdown-it and python-docx inside the
functions that use them, so registering stays cheap: PyMuPDF, markdown-it, python-docx
and the layout model load only for the formats in use.
"""

from __future__ import annotations

from core.errors import NotAPdfError
from core.formats.format_registry import FormatSpec
from core.ingest.docx import load_docx
from core.ingest.html import load_html
from core.ingest.request import LoadRequest
from core.ingest.text import load_text
from core.ingest.transcript import load_transcript
from core.parse.commonmark import markdown_markup, parse_commonmark
from core.parse.markup_blocks import parse_markup
from core.parse.plaintext import parse_plain_text
from core.parse.turns import parse_transcript
from core.provenance.types import Block, Document

PDF_MAGIC = b"%PDF-"
_BUILT_IN: list[FormatSpec] = []  # in the order formats are tried and listed


def _load_pdf(req: LoadRequest) -> Document:
    from core.ingest.pdf import load_pdf

    return load_pdf(
        req.data,
        name=req.name,
        source=req.source,
        ids=req.ids,
        password=req.password,
        ocr_policy=req.ocr,
        ocr_progress=req.ocr_progress,
    )


def _parse_pdf(doc: Document) -> list[Block | None]:
    from core.parse.heuristic import parse_pdf

    return parse_pdf(doc)


def _parse_pdf_layout(doc: Document, **kwargs: object) -> list[Block | None]:
    from core.parse.layout import parse_pdf_layout

    return parse_pdf_layout(doc, **kwargs)  # type: ignore[arg-type]


def _load_text(req: LoadRequest) -> Document:
    return load_text(req.data, name=req.name, source=req.source, ids=req.ids, kind="text")


def _load_markdown(req: LoadRequest) -> Document:
    return load_text(
        req.data,
        name=req.name,
        source=req.source,
        ids=req.ids,
        kind="markdown",
        markup=markdown_markup,
    )


def _parse_plain(doc: Document) -> list[Block | None]:
    return parse_plain_text(doc)


def _parse_markdown(doc: Document) -> list[Block | None]:
    return parse_commonmark(doc)


_BUILT_IN.append(
    FormatSpec(
        name="pdf",
        label="PDF",
        suffixes=(".pdf",),
        load=_load_pdf,
        parse=_parse_pdf,
        parse_layout=_parse_pdf_layout,
        paged=True,
        sniff=lambda head: PDF_MAGIC in head,
        content_wins=True,
        claims=lambda head: head.lstrip().startswith(PDF_MAGIC),
        mismatch="{name} is not a PDF (no %PDF- header); check the file",
        mismatch_error=NotAPdfError,
    )
)
_BUILT_IN.append(
    FormatSpec(
        name="text",
        label="text",
        suffixes=(".txt", ".text"),
        load=_load_text,
        parse=_parse_plain,
        default=True,
    )
)
_BUILT_IN.append(
    FormatSpec(
        name="markdown",
        label="Markdown",
        suffixes=(".md", ".markdown", ".mdown", ".mkd"),
        load=_load_markdown,
        parse=_parse_markdown,
    )
)


def _load_vtt(req: LoadRequest) -> Document:
    return load_transcript(req, kind="vtt")


def _load_srt(req: LoadRequest) -> Document:
    return load_transcript(req, kind="srt")


def _parse_transcript(doc: Document) -> list[Block | None]:
    return parse_transcript(doc)


def _sniff_vtt(head: bytes) -> bool:
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").startswith(b"WEBVTT")


_BUILT_IN.append(
    FormatSpec(
        name="vtt",
        label="WebVTT transcript",
        suffixes=(".vtt",),
        load=_load_vtt,
        parse=_parse_transcript,
        sniff=_sniff_vtt,
        mismatch="{name} is not a WebVTT file (it does not start with WEBVTT); check the file",
    )
)
_BUILT_IN.append(
    FormatSpec(
        name="srt",
        label="SRT transcript",
        suffixes=(".srt",),
        load=_load_srt,
        parse=_parse_transcript,
    )
)


def _load_html(req: LoadRequest) -> Document:
    return load_html(req)


def _parse_markup(doc: Document) -> list[Block | None]:
    return parse_markup(doc)


_BUILT_IN.append(
    FormatSpec(
        name="html",
        label="HTML",
        suffixes=(".html", ".htm", ".xhtml"),
        load=_load_html,
        parse=_parse_markup,
    )
)


def _load_docx(req: LoadRequest) -> Document:
    return load_docx(req)


_BUILT_IN.append(
    FormatSpec(
        name="docx",
        label="Word",
        suffixes=(".docx",),
        load=_load_docx,
        parse=_parse_markup,
        sniff=lambda head: head.startswith(b"PK\x03\x04"),
        mismatch=(
            "{name} is not a Word .docx file (not a ZIP package: an old .doc, or a "
            "password-protected file); save it as .docx without a password"
        ),
    )
)


def builtin_specs() -> tuple[FormatSpec, ...]:
    """The built-in formats, in the order they are tried and listed."""
    return tuple(_BUILT_IN)
