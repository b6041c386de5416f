"""The formats Chunkscope ships, registered once when ``core.ingest`` is imported.

Loaders and parsers are imported when first used, so registering costs nothing and no
parser module is imported by the ingest package at start-up (the parsers import
``core.ingest`` themselves).
"""

from __future__ import annotations

from core.errors import NotAPdfError
from core.ingest.formats import FormatSpec, LoadRequest, register
from core.types import Block, Document

PDF_MAGIC = b"%PDF-"


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
    from core.ingest.text import load_text

    return load_text(req.data, name=req.name, source=req.source, ids=req.ids, kind="text")


def _load_markdown(req: LoadRequest) -> Document:
    from core.ingest.text import load_text
    from core.parse.commonmark import markdown_markup

    return load_text(
        req.data,
        name=req.name,
        source=req.source,
        ids=req.ids,
        kind="markdown",
        markup=markdown_markup,
    )


def _parse_plain(doc: Document) -> list[Block | None]:
    from core.parse.plaintext import parse_plain_text

    return parse_plain_text(doc)


def _parse_markdown(doc: Document) -> list[Block | None]:
    from core.parse.commonmark import parse_commonmark

    return parse_commonmark(doc)


register(
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
register(
    FormatSpec(
        name="text",
        label="text",
        suffixes=(".txt", ".text"),
        load=_load_text,
        parse=_parse_plain,
        default=True,
    )
)
register(
    FormatSpec(
        name="markdown",
        label="Markdown",
        suffixes=(".md", ".markdown", ".mdown", ".mkd"),
        load=_load_markdown,
        parse=_parse_markdown,
    )
)


def _load_vtt(req: LoadRequest) -> Document:
    from core.ingest.transcript import load_transcript

    return load_transcript(req, kind="vtt")


def _load_srt(req: LoadRequest) -> Document:
    from core.ingest.transcript import load_transcript

    return load_transcript(req, kind="srt")


def _parse_transcript(doc: Document) -> list[Block | None]:
    from core.parse.transcript import parse_transcript

    return parse_transcript(doc)


def _sniff_vtt(head: bytes) -> bool:
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n").startswith(b"WEBVTT")


register(
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
register(
    FormatSpec(
        name="srt",
        label="SRT transcript",
        suffixes=(".srt",),
        load=_load_srt,
        parse=_parse_transcript,
    )
)


def _load_html(req: LoadRequest) -> Document:
    from core.ingest.html import load_html

    return load_html(req)


def _parse_markup(doc: Document) -> list[Block | None]:
    from core.parse.markup_blocks import parse_markup

    return parse_markup(doc)


register(
    FormatSpec(
        name="html",
        label="HTML",
        suffixes=(".html", ".htm", ".xhtml"),
        load=_load_html,
        parse=_parse_markup,
    )
)


def _load_docx(req: LoadRequest) -> Document:
    from core.ingest.docx import load_docx

    return load_docx(req)


register(
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
