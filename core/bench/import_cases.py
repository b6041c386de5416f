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
from typing import Any

from core import defaults
from core.bench.inputs import BenchInputs, shared_dir
from core.bench.report import CaseResult
from core.bench.timing import interleaved
from core.chunk import policy_registry as policies
from core.evaluate import EvalConfig, import_qa, pin_labels, resolve_queries, run_eval
from core.evaluate.imported_run import import_run
from core.evaluate.traces import TraceHit, TraceQuery
from core.imported import ForeignChunk, import_chunks
from core.imported.anchor import anchor_document
from core.imported.chunkset import policy_spec

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
    doc = inputs.document(path)
    chunks = foreign_chunks(path)
    text = doc.text

    def ours(step: int) -> object:
        return anchor_document(doc, chunks)

    def found(step: int) -> list[int]:
        return [text.find(c.text.strip()) for c in chunks]

    s = inputs.settings
    t = interleaved({"ours": ours, "find": found}, warmup=1, repeats=max(3, s.repeats))
    anchors = anchor_document(doc, chunks)
    placed = sum(a.anchor in ("exact", "aligned") for a in anchors) / max(len(anchors), 1)
    by_find = sum(p >= 0 for p in found(0)) / max(len(chunks), 1)
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


# -- import-run: a simple retriever of your own, beside our methods ------------------------

RUN_METHODS = defaults.METHODS  # import-run's methods beside the log
RUN_TOP = 10


def _terms(text: str) -> list[str]:
    import re

    return re.findall(r"[a-z0-9]+", text.lower())


def tfidf_log(chunks: list, questions: list) -> list:
    """Another team's retriever: TF-IDF (log-scaled tf, smoothed idf, cosine) over the
    foreign chunks' texts; the top ``RUN_TOP`` per question, by chunk id."""
    import math
    from collections import Counter

    bags = [Counter(_terms(c.text)) for c in chunks]
    df = Counter(t for bag in bags for t in bag)
    idf = {t: math.log((1 + len(bags)) / (1 + n)) + 1 for t, n in df.items()}

    def vector(bag: Counter) -> dict[str, float]:
        weights = {t: (1 + math.log(n)) * idf.get(t, 0.0) for t, n in bag.items()}
        norm = math.sqrt(sum(w * w for w in weights.values())) or 1.0
        return {t: w / norm for t, w in weights.items()}

    vectors = [vector(bag) for bag in bags]
    log = []
    for question in questions:
        asked = vector(Counter(_terms(question.query)))
        scores = [sum(w * v.get(t, 0.0) for t, w in asked.items()) for v in vectors]
        best = sorted(range(len(chunks)), key=lambda i: -scores[i])[:RUN_TOP]
        hits = tuple(
            TraceHit(rank=r, chunk_id=chunks[i].foreign_id, text=None, source=None,
                     score=scores[i])
            for r, i in enumerate(best, start=1)
        )  # fmt: skip
        log.append(TraceQuery(query_id=question.id, query=question.query, hits=hits))
    return log


def run_case(inputs: BenchInputs) -> CaseResult:
    """Import a TF-IDF retriever's log over another extractor's chunks of the FinanceBench
    filings and score it beside naive, late and bm25 over the same spans; against the
    same evaluation of our methods alone (what importing the log adds)."""
    import time

    paths = filing_paths(quick=False)
    docs = [inputs.document(p) for p in paths]
    foreign: list = []
    for path in paths:
        for chunk in foreign_chunks(path):
            foreign.append(replace_id(chunk, len(foreign)))
    started = time.perf_counter()
    chunk_set, _ = import_chunks(foreign, docs, name="bench_tfidf", shape="chunks",
                                 origin="PyMuPDF page text, 800/100 windows")  # fmt: skip
    anchor_s = time.perf_counter() - started
    questions = shared_dir() / "corpus" / "financebench" / "questions.jsonl"
    asked = import_qa(questions, question="question", evidence="evidence[].evidence_text",
                      page="evidence[].evidence_page_num", doc="doc_name",
                      id_column="financebench_id", page_base=0)  # fmt: skip
    resolved, _ = resolve_queries(asked, docs)
    labels = pin_labels(resolved)
    log = tfidf_log(foreign, labels)
    encoder = inputs.encoder()
    timings: dict[str, float] = {}

    def imported() -> Any:
        t0 = time.perf_counter()
        run = import_run(log, labels, chunk_set, docs, encoder=encoder, name="tfidf",
                         methods=RUN_METHODS, shape="hits", trace_name="tfidf")  # fmt: skip
        timings["import"] = time.perf_counter() - t0
        return run

    def ours_alone() -> Any:
        policies.register(policy_spec(chunk_set), replace=True)
        policy = policies.get(chunk_set.name).default_policy()
        t0 = time.perf_counter()
        run = run_eval(labels, docs, EvalConfig(policy=policy, methods=RUN_METHODS),
                       encoder=encoder)  # fmt: skip
        timings["ours"] = time.perf_counter() - t0
        return run

    ours_alone()  # the first pass fills the model's caches for both
    run = imported()
    ours_alone()
    ranks = ", ".join(
        f"{m} mrr {run.metrics[m]['mrr']:.2f} hit@5 {run.metrics[m]['hit@5']:.2f}"
        for m in run.methods
    )
    return CaseResult(
        key="import-run:financebench",
        case="import-run",
        label=f"import a TF-IDF log of {len(labels)} FinanceBench questions over "
        f"{len(foreign):,} foreign chunks, with {', '.join(RUN_METHODS)} beside it",
        ours=timings["import"],
        baseline=timings["ours"],
        baseline_label=f"{', '.join(RUN_METHODS)} alone over the same spans",
        max_ratio=1.25,
        target="<= 1.25x our methods alone",
        notes=(f"{len(labels)} questions (a small sample): {ranks}; anchoring {anchor_s:.2f} s",),
        extra={
            "metrics": {m: dict(run.metrics[m]) for m in run.methods},
            "questions": len(labels),
            "chunks": len(foreign),
            "anchor_s": anchor_s,
        },  # fmt: skip
    )


def replace_id(chunk: object, index: int) -> object:
    """The chunk renumbered across filings, with an id a log can name."""
    from dataclasses import replace

    return replace(chunk, index=index, foreign_id=f"f{index}")  # type: ignore[type-var]
