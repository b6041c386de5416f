"""The PDF outline (bookmarks) as ``OutlineEntry`` records, with destination heights.

Levels, titles and pages are PyMuPDF's ``get_toc()``. A destination's ``y_pt`` is the
one ``get_toc(simple=False)`` reports, moved to rendered page space (points from the
top). ``get_toc(simple=False)`` resolves every name of the document's destination name
tree (loading one page per name) as soon as one bookmark points to a named destination;
here only the names the bookmarks use are resolved, with the same rules as PyMuPDF's
``Document.resolve_names``. Bookmarks whose destination is not a plain
``#nameddest=NAME`` go through PyMuPDF's own ``getLinkDict``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pymupdf
from pymupdf import mupdf
from pymupdf.utils import getLinkDict

from core.provenance.types import OutlineEntry

_NAMED_PREFIX = "#nameddest="


def outline_entries(pdf: pymupdf.Document) -> tuple[OutlineEntry, ...]:
    """Bookmarks whose page exists, in outline order; ``()`` for a broken outline."""
    try:
        toc = pdf.get_toc(simple=True)
        items = [item for _, item in _walk(pdf.outline, 1)] if toc else []
    except Exception:  # a broken outline must not stop the document from loading
        return ()
    if len(items) != len(toc):
        return _slow_entries(pdf)
    names = _Names(pdf)
    entries: list[OutlineEntry] = []
    for (level, title, page), item in zip(toc, items, strict=True):
        if not 1 <= page <= pdf.page_count:
            continue
        try:
            kind, point = _destination(pdf, item, names)
        except Exception:  # as when get_toc(simple=False) fails: no outline
            return ()
        entries.append(
            OutlineEntry(
                level=int(level),
                title=str(title).strip(),
                page=int(page),
                y_pt=_dest_y(names.page(page - 1), kind, point),
            )
        )
    return tuple(entries)


def _destination(
    pdf: pymupdf.Document, item: pymupdf.Outline, names: _Names
) -> tuple[object, object]:
    """The link kind and ``"to"`` point ``get_toc(simple=False)`` gives ``item``."""
    uri = item.uri or ""
    if not item.is_external and _plain_name(uri):
        return pymupdf.LINK_NAMED, names.point(uri[len(_NAMED_PREFIX) :])
    dest = getLinkDict(item, pdf)
    return dest.get("kind"), dest.get("to")


def _slow_entries(pdf: pymupdf.Document) -> tuple[OutlineEntry, ...]:
    """The same entries through ``get_toc(simple=False)`` (resolves every name)."""
    try:
        toc = pdf.get_toc(simple=False)
    except Exception:
        return ()
    entries: list[OutlineEntry] = []
    for level, title, page, *rest in toc:
        dest = rest[0] if rest and isinstance(rest[0], dict) else {}
        if not 1 <= page <= pdf.page_count:
            continue
        y_pt = _dest_y(pdf[page - 1], dest.get("kind"), dest.get("to"))
        entries.append(
            OutlineEntry(level=int(level), title=str(title).strip(), page=int(page), y_pt=y_pt)
        )
    return tuple(entries)


def _walk(item: pymupdf.Outline | None, level: int) -> Iterator[tuple[int, pymupdf.Outline]]:
    """Outline items in ``get_toc`` order (depth first)."""
    while item and item.this.m_internal:
        yield level, item
        if item.down:
            yield from _walk(item.down, level + 1)
        item = item.next


def _plain_name(uri: str) -> bool:
    """A ``#nameddest=NAME`` link that PyMuPDF reads as that name alone (no escapes, no
    further parameters)."""
    return uri.startswith(_NAMED_PREFIX) and "&" not in uri and "%" not in uri


def _dest_y(page: pymupdf.Page, kind: object, point: object) -> float | None:
    """The destination's y in rendered page space (points from the top), if it has one."""
    if point is None or kind not in (pymupdf.LINK_GOTO, pymupdf.LINK_NAMED):
        return None
    return float((pymupdf.Point(point) * page.transformation_matrix).y)


class _Names:
    """Named destinations looked up one at a time (``/Names/Dests`` wins over ``/Dests``,
    as in ``resolve_names``), and the pages they need, each loaded once."""

    def __init__(self, pdf: pymupdf.Document) -> None:
        self.pdf = pdf
        self._doc: mupdf.PdfDocument | None = None
        self._tree: mupdf.PdfObj | None = None
        self._old: mupdf.PdfObj | None = None
        self._page_xrefs: dict[int, int] | None = None
        self._pages: dict[int, pymupdf.Page] = {}

    def page(self, number: int) -> pymupdf.Page:
        """Page ``number`` (0-based), loaded once."""
        found = self._pages.get(number)
        if found is None:
            found = self._pages[number] = self.pdf[number]
        return found

    def _value(self, name: str) -> mupdf.PdfObj | None:
        if self._doc is None:
            self._doc = mupdf.pdf_document_from_fz_document(self.pdf)
            catalog = mupdf.pdf_dict_gets(mupdf.pdf_trailer(self._doc), "Root")
            self._old = mupdf.pdf_dict_get(catalog, mupdf.pdf_new_name("Dests"))
            self._tree = mupdf.pdf_load_name_tree(self._doc, mupdf.pdf_new_name("Dests"))
        for source in (self._tree, self._old):
            if source is not None and source.pdf_is_dict():
                value = mupdf.pdf_dict_gets(source, name)
                if value.m_internal:
                    return value
        return None

    def point(self, name: str) -> tuple[float, float] | None:
        """The ``"to"`` point ``resolve_names`` gives ``name`` (PDF coordinates)."""
        value = self._value(name)
        if value is None:
            return None
        if value.pdf_is_indirect():
            value = mupdf.pdf_resolve_indirect(value)
        if value.pdf_is_array():
            array = _obj_string(value)
        elif value.pdf_is_dict():
            array = _obj_string(mupdf.pdf_dict_gets(value, "D"))
        else:
            return None
        array = array[1:-1]
        idx = array.find("/")
        if idx < 1:
            return None
        pno = self._page_number(array[:idx].strip())
        if pno < 0:
            return None
        try:
            rect = self.page(pno).rect
        except Exception:
            return None
        return _view_point(array[idx:], rect)

    def _page_number(self, spec: str) -> int:
        if spec.endswith("0 R"):
            if self._page_xrefs is None:
                self._page_xrefs = {self.pdf.page_xref(i): i for i in range(self.pdf.page_count)}
            try:
                return self._page_xrefs.get(int(spec.split()[0]), -1)
            except Exception:
                return -1
        try:
            return int(spec)
        except Exception:
            return -1


def _obj_string(obj: mupdf.PdfObj) -> str:
    buffer = mupdf.fz_new_buffer(512)
    output = mupdf.FzOutput(buffer)
    mupdf.pdf_print_obj(output, obj, 1, 0)
    output.fz_close_output()
    text = mupdf.fz_buffer_extract_copy(buffer).decode(errors="replace")
    zero = text.find(chr(0))
    return text[:zero] if zero >= 0 else text


def _number(token: str | None) -> float | None:
    if token is None:
        return None
    token = token.strip("[]")
    return None if token.lower() == "null" else float(token)


def _view_point(view: str, rect: pymupdf.Rect) -> tuple[float, float] | None:
    """The target point of a destination view (``/XYZ left top zoom`` and friends)."""
    parts = [p.strip("[]") for p in view.split()]
    if not parts:
        return None
    mode = "".join(ch for ch in parts[0] if ch.isalpha() or ch == "/")
    args = parts[1:]

    def arg(k: int) -> float | None:
        return _number(args[k]) if len(args) > k else None

    def x_of(value: float | None) -> float:
        return value - rect.x0 if value is not None else 0.0

    def y_of(value: float | None) -> float:
        return value - rect.y0 if value is not None else 0.0

    if mode == "/XYZ":
        left, top = arg(0), arg(1)
        arg(2)  # the zoom must parse, as in resolve_names
        return (x_of(left), y_of(top))
    if mode in ("/Fit", "/FitB"):
        return (0.0, 0.0)
    if mode in ("/FitH", "/FitBH"):
        return (0.0, y_of(arg(0)))
    if mode in ("/FitV", "/FitBV"):
        return (x_of(arg(0)), 0.0)
    if mode == "/FitR" and len(args) >= 4:
        left, top = _number(args[0]), _number(args[3])
        return (x_of(left), y_of(top))
    return None
