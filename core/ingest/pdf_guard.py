"""What keeps a hostile PDF from taking the process down: MuPDF errors become typed
errors, and each page is checked against ``core.ingest.limits`` before its characters
are extracted.

A MuPDF error is any exception raised by MuPDF (``FzErrorBase``, a ``RuntimeError``
whose text starts ``code=``) or raised inside PyMuPDF's own Python code (its innermost
frame lies in the ``pymupdf`` package: a damaged file makes ``xref_get_key`` raise
``ValueError: bad xref``, a truncated one other ``ValueError``s and ``TypeError``s), so
every PyMuPDF call on a document or page object inside ``mupdf_errors`` ends in one
typed line, not only the calls at open.

Before any page is read, per page: its decoded content (content streams and the form
XObjects its resources name, inflated at most to the limit, never further) is at most
``page_content_mb``, and the sum over the pages at most ``content_mb``. Then per page:
the characters MuPDF finds on it (counted on its C-side text page, before any Python
object per character exists) are at most ``page_chars``. A ``/Rotate`` that is not a
multiple of 90 is read as MuPDF renders it (rounded to the nearest multiple of 90), so
the text is placed on the page image it belongs to.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pymupdf

from core.errors import ChunkscopeError, DamagedPdfError, LimitExceededError
from core.ingest import limits

_PYMUPDF_DIR = str(Path(pymupdf.__file__).resolve().parent)


def _is_mupdf_error(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    if module.startswith("pymupdf") or (
        isinstance(exc, RuntimeError) and str(exc).startswith("code=")
    ):
        return True
    return _raised_in_pymupdf(exc)


def _raised_in_pymupdf(exc: BaseException) -> bool:
    """Whether the innermost frame of ``exc``'s traceback is PyMuPDF's own code."""
    tb = exc.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    return filename.startswith(_PYMUPDF_DIR)


@contextmanager
def mupdf_errors(name: str) -> Iterator[None]:
    """Map any MuPDF error raised inside the block to a one-line typed error."""
    try:
        yield
    except ChunkscopeError:
        raise
    except MemoryError:
        raise LimitExceededError(
            f"{name} needs more memory than this machine has; lower the limits "
            "(see docs/limits.md) or split the file"
        ) from None
    except (RuntimeError, ValueError, TypeError, pymupdf.mupdf.FzErrorBase) as exc:
        if not _is_mupdf_error(exc):
            raise
        if isinstance(exc, pymupdf.mupdf.FzErrorLimit):
            raise LimitExceededError(
                f"{name} is past a limit of the PDF library ({_reason(exc)}); "
                "re-export or repair it"
            ) from None
        raise DamagedPdfError(
            f"{name} is damaged ({_reason(exc)}); repair or re-export it"
        ) from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if text.startswith("code="):
        text = text.split(":", 1)[-1].strip() or text
    return text[:120]


def page_count(pdf: pymupdf.Document, name: str) -> int:
    """The number of pages, after the ``pages`` limit is checked."""
    with mupdf_errors(name):
        count = pdf.page_count
    limits.check("pages", count, name)
    return count


def effective_rotation(
    pdf: pymupdf.Document, page: pymupdf.Page, name: str = "the PDF"
) -> int | None:
    """The rotation MuPDF renders for a ``/Rotate`` PyMuPDF reports as 0 because it is
    not a multiple of 90 (45 renders as 90, 91 as 90); None when nothing needs fixing.
    A damaged page object is ``DamagedPdfError`` (``name`` names the file)."""
    with mupdf_errors(name):
        kind, raw = pdf.xref_get_key(page.xref, "Rotate")
    if kind not in ("int", "float", "real"):
        return None
    try:
        degrees = int(float(raw))
    except ValueError:
        return None
    rounded = (90 * ((degrees % 360 + 45) // 90)) % 360  # half up, as MuPDF
    return rounded if rounded != page.rotation else None


def normalise_rotation(
    pdf: pymupdf.Document, page: pymupdf.Page, name: str = "the PDF"
) -> pymupdf.Page:
    """``page`` with an off-grid ``/Rotate`` set to what MuPDF renders (in memory only):
    every reader of ``Document.pdf_bytes`` calls this, so all agree on the page's frame."""
    rotation = effective_rotation(pdf, page, name)
    if rotation is not None:
        with mupdf_errors(name):
            page.set_rotation(rotation)
    return page


def check_content(pdf: pymupdf.Document, n_pages: int, name: str) -> None:
    """Refuse a document whose pages' decoded content exceeds ``page_content_mb`` on one
    page or ``content_mb`` in all, before any page is interpreted: MuPDF reads a page's
    content whether or not it shows text, so 5,000 pages sharing one heavy stream of
    text drawn off the page would each cost its full time, and show no character."""
    total = 0
    for number in range(n_pages):
        total += check_page_content(pdf, pdf[number], name)
        limits.check("content_mb", total / 1_000_000, name)


def check_page_content(pdf: pymupdf.Document, page: pymupdf.Page, name: str) -> int:
    """Refuse a page whose decoded content exceeds ``page_content_mb``; return its
    decoded content in bytes."""
    cap = int(limits.value("page_content_mb") * 1_000_000)
    xrefs = list(page.get_contents())
    xrefs += [item[0] for item in page.get_xobjects() if item[0] > 0]
    total = 0
    for xref in dict.fromkeys(xrefs):
        total += _decoded_size(pdf, xref, cap + 1 - total)
        if total > cap:
            spec = limits.LIMITS["page_content_mb"]
            raise LimitExceededError(
                f"{name} page {page.number + 1} inflates to more than {cap / 1_000_000:g} "
                f"MB of content (a decompression bomb?); {spec.how_to_raise()}"
            )
    return total


def _decoded_size(pdf: pymupdf.Document, xref: int, budget: int) -> int:
    """The stream's decoded size, inflating at most ``budget`` bytes of a Flate stream."""
    kind, value = pdf.xref_get_key(xref, "Filter")
    _, parms = pdf.xref_get_key(xref, "DecodeParms")
    if kind == "name" and value == "/FlateDecode" and parms in ("null", ""):
        inflater = zlib.decompressobj()
        try:
            return len(inflater.decompress(pdf.xref_stream_raw(xref) or b"", max(budget, 1)))
        except zlib.error:
            pass  # MuPDF repairs broken Flate streams; let it decide below
    return len(pdf.xref_stream(xref) or b"")


def page_textpage(page: pymupdf.Page, flags: int, name: str) -> pymupdf.TextPage:
    """The page's text page, after its character count is checked against ``page_chars``."""
    textpage = page.get_textpage(flags=flags)
    found = len(textpage.extractText())
    limits.check("page_chars", found, name, where=f"page {page.number + 1}")
    return textpage
