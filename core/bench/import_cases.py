"""The chunk-import case: anchoring chunks another extractor made, on the shared filings.

Input per filing: PyMuPDF's plain ``page.get_text()`` of every page, cut into windows of
``WINDOW`` characters with ``OVERLAP`` of overlap at whitespace, each with its page and
its ``start_index`` into that page's text (what a per-page loader and a character splitter
give a LangChain user). Ours: ``core.imported.anchor_document`` (exact, aligned,
ambiguous or missing for every chunk, claims audited). Baseline in the same run:
``str.find`` of each chunk's text in our canonical text, the first occurrence, with no
alignment (what a tool that trusts text equality does). Target: at most ``LIMIT_S`` per
1,000 chunks, and at least ``MIN_PLACED`` of the chunks anchored ``exact`` or
``aligned`` on every filing (the share is reported with the row; the baseline's share is
in the notes).
"""

from __future__ import annotations

from pathlib import Path

from core.bench.inputs import BenchInputs, shared_dir
from core.bench.report import CaseResult
from core.bench.timing import interleaved

WINDOW = 800
OVERLAP = 100
LIMIT_S = 1.0  # per 1,000 chunks
MIN_PLACED = 0.95


def filing_paths(quick: bool) -> list[Path]:
    found = sorted((shared_dir() / "corpus" / "financebench" / "pdfs").glob("*.pdf"))
    return found[:1] if quick else found


def _windows(text: str) -> list[tuple[int, str]]:
    """``(start_index, text)`` of ``WINDOW``-character windows cut at whitespace."""
    out: list[tuple[int, str]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + WINDOW)
        if end < len(text):
            cut = text.rfind(" ", start + WINDOW // 2, end)
            end = cut if cut > start else end
        piece = text[start:end]
        if piece.strip():
            out.append((start, piece))
        if end >= len(text):
            break
        start = max(end - OVERLAP, start + 1)
    return out


def foreign_chunks(path: Path) -> list:
    """The other extractor's chunks of one PDF (see the module doc)."""
    import pymupdf

    from core.imported import ForeignChunk

    chunks: list[ForeignChunk] = []
    with pymupdf.open(path) as pdf:
        for number, page in enumerate(pdf, start=1):
            for start, piece in _windows(page.get_text()):
                chunks.append(
                    ForeignChunk(
                        index=len(chunks),
                        text=piece,
                        source=path.name,
                        claimed_start=start,
                        claimed_end=start + len(piece),
                        page=number,
                        foreign_id=None,
                    )  # fmt: skip
                )
    return chunks


def import_case(inputs: BenchInputs, path: Path) -> CaseResult:
    from core.imported.anchor import anchor_document

    doc = inputs.document(path)
    chunks = foreign_chunks(path)
    text = doc.text

    def ours(step: int) -> object:
        return anchor_document(doc, chunks)

    def found(step: int) -> object:
        return [text.find(c.text.strip()) for c in chunks]

    s = inputs.settings
    t = interleaved({"ours": ours, "find": found}, warmup=1, repeats=max(3, s.repeats))
    anchors = anchor_document(doc, chunks)
    placed = sum(a.anchor in ("exact", "aligned") for a in anchors) / max(len(anchors), 1)
    by_find = sum(p >= 0 for p in found(0)) / max(len(chunks), 1)  # type: ignore[union-attr]
    per_k = 1000 / max(len(chunks), 1)
    kinds = {
        k: sum(a.anchor == k for a in anchors) for k in ("exact", "aligned", "ambiguous", "missing")
    }
    ok = placed >= MIN_PLACED
    return CaseResult(
        key=f"import:{path.stem}",
        case="import",
        label=f"anchor {len(chunks):,} foreign chunks, {path.stem} ({len(doc.pages)} pp), "
        "per 1,000",
        ours=t["ours"].median_s * per_k,
        baseline=t["find"].median_s * per_k,
        baseline_label="str.find of the text (first occurrence, no alignment)",
        max_ours=LIMIT_S if ok else 0.0,
        target=f"<= {LIMIT_S:.0f} s per 1,000, >= {MIN_PLACED:.0%} anchored",
        notes=(
            f"anchored {placed:.1%} ({', '.join(f'{k} {n}' for k, n in kinds.items())}); "
            f"str.find places {by_find:.1%}",
        ),
        extra={
            "chunks": len(chunks),
            "anchored_share": round(placed, 4),
            **kinds,
            "find_share": round(by_find, 4),
        },  # fmt: skip
        ours_samples=tuple(x * per_k for x in t["ours"].samples_s),
        baseline_samples=tuple(x * per_k for x in t["find"].samples_s),
    )
