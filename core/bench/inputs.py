"""What the benchmark runs on: settings, the shared corpus, and loaded inputs kept once.

The corpus is ``../shared/corpus`` beside the repository (``$CHUNKSCOPE_SHARED`` names
another folder holding ``corpus/``). Documents, parses, the tokenizer and the encoder are
loaded once per run (untimed) and shared by the cases, so every case times only its
own step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import settings
from core.chunk import chunk_document
from core.embed import load_encoder
from core.errors import ChunkscopeError
from core.formats import load_document, parse_document
from core.methods import BENCHED
from core.model.tokens import load_tokenizer
from core.provenance.types import Block, Chunk, ChunkPolicy, Document

ROOT = Path(__file__).resolve().parent.parent.parent
HEADLINE_PDF = "pypdfsf_GeoTopo-komprimiert.pdf"
OTHER_PDFS = ("plumber_federal-register-2020-17221.pdf",)
TEXT_CORPORA = ("chatlogs", "finance", "pubmed", "state_of_the_union", "wikitexts")
CASE_NAMES: tuple[str, ...] = (
    "parse", "tables", "rechunk", "import", BENCHED.alone, BENCHED.windowed, "sweep", "store",
    "lexical", "depth", "signals", "attribution", "ui", "memory", "gpu", "scale", "ocr",
    "diagnose", "compare", "map",
)  # fmt: skip
OPT_IN_CASES: tuple[str, ...] = ("scale-corpus", "import-run", "eval", "byo")  # only when named
PARSE_REPEATS = 11  # the full run's rounds of the parse and tables cases


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchSettings:
    """One benchmark run. Times are medians of ``repeats`` timed runs after ``warmup``.

    ``embed_chars``: the embedding cases (and ``--quick``'s memory case) run on a text
    document made of the headline PDF's first ``embed_chars`` characters of canonical
    text (``None``: the whole document). ``scale_sizes``: vectors in the synthetic store
    collections whose query latency is measured; they are kept in ``cache_dir``.
    ``scale_docs``: documents of the generated corpus of the opt-in ``scale-corpus`` case.
    ``parse_repeats``: timed rounds of the ``parse`` and ``tables`` cases (``None``: as
    ``repeats``); a first parse of a small filing takes 10-500 ms, and on a shared 2-core
    machine five rounds moved its ratio by 0.3 from run to run.
    """

    pdf: Path
    other_pdfs: tuple[Path, ...] = ()
    texts: tuple[Path, ...] = ()
    cases: tuple[str, ...] = CASE_NAMES
    quick: bool = False
    device: str = "cpu"
    warmup: int = 1
    repeats: int = 5
    embed_repeats: int = 5
    parse_repeats: int | None = None
    embed_chars: int | None = 16_000
    memory_chars: int | None = None
    scale_sizes: tuple[int, ...] = (10_000, 100_000)
    scale_queries: int = 40
    scale_docs: int = 2000
    ui_page: int = 20
    cache_dir: Path = field(default_factory=lambda: ROOT / ".chunkscope" / "bench")
    gpu_lengths: tuple[int, ...] = (2048, 4096, 8192)


def shared_dir() -> Path:
    """``$CHUNKSCOPE_SHARED`` or ``../shared`` beside the repository root."""
    return settings.SHARED.read() or ROOT.parent / "shared"


def default_settings(
    *,
    quick: bool = False,
    device: str = "cpu",
    cases: tuple[str, ...] = CASE_NAMES,
    scale_docs: int = 2000,
) -> BenchSettings:
    """The corpus run (``make bench``); ``quick`` trims inputs and repeats to fit 2 minutes.

    Raises ``ChunkscopeError`` with one line when the shared corpus is missing.
    """
    corpus = shared_dir() / "corpus"
    pdf = corpus / "pdfs" / HEADLINE_PDF
    if not pdf.is_file():
        raise ChunkscopeError(
            f"the benchmark corpus is missing ({pdf} not found): set {settings.SHARED.name} to the "
            "folder that holds corpus/"
        )
    texts = tuple(corpus / "chunking_evaluation" / "corpora" / f"{n}.md" for n in TEXT_CORPORA)
    cache = settings.BENCH_CACHE.read()
    common: dict[str, Any] = {
        "pdf": pdf, "cases": cases, "device": device, "quick": quick, "scale_docs": scale_docs
    }  # fmt: skip
    if cache is not None:
        common["cache_dir"] = cache
    if quick:
        return BenchSettings(
            **common,
            other_pdfs=(),
            texts=(),
            repeats=3,
            embed_repeats=3,
            embed_chars=6_000,
            memory_chars=6_000,
            scale_sizes=(10_000,),
            scale_queries=20,
        )
    others = tuple(corpus / "pdfs" / name for name in OTHER_PDFS)
    return BenchSettings(**common, other_pdfs=others, texts=texts, parse_repeats=PARSE_REPEATS)


def parse_rounds(settings: BenchSettings) -> int:
    """The timed rounds of the ``parse`` and ``tables`` cases."""
    return settings.repeats if settings.parse_repeats is None else settings.parse_repeats


class BenchInputs:
    """Inputs loaded once per run; every getter caches what it loads."""

    def __init__(self, settings: BenchSettings) -> None:
        self.settings = settings
        self._docs: dict[Path, Document] = {}
        self._blocks: dict[Path, tuple[Block, ...]] = {}
        self._head: Document | None = None
        self._encoder: Any = None
        self.embed_timings: dict[str, Any] | None = None

    def document(self, path: Path) -> Document:
        if path not in self._docs:
            self._docs[path] = load_document(path)
        return self._docs[path]

    def blocks(self, path: Path) -> tuple[Block, ...]:
        if path not in self._blocks:
            self._blocks[path] = parse_document(self.document(path)).blocks
        return self._blocks[path]

    def tokenizer(self) -> Any:
        return load_tokenizer()

    def encoder(self) -> Any:
        """The default model on ``settings.device`` (raises ``ModelError`` without CUDA)."""
        if self._encoder is None:
            self._encoder = load_encoder(device=self.settings.device)
        return self._encoder

    def head_document(self) -> Document:
        """The embedding input: see ``BenchSettings.embed_chars``."""
        if self._head is None:
            self._head = head_document(self.document(self.settings.pdf), self.settings.embed_chars)
        return self._head

    def chunks(self, doc: Document, blocks: tuple[Block, ...], policy: ChunkPolicy) -> list[Chunk]:
        return chunk_document(doc, blocks, policy, self.tokenizer())


def head_document(doc: Document, n_chars: int | None) -> Document:
    """``doc`` itself, or a text document of its first ``n_chars`` characters (cut back to
    the last line break so no word is split) read through ``load_document``."""
    if n_chars is None or n_chars >= len(doc.text):
        return doc
    cut = doc.text.rfind("\n", 0, n_chars)
    head = doc.text[: cut if cut > 0 else n_chars]
    return load_document(head.encode("utf-8"), name=f"{doc.doc_id}-head{len(head)}.txt")


def check_spans(doc: Document, spans: list[Any] | tuple[Any, ...], what: str) -> None:
    """The provenance invariant: ``doc.text[s.char_start:s.char_end] == s.text`` for all."""
    for span in spans:
        if doc.text[span.char_start : span.char_end] != span.text:
            raise AssertionError(
                f"{what} [{span.char_start}, {span.char_end}) of {doc.doc_id} is not exact"
            )
