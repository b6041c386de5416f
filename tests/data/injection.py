"""A PDF whose text is HTML/JS: the workbench must show these characters and run nothing.

Generated with PyMuPDF when a test needs it (no binary in the repository).
"""

from __future__ import annotations

import pymupdf

INJECTION_LINES = (
    '<script>alert("xss-script")</script>',
    "<img src=x onerror=alert('xss-img')>",
    '"><svg onload=alert(1)> & </div>',
)
INJECTION_NAME = "script-injection.pdf"


def injection_pdf_bytes() -> bytes:
    """One page: a heading and the lines above, each as its own text line. The bytes are
    the same on every call (fixed dates, no new file id), so so is the sha256."""
    pdf = pymupdf.open()
    fixed = "D:20240101000000"
    pdf.set_metadata({"creationDate": fixed, "modDate": fixed, "producer": "chunkscope tests"})
    page = pdf.new_page(width=595, height=842)
    page.insert_text((72, 90), "Injection test", fontsize=18)
    for i, line in enumerate(INJECTION_LINES):
        page.insert_text((72, 140 + 24 * i), line, fontsize=11)
    data = pdf.tobytes(no_new_id=True)
    pdf.close()
    return data
