"""The ``byo`` case: your pipeline's chunks, from ``import-chunks`` to the first failure's cause.

Input, made once before the rounds (what the user's pipeline made before Chunkscope saw
it): three FinanceBench filings (``FILINGS``; ``--quick``: the MGM release alone) split as
LangChain's ``PyPDFLoader`` and ``RecursiveCharacterTextSplitter(chunk_size,
chunk_overlap, add_start_index=True)`` split them: each page's text as pypdf extracts it
(plain mode), stripped, one document per page with ``source``, ``total_pages``, ``page``
(0-based) and ``page_label`` (pypdf's label of the page), split by
``langchain_text_splitters``, every row with an id as a vector store gives one; written as
LangChain JSONL. Two splits (``SPLITS``): the 1,000/150 of the pipeline as it is usually
built, and 250/40, which gives about 2,000 chunks from the same filings (the target's
size). The user's retriever: Okapi BM25 (k1 1.5, b 0.75; terms are lower-cased runs of
letters and digits, each query term counted once) over the rows' texts, its top
``DEPTH`` rows per FinanceBench question of those filings, ties broken by row order
(deterministic; some questions fail under it). The questions are resolved and pinned as
``import-qa`` does, before the rounds.

Timed (ours), in one process, what the workbench does from the import of the chunks to
the reader showing the first failure (``first_failure``): Library → Import chunks (the
PDFs loaded, the rows read, ``import_chunks(..., check_later=True)``: every chunk placed
by our text, its offset and page claims pending, the set saved), Evaluate → Import a run
without our methods (``LogImport(...).run()`` with the workbench's encoder, which a
process loads once: ``workbench_encoder``; the run saved) and the reader opening the
first failure (``diagnose_run`` for the user's method with the run's parse, as the reader
diagnoses a run's failures when one is opened, and the first failed question's suggested
cause). Baseline in the same rounds: what ``chunkscope parse`` does for each of the same
files (``load_document``, then the fast parser). Targets: at most ``LIMIT_S`` and
``MAX_RATIO`` times the parse.

Then, untimed in the ratio and reported beside it (``claims_checked``): what the
workbench does next in the background (``core.imported.claim_check``): every claim
checked in pypdf's text of the claimed pages, the run made again over the checked set
and its first failure diagnosed again. Checked on every round: nothing was shown
``unchecked`` (pending until checked), then every chunk's offset and page claim was
checked, every citation of both runs is exact, and a failure was found with a suggested
cause before and after. pypdf's own extraction of every page of the filings (the
loader's own cost, and the text the claims are checked in) runs in the same rounds and is
reported beside them; so is, once after the rounds, the command line's import (every
claim checked before the run is scored: ``later=False``) again with the loader's page
texts kept (``core.imported.loader_text``): ``byo:again``.
"""

from __future__ import annotations

import json
import logging
import math
import re
import statistics
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from core import methods as method_registry
from core.bench.inputs import BenchInputs, shared_dir
from core.bench.report import CaseResult
from core.bench.timing import Timing, interleaved
from core.chunk import policy_registry
from core.diagnose import signals as diagnosis_kept
from core.diagnose.run_failures import diagnose_run
from core.embed import load_encoder
from core.errors import ChunkscopeError
from core.evaluate import import_qa, pin_labels, resolve_queries, save_run
from core.evaluate.imported_run import LogImport
from core.evaluate.labels import LabelledQuery
from core.evaluate.traces import TraceHit, TraceQuery
from core.formats import load_document, parse_document
from core.imported import import_chunks, loader_text, read_file, save_chunk_set
from core.imported.claim_check import check_claims

FILINGS = (
    "Pfizer_2023Q2_10Q",
    "JOHNSON_JOHNSON_2022Q4_EARNINGS",
    "MGMRESORTS_2022Q4_EARNINGS",
)  # 111 pages, 8 questions
QUICK_FILINGS = ("MGMRESORTS_2022Q4_EARNINGS",)
SPLITS: tuple[tuple[int, int], ...] = ((1000, 150), (250, 40))  # (chunk_size, chunk_overlap)
DEPTH = 5  # the user's retriever logs its top 5
LIMIT_S = 60.0
MAX_RATIO = 1.5
NAME = "yours"  # the user's retriever, as import-run names it
SET_NAME = "byo_pypdf"
_BM25_K1 = 1.5
_BM25_B = 0.75


def filing_paths(quick: bool) -> list[Path]:
    root = shared_dir() / "corpus" / "financebench" / "pdfs"
    return [root / f"{name}.pdf" for name in (QUICK_FILINGS if quick else FILINGS)]


def pipeline_rows(paths: list[Path], size: int, overlap: int) -> list[dict[str, Any]]:
    """The rows ``PyPDFLoader`` + ``RecursiveCharacterTextSplitter(size, overlap,
    add_start_index=True)`` make of ``paths`` (see the module doc), with ids ``row-N``."""
    import pypdf
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(
        chunk_size=size, chunk_overlap=overlap, add_start_index=True
    )
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    rows: list[dict[str, Any]] = []
    try:
        for path in paths:
            reader = pypdf.PdfReader(path)
            labels = list(reader.page_labels)
            for number, page in enumerate(reader.pages):
                meta = {"source": str(path), "total_pages": len(reader.pages), "page": number,
                        "page_label": labels[number]}  # fmt: skip
                text = page.extract_text().strip()
                for piece in splitter.create_documents([text], [meta]):
                    rows.append({"id": f"row-{len(rows)}", "page_content": piece.page_content,
                                 "metadata": piece.metadata, "type": "Document"})  # fmt: skip
    finally:
        quiet.setLevel(level)
    return rows


def _terms(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def bm25_log(rows: list[dict[str, Any]], labels: list[LabelledQuery]) -> list[TraceQuery]:
    """The user's retriever: BM25 top ``DEPTH`` over the rows per question (module doc)."""
    bags = [Counter(_terms(r["page_content"])) for r in rows]
    lengths = [sum(bag.values()) for bag in bags]
    mean = sum(lengths) / max(1, len(bags))
    df = Counter(t for bag in bags for t in bag)
    idf = {t: math.log(1 + (len(bags) - n + 0.5) / (n + 0.5)) for t, n in df.items()}
    log = []
    for query in labels:
        asked = set(_terms(query.query))
        scores = []
        for bag, length in zip(bags, lengths, strict=True):
            norm = _BM25_K1 * (1 - _BM25_B + _BM25_B * length / max(mean, 1e-9))
            scores.append(
                sum(idf[t] * bag[t] * (_BM25_K1 + 1) / (bag[t] + norm) for t in asked if t in bag)
            )
        best = sorted(range(len(rows)), key=lambda i: (-scores[i], i))[:DEPTH]
        hits = tuple(
            TraceHit(rank=r, chunk_id=rows[i]["id"], text=None, source=None, score=scores[i])
            for r, i in enumerate(best, start=1)
        )
        log.append(TraceQuery(query_id=query.id, query=query.query, hits=hits))
    return log


def question_labels(inputs: BenchInputs, paths: list[Path]) -> list[LabelledQuery]:
    """The FinanceBench questions of ``paths``, resolved and pinned (as ``import-qa``)."""
    names = {p.stem for p in paths}
    asked = import_qa(
        shared_dir() / "corpus" / "financebench" / "questions.jsonl", question="question",
        evidence="evidence[].evidence_text", page="evidence[].evidence_page_num",
        doc="doc_name", id_column="financebench_id", page_base=0,
    )  # fmt: skip
    docs = [inputs.document(p) for p in paths]
    resolved, _ = resolve_queries([q for q in asked if q.doc in names], docs)
    return pin_labels(resolved)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What one round of ``first_failure`` made, and its stages' seconds: the set, run and
    first failure as the reader first shows them (``chunk_set`` with its claims pending
    when ``later``), and the set, run and diagnosis once every claim is checked
    (``checked``, ``checked_run``, ``checked_diagnosis``; the same objects without
    ``later``)."""

    docs: list[Any]
    chunk_set: Any
    run: Any
    first: Any
    diagnosis: Any
    checked: Any
    checked_run: Any
    checked_diagnosis: Any
    stages: dict[str, float]


def first_failure(
    paths: list[Path], rows_file: bytes, labels: list[LabelledQuery],
    log: list[TraceQuery], folder: Path, *, cold: bool = True, later: bool = True,
) -> Outcome:  # fmt: skip
    """``import-chunks``, ``import-run --methods none``, the reader's first failure (the
    module doc); ``folder`` stands for the store. ``cold``: the loader's page texts kept
    from an earlier import, and what the diagnosis keeps per document and chunk (word
    pairs, chunk terms), are dropped first (a first import of these files). ``later``:
    the workbench's import, the claims checked after the first failure is shown (stage
    ``claims_checked``, not part of the first failure's time); else the command line's,
    every claim checked before the run is scored."""
    if cold:
        loader_text.forget()
        diagnosis_kept.forget()
    stages: dict[str, float] = {}
    started = time.perf_counter()
    docs = [load_document(p) for p in paths]
    stages["load"] = time.perf_counter() - started
    shape, chunks = read_file(rows_file, "rows.jsonl")
    chunk_set, _ = import_chunks(chunks, docs, name=SET_NAME, shape=shape, origin="rows.jsonl",
                                 check_later=later)  # fmt: skip
    save_chunk_set(folder / "chunksets", chunk_set)
    stages["import_chunks"] = time.perf_counter() - started - stages["load"]
    mark = time.perf_counter()
    encoder = workbench_encoder() if later else load_encoder(deterministic=True)
    found = LogImport(log, labels, chunk_set, docs, name=NAME, shape="hits",
                      trace_name="log.jsonl")  # fmt: skip
    run = found.run(encoder=encoder)
    save_run(run, folder / "runs" / f"{run.run_id}.json")
    stages["import_run"] = time.perf_counter() - mark
    mark = time.perf_counter()
    first, diagnosis = _first_diagnosed(run, found, docs, encoder)
    stages["first_failure"] = time.perf_counter() - mark
    checked = not later  # else checked afterwards: ``claims_checked``
    return Outcome(docs=docs, chunk_set=chunk_set, run=run, first=first, diagnosis=diagnosis,
                   checked=chunk_set if checked else None, checked_run=run if checked else None,
                   checked_diagnosis=diagnosis if checked else None, stages=stages)  # fmt: skip


def claims_checked(
    outcome: Outcome, labels: list[LabelledQuery], log: list[TraceQuery], folder: Path
) -> Outcome:
    """What the workbench does after the first failure is shown, in the background: the
    pending claims checked in the loader's text, the run made again over the checked set
    and its first failure diagnosed again (stage ``claims_checked``)."""
    if outcome.checked is not None:
        return outcome
    started = time.perf_counter()
    encoder = workbench_encoder()
    checked = check_claims(outcome.chunk_set, outcome.docs)
    save_chunk_set(folder / "chunksets", checked)
    again = LogImport(log, labels, checked, outcome.docs, name=NAME, shape="hits",
                      trace_name="log.jsonl")  # fmt: skip
    run = again.run(encoder=encoder)
    save_run(run, folder / "runs" / f"{run.run_id}.json")
    _, diagnosis = _first_diagnosed(run, again, outcome.docs, encoder)
    stages = outcome.stages | {"claims_checked": time.perf_counter() - started}
    return replace(outcome, checked=checked, checked_run=run, checked_diagnosis=diagnosis,
                   stages=stages)  # fmt: skip


@cache
def workbench_encoder() -> Any:
    """The encoder as the workbench holds it: loaded once per process (its
    ``st.cache_resource``), the weights only when a text is first encoded. The command
    line's import loads its own (``first_failure`` without ``later``)."""
    return load_encoder(deterministic=True)


def _first_diagnosed(run: Any, found: LogImport, docs: list[Any], encoder: Any) -> tuple[Any, Any]:
    """The run's first failure under the user's retriever and its diagnosis, as the reader
    makes it when the run is opened (each document parsed once: ``found.parts``)."""
    first = next((q for q in run.queries if q.failed.get(NAME)), None)
    if first is None:
        return None, None
    found_all = diagnose_run(run, {d.doc_id: d for d in docs}, method=NAME, encoder=encoder,
                             chunker=found.parts)  # fmt: skip
    return first, found_all.get(first.id)


def check_outcome(outcome: Outcome) -> None:
    """The first failure shown with claims pending or checked (never ``unchecked``), then
    every claim checked, every citation exact, a failure with a suggested cause."""
    first = outcome.chunk_set.counts()
    total = len(outcome.chunk_set.chunks)
    for key in ("claim", "page_claim"):
        if first[key]["unchecked"]:
            raise AssertionError(f"{key}s shown as unchecked: {dict(first[key])} of {total:,}")
    counts = outcome.checked.counts()
    for key in ("claim", "page_claim"):
        if counts[key]["ok"] + counts[key]["wrong"] != total:
            raise AssertionError(f"not every {key} was checked: {dict(counts[key])} of {total:,}")
    texts = {d.doc_id: d.text for d in outcome.docs}
    for run in (outcome.run, outcome.checked_run):
        for chunk_id, cite in run.chunks.items():
            if texts[cite.doc_id][cite.char_start : cite.char_end] != cite.quote:
                raise AssertionError(f"the run's citation of {chunk_id} is not exact")
    if outcome.first is None or outcome.diagnosis is None or outcome.checked_diagnosis is None:
        raise AssertionError("the log has no failure with a suggested cause")


def parse_all(paths: list[Path]) -> list[Any]:
    """What ``chunkscope parse`` does for each file: load it, then the fast parser."""
    return [parse_document(load_document(p), parser="fast") for p in paths]


def pypdf_pages(paths: list[Path]) -> int:
    """pypdf's extraction of every page of ``paths`` once (the loader's own cost, and
    the text the claims are checked in); the pages read."""
    import pypdf

    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        pages = 0
        for path in paths:
            for page in pypdf.PdfReader(path).pages:
                page.extract_text()
                pages += 1
        return pages
    finally:
        quiet.setLevel(level)


def byo_cases(inputs: BenchInputs) -> list[CaseResult]:
    """One row per split of ``SPLITS`` (``--quick``: the first), and ``byo:again`` (the
    first split imported again, the loader's page texts kept), each against the parse.
    The set's policy and the retriever an import registers are gone afterwards, as before
    (a bench run inside a longer process leaves its registries as it found them)."""
    had_set = policy_registry.find(SET_NAME) is not None
    had_method = _method_known(NAME)
    try:
        return _byo_cases(inputs)
    finally:
        if not had_set and policy_registry.find(SET_NAME) is not None:
            policy_registry.unregister_fixed(SET_NAME)
        if not had_method:
            method_registry.unregister(NAME)


def _method_known(name: str) -> bool:
    try:
        method_registry.get(name)
    except ChunkscopeError:
        return False
    return True


def _byo_cases(inputs: BenchInputs) -> list[CaseResult]:
    s = inputs.settings
    try:
        import langchain_text_splitters  # noqa: F401
    except ImportError:
        return [
            CaseResult(key="byo:first-failure:skipped", case="byo",
                       label="from import-chunks to the first failure",
                       skipped="langchain-text-splitters is not installed (the langchain extra)")
        ]  # fmt: skip
    paths = filing_paths(s.quick)
    splits = SPLITS[:1] if s.quick else SPLITS
    labels = question_labels(inputs, paths)
    made = {}
    for size, overlap in splits:
        rows = pipeline_rows(paths, size, overlap)
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()
        made[(size, overlap)] = (rows, data, bm25_log(rows, labels))
    outcomes: dict[str, Outcome] = {}
    with tempfile.TemporaryDirectory(prefix="chunkscope-bench-byo-") as folder:

        def ours(split: tuple[int, int]) -> Any:
            _, data, log = made[split]
            return first_failure(paths, data, labels, log, Path(folder) / f"{split[0]}")

        contenders: dict[str, Any] = {
            "parse": lambda step: parse_all(paths),
            "pypdf": lambda step: pypdf_pages(paths),
        }
        for split in splits:
            contenders[f"{split[0]}/{split[1]}"] = lambda step, split=split: ours(split)

        stage_log: dict[str, list[dict[str, float]]] = {}

        def check(name: str, result: Any) -> None:
            if name not in ("parse", "pypdf"):  # untimed: what the background does next
                split = next(x for x in splits if f"{x[0]}/{x[1]}" == name)
                _, _, log = made[split]
                result = claims_checked(result, labels, log, Path(folder) / f"{split[0]}")
                check_outcome(result)
                outcomes[name] = result
                stage_log.setdefault(name, []).append(result.stages)

        rounds = 1 if s.quick else 3
        t = interleaved(contenders, warmup=s.warmup, repeats=rounds, check=check)
        # the first split imported again, the page texts of the last import kept: paired
        # with the parse again (nothing in these rounds drops the kept texts)
        _, data, log = made[splits[0]]
        again = interleaved(
            {"parse": lambda step: parse_all(paths),
             "again": lambda step: first_failure(paths, data, labels, log,
                                                 Path(folder) / "again", cold=False,
                                                 later=False)},
            warmup=0, repeats=rounds,
            check=_check_ours,
        )  # fmt: skip
    floor_s = t["pypdf"].median_s
    pages = sum(len(inputs.document(p).pages) for p in paths)
    parse_s = t["parse"].median_s
    rows_out = []
    for split in splits:
        name = f"{split[0]}/{split[1]}"
        outcome = outcomes[name]
        rows_out.append(
            _row(name, split, paths, made[split][0], outcome, t[name], t["parse"],
                 stage_log[name][s.warmup :] or stage_log[name], floor_s, pages, parse_s,
                 again["again"].median_s if split == splits[0] else None)
        )  # fmt: skip
    rows_out.append(_again_row(len(made[splits[0]][0]), splits[0], len(paths), again))
    return rows_out


def _check_ours(name: str, result: Any) -> None:
    if name != "parse":
        check_outcome(result)


def _again_row(
    chunks: int, split: tuple[int, int], n_paths: int, t: dict[str, Timing]
) -> CaseResult:
    filings = _filings(n_paths)
    return CaseResult(
        key="byo:again",
        case="byo",
        label=f"the command line's import again, the loader's page texts kept, {chunks:,} chunks "
        f"({split[0]}/{split[1]}) of {filings}",
        ours=t["again"].median_s,
        baseline=t["parse"].median_s,
        baseline_label=f"parse of the same {filings}",
        max_ratio=MAX_RATIO,
        max_ours=LIMIT_S,
        target=f"<= {LIMIT_S:.0f} s, <= {MAX_RATIO}x parse",
        notes=(
            "another split of the same PDFs: every claim checked, before the run is scored, in "
            "the page texts the first import extracted",
        ),
        ours_samples=t["again"].samples_s,
        baseline_samples=t["parse"].samples_s,
    )


def _filings(n: int) -> str:
    return f"{n} filing" if n == 1 else f"{n} filings"


def _row(
    name: str, split: tuple[int, int], paths: list[Path], rows: list[dict[str, Any]],
    outcome: Outcome, ours: Any, parse: Any, stages: list[dict[str, float]], floor_s: float,
    pages: int, parse_s: float, again_s: float | None,
) -> CaseResult:  # fmt: skip
    counts = outcome.checked.counts()
    shown = outcome.chunk_set.counts()
    run = outcome.run
    failed = sum(bool(q.failed.get(NAME)) for q in run.queries)
    failed_checked = sum(bool(q.failed.get(NAME)) for q in outcome.checked_run.queries)
    stage = {k: statistics.median(r[k] for r in stages) for k in stages[0]}
    later = stage.pop("claims_checked", None)
    split_text = ", ".join(f"{k} {v:.2f} s" for k, v in stage.items())
    first = outcome.first
    cause = outcome.diagnosis
    moved = sum(
        (a.anchor.char_start, a.anchor.char_end) != (b.anchor.char_start, b.anchor.char_end)
        for a, b in zip(outcome.chunk_set.chunks, outcome.checked.chunks, strict=True)
    )
    key = "byo:first-failure" if split == SPLITS[0] else f"byo:first-failure:{split[0]}-{split[1]}"
    filings = ", ".join(p.stem for p in paths)
    return CaseResult(
        key=key,
        case="byo",
        label=f"import-chunks to the first failure's cause, {len(rows):,} chunks "
        f"({split[0]}/{split[1]}) of {_filings(len(paths))}",
        ours=ours.median_s,
        baseline=parse.median_s,
        baseline_label=f"parse of the same {_filings(len(paths))}",
        max_ratio=MAX_RATIO,
        max_ours=LIMIT_S,
        target=f"<= {LIMIT_S:.0f} s, <= {MAX_RATIO}x parse",
        notes=(
            f"{filings}: PyPDFLoader + RecursiveCharacterTextSplitter({split[0]}, {split[1]}, "
            f"add_start_index=True), a BM25 top-{DEPTH} log; the workbench's import (placed "
            f"by our text, claims pending); stages (median): {split_text}",
            f"shown first: claims pending {shown['claim']['pending']:,}, anchors "
            f"{dict(shown['anchor'])}; then, in the background, every claim checked in "
            f"pypdf's text and the run made again: {later or 0:.2f} s more (median)",
            f"checked: offsets {dict(counts['claim'])}, pages {dict(counts['page_claim'])}; "
            f"anchors {dict(counts['anchor'])}; {moved:,} chunk(s) moved by the check",
            f"{failed} of {run.n_queries} questions failed under the log (a small sample; "
            f"{failed_checked} once checked); first failure {first.id}: {cause.suggested} "
            f"({cause.confidence}); once checked: {outcome.checked_diagnosis.suggested}",
            f"pypdf alone, every page of the filings once ({pages} pages; in the same "
            f"rounds): {floor_s:.2f} s, {floor_s / parse_s:.1f}x the parse",
            *(
                [
                    f"the command line's import again (every claim checked before the run), "
                    f"the loader's page texts kept: {again_s:.2f} s (byo:again)"
                ]
                if again_s is not None
                else []
            ),
        ),
        extra={
            "chunks": len(rows),
            "split": list(split),
            "filings": [p.stem for p in paths],
            "stages_s": stage,
            "claims_checked_s": later,
            "moved": moved,
            "failed_checked": failed_checked,
            "suggested_checked": outcome.checked_diagnosis.suggested,
            "claims": dict(counts["claim"]),
            "page_claims": dict(counts["page_claim"]),
            "anchors": dict(counts["anchor"]),
            "questions": run.n_queries,
            "failed": failed,
            "first_failure": first.id,
            "suggested": cause.suggested,
            "pypdf_s": floor_s,
            "again_s": again_s,
            "pages": pages,
        },
        ours_samples=ours.samples_s,
        baseline_samples=parse.samples_s,
    )
