"""Crafted hostile inputs, generated on demand (nothing big is committed).

Each ``*_pdf`` function returns the bytes of a small PDF written object by object, so the
file can lie in ways a PDF library would refuse to write: page trees with cycles,
``/Count`` values that lie, content streams that inflate a thousandfold, fonts whose
ToUnicode map yields a lone surrogate, media boxes of 14,400 pt or of zero size, and
rotations that are not multiples of 90.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def assemble(objects: Sequence[bytes], *, root: int = 1) -> bytes:
    """A PDF from ``objects`` (object ``n`` is ``objects[n - 1]``), with a correct xref."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\n" % (len(objects) + 1, root)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def stream(data: bytes, *, extra: bytes = b"", compress: bool = False) -> bytes:
    if compress:
        data = zlib.compress(data, 9)
        extra += b" /Filter /FlateDecode"
    return b"<< /Length %d%s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


def one_page_pdf(
    content: bytes,
    *,
    media_box: bytes = b"[0 0 612 792]",
    rotate: int | None = None,
    compress: bool = False,
    font: bytes = _FONT,
    extra_objects: Sequence[bytes] = (),
) -> bytes:
    """Catalog 1, pages 2, page 3, content 4, font 5, then ``extra_objects`` from 6."""
    rotation = b" /Rotate %d" % rotate if rotate is not None else b""
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox "
        + media_box
        + rotation
        + b" /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            page,
            stream(content, compress=compress),
            font,
            *extra_objects,
        ]
    )


def text_ops(lines: Sequence[str], *, size: int = 11, top: float = 740.0) -> bytes:
    """Content-stream operators that show ``lines`` (ASCII) top down at 72 pt from the left."""
    ops = [b"BT /F1 %d Tf 14 TL 72 %.1f Td" % (size, top)]
    for line in lines:
        escaped = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
        ops.append(b"(" + escaped.encode("latin-1") + b") Tj T*")
    ops.append(b"ET")
    return b"\n".join(ops)


def text_bomb_pdf(inflated_bytes: int) -> bytes:
    """One page whose compressed content stream inflates to about ``inflated_bytes`` of
    text-showing operators, each drawing 50 characters a hundredth of a point below the
    last (so MuPDF keeps every one)."""
    unit = b"(" + b"A" * 50 + b") Tj 0 -0.01 Td\n"
    body = b"BT /F1 1 Tf 10 780 Td\n" + unit * max(1, inflated_bytes // len(unit)) + b"ET"
    return one_page_pdf(body, compress=True)


def image_bomb_pdf(side_px: int) -> bytes:
    """One page drawing a ``side_px`` square grey image of zeros (Flate: a few KB that
    decode to ``side_px ** 2`` bytes) and one line of text."""
    pixels = zlib.compress(b"\0" * side_px * side_px, 9)
    image = (
        b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
        b"/BitsPerComponent 8 /Filter /FlateDecode /Length %d >>\nstream\n"
        % (side_px, side_px, len(pixels))
        + pixels
        + b"\nendstream"
    )
    content = text_ops(["A page with a very large image."]) + b"\nq 500 0 0 500 50 50 cm /Im1 Do Q"
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
        b"<< /F1 5 0 R >> /XObject << /Im1 6 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            page,
            stream(content),
            _FONT,
            image,
        ]
    )


def page_tree_cycle_pdf() -> bytes:
    """A page tree whose intermediate node lists itself among its kids."""
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [6 0 R] /Count 2 >>",
            b"<< /Type /Page /Parent 6 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            stream(text_ops(["Inside a cycle."])),
            _FONT,
            b"<< /Type /Pages /Parent 2 0 R /Kids [3 0 R 6 0 R] /Count 2 >>",
        ]
    )


def count_lie_pdf(count: int = 1_000_000) -> bytes:
    """A one-page tree whose ``/Count`` claims ``count`` pages."""
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count %d >>" % count,
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            stream(text_ops(["The count lies."])),
            _FONT,
        ]
    )


def lone_surrogate_pdf() -> bytes:
    """Helvetica with a ToUnicode map sending code ``A`` to U+D800 (a lone surrogate)
    and ``B`` to ``b``; the page shows "ABAB"."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        b"/CMapName /Hostile def /CMapType 2 def\n"
        b"1 begincodespacerange <00> <FF> endcodespacerange\n"
        b"2 beginbfchar <41> <D800> <42> <0062> endbfchar\n"
        b"endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    font = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>"
    return one_page_pdf(text_ops(["ABAB plain"]), font=font, extra_objects=[stream(cmap)])


def many_chars_pdf(n_chars: int) -> bytes:
    """One page showing ``n_chars`` letters in lines of 100, set at 0.3 pt."""
    lines = ["abcdefghi " * 10] * max(1, n_chars // 100)
    ops = [b"BT /F1 0.3 Tf 0.35 TL 10 780 Td"]
    ops += [b"(" + line.encode() + b") Tj T*" for line in lines]
    ops.append(b"ET")
    return one_page_pdf(b"\n".join(ops), compress=True)


def many_pages_pdf(n_pages: int) -> bytes:
    """``n_pages`` pages sharing one content stream (one line of text each)."""
    kids = b" ".join(b"%d 0 R" % (6 + i) for i in range(n_pages))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n_pages,
            b"<< >>",
            stream(text_ops(["Every page says the same thing in its body."], top=400.0)),
            _FONT,
            *([page] * n_pages),
        ]
    )


def text_file_with_pdf_marker() -> bytes:
    """Plain text that mentions the PDF header in its first KiB."""
    return (
        b"Notes on file formats.\n\nA PDF file starts with %PDF-1.7 and ends with %%EOF; "
        b"this text only talks about it.\n"
    )


def short_lines_pdf(lines: Sequence[str]) -> bytes:
    """A one-page PDF of a few short lines near the top (all in the header zone)."""
    return one_page_pdf(text_ops(lines, top=760.0))


def column_heading_pdf(n_pages: int = 6) -> bytes:
    """``n_pages`` pages of body paragraphs starting near the top edge (in the header
    zone); the last page starts instead with a bold section heading alone in its block,
    as "6.5 Calling External Functions" does on p. 10 of the pdf.js tracemonkey paper."""
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

    def paragraph(top: float, word: str) -> bytes:
        body = [f"The {word} section of the paper runs on in lines of one size and font."]
        return text_ops(body * 6, size=9, top=top).replace(b"14 TL", b"10 TL")

    pages, contents = [], []
    for number in range(n_pages):
        word = words[number % len(words)]
        ops = [paragraph(712, word), paragraph(600, word), paragraph(480, word)]
        if number == n_pages - 1:
            heading = text_ops(["6.5 Calling External Functions"], size=9, top=712)
            ops = [heading.replace(b"/F1", b"/F2", 1), paragraph(690, word), paragraph(570, word)]
        contents.append(stream(b"\n".join(ops)))
        pages.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
            b"<< /F1 3 0 R /F2 4 0 R >> >> /Contents %d 0 R >>" % (5 + n_pages + number)
        )
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(n_pages))
    bold = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold >>"
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n_pages,
            _FONT,
            bold,
            *pages,
            *contents,
        ]
    )


def repeated_form_pdf(lines: Sequence[str], n_pages: int = 2) -> bytes:
    """``n_pages`` identical pages whose only text is ``lines`` near the top edge."""
    kids = b" ".join(b"%d 0 R" % (5 + i) for i in range(n_pages))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n_pages,
            _FONT,
            stream(text_ops(lines, top=760.0)),
            *([page] * n_pages),
        ]
    )


def off_page_text_pdf(n_pages: int, content_bytes: int = 7_900_000) -> bytes:
    """``n_pages`` pages sharing one content stream of ``content_bytes`` of text drawn
    above the page: no character shows, but MuPDF reads it all on every page."""
    unit = b"(" + b"A" * 50 + b") Tj\n"
    body = b"BT /F1 1 Tf 10 2000 Td\n" + unit * (content_bytes // len(unit)) + b"ET"
    kids = b" ".join(b"%d 0 R" % (6 + i) for i in range(n_pages))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n_pages,
            b"<< >>",
            stream(body, compress=True),
            _FONT,
            *([page] * n_pages),
        ]
    )


def mesh_pdf(side: int = 100, n_pages: int = 1) -> bytes:
    """``n_pages`` pages sharing a ``side`` x ``side`` mesh of rulings with a letter in
    every cell: text and rulings look like a table, and find_tables' cost is quadratic
    in the mesh's crossings."""
    step = 700.0 / side
    ops = [b"0.1 w"]
    for i in range(side + 1):
        at = 50 + i * step
        ops.append(b"50 %.2f m 750 %.2f l S %.2f 50 m %.2f 750 l S" % (at, at, at, at))
    ops.append(b"BT /F1 %.2f Tf" % (step * 0.5))
    for r in range(side):
        for c in range(side):
            x, y = 50 + (c + 0.2) * step, 50 + (r + 0.2) * step
            ops.append(b"1 0 0 1 %.2f %.2f Tm (x) Tj" % (x, y))
    ops.append(b"ET")
    kids = b" ".join(b"%d 0 R" % (6 + i) for i in range(n_pages))
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 800 800] "
        b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [" + kids + b"] /Count %d >>" % n_pages,
            b"<< >>",
            stream(b"\n".join(ops), compress=True),
            _FONT,
            *([page] * n_pages),
        ]
    )


def form_loop_pdf() -> bytes:
    """A page drawing a form XObject that draws itself."""
    form = (
        b"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject "
        b"<< /X1 6 0 R >> /Font << /F1 5 0 R >> >> /Length 42 >>\nstream\n"
        b"BT /F1 9 Tf 72 700 Td (loop) Tj ET /X1 Do\nendstream"
    )
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
        b"<< /F1 5 0 R >> /XObject << /X1 6 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            page,
            stream(text_ops(["Page text."]) + b"\n/X1 Do"),
            _FONT,
            form,
        ]
    )


def outline_cycle_pdf() -> bytes:
    """Bookmarks whose /Next (and /First) lead back to the first one."""
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R /Outlines 6 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
            stream(text_ops(["Outlined text."])),
            _FONT,
            b"<< /Type /Outlines /First 7 0 R /Last 8 0 R /Count 2 >>",
            b"<< /Title (One) /Parent 6 0 R /Next 8 0 R /Dest [3 0 R /XYZ 0 792 0] >>",
            b"<< /Title (Two) /Parent 6 0 R /Next 7 0 R /First 7 0 R /Dest [3 0 R /XYZ 0 700 0] >>",
        ]
    )


def deep_nesting_pdf(depth: int = 100_000) -> bytes:
    """A page dictionary holding an array nested ``depth`` levels deep."""
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Junk "
        + b"[" * depth
        + b"]" * depth
        + b" /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>"
    )
    return assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            page,
            stream(text_ops(["Deep."])),
            _FONT,
        ]
    )


def wide_table_markdown(columns: int, rows: int) -> bytes:
    """A GFM pipe table ``columns`` cells wide and ``rows`` rows deep under its header."""
    header = b"|" + b"a|" * columns + b"\n|" + b"-|" * columns + b"\n"
    return header + (b"|" + b"x|" * columns + b"\n") * rows


def _base_pdfs() -> dict[str, bytes]:
    """Small well-formed PDFs the damaged ones are cut from: one page of plain operators,
    three pages with compressed streams, and one written by PyMuPDF (object and xref
    streams)."""
    import pymupdf

    plain = one_page_pdf(
        text_ops([f"Line {i} of a simple page, set in Helvetica." for i in range(30)])
    )
    pages = many_pages_pdf(3)
    written = pymupdf.open()
    for number in range(3):
        page = written.new_page()
        page.insert_text((72, 100), f"Page {number + 1} written by PyMuPDF.", fontsize=12)
        page.draw_rect((72, 200, 300, 260))
    compact = written.tobytes(garbage=3, deflate=True, use_objstms=1)
    written.close()
    return {"plain": plain, "pages": pages, "compact": compact}


def damaged_pdfs() -> list[tuple[str, bytes]]:
    """``(label, bytes)`` of damaged PDFs cut from ``_base_pdfs``: each truncated at every
    tenth of its length, its xref table (or xref stream) cut in the middle and garbled,
    and each of its streams cut in the middle (the file ending there, and the stream's
    second half dropped with the rest of the file kept)."""
    out: list[tuple[str, bytes]] = []
    for name, data in _base_pdfs().items():
        n = len(data)
        out += [(f"{name}-cut-{k}0%", data[: n * k // 10]) for k in range(1, 10)]
        xref = data.rfind(b"xref")
        if xref > 0:
            out.append((f"{name}-xref-cut", data[: xref + (n - xref) // 2]))
            garbled = bytearray(data)
            for i in range(xref, min(n, xref + 120)):
                if garbled[i : i + 1].isdigit():
                    garbled[i] = ord("7") if garbled[i] != ord("7") else ord("x")
            out.append((f"{name}-xref-garbled", bytes(garbled)))
        start = 0
        for k in range(6):
            found = data.find(b"stream\n", start)
            if found < 0:
                break
            begin = found + len(b"stream\n")
            end = data.find(b"endstream", begin)
            if end < 0:
                break
            middle = begin + (end - begin) // 2
            out.append((f"{name}-stream-{k}-ends-file", data[:middle]))
            out.append((f"{name}-stream-{k}-half", data[:middle] + data[end:]))
            start = end
    return out
