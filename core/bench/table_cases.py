"""The ``tables`` case: parse time of a table-heavy PDF beside its typing quality.

Per document: load + parse with the fast parser, the table cache emptied before every
round (so each round pays the table search a first parse pays; the ``parse`` case keeps
the cache), interleaved with raw ``rawdict`` of every page (``parse_rounds`` rounds),
target <= 2.0x. The row's
notes give table recall/precision, heading precision and furniture recall against the
layout model's kept reference (``core.bench.table_quality``) and the time that reference
took when it was computed, and the same scores for the ``fast+layout`` parser (one
untimed-by-the-case run) with the pages it gave the layout model and their seconds.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from core.bench.inputs import BenchInputs, check_spans, parse_rounds, shared_dir
from core.bench.report import CaseResult
from core.bench.table_quality import FINANCEBENCH, TABLE_PDFS, Quality, reference_for, score
from core.bench.timing import interleaved
from core.formats import load_document, parse_document
from core.ingest.pdf_text import RAWDICT_FLAGS
from core.tables.finder import clear_table_cache

QUICK_DOCUMENTS = ("Pfizer_2023Q2_10Q.pdf",)


def table_paths(quick: bool) -> list[Path]:
    """The shared filings and table PDFs that exist (only the 10-Q with ``quick``)."""
    corpus = shared_dir() / "corpus"
    names = QUICK_DOCUMENTS if quick else (*FINANCEBENCH, *TABLE_PDFS)
    paths = [
        (corpus / "financebench" / "pdfs" if n in FINANCEBENCH else corpus / "pdfs") / n
        for n in names
    ]
    return [p for p in paths if p.is_file()]


def tables_case(inputs: BenchInputs, path: Path) -> CaseResult:
    import pymupdf

    def ours(step: int) -> object:
        clear_table_cache()
        doc = load_document(path)
        return doc, parse_document(doc, parser="fast")

    def raw(step: int) -> object:
        with pymupdf.open(path) as pdf:
            return sum(len(p.get_text("rawdict", flags=RAWDICT_FLAGS)["blocks"]) for p in pdf)

    def check(name: str, result: Any) -> None:
        if name == "ours":
            doc, parsed = result
            check_spans(doc, parsed.blocks, "block")

    s = inputs.settings
    rounds = parse_rounds(s)
    t = interleaved({"ours": ours, "raw": raw}, warmup=s.warmup, repeats=rounds, check=check)
    doc = inputs.document(path)
    reference = reference_for(doc, path.name)
    quality = score(doc, inputs.blocks(path), reference)
    mixed = parse_document(doc, parser="fast+layout")  # once, untimed beyond its own clock
    check_spans(doc, mixed.blocks, "block")
    mixed_quality = score(doc, mixed.blocks, reference)

    return CaseResult(
        key=f"tables:{doc.doc_id}",
        case="tables",
        label=f"tables {doc.doc_id} ({len(doc.pages)} pp)",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label="rawdict",
        max_ratio=2.0,
        target="<= 2.0x",
        notes=_notes(quality, mixed_quality, mixed, reference.elapsed_s),
        extra={
            **quality.to_dict(),
            "layout_model_s": reference.elapsed_s,
            "mixed": {
                **mixed_quality.to_dict(),
                "model_pages": list(mixed.model_pages),
                "model_s": mixed.model_s,
                "elapsed_s": mixed.elapsed_s,
            },
        },
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _notes(quality: Quality, mixed_quality: Quality, mixed: Any, layout_s: float) -> tuple:
    """The row's notes: fast scores, then what ``fast+layout`` gave the model and got."""
    return (
        f"load + parse with an empty table cache; tables {quality.tables_matched} of "
        f"{quality.tables_ref} found (recall {_share(quality.table_recall)}, precision "
        f"{_share(quality.table_precision)} of {quality.tables_ours})",
        f"heading precision {_share(quality.heading_precision)} of "
        f"{quality.headings_ours}, furniture recall {_share(quality.furniture_recall)} of "
        f"{quality.furniture_ref_lines} lines; layout model {layout_s:.1f} s",
        f"fast+layout: the model on {len(mixed.model_pages)} pages ({mixed.model_s:.2f} s "
        f"of {mixed.elapsed_s:.2f} s), table recall {_share(mixed_quality.table_recall)}, "
        f"precision {_share(mixed_quality.table_precision)}",
    )
