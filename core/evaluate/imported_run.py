"""A run of your retriever, from its log, beside our methods over exactly its chunk spans.

``import_run`` turns a retrieval log (``core.evaluate.traces``) into an ``EvalRun``:

- the log's queries are matched to the labelled queries by id, else by their text
  (whitespace and case aside); a logged query without a label is kept in the run's
  ``imported["unlabelled"]`` for reading and left out of the metrics;
- every hit is mapped to a chunk of the imported chunk set (``core.imported``): by its
  id (the id the set's import knew), or by its text (the chunk of the set with that text,
  else the text anchored in the set's documents like an imported chunk, then the set's
  chunk it overlaps most). A hit that maps to no anchored chunk of the set keeps its rank
  as a miss and is listed in ``imported["outside"]`` with why; it is never dropped;
- the retriever is a method of the run (family ``external``, ``core.methods``): its
  ranking of a query is the log's, ranks as logged (a hit outside the set holds its rank,
  so the hits after it are not promoted). Rank metrics (hit@k, recall@k, MRR, nDCG@10)
  read those ranks; character precision and IoU count the characters of the hits in the
  set; span validity counts a hit outside the set as a citation that does not verify.
  Its full-depth rank of the gold is its rank in the log, or none beyond the log's depth;
  a metric past the log's depth (hit@10 or recall@10 of a 5-deep log, nDCG@10 of a log
  shorter than 10) is n/a for the retriever (``past_depth``), not counted as a miss;
- ``methods`` (naive, late, bm25, ...) are computed by ``run_eval`` over the same
  documents chunked by the chunk set, so their deltas against the retriever compare
  retrievers, not boundaries. The run's ``policy`` is the chunk set's.

Your failures first, ours after: ``LogImport`` scores the retriever alone at once
(``run()``: no encoder work, so its failures can be read while ours embed), then the same
run with our methods (``run(methods)``). Both are one run: the ``run_id`` of an imported
run hashes what the run is about (the log's digest and the retriever's name, the labels,
the chunk set's policy and documents, the model, the cut-offs, scope, threshold and
bootstrap settings) and not the list of our methods, so the run with ours added replaces
the run with yours alone in the store (one file that grows), and importing the same log
again with other ``--methods`` replaces it too. While ours are computed, the kept run
records them in ``imported["pending_methods"]`` with ``imported["pending_state"]``:
``computing``, or ``stopped`` when the import was interrupted or failed before they were
added (``with_pending``, ``pending_methods``, ``pending_state``); ``added`` makes the
finished run the same run, made when the first was, with nothing pending.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from core import defaults
from core import methods as method_registry
from core.chunk import chunk_document
from core.chunk import policy_registry as policy_registry
from core.evaluate.corpus import Corpus
from core.evaluate.labels import LabelledQuery
from core.evaluate.metrics import MetricSpec, query_metrics
from core.evaluate.resolve import ResolvedQuery
from core.evaluate.run_file import EvalRun, RankedHit
from core.evaluate.runner import EvalConfig, run_eval
from core.evaluate.scoring import EmbedFn, Scored, gold_masks
from core.evaluate.traces import TraceError, TraceHit, TraceQuery, trace_depth
from core.formats import parse_document
from core.imported.anchor import DocumentText, anchor_document
from core.imported.chunkset import ChunkSet, policy_spec
from core.imported.shapes import ForeignChunk
from core.provenance.types import Block, Chunk, ChunkPolicy, Document

if TYPE_CHECKING:
    from core.embed.cache import VectorCache
    from core.protocols import TextEncoder

DEFAULT_NAME = "yours"
PENDING = "pending_methods"  # imported[...]: our methods asked and not in the run
PENDING_STATE = "pending_state"  # imported[...]: computing | stopped
PENDING_STATES = ("computing", "stopped")
CLAIMS = "claims"  # imported[...]: "pending" when scored over a set whose claims were pending
# a document's blocks and chunks under a policy (the set's): parsed and chunked
Parts = Callable[[Document, ChunkPolicy], tuple[Sequence[Block], Sequence[Chunk]]]
_MIN_OVERLAP = 0.5  # a hit anchored off the set's spans maps to one it half covers
Span = tuple[str, int, int]  # (doc_id, char_start, char_end)


@dataclass(frozen=True, slots=True)
class _Outside:
    """A logged hit that is no chunk of the set: a miss at its rank, never a citation."""

    text: str
    doc_id: str = ""
    doc_sha256: str = ""
    char_start: int = 0
    char_end: int = 0


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _placed(chunk: Any) -> Span | None:
    """A set's chunk as ``(doc_id, char_start, char_end)`` where it is placed, else None."""
    a = chunk.anchor
    if a.doc_id is None or a.char_start is None or a.char_end is None:
        return None
    return (a.doc_id, a.char_start, a.char_end)


class _HitMapper:
    """Logged hits to the set's anchored chunks (see the module docstring)."""

    def __init__(self, chunk_set: ChunkSet, docs: dict[str, Document]) -> None:
        self.docs = docs
        self.texts: dict[str, DocumentText] = {}  # each document's view, built once
        self.by_id: dict[str, Any] = {}
        self._chunk_set = chunk_set
        self._by_text: dict[str, list[Span]] | None = None  # read when a hit has no known id
        self.spans: dict[str, list[tuple[int, int]]] = {}
        for chunk in chunk_set.chunks:
            span = _placed(chunk)
            if span is not None:
                self.spans.setdefault(span[0], []).append((span[1], span[2]))
            if chunk.given.foreign_id is not None:
                self.by_id[chunk.given.foreign_id] = (span, chunk.anchor)

    @property
    def by_text(self) -> dict[str, list[Span]]:
        """The placed chunks' spans by their text, spacing and case aside."""
        if self._by_text is None:
            self._by_text = {}
            for chunk in self._chunk_set.chunks:
                if (span := _placed(chunk)) is not None:
                    self._by_text.setdefault(_norm(chunk.given.text), []).append(span)
        return self._by_text

    def map(self, hit: TraceHit) -> Span | str:
        """The hit's chunk span, or why it has none (one line)."""
        if hit.chunk_id is not None:
            if hit.chunk_id not in self.by_id:
                if hit.text is None:
                    return f"chunk id {hit.chunk_id!r} is not in the chunk set"
            else:
                span, anchor = self.by_id[hit.chunk_id]
                if span is not None:
                    return span
                return f"chunk {hit.chunk_id!r} of the set is {anchor.anchor}: {anchor.detail}"
        assert hit.text is not None
        same = sorted(set(self.by_text.get(_norm(hit.text), [])))
        if hit.source is not None:
            same = [s for s in same if self._named(s[0], hit.source)] or same
        if len(same) == 1:
            return same[0]
        return self._anchor(hit)

    def _named(self, doc_id: str, source: str) -> bool:
        doc = self.docs[doc_id]
        name = source.replace("\\", "/").rsplit("/", 1)[-1]
        return (
            name in (doc.doc_id, doc.source.rsplit("/", 1)[-1]) or name.rsplit(".", 1)[0] == doc_id
        )

    def _anchor(self, hit: TraceHit) -> Span | str:
        assert hit.text is not None
        candidates = [d for d in self.docs if hit.source is None or self._named(d, hit.source)]
        found: list[Span] = []
        foreign = ForeignChunk(index=0, text=hit.text, source=None, claimed_start=None,
                               claimed_end=None, page=None, foreign_id=None)  # fmt: skip
        for doc_id in candidates or list(self.docs):
            if doc_id not in self.texts:
                self.texts[doc_id] = DocumentText(self.docs[doc_id])
            anchor = anchor_document(self.docs[doc_id], [foreign], text=self.texts[doc_id])[0]
            if anchor.char_start is not None and anchor.char_end is not None:
                found.append((doc_id, anchor.char_start, anchor.char_end))
        if len(found) != 1:
            return (
                "its text is in none of the set's documents"
                if not found
                else ("its text is in several of the set's documents")
            )
        doc_id, start, end = found[0]
        best, share = None, 0.0
        for a, b in self.spans.get(doc_id, []):
            common = min(b, end) - max(a, start)
            if common > 0 and common / max(end - start, 1) > share:
                best, share = (a, b), common / max(end - start, 1)
        if best is None or share < _MIN_OVERLAP:
            return f"its text is at {doc_id} chars {start:,}-{end:,}, inside no chunk of the set"
        return (doc_id, *best)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Logged:
    """One labelled query's logged hits: in the set (span) or outside (why), by rank."""

    hits: tuple[tuple[TraceHit, Span | str], ...]


def _match(
    trace: Sequence[TraceQuery], labels: Sequence[LabelledQuery]
) -> tuple[dict[str, TraceQuery], list[TraceQuery]]:
    """Logged queries by the id of their label; those without one."""
    by_id = {q.id: q for q in labels}
    by_text: dict[str, list[LabelledQuery]] = {}
    for each in labels:
        by_text.setdefault(_norm(each.query), []).append(each)
    matched: dict[str, TraceQuery] = {}
    unlabelled: list[TraceQuery] = []
    for logged in trace:
        label: LabelledQuery | None = by_id.get(logged.query_id or "")
        if label is None and logged.query is not None:
            same = by_text.get(_norm(logged.query), [])
            label = same[0] if len(same) == 1 else None
        if label is None:
            unlabelled.append(logged)
            continue
        if label.id in matched:
            raise TraceError(f"the log holds query {label.id!r} twice: keep one retrieval a query")
        matched[label.id] = logged
    return matched, unlabelled


def past_depth(name: str, depth: int) -> bool:
    """A metric a log ``depth`` deep cannot tell: hit, recall or doc hit at a k past it,
    nDCG@10 of a log shorter than 10. It is n/a for the log's method, never a miss."""
    head, _, k = name.partition("@")
    return head in ("hit", "recall", "doc_hit", "ndcg") and k.isdigit() and int(k) > depth


def _scored_from_log(
    logged: dict[str, _Logged], scored_scale: bool, depth: int
) -> Any:  # -> core.evaluate.runner.GivenRanking
    def rank(resolved: Sequence[ResolvedQuery], corpus: Corpus, spec: MetricSpec) -> list[Scored]:
        row_of = {(c.doc_id, c.char_start, c.char_end): i for i, c in enumerate(corpus.chunks)}
        masks = gold_masks(resolved, corpus)
        out = []
        for query, mask in zip(resolved, masks, strict=True):
            entries = logged[query.query.id].hits[: spec.depth]
            ranked: list[Any] = []
            valid: list[bool] = []
            hits: list[RankedHit] = []
            for hit, place in entries:
                row = row_of.get(place) if isinstance(place, tuple) else None
                if row is None:  # outside the set: a miss at its rank
                    ranked.append(_Outside(text=hit.text or ""))
                    valid.append(False)
                    continue
                chunk = corpus.chunks[row]
                ranked.append(chunk)
                valid.append(bool(corpus.valid[row]))
                score = hit.score if scored_scale and hit.score is not None else 1.0 / hit.rank
                hits.append(RankedHit(chunk_id=chunk.chunk_id, rank=hit.rank, score=score))
            gold = [(g.char_start, g.char_end) for g in query.gold]
            values = query_metrics(ranked, gold_doc=query.doc_id, gold=gold,
                                   n_relevant=int(mask.sum()), spec=spec, valid=valid)  # fmt: skip
            values = {m: None if past_depth(m, depth) else v for m, v in values.items()}
            full = _first_gold(logged[query.query.id], row_of, corpus, query, gold)
            first = full if full is not None and full <= spec.depth else None
            out.append(Scored(tuple(hits), values, first, full, len(logged[query.query.id].hits)))
        return out

    return rank


def _first_gold(
    entry: _Logged, row_of: dict[Span, int], corpus: Corpus, query: ResolvedQuery,
    gold: list[tuple[int, int]],
) -> int | None:  # fmt: skip
    """The logged rank of the first hit on a gold span, however deep the log goes."""
    for hit, place in entry.hits:
        row = row_of.get(place) if isinstance(place, tuple) else None
        if row is not None and _relevant(corpus.chunks[row], query, gold):
            return hit.rank
    return None


def _relevant(chunk: Any, query: ResolvedQuery, gold: list[tuple[int, int]]) -> bool:
    return chunk.doc_id == query.doc_id and any(
        chunk.char_start < e and s < chunk.char_end for s, e in gold
    )


def _digest(trace: Sequence[TraceQuery]) -> str:
    raw = json.dumps(
        [
            [q.query_id, q.query, [[h.rank, h.chunk_id, h.text, h.source, h.score] for h in q.hits]]
            for q in trace
        ],  # fmt: skip
        ensure_ascii=True,
    )
    return hashlib.sha256(raw.encode()).hexdigest()


def import_run(
    trace: Sequence[TraceQuery],
    labels: Sequence[LabelledQuery],
    chunk_set: ChunkSet,
    docs: Sequence[Document],
    *,
    encoder: TextEncoder,
    name: str = DEFAULT_NAME,
    methods: Sequence[str] = (),
    ks: Sequence[int] = defaults.KS,
    shape: str = "hits",
    trace_name: str = "trace",
    embed: EmbedFn | None = None,
    cache: VectorCache | None = None,
    progress: Any = None,
) -> EvalRun:
    """The run of ``trace`` with ``methods`` beside it, in one step (see the module
    docstring); ``TraceError`` (one line) when the log fits neither the labels nor the
    chunk set. ``LogImport`` makes the same run in two steps: yours first, ours after."""
    found = LogImport(trace, labels, chunk_set, docs, name=name, shape=shape,
                      trace_name=trace_name)  # fmt: skip
    return found.run(methods, encoder=encoder, ks=ks, embed=embed, cache=cache,
                     progress=progress)  # fmt: skip


class LogImport:
    """A log read, matched to its labels and mapped to the chunk set, ready to score:
    ``run()`` is the retriever alone (the first failures at once), ``run(methods)`` the
    same run with our methods beside it (the same ``run_id``: see the module docstring).
    Each document is parsed and chunked once (by ``parse``, default the default parser
    and the set's policy; a UI passes its own cached one), however many runs and
    diagnoses read it: ``parts`` is also the diagnosis's chunker
    (``core.diagnose.run_failures.suggest_run``). ``TraceError`` (one line) when the log
    fits neither the labels nor the chunk set."""

    def __init__(
        self,
        trace: Sequence[TraceQuery],
        labels: Sequence[LabelledQuery],
        chunk_set: ChunkSet,
        docs: Sequence[Document],
        *,
        name: str = DEFAULT_NAME,
        shape: str = "hits",
        trace_name: str = "trace",
        parse: Parts | None = None,
    ) -> None:
        held = {d.doc_id: d for d in docs if chunk_set.docs.get(d.doc_id) == d.sha256}
        if missing := sorted(set(chunk_set.docs) - set(held)):
            raise TraceError(
                f"chunk set {chunk_set.name} was anchored in {', '.join(missing)}, which the "
                "documents given do not hold at that version: pass them with --docs"
            )
        scored = any(h.score is not None for q in trace for h in q.hits)
        method_registry.register_external(name, scored=scored)
        policy_registry.register(policy_spec(chunk_set), replace=True)
        self.policy = policy_registry.get(chunk_set.name).default_policy()
        matched, unlabelled = _match(trace, labels)
        if not matched:
            raise TraceError(
                f"none of the log's {len(trace)} queries is in the query set (by id or by "
                "text): check that --queries labels the queries the log holds"
            )
        mapper = _HitMapper(chunk_set, held)
        self.logged = {qid: _Logged(hits=tuple((h, mapper.map(h)) for h in q.hits))
                       for qid, q in matched.items()}  # fmt: skip
        self.name = name
        self.docs = held
        self.labelled = [q for q in labels if q.id in matched]
        self.scored = scored
        self.depth = trace_depth(trace)
        self.digest = _digest(trace)
        self._parse = parse or _parse
        self._parts: dict[tuple[str, str], tuple[Sequence[Block], Sequence[Chunk]]] = {}
        outside = [
            {"query_id": qid, "rank": hit.rank, "hit": hit.chunk_id or (hit.text or "")[:120],
             "why": place}
            for qid, entry in self.logged.items() for hit, place in entry.hits
            if isinstance(place, str)
        ]  # fmt: skip
        self.info: dict[str, object] = {
            "method": name,
            "scored": scored,
            "shape": shape,
            "trace": trace_name,
            "chunk_set": chunk_set.name,
            "depth": self.depth,
            "queries_in_trace": len(trace),
            "labelled": len(matched),
            "labels_not_logged": [q.id for q in labels if q.id not in matched],
            "unlabelled": [
                {"query_id": q.query_id, "query": q.query, "hits": len(q.hits), "note": q.note}
                for q in unlabelled
            ],
            "hits": sum(len(e.hits) for e in self.logged.values()),
            "outside": outside,
        }
        if chunk_set.pending() is not None:  # placed by our text, claims not yet checked
            self.info[CLAIMS] = "pending"

    def parts(self, doc: Document) -> tuple[Sequence[Block], Sequence[Chunk]]:
        """The blocks and the set's chunks of ``doc``, parsed once."""
        key = (doc.doc_id, doc.sha256)
        if key not in self._parts:
            self._parts[key] = self._parse(doc, self.policy)
        return self._parts[key]

    def ours(self, methods: Sequence[str]) -> tuple[str, ...]:
        """``methods`` as the run names them, the retriever's own name left out."""
        if not methods:
            return ()
        return tuple(m for m in method_registry.parse_methods(methods) if m != self.name)

    def run(
        self,
        methods: Sequence[str] = (),
        *,
        encoder: TextEncoder,
        ks: Sequence[int] = defaults.KS,
        embed: EmbedFn | None = None,
        cache: VectorCache | None = None,
        progress: Any = None,
    ) -> EvalRun:
        """The run: the retriever, then ``methods`` computed over the set's spans
        (``progress(done, total)`` over chunk x method units while they embed)."""
        config = EvalConfig(policy=self.policy, methods=(self.name, *self.ours(methods)),
                            ks=tuple(ks))  # fmt: skip
        run = run_eval(
            self.labelled, list(self.docs.values()), config, encoder=encoder, embed=embed,
            cache=cache, progress=progress, chunker=lambda doc: list(self.parts(doc)[1]),
            given={self.name: _scored_from_log(self.logged, self.scored, self.depth)},
            identity={"trace_sha256": self.digest, "external": self.name,
                      "methods": [self.name]},
        )  # fmt: skip
        return replace(run, imported=dict(self.info))


def _parse(doc: Document, policy: ChunkPolicy) -> tuple[Sequence[Block], Sequence[Chunk]]:
    blocks = parse_document(doc).blocks
    return blocks, chunk_document(doc, blocks, policy)


def claims_pending(run: EvalRun) -> bool:
    """Whether the run was scored over its chunk set before the set's claims were checked
    (placed by our text alone: ``core.imported.claim_check``)."""
    return run.imported.get(CLAIMS) == "pending"


def pending_methods(run: EvalRun) -> tuple[str, ...]:
    """Our methods asked for an imported run and not (yet) in it."""
    listed = run.imported.get(PENDING)
    return tuple(str(m) for m in listed) if isinstance(listed, list) else ()


def pending_state(run: EvalRun) -> str | None:
    """``computing`` while they are being added, ``stopped`` when they never were (the
    import was interrupted or failed), None when none is pending."""
    state = run.imported.get(PENDING_STATE)
    return str(state) if pending_methods(run) and state in PENDING_STATES else None


def with_pending(run: EvalRun, methods: Sequence[str], state: str = "computing") -> EvalRun:
    """``run`` (the retriever alone) recording that ``methods`` are ``state``: being
    computed, or stopped and never added."""
    if state not in PENDING_STATES:
        raise ValueError(f"a pending state is one of {', '.join(PENDING_STATES)}")
    info = {k: v for k, v in run.imported.items() if k not in (PENDING, PENDING_STATE)}
    if methods:
        info |= {PENDING: list(methods), PENDING_STATE: state}
    return replace(run, imported=info)


def added(first: EvalRun, full: EvalRun) -> EvalRun:
    """``full`` (the retriever with our methods) as the run ``first`` grew into: the same
    run, made when ``first`` was, with nothing pending."""
    if first.run_id != full.run_id:
        raise ValueError(f"{full.run_id} is not the run {first.run_id} with methods added")
    return replace(with_pending(full, ()), created_at=first.created_at)
