"""Causes by experiment: each defect seeded in a small document, the failure diagnosed
with the trigram stand-in encoder, the cause and the repair's rank change asserted.

The documents are chunked by the fixed policy (300 characters, no overlap); each query is
ranked among its own document's chunks and fails when the gold is not ranked first."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from fakes import FakeEncoder, fake_embed_chunks

from core.chunk.policy_registry import policy_from_dict
from core.cli.options import load_each
from core.diagnose.cause import Evidence, decide
from core.diagnose.repairs import (
    Experiment,
    Failure,
    LexicalStats,
    MethodScorer,
    content_words,
    parse,
    rank_among,
)
from core.diagnose.run_failures import default_chunker, diagnose_methods, suggest_run
from core.diagnose.signals import FUNCTION_WORDS
from core.evaluate import EvalConfig, run_eval
from core.evaluate.labels import query_from_dict
from core.evaluate.run_file import EvalRun
from core.methods.lexical import Bm25Index
from core.provenance.types import Page

FILL = [
    "Units ship in recyclable cardboard with moulded pulp inserts.",
    "Installers should leave clear space around the housing.",
    "The housing is finished in a powder coat that resists scratches.",
    "Replacement parts are stocked by distributors for ten years.",
    "Each unit is inspected by hand before it leaves the factory.",
    "Cleaning requires only a damp cloth; solvents may dull the finish.",
    "The control panel uses large buttons for gloved hands.",
    "Mounting brackets for walls and benches are sold separately.",
]
METHODS = ("naive", "bm25", "contextual")


def _pad(text: str, at: int) -> str:
    return text + " " * max(0, at + 3 - len(text))


def _next(text: str) -> str:
    return _pad(text, (len(text) // 300 + 1) * 300)


def _documents() -> dict[str, tuple[str, str, str]]:
    """Name: (Markdown text, query, gold text), one seeded defect each."""
    out = {}
    # boundary: the answering sentence cut between its subject and the asked quantity
    lead = "For the Corvane HX40 pump, the"
    tail = " maximum operating temperature is 85 degrees Celsius."
    t = "# Pump family\n\n" + " ".join(FILL[:3]) + "\n\n"
    t = _pad(t, 297 - len(lead)) + lead + tail + " " + " ".join(FILL[3:6]) + "\n\n"
    t = _pad(t, 600) + "The Halbrook Max has a maximum operating temperature of 70 degrees "
    t += "Celsius. " + FILL[6] + "\n\n"
    t = _pad(t, 900) + "The Corvane HX40 pump has a net weight of 12 kilograms. " + FILL[7]
    t = _pad(t + "\n\n", 1200) + "The Corvane HX40 pump has a rated voltage of 24 volts.\n"
    out["boundary"] = (
        t, "What is the maximum operating temperature of the Corvane HX40 pump?", lead + tail
    )  # fmt: skip
    # context: the gold never names its model; the heading above it does
    t, gold = "# Product notes\n\n" + FILL[0] + "\n\n", ""
    for i, model in enumerate(["Ardent", "Bellow", "Cinder", "Dorado", "Ember"]):
        t = _next(t + f"## The {model} T7 unit\n\n" + " ".join(FILL[1:5]) + "\n\n")
        sentence = f"The unit's rated input voltage is {20 + i} volts, measured by the test house."
        gold = sentence if model == "Cinder" else gold
        t = _next(t + sentence) + "\n\n"  # the next heading starts near a chunk's start
    out["context"] = (t, "What is the rated input voltage of the Cinder T7 unit?", gold)
    # vocabulary: the query names the model by a code the document never uses
    t = "# Range overview\n\n" + FILL[0] + "\n\n## Performance\n\n"
    for i, model in enumerate(["Ardent", "Bellow", "Cinder", "Dorado", "Ember", "Fable"]):
        t = _next(t) + f"The {model} pump has a maximum flow rate of {20 + i} litres per minute."
        t += f" {FILL[i]}\n\n"
    gold = "The Cinder pump has a maximum flow rate of 22 litres per minute."
    out["vocabulary"] = (t, "Please tell me the maximum flow rate of the QX-220?", gold)
    # label: the gold points at the sentence beside the answer
    t = "# Halbrook Max manual\n\n" + FILL[0] + "\n\n"
    for q in ("net weight of 12 kilograms", "rated voltage of 24 volts", "noise of 40 decibels"):
        t = _next(t) + f"The Halbrook Max has a {q}. {FILL[1]}\n\n"
    t = _next(t) + "## Warranty period of the Halbrook Max\n\nThe Halbrook Max has a warranty "
    t += "period of three years.\n\n"
    wrong = "Operators are advised to log the battery reading once a month."
    t = _next(t) + wrong + " " + FILL[2] + "\n"
    out["label"] = (t, "What is the warranty period of the Halbrook Max?", wrong)
    # method: a rare code inside a passage about something else
    t = "# Service guide\n\n" + FILL[0] + "\n\n## Display\n\n"
    for o in ("an overheated motor", "a low supply voltage", "a door left open", "an empty tank"):
        t = _next(t) + f"The display shows a warning when it detects {o}; it clears once corrected."
        t += "\n\n"
    gold = f"Routine care keeps it running. {FILL[3]} A reading of F9931 points to a worn belt."
    out["method"] = (_next(t) + gold + "\n", "What does F9931 mean on the display?", gold)
    return out


@pytest.fixture(scope="module")
def diagnosed(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("seeded")
    queries = []
    for name, (text, query, gold) in _documents().items():
        assert gold in text, name
        (root / f"{name}.md").write_text(text, "utf-8")
        queries.append(
            query_from_dict(
                {"id": name, "query": query, "doc": f"{name}.md", "evidence": [{"text": gold}]}
            )
        )
    docs, _ = load_each(sorted(root.glob("*.md")))
    policy = policy_from_dict({"name": "fixed", "size": 300, "overlap": 0, "unit": "chars"})
    config = EvalConfig(policy=policy, methods=METHODS, ks=(1,), scope="doc", resamples=10)
    encoder = FakeEncoder()
    run = run_eval(queries, docs, config, encoder=encoder, embed=fake_embed_chunks)
    by_id = {d.doc_id: d for d in docs}
    found = diagnose_methods(run, by_id, encoder=encoder, embed=fake_embed_chunks)
    return run, found, by_id, encoder


def _lines(diagnosis) -> list[str]:
    return [e.line for e in diagnosis.experiments]


def test_a_gold_cut_across_chunks_is_fixed_by_keeping_it_whole(diagnosed):
    run, found, *_ = diagnosed
    d = found["bm25"]["boundary"]
    # the repair decides; another method ranking the gold within the top k contradicts it
    assert (d.suggested, d.confidence, d.runner_up) == ("boundary", "weak", "method")
    assert any(e.repair == "method" and e.fixes for e in d.experiments)
    (kept,) = [e for e in d.experiments if e.repair == "boundary"]
    assert kept.fixes and (kept.before, kept.after) == (run.query("boundary").full_ranks["bm25"], 1)
    assert kept.line == f"the gold kept whole in one chunk: rank {kept.before} → 1"
    assert kept.before > 1


def test_a_gold_that_needs_its_heading_is_fixed_by_the_title_and_headings(diagnosed):
    _, found, *_ = diagnosed
    d = found["bm25"]["context"]
    # the method that finds it reads the chunk with its headings: it agrees, nothing
    # contradicts (weak all the same: a context repair alone never makes a cause strong)
    assert (d.suggested, d.confidence, d.runner_up) == ("context", "weak", "")
    assert "contextual ranks it 1st" in _lines(d)
    (ctx,) = [e for e in d.experiments if e.repair == "context"]
    assert ctx.fixes and ctx.after == 1 and ctx.before > 1
    assert "The Cinder T7 unit" in ctx.detail  # the heading path read before the chunk
    # the prefixed method has no context repair of its own: it reads them already
    assert "contextual ranks it 1st" in _lines(found["naive"]["context"])


def test_query_words_no_part_of_the_document_uses_are_vocabulary(diagnosed):
    _, found, *_ = diagnosed
    d = found["naive"]["vocabulary"]
    assert d.suggested == "vocabulary"
    assert not any(e.fixes for e in d.experiments if e.repair != "method")
    assert d.evidence is not None and set(d.evidence.absent_words) == {"QX", "220"}
    assert "please" not in d.decided_by.lower() and "tell" not in d.decided_by.lower()


def test_a_label_on_the_wrong_passage_is_label_even_under_a_heading_naming_the_query(diagnosed):
    _, found, *_ = diagnosed
    for method in METHODS:
        d = found[method]["label"]
        assert d.suggested == "label", (method, d.decided_by, _lines(d))
        assert d.evidence is not None and d.evidence.gold_holds == 0.0
        assert d.evidence.hit_holds == 1.0


def test_a_miss_only_the_dense_method_makes_is_method(diagnosed):
    _, found, *_ = diagnosed
    d = found["naive"]["method"]
    assert (d.suggested, d.confidence) == ("method", "weak")  # no experiment of naive's own
    assert d.decided_by == "bm25 ranks it 1st"
    assert not any(e.fixes for e in d.experiments if e.repair != "method")


def test_each_method_of_a_query_gets_its_own_diagnosis(diagnosed):
    _, found, *_ = diagnosed
    assert found["bm25"]["context"].suggested == "context"
    assert (
        found["naive"]["context"].suggested != "context"
        or found["naive"]["context"].experiments != found["bm25"]["context"].experiments
    )


def test_the_run_file_stores_the_experiments_and_reads_them_back(diagnosed, tmp_path: Path):
    from core.evaluate import load_run, save_run

    run, _, docs, encoder = diagnosed
    stored, found = suggest_run(run, docs, encoder=encoder, embed=fake_embed_chunks)
    save_run(stored, tmp_path / "run.json")
    back: EvalRun = load_run(tmp_path / "run.json")
    s = back.query("boundary").suggested["bm25"]
    assert s.cause == "boundary"
    assert [e["line"] for e in s.experiments] == _lines(found["bm25"]["boundary"])
    assert Experiment.from_dict(s.experiments[0]) == found["bm25"]["boundary"].experiments[0]


def test_lexical_repairs_score_as_the_index_does():
    texts = ["the pump starts at two bar", "it stops at six bar", "filters last a year"]
    stats = LexicalStats.build(texts)
    index = Bm25Index.build(texts)
    for query in ("pump bar", "six bar stops", "filters year pump"):
        mine = [stats.score(query, t) for t in texts]
        assert np.allclose(mine, index.scores(query), atol=1e-5)


def test_prompt_words_are_not_query_words():
    words = content_words(
        "Please explain what the gross margin looks like, and describe its drivers.",
        FUNCTION_WORDS,
    )
    assert set(words) == {"gross", "margin", "look", "driver"}


def test_a_rank_past_the_depth_is_none():
    assert rank_among(0.5, [0.9, 0.8, 0.4], depth=10) == 3
    assert rank_among(0.1, [0.9, 0.8, 0.4], depth=3) is None


def _experiment(repair: str, before: int, after: int | None, k: int = 3) -> Experiment:
    fixes = after is not None and after <= k
    return Experiment(repair=repair, before=before, after=after, fixes=fixes, line=repair)


def test_no_fixing_repair_and_no_evidence_is_unclear_with_the_experiments():
    found = [_experiment("context", 40, 20), _experiment("method", 40, 30)]
    d = decide(found, Evidence(gold_holds=0.8, hit_holds=0.8), k=3)
    assert (d.cause, d.confidence) == ("unclear", "unclear")
    assert d.runner_up == "context"  # it moved the gold halfway to the top k


def test_a_gold_no_chunk_holds_whole_is_a_weak_boundary_when_nothing_else_decides():
    """The boundary repair is run only for a gold no chunk holds whole: the cut is there
    to see. Where keeping it whole does not fix the failure and nothing else decides, the
    cut is the weak suggestion, with the experiment as its line; where another method
    finds the gold, it is too, that method the runner-up (readers called such misses the
    cut's); a drowned gold's repair is not a cut, and vocabulary or a metric to compute
    still come first."""
    plain = Evidence(gold_holds=0.8, hit_holds=0.8)
    cut = _experiment("boundary", 40, 20)
    d = decide([cut, _experiment("method", 40, 30)], plain, k=3)
    assert (d.cause, d.confidence) == ("boundary", "weak")
    assert d.decided_by == "no chunk holds the gold whole (boundary)"  # the experiment's line
    d = decide([cut, _experiment("method", 40, 2)], plain, k=3)  # naive ranks it 2nd
    assert (d.cause, d.confidence, d.runner_up) == ("boundary", "weak", "method")
    assert d.decided_by == "no chunk holds the gold whole (boundary); method"  # then its rank
    assert decide([_experiment("method", 40, 2)], plain, k=3).cause == "method"  # no cut
    drowned = dataclasses.replace(cut, drowned=True)
    assert decide([drowned, _experiment("method", 40, 2)], plain, k=3).cause == "method"
    assert decide([drowned], plain, k=3).cause == "unclear"
    gone = Evidence(absent=0.6, absent_words=("x", "y"))
    assert decide([cut, _experiment("method", 40, 2)], gone, k=3).cause == "vocabulary"
    metric = Evidence(metric="gross margin", figures=3)
    assert decide([cut, _experiment("method", 40, 2)], metric, k=3).cause == "method"


def test_two_fixing_repairs_make_a_weak_suggestion_with_the_other_as_runner_up():
    found = [_experiment("boundary", 14, 2), _experiment("context", 14, 1)]
    d = decide(found, Evidence(gold_holds=0.9), k=3)
    assert (d.cause, d.confidence, d.runner_up) == ("context", "weak", "boundary")


def test_the_label_evidence_outweighs_a_context_repair_but_not_a_boundary_one():
    evidence = Evidence(gold_holds=0.2, hit_holds=1.0)
    d = decide([_experiment("context", 9, 2)], evidence, k=3)
    assert (d.cause, d.confidence, d.runner_up) == ("label", "weak", "context")
    d = decide([_experiment("boundary", 9, 2)], evidence, k=3)
    assert d.cause == "boundary"


def test_the_parse_repair_ranks_the_ocr_reading_when_it_differs(diagnosed):
    run, _, docs, encoder = diagnosed
    record = run.query("method")
    doc = docs[record.doc_id]
    gold = (record.gold[0].char_start, record.gold[0].char_end)
    failure = Failure(
        query="What does F9931 mean on the display?", gold=(gold,), doc=doc, chunks=[],
        method="naive", before=5, others=(0.9, 0.8, 0.7, 0.2), k=3, depth=10, ranks={},
    )  # fmt: skip
    scorer = MethodScorer(method="naive", query=failure.query, encoder=encoder,
                          embed=fake_embed_chunks)  # fmt: skip
    same = parse(failure, scorer, read=lambda d, s: d.text[s[0] : s[1]])
    assert same is None  # the OCR reads what the text layer holds: no parse repair
    read = parse(failure, scorer, read=lambda d, s: "What does F9931 mean on the display?")
    assert read is not None and read.repair == "parse" and read.fixes
    assert read.line == "OCR text: rank 5 → 1" and "alike" in read.detail


FINANCEBENCH = Path(__file__).parent.parent / "shared" / "corpus" / "financebench"
FILINGS = ("JOHNSON_JOHNSON_2022Q4_EARNINGS", "MGMRESORTS_2022Q4_EARNINGS")


def _financebench() -> Path:
    import os

    root = Path(os.environ.get("CHUNKSCOPE_SHARED", "/work/shared")) / "corpus" / "financebench"
    return root if (root / "questions.jsonl").is_file() else FINANCEBENCH


@pytest.mark.slow
@pytest.mark.skipif(not (_financebench() / "questions.jsonl").is_file(), reason="no shared set")
def test_real_filings_with_the_real_model_store_experiments_that_agree_with_the_run(tmp_path):
    """Two FinanceBench filings (J&J and MGM earnings releases, their 5 questions), MiniLM,
    naive and bm25 at fixed 800/100 characters, a failure when the gold is not ranked
    first: every failure gets a suggestion with its experiments, each experiment starts
    from the run's own full-depth rank, a method experiment is the other method's rank,
    and the run file reads them back."""
    import core.embed
    from core.evaluate import load_run, save_run
    from core.evaluate.importers import import_qa
    from core.formats import load_document
    from core.index.indexer import method_records

    root = _financebench()
    queries = [
        q for q in import_qa(
            root / "questions.jsonl", question="question", evidence="evidence[].evidence_text",
            page="evidence[].evidence_page_num", doc="doc_name", id_column="financebench_id",
            page_base=0,
        )
        if q.doc in FILINGS
    ]  # fmt: skip
    docs = [load_document(root / "pdfs" / f"{name}.pdf") for name in FILINGS]
    policy = policy_from_dict({"name": "fixed", "size": 800, "overlap": 100, "unit": "chars"})
    config = EvalConfig(policy=policy, methods=("naive", "bm25"), ks=(1,), resamples=10)
    encoder = core.embed.load_encoder(None, deterministic=True)
    run = run_eval(queries, docs, config, encoder=encoder)
    by_id = {d.doc_id: d for d in docs}
    stored, found = suggest_run(run, by_id, encoder=encoder, embed=method_records)
    failures = [(q, m) for q in run.queries for m in run.methods if q.failed[m]]
    assert failures, "no failure to diagnose"
    for record, method in failures:
        d = found[method][record.id]
        assert d.suggested in ("boundary", "context", "parse", "method", "vocabulary",
                               "label", "unclear")  # fmt: skip
        assert d.experiments, (record.id, method)
        other = "bm25" if method == "naive" else "naive"
        (rival,) = [e for e in d.experiments if e.repair == "method"]
        assert rival.after == record.full_ranks[other] and rival.method == other
        for e in d.experiments:
            assert e.before == record.full_ranks[method]
            assert e.fixes == (e.after is not None and e.after <= run.text_k)
        print(record.id, method, d.suggested, d.confidence, [e.line for e in d.experiments])
    save_run(stored, tmp_path / "run.json")
    back = load_run(tmp_path / "run.json")
    for record, method in failures:
        kept = back.query(record.id).suggested[method]
        assert [e["line"] for e in kept.experiments] == [
            e.line for e in found[method][record.id].experiments
        ]


def test_a_whole_page_gold_is_repaired_by_its_answering_sentence(diagnosed):
    """A gold longer than any chunk cannot be kept whole: the boundary repair places a
    chunk around the sentence holding most of the query's words, cut across a chunk
    boundary in the document."""
    from core.diagnose.run_failures import default_chunker

    run, _, docs, encoder = diagnosed
    doc = docs["boundary"]
    policy = policy_from_dict({"name": "fixed", "size": 300, "overlap": 0, "unit": "chars"})
    chunks = default_chunker(policy)(doc)[1]
    query = "What is the maximum operating temperature of the Corvane HX40 pump?"
    page = (0, len(doc.text))  # the label points at the whole page
    failure = Failure(
        query=query, gold=(page,), doc=doc, chunks=chunks, method="bm25", before=4,
        others=tuple(h.score for h in run.query("boundary").top["bm25"][1:]), k=1, depth=10,
        ranks={},
    )  # fmt: skip
    from core.diagnose.repairs import LexicalStats, boundary

    stats = LexicalStats.build([c.text for c in chunks])
    scorer = MethodScorer(method="bm25", query=query, encoder=encoder, embed=fake_embed_chunks,
                          lexical=stats)  # fmt: skip
    made = boundary(failure, scorer, content_words(query, FUNCTION_WORDS))
    assert made is not None and made.line.startswith("its answering sentence kept whole")
    a, b = made.span
    sentence = "For the Corvane HX40 pump, the maximum operating temperature is 85 degrees Celsius."
    at = doc.text.index(sentence)
    assert a <= at and at + len(sentence) <= b and b - a <= max(len(c.text) for c in chunks)


def test_a_bm25_only_miss_with_words_the_document_lacks_is_vocabulary_beside_method():
    """bm25 misses, the dense methods rank the gold first, and the query's words are not
    the document's: vocabulary, weak, the method as runner-up (not a confident context)."""
    found = [
        _experiment("context", 9, 7),
        _experiment("method", 9, 1),  # naive ranks it 1st
    ]
    evidence = Evidence(absent=0.5, absent_words=("battles",), gold_holds=0.4, hit_holds=0.5)
    d = decide(found, evidence, k=3)
    assert (d.cause, d.confidence, d.runner_up) == ("vocabulary", "weak", "method")
    assert "battles" in d.decided_by


def test_a_title_that_lifts_every_chunk_is_not_the_golds_missing_context(tmp_path: Path):
    """The context repair is a controlled experiment: the gold with its title and headings
    is ranked against the first hits given theirs too. The company's name in the title lifts
    every chunk of the filing alike; given to the gold alone it would look like a fix."""
    from core.diagnose.repairs import LexicalStats, context
    from core.diagnose.run_failures import default_chunker

    rival = "Revenue in Europe rose and revenue in Asia fell, said the revenue report."
    gold = ("Revenue was 5 million dollars for the year, the board noted in a long and careful "
            "review of all of the sales of the firm and of its costs.")  # fmt: skip
    body = [gold, rival, rival.replace("Asia", "Peru")]
    text = _next("# Acme annual report\n\n" + FILL[0] + "\n\n")
    for paragraph in body:  # each in a chunk of its own
        text = _next(text + paragraph + "\n\n")
    (tmp_path / "acme.md").write_text(text, "utf-8")
    (doc,), _ = load_each([tmp_path / "acme.md"])
    policy = policy_from_dict({"name": "fixed", "size": 300, "overlap": 0, "unit": "chars"})
    chunks = default_chunker(policy)(doc)[1]
    gold_chunk = next(c for c in chunks if "5 million" in c.text)
    rivals = [c for c in chunks if "Europe" in c.text]
    assert len(rivals) == 2 and "Acme" not in gold_chunk.text
    query = "What was Acme's revenue?"
    scorer = MethodScorer(method="bm25", query=query, encoder=None, embed=fake_embed_chunks,
                          lexical=LexicalStats.build([c.text for c in chunks]))  # fmt: skip
    others = tuple(scorer.chunk(doc, c) for c in rivals)
    before = 1 + sum(s > scorer.chunk(doc, gold_chunk) for s in others)
    assert before == 3  # both rivals say "revenue" more often
    args = {"query": query, "gold": ((gold_chunk.char_start, gold_chunk.char_end),), "doc": doc,
            "chunks": chunks, "method": "bm25", "before": before, "others": others, "k": 1,
            "depth": 10, "ranks": {}}  # fmt: skip
    alone = context(Failure(**args), scorer)
    assert alone is not None and alone.fixes  # the title given to the gold alone
    controlled = context(Failure(**args, rivals=tuple(enumerate(rivals))), scorer)
    assert controlled is not None and not controlled.fixes and controlled.after == 3
    assert "(the first 2 hits given theirs too)" in controlled.line


def test_late_chunking_gets_no_context_repair(diagnosed):
    """Late chunking reads a chunk in its document's window: a prefix embedded with the
    chunk alone would score it as another method does, not as late chunking."""
    from core.diagnose.repairs import context
    from core.diagnose.run_failures import default_chunker

    _, _, docs, encoder = diagnosed
    doc = docs["context"]
    policy = policy_from_dict({"name": "fixed", "size": 300, "overlap": 0, "unit": "chars"})
    chunks = default_chunker(policy)(doc)[1]
    gold = next(c for c in chunks if "22 volts" in c.text)
    failure = Failure(query="rated input voltage", gold=((gold.char_start, gold.char_end),),
                      doc=doc, chunks=chunks, method="late", before=4, others=(0.9,) * 5,
                      k=1, depth=10, ranks={})  # fmt: skip
    for method, made in (("late", False), ("naive", True)):
        scorer = MethodScorer(method=method, query=failure.query, encoder=encoder,
                              embed=fake_embed_chunks)  # fmt: skip
        assert (context(failure, scorer) is not None) is made, method


def _pump(tmp_path: Path, lead: str = "") -> tuple:
    """A document whose second chunk holds the gold sentence (after ``lead`` in its
    paragraph) and a paragraph about something else, and two rival chunks that say the
    query's words twice; its blocks, chunks, and a BM25 scorer of them."""
    from core.diagnose.repairs import LexicalStats
    from core.diagnose.run_failures import default_chunker

    rival = "Pump noise on the Corvane is low; pump noise on the Corvane was measured in a lab."
    text = _next("# Pump notes\n\n" + FILL[0] + "\n\n")
    text = _next(text + lead + GOLD_NOISE + "\n\n" + " ".join(FILL[1:4]) + "\n\n")
    for extra in (FILL[4], FILL[5]):  # long enough that a short paragraph outranks them
        text = _next(text + rival + " " + extra + " " + FILL[6] + "\n\n")
    (tmp_path / "pump.md").write_text(text, "utf-8")
    (doc,), _ = load_each([tmp_path / "pump.md"])
    policy = policy_from_dict({"name": "fixed", "size": 300, "overlap": 0, "unit": "chars"})
    blocks, chunks = default_chunker(policy)(doc)
    scorer = MethodScorer(method="bm25", query="Corvane pump noise", encoder=None,
                          embed=fake_embed_chunks,
                          lexical=LexicalStats.build([c.text for c in chunks]))  # fmt: skip
    return doc, blocks, chunks, scorer


GOLD_NOISE = "The Corvane pump makes a faint noise at night."


def _pump_failure(doc, chunks, scorer, gold, **extra) -> Failure:
    held = next(c for c in chunks if c.char_start <= gold[0] and gold[1] <= c.char_end)
    rivals = [c for c in chunks if c.text.startswith("Pump noise")]
    others = tuple(scorer.chunk(doc, c) for c in rivals)
    before = 1 + sum(s > scorer.chunk(doc, held) for s in others)
    assert before == 3  # the rivals say the query's words twice
    return Failure(query=scorer.query, gold=(gold,), doc=doc, chunks=chunks, method="bm25",
                   before=before, others=others, k=2, depth=10, ranks={},
                   **extra)  # fmt: skip


def test_a_gold_drowned_whole_in_its_chunk_is_repaired_by_its_own_paragraph(tmp_path: Path):
    """One chunk holds the gold whole, but most of that chunk is a paragraph about
    something else: the boundary repair ranks the gold's own paragraph as a chunk (and
    nothing without the document's blocks, for a gold that is most of its chunk, or for
    a paragraph longer than a chunk or most of it)."""
    from core.diagnose.repairs import _overlap, boundary

    lead = "Yes."  # the gold is one sentence of its paragraph
    doc, blocks, chunks, scorer = _pump(tmp_path, lead=lead + " ")
    at = doc.text.index(GOLD_NOISE)
    gold = (at, at + len(GOLD_NOISE))
    held = next(c for c in chunks if GOLD_NOISE in c.text)
    assert len(GOLD_NOISE) < 0.5 * len(held.text)  # drowned: the chunk is mostly other text
    weights = content_words(scorer.query, FUNCTION_WORDS)
    made = boundary(_pump_failure(doc, chunks, scorer, gold, blocks=blocks), scorer, weights)
    assert made is not None and made.drowned and made.fixes and made.after == 1
    assert made.line.startswith("the gold's own paragraph as its chunk (it was")
    own = doc.text.index(lead)
    assert made.span == (own, gold[1])  # widened to its paragraph, not the gold alone
    assert boundary(_pump_failure(doc, chunks, scorer, gold), scorer, weights) is None
    whole = _pump_failure(doc, chunks, scorer, (held.char_start, held.char_end), blocks=blocks)
    assert boundary(whole, scorer, weights) is None  # not drowned
    first = next(b for b in blocks if b.text.startswith("Pump noise"))
    start = doc.text.index(FILL[0])  # a paragraph from the chunk before up to the gold
    long = dataclasses.replace(first, char_start=start, char_end=gold[1],
                               text=doc.text[start : gold[1]])  # fmt: skip
    inside = _overlap((start, gold[1]), (held.char_start, held.char_end))
    assert len(long.text) > 300 and inside < 0.8 * len(held.text)  # only the size guard
    page = Page(number=1, char_start=0, char_end=len(doc.text), width_pt=612, height_pt=792,
                has_text=True)  # fmt: skip
    paged = dataclasses.replace(doc, pages=(page,))
    assert (
        boundary(_pump_failure(paged, chunks, scorer, gold, blocks=[long]), scorer, weights) is None
    )  # longer than a chunk: its own text drowns it
    lined = boundary(_pump_failure(doc, chunks, scorer, gold, blocks=[long]), scorer, weights)
    assert lined is not None and lined.span == (own, gold[1])  # a text's line: its paragraph
    end = held.char_end - 3
    while doc.text[end - 1].isspace():
        end -= 1
    most = dataclasses.replace(first, char_start=own, char_end=end, text=doc.text[own:end])
    assert 0.8 * len(held.text) <= len(most.text) <= 300  # only the most-of-the-chunk guard
    assert (
        boundary(_pump_failure(doc, chunks, scorer, gold, blocks=[most]), scorer, weights) is None
    )  # nothing to take away


def test_where_the_parsers_paragraph_is_longer_than_a_chunk_a_texts_line_is(tmp_path: Path):
    """A Markdown paragraph whose lines are the writer's paragraphs (no blank line between
    them) is longer than a chunk: in a reflowable text the gold's line is its paragraph;
    in a PDF a line is the layout's, and no repair is made."""
    from core.diagnose.repairs import boundary, own_lines

    lead = "Yes."
    doc, blocks, chunks, scorer = _pump(tmp_path, lead=lead + " ")
    at = doc.text.index(GOLD_NOISE)
    gold = (at, at + len(GOLD_NOISE))
    whole = dataclasses.replace(blocks[0], char_start=0, char_end=len(doc.text), text=doc.text)
    weights = content_words(scorer.query, FUNCTION_WORDS)
    made = boundary(_pump_failure(doc, chunks, scorer, gold, blocks=[whole]), scorer, weights)
    assert made is not None and made.drowned and made.fixes
    assert made.span == (doc.text.index(lead), gold[1])  # its line, without the line break
    page = Page(number=1, char_start=0, char_end=len(doc.text), width_pt=612, height_pt=792,
                has_text=True)  # fmt: skip
    paged = dataclasses.replace(doc, pages=(page,))
    failure = _pump_failure(paged, chunks, scorer, gold, blocks=[whole])
    assert boundary(failure, scorer, weights) is None
    text = "One line.\n  Yes. The gold.  \nNext line."
    g = (text.index("The gold."), text.index("The gold.") + len("The gold."))
    assert text[slice(*own_lines(text, g, (0, len(text))))] == "Yes. The gold."
    assert own_lines(text, g, (text.index("es."), len(text))) == (text.index("es."), g[1])
    assert own_lines("The gold.", (0, 9), (0, 9)) == (0, 9)
    # a gold that ends or starts on a line break keeps to its own line
    assert text[slice(*own_lines(text, (g[0], g[1] + 3), (0, len(text))))] == "Yes. The gold."
    broke = text.index("\n  Yes")
    assert text[slice(*own_lines(text, (broke, g[1]), (0, len(text))))] == "Yes. The gold."


def test_the_drowned_repair_is_run_and_decides_in_a_diagnosis(tmp_path: Path):
    """Through ``diagnose_methods``: the run's blocks reach the repair, the drowned line is
    an experiment of the failure, and it decides weakly (bm25 has no other repair that
    fixes it here)."""
    doc, _, _, _ = _pump(tmp_path)
    query = query_from_dict({"id": "noise", "query": "Corvane pump noise", "doc": "pump.md",
                             "evidence": [{"text": GOLD_NOISE}]})  # fmt: skip
    policy = policy_from_dict({"name": "fixed", "size": 300, "overlap": 0, "unit": "chars"})
    config = EvalConfig(policy=policy, methods=("bm25",), ks=(2,), scope="doc", resamples=10)
    run = run_eval([query], [doc], config, encoder=FakeEncoder(), embed=fake_embed_chunks)
    assert run.query("noise").failed["bm25"]
    found = diagnose_methods(run, {doc.doc_id: doc}, encoder=FakeEncoder(),
                             embed=fake_embed_chunks)["bm25"]["noise"]  # fmt: skip
    lines = [e.line for e in found.experiments if e.drowned]
    assert len(lines) == 1 and lines[0].startswith("the gold's own paragraph as its chunk")
    assert (found.suggested, found.confidence, found.decided_by) == ("boundary", "weak", lines[0])
    signal = next(g for g in found.signals if g.name == "gold drowned in its chunk")
    assert signal.holds and "is other text" in signal.detail  # the panel's boundary signal


def test_a_drowned_gold_whose_paragraph_ranks_is_a_weak_boundary_where_nothing_stronger_is():
    """The drowned repair decides, weakly, in place of unclear, a method miss, a vocabulary
    gap and label from the query's words (the runner-up then); never over another repair
    of the gold's text that fixes it, damage, a copy, a metric to compute or a strong
    cause; and a drowned repair that only moved the gold contradicts nothing."""
    drowned = Experiment(repair="boundary", before=9, after=2, fixes=True, line="own paragraph",
                         drowned=True)  # fmt: skip
    plain = Evidence(gold_holds=0.8, hit_holds=0.8)
    cases = [
        ([], plain, ("boundary", "weak", "")),  # else unclear
        ([_experiment("method", 9, 1)], plain, ("boundary", "weak", "method")),
        ([], Evidence(absent=0.4, absent_words=("x",)), ("boundary", "weak", "vocabulary")),
        ([], Evidence(gold_holds=0.2, hit_holds=0.9), ("boundary", "weak", "label")),
        ([_experiment("context", 9, 3)], plain, ("context", "weak", "")),  # ranks it lower
        ([], Evidence(damage=0.9), ("parse", "weak", "")),
        ([], Evidence(copy=1.0, copy_hit="c1"), ("label", "strong", "")),
        ([], Evidence(metric="gross margin", figures=3), ("vocabulary", "strong", "")),
    ]
    for found, evidence, want in cases:
        d = decide([*found, drowned], evidence, k=3)
        assert (d.cause, d.confidence, d.runner_up) == want, (found, evidence)
        assert (d.decided_by == "own paragraph") is (want[0] == "boundary")
    missed = Experiment(repair="boundary", before=9, after=6, fixes=False, line="x", drowned=True)
    assert decide([missed], plain, k=3).cause == "unclear"  # it must fix the failure
    moved = Experiment(repair="boundary", before=30, after=4, fixes=False, line="x", drowned=True)
    copy = Evidence(copy=1.0, copy_hit="c1")
    assert decide([moved], copy, k=3).confidence == "strong"  # moving contradicts nothing
    kept = Experiment.from_dict(drowned.to_dict())
    assert kept == drowned  # stored with the run and read back


def test_a_top_hit_restating_the_gold_is_shown_and_offered_as_a_second_gold(
    diagnosed, monkeypatch: pytest.MonkeyPatch
):
    """Through ``diagnose_methods``: the restatement the encoder finds reaches the evidence,
    the label panel's signal (both sentences) and, where it decides label, the second gold
    span the reader offers; under the threshold it is shown and decides nothing."""
    import core.diagnose.run_failures as rf
    from core.diagnose.restated import Restatement

    run, found, docs, encoder = diagnosed
    before = found["naive"]["vocabulary"]
    assert before.suggested == "vocabulary"
    hit = next(h for h in run.query("vocabulary").top["naive"])
    cite = run.chunks[hit.chunk_id]
    text = docs[cite.doc_id].text

    def said(similarity: float):
        def fake(gold, doc_id, doc_text, hits, vector, weights=None):
            vector("asked")  # the book collects, then reads
            return Restatement(
                similarity=similarity, chunk_id=hit.chunk_id, hit_doc=cite.doc_id,
                gold=gold[0], hit=(cite.char_start, cite.char_end),
                gold_text=doc_text[slice(*gold[0])], hit_text=text[cite.char_start : cite.char_end],
            )  # fmt: skip

        return fake

    for similarity, cause in ((0.93, "label"), (0.6, "vocabulary")):
        monkeypatch.setattr(rf, "restatement", said(similarity))
        again = diagnose_methods(run, docs, ["naive"], encoder=encoder, embed=fake_embed_chunks)
        d = again["naive"]["vocabulary"]
        assert (d.suggested, d.confidence) == (cause, "weak")
        assert d.evidence is not None and d.evidence.restated == similarity
        signal = next(s for s in d.signals if s.name == "gold said again in a top hit")
        assert signal.spans == ((cite.char_start, cite.char_end),)
        assert ("says what the gold says" in signal.detail) is (cause == "label")
        assert signal.holds is (cause == "label")  # under the threshold it is only shown
        if cause == "label":  # the sentence offered as the second gold span, not its chunk
            assert d.second_gold is not None and d.second_gold.chunk_id == hit.chunk_id
            assert (d.second_gold.char_start, d.second_gold.char_end) == (
                cite.char_start, cite.char_end
            )  # fmt: skip
        else:
            assert d.second_gold is None


def test_the_context_repair_reads_the_lines_above_a_chunk_that_name_what_it_is_about(
    tmp_path: Path,
):
    """A segment heading the chunker left at the end of the chunk before ("Las Vegas Strip
    Resorts") and a table row's name: the label lines just above the gold's chunk holding
    a query term the chunk lacks join its title and headings, in document order; lines
    holding none, long lines, a narrow column's running text and lines of an earlier page
    do not."""
    from core.diagnose.repairs import _context_of, context_detail, lines_above
    from core.embed.contextual import contextual_prefix

    text = (
        "# Quarterly results\n\nRegional Operations\nNet revenues rose 5% at the regional "
        "resorts.\n\nLas Vegas Strip Resorts\n\n"
        + "A long line about the Strip " * 6 + "\n"
        + "a narrow column's line on the Strip\nruns on into the next.\n"
        + "Slot handle, Las Vegas\t12\t14\n"
        + "Adjusted EBITDAR margin was 38.2% against 38.7%, on lower-margin outlets.\n"
    )  # fmt: skip
    (tmp_path / "er.md").write_text(text, "utf-8")
    (doc,), _ = load_each([tmp_path / "er.md"])
    policy = policy_from_dict({"name": "fixed", "size": 2000, "overlap": 0, "unit": "chars"})
    _, (whole,) = default_chunker(policy)(doc)
    at = doc.text.index("Adjusted EBITDAR")
    chunk = dataclasses.replace(whole, char_start=at, char_end=len(doc.text.rstrip()),
                                text=doc.text[at:].rstrip(), heading_path=())  # fmt: skip
    weights = content_words("Why did the Las Vegas Strip margin slip?", FUNCTION_WORDS)
    found = lines_above(doc, chunk, weights)
    assert found == ["Las Vegas Strip Resorts", "Slot handle, Las Vegas 12 14"]  # a row too
    head = contextual_prefix(doc, chunk, unread=True)
    assert _context_of(head, found).endswith(
        "Las Vegas Strip Resorts\nSlot handle, Las Vegas 12 14"
    )
    shown = context_detail("Acme release\nResults", found)
    want = "Acme release > Results; above it: “Las Vegas Strip Resorts” | “Slot handle, Las "
    assert shown == want + "Vegas 12 14”"
    assert context_detail("", found[:1]) == "above it: “Las Vegas Strip Resorts”"
    assert lines_above(doc, chunk, {}) == []
    assert lines_above(doc, chunk, content_words("What was the margin?", FUNCTION_WORDS)) == []
    heading = dataclasses.replace(chunk, heading_path=("Las Vegas Strip Resorts",))
    assert lines_above(doc, heading, weights) == found[1:]  # in its heading path already
    later = dataclasses.replace(chunk, pages=(2,))
    page_one = Page(number=1, char_start=0, char_end=at - 1, width_pt=612, height_pt=792,
                    has_text=True)  # fmt: skip
    page_two = Page(number=2, char_start=at - 1, char_end=len(doc.text), width_pt=612,
                    height_pt=792, has_text=True)  # fmt: skip
    paged = dataclasses.replace(doc, pages=(page_one, page_two))
    assert lines_above(paged, later, weights) == []  # the heading is on the page before
