"""The CPU cases that need no model: parse, re-chunk, one slider move, peak memory.

Every function returns one ``CaseResult``. Ours and the baseline run interleaved on the
same input (``timing.interleaved``); every result of ours is checked for exact provenance
(``doc.text[span] == span.text``) outside the timed region, so no speed-up can come from
dropping exactness. Embedding cases live in ``embed_cases``, store cases in
``store_cases``, the long-context GPU case in ``gpu``.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from core.bench.inputs import ROOT, BenchInputs, check_spans, head_document, parse_rounds
from core.bench.report import CaseResult
from core.bench.timing import interleaved, timed
from core.chunk import chunk_document, chunk_stats, default_policy, policy_from_args
from core.embed import load_encoder
from core.formats import load_document, parse_document
from core.methods import BENCHED
from core.methods.embedding import embed_chunks
from core.model.paths import resolve_model_dir
from core.model.tokens import load_tokenizer
from core.provenance.cite import Citation
from core.provenance.types import ChunkPolicy, Document

# Re-chunk policies: (policy, unit, slider step). Each round moves the size one step up.
RECHUNK_POLICIES: tuple[tuple[str, str, int], ...] = (
    ("fixed", "chars", 50),
    ("fixed", "tokens", 8),
    ("sentence", "sentences", 1),
    ("structure", "tokens", 8),
)
RECHUNK_LIMIT_S = 0.050
UI_LIMIT_S = 0.100
UI_OVERLAP_CHARS = 100


def _size_at(name: str, unit: str, step_size: int, step: int) -> ChunkPolicy:
    """The policy after ``step + 1`` slider moves up from the default size."""
    default = policy_from_args(name, None, None, unit)
    return policy_from_args(name, default.size + step_size * (step + 1), None, unit)


def _default(name: str, unit: str) -> ChunkPolicy:
    return policy_from_args(name, None, None, unit)


def parse_case(inputs: BenchInputs, path: Path) -> CaseResult:
    """Ingest + per-character map + blocks (fast parser) vs raw ``rawdict`` of every page.

    The floor asks ``rawdict`` with the flags ingest uses (PyMuPDF's default flags also
    extract images, which ingest never asks for); the default-flag time is noted.
    """
    import pymupdf

    from core.ingest.pdf_text import RAWDICT_FLAGS

    parse_only: list[float] = []

    def ours(step: int) -> object:
        doc = load_document(path)
        return doc, parse_document(doc, parser="fast")

    def raw(step: int, flags: int | None = RAWDICT_FLAGS) -> object:
        with pymupdf.open(path) as pdf:
            return sum(len(page.get_text("rawdict", flags=flags)["blocks"]) for page in pdf)

    def check(name: str, result: Any) -> None:
        if name != "ours":
            return
        doc, parsed = result
        if doc.char_page is None or len(doc.char_page) != len(doc.text):
            raise AssertionError(f"{doc.doc_id}: the per-character page map is incomplete")
        check_spans(doc, parsed.blocks, "block")
        parse_only.append(parsed.elapsed_s)

    s = inputs.settings
    contenders = {"ours": ours, "raw": raw, "default": lambda step: raw(step, None)}
    t = interleaved(contenders, warmup=s.warmup, repeats=parse_rounds(s), check=check)
    doc = inputs.document(path)
    parse_s = statistics.median(parse_only[s.warmup :])
    return CaseResult(
        key=f"parse:{doc.doc_id}",
        case="parse",
        label=f"parse {doc.doc_id} ({len(doc.pages)} pp)",
        ours=t["ours"].median_s,
        baseline=t["raw"].median_s,
        baseline_label="rawdict",
        max_ratio=2.0,
        target="<= 2.0x",
        notes=(
            f"ours = load {t['ours'].median_s - parse_s:.2f} s (rawdict + canonical text + "
            f"char map + tables) + blocks {parse_s:.2f} s; {len(doc.text):,} chars",
            f"rawdict with ingest's flags (no images); with PyMuPDF's default flags "
            f"{t['default'].median_s:.2f} s",
        ),
        extra={
            "blocks_s": parse_s,
            "rawdict_default_flags_s": t["default"].median_s,
            "chars": len(doc.text),
            "pages": len(doc.pages),
        },
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["raw"].samples_s,
    )


def _chonkie_step(name: str, unit: str, step_size: int) -> Callable[[str, int, float], object]:
    """chonkie's RecursiveChunker at the same size as ours on this step (built per move).

    For the sentence policy, whose size counts sentences, chonkie gets characters: the
    size times the document's mean characters per sentence of our chunks.
    """
    from chonkie import RecursiveChunker

    if unit == "tokens":
        from tokenizers import Tokenizer

        tokenizer: Any = Tokenizer.from_file(str(resolve_model_dir() / "tokenizer.json"))
    else:
        tokenizer = "character"

    def run(text: str, step: int, chars_per_sentence: float) -> object:
        size = _size_at(name, unit, step_size, step).size
        if unit == "sentences":
            size = max(1, round(size * chars_per_sentence))
        return RecursiveChunker(tokenizer=tokenizer, chunk_size=size).chunk(text)

    return run


def rechunk_case(
    inputs: BenchInputs, policy: tuple[str, str, int], paths: tuple[Path, ...], group: str
) -> CaseResult:
    """One policy re-run on already parsed documents vs chonkie's RecursiveChunker.

    ``group`` names the documents in the row's key (``headline``: the headline PDF alone,
    which also has the 50 ms limit). Every round is a new slider position (the size
    moves one step up), for both. The first chunking of a document (tokenizing it,
    splitting sentences) is done before the timed rounds: a slider move never pays it.
    """
    name, unit, step_size = policy
    docs = [(inputs.document(p), inputs.blocks(p)) for p in paths]
    first_s, unit_chars = _first_chunking(inputs, docs, _default(name, unit))
    try:
        theirs = _chonkie_step(name, unit, step_size)
    except ImportError:
        return _skipped_rechunk(name, unit, group, "chonkie is not installed (the bench extra)")

    tokenizer = inputs.tokenizer()

    def ours(step: int) -> object:
        policy = _size_at(name, unit, step_size, step)
        return [chunk_document(doc, blocks, policy, tokenizer) for doc, blocks in docs]

    def chonkie(step: int) -> object:
        return [theirs(d.text, step, c) for (d, _), c in zip(docs, unit_chars, strict=True)]

    def check(who: str, result: Any) -> None:
        if who == "ours":
            for (doc, _), chunks in zip(docs, result, strict=True):
                check_spans(doc, chunks, "chunk")

    s = inputs.settings
    t = interleaved(
        {"chonkie": chonkie, "ours": ours}, warmup=s.warmup, repeats=s.repeats, check=check
    )
    headline = group == "headline"
    notes = [f"first chunking at the default size {first_s * 1e3:.0f} ms (paid once per doc)"]
    if unit == "sentences":
        per = ", ".join(f"{c:.0f}" for c in unit_chars)
        notes.append(f"chonkie sized in chars: {per} chars per sentence")
    return CaseResult(
        key=f"rechunk:{name}-{unit}:{docs[0][0].doc_id if headline else group}",
        case="rechunk",
        label=f"re-chunk {name}/{unit} " + (docs[0][0].doc_id if headline else f"{len(docs)} docs"),
        ours=t["ours"].median_s,
        baseline=t["chonkie"].median_s,
        baseline_label="chonkie",
        max_ratio=1.0,
        max_ours=RECHUNK_LIMIT_S if headline else None,
        target="<= 1.0x, <= 50 ms" if headline else "<= 1.0x",
        notes=tuple(notes),
        extra={"first_chunking_s": first_s, "documents": [d.doc_id for d, _ in docs]},
        ours_samples=t["ours"].samples_s,
        baseline_samples=t["chonkie"].samples_s,
    )


def _first_chunking(
    inputs: BenchInputs, docs: list[tuple[Document, tuple]], policy: ChunkPolicy
) -> tuple[float, list[float]]:
    """Chunk every document once at ``policy`` (untimed for the row): the seconds it took,
    and per document the mean characters of a chunk per unit of ``policy.size``."""
    total_s = 0.0
    unit_chars: list[float] = []
    for doc, blocks in docs:
        elapsed, chunks = timed(partial(inputs.chunks, doc, blocks, policy))
        total_s += elapsed
        mean = statistics.fmean(len(c.text) for c in chunks) if chunks else policy.size
        unit_chars.append(mean / policy.size)
    return total_s, unit_chars


def _skipped_rechunk(name: str, unit: str, group: str, reason: str) -> CaseResult:
    return CaseResult(
        key=f"rechunk:{name}-{unit}:{group}:skipped",
        case="rechunk",
        label=f"re-chunk {name}/{unit} {group}",
        target="<= 1.0x",
        skipped=reason,
    )


def _text_window(tokenizer: Any) -> int:
    """Text tokens of the default model's window (``max_seq_length`` less specials)."""
    config = resolve_model_dir() / "sentence_bert_config.json"
    window = json.loads(config.read_text())["max_seq_length"] if config.is_file() else 512
    return int(window) - int(tokenizer.special_tokens_per_text)


def slider_move(doc: Document, blocks: tuple, tokenizer: Any, page: int, step: int) -> list:
    """What the Chunks page's fragment computes after a size slider move (fixed/chars).

    Chunk, statistics, size histogram (serialised as the chart sends it), chunk boxes on
    the rendered page (image from the page cache after the first move), the marked text
    of the page and the citation of its first chunk. Streamlit's own work is not in here.
    """
    from core.render.charts import chunk_size_figure
    from core.render.markup import marked_text_html, page_html
    from core.render.pages import DEFAULT_ZOOM, render_page_png
    from core.render.views import chunk_marks, chunk_shapes, stats_items

    window = _text_window(tokenizer)
    policy = policy_from_args("fixed", 800 + 50 * (step + 1), UI_OVERLAP_CHARS, "chars")
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    stats = chunk_stats(doc, chunks, blocks, tokenizer, window)
    chunk_size_figure(stats.token_counts, window, title="Chunk sizes (tokens)").to_json()
    stats_items(stats)
    info = doc.pages[page - 1]
    png = render_page_png(doc, page, DEFAULT_ZOOM)
    shapes = chunk_shapes(doc, chunks, page)
    page_html(png, width_pt=info.width_pt, height_pt=info.height_pt, shapes=shapes)
    here = [c for c in chunks if c.char_end > info.char_start and c.char_start < info.char_end]
    if here:
        start, end = min(c.char_start for c in here), max(c.char_end for c in here)
        marked_text_html(doc.text[start:end], start, chunk_marks(chunks, start, end))
        Citation.of_chunk(here[0]).render()
    return chunks


def ui_case(inputs: BenchInputs) -> CaseResult:
    """One size-slider move on the Chunks page, headline PDF, parse cached (no baseline).

    ``AppTest`` reruns the whole page script on a widget change (it cannot rerun just the
    ``st.fragment``), so this times the fragment's core call chain (``slider_move``);
    Streamlit's own work (widgets, layout, sending the page) comes on top.
    """
    s = inputs.settings
    doc, blocks = inputs.document(s.pdf), inputs.blocks(s.pdf)
    tokenizer = inputs.tokenizer()
    page = min(s.ui_page, len(doc.pages))
    inputs.chunks(doc, blocks, _default("fixed", "chars"))  # the page's first draw

    def check(name: str, chunks: Any) -> None:
        check_spans(doc, chunks, "chunk")

    t = interleaved(
        {"ours": lambda step: slider_move(doc, blocks, tokenizer, page, step)},
        warmup=s.warmup + 1,
        repeats=max(s.repeats, 5),
        check=check,
    )
    return CaseResult(
        key=f"ui:{doc.doc_id}",
        case="ui",
        label=f"slider move {doc.doc_id} p{page}",
        ours=t["ours"].median_s,
        max_ours=UI_LIMIT_S,
        target="<= 100 ms",
        notes=("the fragment's core call chain (AppTest cannot rerun a fragment alone)",),
        extra={"page": page, "blocks": len(blocks)},
        ours_samples=t["ours"].samples_s,
    )


def memory_case(inputs: BenchInputs) -> CaseResult:
    """Peak RSS of parse + chunk (structure) + late embed of the headline PDF, measured in
    a fresh Python process (``memory_probe``)."""
    s = inputs.settings
    args = [str(s.pdf), str(s.memory_chars or 0), s.device]
    code = (
        "import json, sys; from core.bench.cases import memory_probe; "
        "print(json.dumps(memory_probe(sys.argv[1], int(sys.argv[2]) or None, sys.argv[3])))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"the memory probe failed: {tail}")
    probe = json.loads(done.stdout.strip().splitlines()[-1])
    stages = ", ".join(f"{k} {v:,.0f}" for k, v in probe["peak_mib"].items())
    scope = "whole document" if not s.memory_chars else f"first {s.memory_chars:,} chars"
    return CaseResult(
        key="memory:" + Path(s.pdf).stem,
        case="memory",
        label=f"peak RSS parse+chunk+{BENCHED.windowed} {Path(s.pdf).stem}",
        unit="MiB",
        ours=probe["peak_mib"][BENCHED.windowed],
        target="reported",
        notes=(f"peak MiB after each stage: {stages}; {BENCHED.windowed} embed on the {scope}",),
        extra=probe,
    )


def memory_probe(pdf: str, late_chars: int | None, device: str) -> dict[str, Any]:
    """Run in a fresh process: peak RSS (MiB) after imports, parse, chunk and late embed."""
    import resource

    def peak() -> float:
        # VmHWM belongs to this process image; ru_maxrss survives exec and may report
        # the parent's peak instead.
        status = Path("/proc/self/status")
        if status.is_file():
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux

    peaks = {"imports": peak()}
    doc = load_document(pdf)
    blocks = parse_document(doc).blocks
    peaks["parse"] = peak()
    policy = default_policy("structure")
    chunks = chunk_document(doc, blocks, policy, load_tokenizer())
    peaks["chunk"] = peak()
    target = head_document(doc, late_chars)
    if target is not doc:
        chunks = chunk_document(target, parse_document(target).blocks, policy, load_tokenizer())
    elapsed, vectors = timed(
        lambda: embed_chunks(target, chunks, BENCHED.windowed, load_encoder(device=device))
    )
    peaks[BENCHED.windowed] = peak()
    return {"peak_mib": peaks, "late_s": elapsed, "chunks": len(chunks), "chars": len(target.text)}
