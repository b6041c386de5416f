"""Scale case ``scale-corpus`` (opt in: ``chunkscope bench --cases scale-corpus``): a
generated corpus of ``--docs`` documents (default 2,000) indexed on Ray with every stored
method into one Chroma server, then the query p50 of every method at that size and the
Compare page's answer over it.

Inputs, generated in a temporary folder for the run (never committed): the shared
Markdown corpora (``TEXTS``) cut at line ends into base documents of about
``BASE_CHARS`` characters, ``DISTINCT`` of them taken evenly from all corpora, and each
written again under new names in turn until there are ``docs`` files
(``<base>-c<copy>.md``: a new doc id, the same bytes). Chunks are fixed windows of
``POLICY_TOKENS`` tokens, so about 50 per document and 100k in all at 2,000 documents.
(With all 195 base documents distinct, the encoder's share of a 2-core machine loaded by
other work was too small to finish in an hour: the run took 6 minutes for its first 500
of 10,000 (document, method) pairs.)

What the copies cost: each embed actor keeps a vector cache (``RayJob.vector_cache``),
keyed by document sha256 and span, so a copy's vectors come from the cache of the actor
that embeds it (if that actor saw the bytes before), not from the encoder. Every copy is
still parsed, chunked, shipped through the pipeline and written to the server as its own
records, and every query searches every record; only the encoder's work is shared. The
index row says how many records came from the caches.

Queries (``QUERIES``) are run through ``core.retrieve.comparison.compare``, the call the
Compare page makes: one method at ``k`` 10 per query for the per-method p50 (after one unmeasured
query per method, whose time is reported: it loads a lexical index from the server), and
all of ``COMPARED`` at the page's depth (``PAGE_DEPTH``, the page's ``WIDE``) for the
page's answer: its first time on a freshly opened store (its first ranked result) and
its p50 over the queries afterwards.
"""

from __future__ import annotations

import functools
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core import defaults
from core import methods as registry
from core.bench.inputs import BenchInputs, shared_dir
from core.bench.machine import load_average, usable_cores
from core.bench.report import CaseResult
from core.bench.scale_cases import chroma_server
from core.chunk import policy_from_args
from core.embed import load_encoder
from core.retrieve.comparison import compare
from core.scale import RayJob, RayOptions, index_on_ray
from core.scale.cluster import ClusterRequest, import_ray, start_local
from core.store import ChunkStore

TEXTS = ("finance", "pubmed", "wikitexts", "state_of_the_union", "chatlogs")
BASE_CHARS = 6_500
DISTINCT = 40  # distinct base documents in the corpus (what the encoder must encode)
POLICY_TOKENS = 32
PAGE_DEPTH = 5000  # workbench.engine.resources.WIDE: candidates the Compare page asks per method
QUERY_K = 10
WRITERS = 3  # writer actors (no CPU reserved): a write mostly waits on the server
LOG_EVERY = 500  # (document, method) pairs between progress lines on stderr
QUERIES = (
    "net revenue growth compared with the prior fiscal year",
    "operating cash flow and capital expenditures",
    "risks related to interest rates and foreign exchange",
    "randomized controlled trial outcomes in patients",
    "gene expression in tumour cells",
    "side effects and adverse events reported during treatment",
    "history of the city in the nineteenth century",
    "the band released its first album",
    "the president spoke about the economy and jobs",
    "health care costs for american families",
    "our troops and national security",
    "a user asks how to fix an error message",
    "the election results and the new government",
    "dividends paid to shareholders",
    "mortality rates in the study population",
    "the river flows through the valley",
    "climate change and clean energy",
    "a question about installing the software",
    "goodwill impairment and intangible assets",
    "protein binding and cell signalling",
)


def base_documents(chars: int = BASE_CHARS) -> list[tuple[str, str]]:
    """``(name, text)`` of every base document: each shared corpus cut after the first
    line end past every ``chars`` characters (a line is a paragraph in these corpora;
    wikitexts has no blank lines)."""
    folder = shared_dir() / "corpus" / "chunking_evaluation" / "corpora"
    out: list[tuple[str, str]] = []
    for stem in TEXTS:
        text = (folder / f"{stem}.md").read_text(encoding="utf-8")
        start, part = 0, 0
        while start < len(text):
            cut = text.find("\n", start + chars)
            end = len(text) if cut < 0 else cut + 1
            piece = text[start:end]
            if piece.strip():
                out.append((f"{stem}-p{part:03d}", piece))
                part += 1
            start = end
    return out


def write_corpus(folder: Path, docs: int, distinct: int = DISTINCT) -> tuple[list[Path], int]:
    """``docs`` files under ``folder``: ``distinct`` base documents taken from the corpora
    in turn (the first part of each, then the second...), copied in turn; and how many
    distinct ones are used."""
    by_corpus: dict[str, list[tuple[str, str]]] = {}
    for name, text in base_documents():
        by_corpus.setdefault(name.rsplit("-p", 1)[0], []).append((name, text))
    longest = max(len(parts) for parts in by_corpus.values())
    turns = [parts[i] for i in range(longest) for parts in by_corpus.values() if i < len(parts)]
    picked = turns[:distinct]
    copies = math.ceil(docs / len(picked))
    paths: list[Path] = []
    for copy in range(copies):
        for name, text in picked:
            if len(paths) == docs:
                break
            path = folder / f"{name}-c{copy:03d}.md"
            path.write_text(text, encoding="utf-8")
            paths.append(path)
    return paths, min(docs, len(picked))


def scale_corpus_cases(inputs: BenchInputs) -> list[CaseResult]:
    """The index row, one query row per method, and the Compare row."""
    try:
        ray = import_ray()
    except Exception as exc:  # Ray is an optional extra
        return [CaseResult(key="scale-corpus:skipped", case="scale-corpus",
                           label="scale corpus (skipped)", skipped=str(exc))]  # fmt: skip

    cores = usable_cores()
    with tempfile.TemporaryDirectory(prefix="cs-scale-corpus-") as folder:
        files, n_bases = write_corpus(Path(folder), inputs.settings.scale_docs)
        with chroma_server() as host:
            start_local(ClusterRequest(cpus=cores, gpus=0))
            try:
                index_row, policy, methods = _index(files, n_bases, host, cores)
            finally:
                ray.shutdown()
            rows = [index_row, *_query_rows(host, policy, methods)]
    for row in rows:  # on stderr too: a long run's figures survive a lost stdout
        print(f"scale-corpus: {row.label}: {row.ours:.4f} s; {'; '.join(row.notes)}",
              file=sys.stderr, flush=True)  # fmt: skip
    return rows


def _index(files: list[Path], n_bases: int, host: str, cores: int) -> Any:
    policy = policy_from_args("fixed", POLICY_TOKENS, 0, "tokens")
    methods = registry.base_methods()
    encoder = load_encoder(device="cpu")
    job = RayJob(policy=policy, model=encoder.name, model_dir=str(encoder.model_dir),
                 make_encoder=functools.partial(load_encoder, device="cpu"), host=host,
                 vector_cache=True)  # fmt: skip
    load = load_average()
    options = RayOptions(workers=cores, writers=WRITERS)
    run = index_on_ray(files, job=job, methods=methods, options=options, progress=_log_progress)
    report = run.report
    if report.halted or any(d.error for d in report.documents):
        raise RuntimeError(report.halted or next(d.error for d in report.documents if d.error))
    embed = next(s for s in run.stages if s.stage == "embed")
    chunks = sum(d.n_chunks or 0 for d in report.documents)
    row = CaseResult(
        key="scale-corpus:index",
        case="scale-corpus",
        label=f"ray index {len(files):,} docs, {chunks:,} chunks x {len(methods)} methods",
        ours=run.pipeline_s,
        target="reported",
        notes=(
            f"{len(files):,} documents = {n_bases} distinct base documents of the shared "
            f"Markdown corpora, copied under new ids; policy {policy.key}",
            f"{embed.cached:,} of {embed.chunks:,} records from the embed actors' vector "
            f"caches (same bytes, same span); the rest encoded",
            f"{chunks * len(methods) / run.pipeline_s:,.0f} records written/s; "
            f"{cores} embed workers, {WRITERS} writers; load average {load} at the start",
            *run.summary_lines(),
        ),
        extra={"docs": len(files), "bases": n_bases, "chunks": chunks, "methods": list(methods),
               "cached": embed.cached, "ray": run.to_dict(), "elapsed_s": report.elapsed_s},
    )  # fmt: skip
    return row, policy, methods


def _log_progress(event: Any) -> None:
    if event.done % LOG_EVERY == 0 or event.done == event.total:
        print(f"scale-corpus: {event.done:,}/{event.total:,} (document, method) pairs stored",
              file=sys.stderr, flush=True)  # fmt: skip


def _p50_ms(samples: list[float]) -> str:
    return f"p50 {statistics.median(samples) * 1000:,.0f} ms"


def _query_rows(host: str, policy: Any, methods: tuple[str, ...]) -> list[CaseResult]:
    encoder = load_encoder(device="cpu")
    store = ChunkStore.open(host=host)
    started = time.perf_counter()
    first = compare(QUERIES[0], methods=defaults.COMPARED, encoder=encoder, store=store,
                    policy=policy, k=PAGE_DEPTH)  # fmt: skip
    first_s = time.perf_counter() - started
    page = [compare(q, methods=defaults.COMPARED, encoder=encoder, store=store, policy=policy,
                    k=PAGE_DEPTH).elapsed_s for q in QUERIES[1:]]  # fmt: skip
    scope = max(first.scope_sizes.values())
    rows = [
        CaseResult(
            key="scale-corpus:compare",
            case="scale-corpus",
            label=f"Compare page answer, {len(defaults.COMPARED)} methods, top {PAGE_DEPTH:,}",
            ours=statistics.median(page),
            target="reported",
            notes=(
                f"first answer on a fresh store {first_s:.2f} s; then {_p50_ms(page)} over "
                f"{len(page)} queries; {scope:,} chunks per method",
            ),
            extra={"first_s": first_s, "samples_s": page, "scope": scope},
        )  # fmt: skip
    ]
    for method in (*methods, *[m for m in defaults.COMPARED if m not in methods]):
        rows.append(_method_row(method, encoder, store, policy))
    return rows


def _method_row(method: str, encoder: Any, store: Any, policy: Any) -> CaseResult:
    def ask(query: str) -> Any:
        return compare(query, methods=(method,), encoder=encoder, store=store, policy=policy,
                       k=QUERY_K)  # fmt: skip

    started = time.perf_counter()
    first = ask(QUERIES[0])
    first_s = time.perf_counter() - started
    samples = []
    for query in QUERIES:
        started = time.perf_counter()
        ask(query)
        samples.append(time.perf_counter() - started)
    scope = first.scope_sizes[method]
    p95 = sorted(samples)[max(0, math.ceil(0.95 * len(samples)) - 1)]
    return CaseResult(
        key=f"scale-corpus:query:{method}", case="scale-corpus",
        label=f"query {method} over {scope:,} chunks (top {QUERY_K})",
        ours=statistics.median(samples), target="reported",
        notes=(f"{_p50_ms(samples)}, p95 {p95 * 1000:,.0f} ms over {len(samples)} queries "
               f"(query encoding included); first query {first_s * 1000:,.0f} ms",),
        extra={"scope": scope, "samples_s": samples, "first_s": first_s},
    )  # fmt: skip
