"""The page number a PDF page prints on itself, beside the page's index in the file.

A filing's p. 49 of the PDF is often its printed page 46 (a cover and a table of contents
come first), and a reader checking a citation against the document's own table of
contents looks for 46. Two sources, in order:

* the PDF's own page labels (``/PageLabels``), when it defines labels other than the
  pages' indices;
* else the number the page prints in its running footer or header: one of the last two or
  first two lines of the page's canonical text that is a number alone ("46", "- 46 -",
  "Page 46", "Page 46 of 80", "F-12", "A - 3"), kept only where a page at most ``NEAR``
  pages away prints a number of the same series at the same distance from its index (a
  figure alone at the end of a table is not a page number: its neighbours do not agree
  with it). A page printing two numbers in a row (a spread of two pages) is labelled
  with both, "20-21".

A page with neither has no printed label; neither is a page whose printed number is its
index (nothing to add). Labels are found once per reading of a document (its SHA-256,
and which pages were read by OCR) and kept for the last ``KEPT`` readings.
"""

from __future__ import annotations

import re

from core.bounded_cache import BoundedCache
from core.provenance.types import Document

NEAR = 3  # pages apart that a footer number's series must agree within
EDGE_LINES = 2  # lines looked at from the page's end and its start
KEPT = 32
_NUMBER = re.compile(
    r"[-–—\s]*(?:page\s+)?(?P<series>[A-Z]{1,2}\s?-\s?)?(?P<n>\d{1,5})(?:\s+of\s+\d{1,5})?[-–—\s]*",
    re.IGNORECASE,
)
_HEX = re.compile(r"<([0-9A-Fa-f\s]+)>")  # a PDF hex string: <FEFF0038>
_KEPT: BoundedCache[tuple[str, int, tuple[int, ...]], dict[int, str]] = BoundedCache(KEPT)


def printed_labels(doc: Document) -> dict[int, str]:
    """The printed label of each page that has one other than its index (1-based page
    numbers), see the module doc; ``{}`` for a document without pages."""
    if not doc.is_paged:
        return {}
    key = (doc.sha256, len(doc.text), tuple(p.number for p in doc.pages if p.read_by_ocr))
    return dict(_KEPT.get_or_compute(key, lambda: _labels(doc)))


def _labels(doc: Document) -> dict[int, str]:
    own = {n: label for n, label in _pdf_labels(doc).items() if label and label != str(n)}
    return own or _footer_labels(doc)  # labels that repeat the indices say nothing


def _pdf_labels(doc: Document) -> dict[int, str]:
    """The PDF's ``/PageLabels``, when it defines any (``{}`` otherwise, or unreadable)."""
    if doc.pdf_bytes is None:
        return {}
    try:
        import pymupdf

        with pymupdf.open(stream=doc.pdf_bytes, filetype="pdf") as pdf:
            if not pdf.get_page_labels():
                return {}
            count = min(len(pdf), len(doc.pages))
            return {n + 1: decoded_label(pdf[n].get_label()) for n in range(count)}
    except Exception:  # noqa: BLE001 - a file whose labels cannot be read prints its own
        return {}


def decoded_label(label: str) -> str:
    """A page label with each PDF hex string in it (``<FEFF0038>``: a prefix written as
    hex, which PyMuPDF hands back as written) read as text: UTF-16 after a byte-order mark,
    else one byte a character. A group that does not read as printable text (``<1>``, a
    broken UTF-16 pair) is kept as written."""

    def text(match: re.Match[str]) -> str:
        digits = "".join(match[1].split())
        if len(digits) % 2:
            return match[0]
        raw = bytes.fromhex(digits)
        try:
            read = (
                raw.decode("utf-16")
                if raw[:2] in (b"\xfe\xff", b"\xff\xfe")
                else raw.decode("latin-1")
            )
        except UnicodeDecodeError:
            return match[0]
        return read if read and read.isprintable() else match[0]

    return _HEX.sub(text, label)


def _candidates(text: str) -> list[tuple[str, int]]:
    """The numbers standing alone on the page's last and first lines, as (series, n)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    edge = lines[-EDGE_LINES:][::-1] + lines[:EDGE_LINES]
    found = []
    for line in edge:
        match = _NUMBER.fullmatch(line)
        if match is not None:
            series = "".join((match["series"] or "").split()).upper()
            found.append((series, int(match["n"])))
    return list(dict.fromkeys(found))


def _footer_labels(doc: Document) -> dict[int, str]:
    numbers = {
        page.number: _candidates(doc.text[page.char_start : page.char_end]) for page in doc.pages
    }
    labels: dict[int, str] = {}
    for number, options in numbers.items():
        for series, n in options:
            shift = number - n
            agrees = any(
                (series, other - shift) in numbers.get(other, [])
                for other in range(number - NEAR, number + NEAR + 1)
                if other != number
            )
            if not agrees:
                continue
            pair = sorted(m for s, m in options if s == series and abs(m - n) == 1)
            if pair:  # a spread: the page prints its two halves' numbers
                first = min(n, pair[0])
                labels[number] = f"{series}{first}-{series}{first + 1}"
            elif series or n != number:
                labels[number] = f"{series}{n}"
            break
    return labels
