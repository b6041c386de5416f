"""OCR of PDF pages through Tesseract: recognised lines with boxes and a confidence.

Which pages are read by OCR is the **OCR policy**: ``auto`` (the default) reads a page
whose text layer holds no character after clean-up, ``always`` reads every page from its
image (a text layer is ignored), ``never`` reads none (a page without a text layer stays
empty, ``Page.has_text`` False). The policy in force comes from, in order: the caller's
``ocr=`` (the workbench's sidebar choice), ``policy_override`` (the CLI's ``--ocr``), the
environment variable ``CHUNKSCOPE_OCR``, ``auto``.

The engine is the ``tesseract`` program (Debian package ``tesseract-ocr``, English model
``tesseract-ocr-eng``), run once per page on the page rendered at ``OCR_DPI`` in grey (a
page that would exceed ``MAX_PIXELS`` is rendered at a lower resolution; a page drawn in
one colour is not sent), with its ``tsv`` output: one row per recognised word with its
box in pixels and a confidence 0-100, grouped by block, paragraph and line. Without the
program, ``auto`` reads no page by OCR and says so in one line (``missing_line``);
``always`` is refused with ``OcrUnavailableError``. Each page's OCR is bounded by the
``ocr_page_s`` limit of ``core.ingest.limits`` (the process is killed past it), a
document's by ``ocr_s`` (checked before each page, by ``core.ingest.pdf_text``).

What a page's OCR gives the canonical-text builder (``core.ingest.pdf_text``) is, per
Tesseract paragraph, its lines as the parts a text line has (``OcrLineParts``: the
``LineParts`` of ``core.native.stext`` and the line's confidence) in the page's
unrotated text space (points): a line's words joined by one space, each word's box split
evenly among its characters (Tesseract's ``tsv`` gives no glyph widths), the space
between two words boxed by the gap between them, and the line's confidence: the mean of
its words' confidences weighted by their lengths, scaled to 0-1. The builder applies the
same per-character clean-up as to a text line (``pdf_lines.clean_line``). Results are
kept per process by (document sha256, page, rotation, resolution, engine), so a document
read again is not recognised again.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core import settings
from core.bounded_cache import BoundedCache
from core.errors import ChunkscopeError, OcrUnavailableError
from core.ingest.limits import exceeded, value

if TYPE_CHECKING:
    import pymupdf

__all__ = [
    "ENV_OCR",
    "OCR_POLICIES",
    "OcrReading",
    "engine_version",
    "missing_line",
    "ocr_reading",
    "policy_in_force",
    "policy_override",
]

OCR_POLICIES = settings.OCR_POLICIES
ENV_OCR = settings.OCR.name
OCR_DPI = 300
MAX_PIXELS = 36_000_000  # a page rendered past this is drawn at a lower resolution
OCR_FONT = "OCR"
LANGUAGE = "eng"
_CACHE_PAGES = 512
_override: list[str] = []
_Box = tuple[float, float, float, float]
# (text, one box per character, line box, horizontal, font, size_pt, flags), confidence 0-1
OcrLineParts = tuple[tuple[str, list[_Box], _Box, bool, str, float, int], float]
# One process-wide memo of recognised pages: (sha256, page, rotation, dpi, engine) -> lines
# (thread-safe: the workbench reads from several threads).
_recognised: BoundedCache[tuple, tuple[tuple[OcrLineParts, ...], ...]] = BoundedCache(_CACHE_PAGES)

OcrProgress = Callable[[int, int], None]  # (1-based page being read, pages in the document)


def _check_policy(policy: str, where: str) -> str:
    if policy not in OCR_POLICIES:
        raise ChunkscopeError(f"{where} must be one of {', '.join(OCR_POLICIES)}, got {policy!r}")
    return policy


def policy_in_force(asked: str | None = None) -> str:
    """The OCR policy for one read: ``asked``, else the override, else ``$CHUNKSCOPE_OCR``,
    else ``auto`` (a value outside ``OCR_POLICIES`` is refused in one line)."""
    if asked is not None:
        return _check_policy(asked, "the OCR policy")
    if _override:
        return _override[-1]
    return settings.OCR.read()


@contextmanager
def policy_override(policy: str | None) -> Iterator[None]:
    """The OCR policy for the duration of a ``with`` block (None keeps the current one);
    also set in ``$CHUNKSCOPE_OCR`` meanwhile, so worker processes (Ray, the index job)
    read documents the same way."""
    if policy is None:
        yield
        return
    _override.append(_check_policy(policy, "--ocr"))
    try:
        with settings.OCR.exported(policy):
            yield
    finally:
        _override.pop()


@functools.cache
def _engine() -> tuple[str, str] | None:
    """``(path, version)`` of a usable ``tesseract`` with the English model, else None."""
    path = shutil.which("tesseract")
    if path is None:
        return None
    try:
        done = subprocess.run(
            [path, "--list-langs"], capture_output=True, timeout=20, check=False, text=True
        )
        version = subprocess.run(
            [path, "--version"], capture_output=True, timeout=20, check=False, text=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if LANGUAGE not in done.stdout.split():
        return None
    first = (version.stdout or version.stderr).splitlines()
    return path, first[0].strip() if first else "tesseract"


def engine_version() -> str | None:
    """``"tesseract 5.3.0"``, or None when OCR is not available."""
    found = _engine()
    return found[1] if found else None


TEXT_READING = "text"  # a reading no OCR setting changes


def reading_key(doc: object) -> str:
    """How a document's text was read, as far as OCR decides it: ``"text"`` when every
    page had a text layer and OCR was not forced, else ``"ocr:<policy>:<engine>"``. An
    index records it, so records made under another OCR choice or engine are made again
    (a scan indexed under ``never`` has empty pages; under ``auto`` it has text)."""
    policy = policy_in_force()
    pages = getattr(doc, "pages", ())
    if policy != "always" and all(p.has_text and not p.read_by_ocr for p in pages):
        return TEXT_READING
    return f"ocr:{policy}:{engine_version() or 'none'}"


def reading_holds(stored: str) -> bool:
    """Whether records read as ``stored`` (``reading_key``) still fit the current OCR
    choice and engine, without loading the document: a text reading holds unless OCR is
    now forced; an OCR'd one only under the same policy and engine."""
    policy = policy_in_force()
    if stored == TEXT_READING:
        return policy != "always"
    return stored == f"ocr:{policy}:{engine_version() or 'none'}"


def missing_line() -> str:
    """What the app and the CLI say, in one line, when OCR is not available."""
    return (
        "OCR is not available: the tesseract program with its English model is not "
        "installed (Debian packages tesseract-ocr and tesseract-ocr-eng), so pages without "
        "a text layer stay empty"
    )


def require_engine(policy: str) -> bool:
    """Whether pages may be read by OCR under ``policy``: ``never`` -> False; ``auto``
    -> whether the engine is installed; ``always`` without it -> ``OcrUnavailableError``."""
    if policy == "never":
        return False
    if _engine() is not None:
        return True
    if policy == "always":
        raise OcrUnavailableError(missing_line().replace(", so pages", "; --ocr always reads"))
    return False


def recognise_page(
    page: pymupdf.Page, doc_sha256: str, name: str
) -> tuple[tuple[OcrLineParts, ...], ...]:
    """The page's recognised paragraphs (their lines' parts and confidences, unrotated
    text space, points), in Tesseract's order. The engine must be there
    (``require_engine``). Raises ``LimitExceededError`` past the ``ocr_page_s`` limit."""
    found = _engine()
    assert found is not None, "recognise_page needs the engine (require_engine)"
    path, version = found
    dpi = _resolution(page)
    key = (doc_sha256, page.number, page.rotation, dpi, version)
    return _recognised.get_or_compute(key, lambda: _recognise(page, path, dpi, name))


def _recognise(
    page: pymupdf.Page, path: str, dpi: int, name: str
) -> tuple[tuple[OcrLineParts, ...], ...]:
    """What Tesseract at ``path`` reads on ``page`` rendered at ``dpi`` (not cached)."""
    import pymupdf  # here, not at the top: reading the OCR settings never loads PyMuPDF

    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    if _blank(pixmap):  # nothing drawn: nothing to recognise
        return ()
    tsv = _run(path, pixmap.tobytes("png"), dpi, name, page.number + 1)
    return _lines_of(tsv, 72.0 / dpi, page.derotation_matrix)


def _blank(pixmap: pymupdf.Pixmap) -> bool:
    """Whether every sample of a grey pixmap is the same (numpy: PyMuPDF's
    ``is_unicolor`` takes seconds on a page at 300 dpi)."""
    samples = np.frombuffer(pixmap.samples_mv, dtype=np.uint8)
    return bool(samples.size == 0 or samples.min() == samples.max())


def clear_memo() -> None:
    """Forget every recognised page (the benchmark times a first OCR with it)."""
    _recognised.clear()


def _resolution(page: pymupdf.Page) -> int:
    """``OCR_DPI``, lowered so the rendered page holds at most ``MAX_PIXELS``."""
    width_in, height_in = page.rect.width / 72.0, page.rect.height / 72.0
    area = max(width_in * height_in, 1e-6)
    return max(36, min(OCR_DPI, int((MAX_PIXELS / area) ** 0.5)))


def _run(path: str, png: bytes, dpi: int, name: str, page_number: int) -> str:
    """Tesseract's ``tsv`` of one page image (one thread: the machine is shared)."""
    limit_s = value("ocr_page_s")
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    command = [path, "stdin", "stdout", "--dpi", str(dpi), "-l", LANGUAGE, "tsv"]
    try:
        done = subprocess.run(
            command, input=png, capture_output=True, timeout=limit_s, check=False, env=env
        )
    except subprocess.TimeoutExpired:
        exceeded("ocr_page_s", name, where=f"page {page_number}")
    except OSError as exc:
        raise OcrUnavailableError(f"{missing_line()} ({exc.strerror or exc})") from None
    if done.returncode != 0:
        reason = " ".join(done.stderr.decode("utf-8", "replace").split())[:120]
        raise OcrUnavailableError(
            f"OCR of {name} page {page_number} failed (tesseract: {reason or done.returncode})"
        )
    return done.stdout.decode("utf-8", "replace")


def _lines_of(
    tsv: str, scale: float, derotate: pymupdf.Matrix
) -> tuple[tuple[OcrLineParts, ...], ...]:
    """Paragraphs of lines from Tesseract's ``tsv`` (words at level 5)."""
    import pymupdf  # here, not at the top: reading the OCR settings never loads PyMuPDF

    grouped: dict[tuple[str, str], dict[str, list[tuple[str, tuple[float, ...], float]]]] = {}
    for row in tsv.splitlines()[1:]:
        cols = row.split("\t")
        if len(cols) != 12 or cols[0] != "5":
            continue
        word, conf = cols[11].strip(), float(cols[10])
        if not word or conf < 0:
            continue
        left, top, width, height = (float(v) for v in cols[6:10])
        box = pymupdf.Rect(left, top, left + width, top + height) * scale * derotate
        paragraph = grouped.setdefault((cols[2], cols[3]), {})
        paragraph.setdefault(cols[4], []).append((word, tuple(box), conf / 100.0))
    return tuple(
        tuple(_line(words) for words in paragraph.values()) for paragraph in grouped.values()
    )


def _line(words: list[tuple[str, tuple[float, ...], float]]) -> OcrLineParts:
    """One recognised line: words joined by a space, each word's box split evenly among
    its characters, a space boxed by the gap between its words."""
    words = sorted(words, key=lambda w: w[1][0])
    text: list[str] = []
    boxes: list[tuple[float, float, float, float]] = []
    y0 = min(w[1][1] for w in words)
    y1 = max(w[1][3] for w in words)
    for k, (word, (x0, _, x1, _), _) in enumerate(words):
        if k:
            gap_start = min(boxes[-1][2], x0)
            text.append(" ")
            boxes.append((gap_start, y0, max(x0, gap_start), y1))
        step = (x1 - x0) / len(word)
        text.append(word)
        boxes.extend((x0 + i * step, y0, x0 + (i + 1) * step, y1) for i in range(len(word)))
    bbox = (min(b[0] for b in boxes), y0, max(b[2] for b in boxes), y1)
    size_pt = round(float(np.median([w[1][3] - w[1][1] for w in words])), 2)
    weights = [len(w[0]) for w in words]
    confidence = sum(w[2] * n for w, n in zip(words, weights, strict=True)) / sum(weights)
    parts = ("".join(text), boxes, bbox, True, OCR_FONT, size_pt, 0)
    return parts, round(min(max(confidence, 0.0), 1.0), 4)


@dataclass(frozen=True, slots=True)
class OcrReading:
    """How much of a span was read by OCR and how sure the engine was.

    ``share``: the fraction of the span's characters that have a box (characters the
    builder inserted are not counted) and come from an OCR'd line, 0-1; ``confidence``:
    the mean confidence (0-1) of the OCR lines over those characters, weighted by how
    many of them each line holds; ``lowest``: the lowest such line's confidence."""

    share: float
    confidence: float
    lowest: float


def ocr_reading(doc: object, char_start: int, char_end: int) -> OcrReading | None:
    """The OCR share and confidence of ``doc.text[char_start:char_end]`` (a ``Document``);
    None when no character of the span was read by OCR. Exact over the document's
    ``ocr_lines`` (each one span of the text with its line's confidence)."""
    lines = getattr(doc, "ocr_lines", ())
    if not lines or char_end <= char_start:
        return None
    starts = np.fromiter((ln.char_start for ln in lines), dtype=np.int64, count=len(lines))
    first = max(int(np.searchsorted(starts, char_start, side="right")) - 1, 0)
    bbox = getattr(doc, "char_bbox_pt", None)
    boxed = (
        ~np.isnan(bbox[char_start:char_end, 0])
        if bbox is not None
        else np.ones(char_end - char_start, bool)
    )
    total = int(boxed.sum())
    held, weighted, lowest = 0, 0.0, 1.0
    for line in lines[first:]:
        if line.char_start >= char_end:
            break
        a, b = max(line.char_start, char_start), min(line.char_end, char_end)
        if b <= a:
            continue
        n = int(boxed[a - char_start : b - char_start].sum())
        if n:
            held += n
            weighted += n * line.confidence
            lowest = min(lowest, line.confidence)
    if not held:
        return None
    return OcrReading(share=held / max(total, 1), confidence=weighted / held, lowest=lowest)
