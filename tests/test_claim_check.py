"""Claims checked after the import (``core.imported.claim_check``): a per-page loader's set
placed by our text at once, its offsets and pages pending (never shown as right or wrong),
then checked in the loader's text to exactly what an import that read it first makes; a
run scored meanwhile made again over the checked set."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.diagnose.import_job import AddMethods
from core.evaluate.imported_run import LogImport, claims_pending
from core.evaluate.labels import GoldSpan, LabelledQuery
from core.evaluate.traces import TraceHit, TraceQuery
from core.formats import load_document
from core.imported import headline, import_chunks, loader_text, read_file, save_chunk_set
from core.imported.chunkset import load_chunk_set
from core.imported.claim_check import CheckClaims, check_claims, is_pending, moved, originals
from tests.fakes import FakeEncoder
from tests.test_loader_claims import (
    MULTICOLUMN,
    SIGCONF,
    _counted_extractions,
    page_texts,
    rows_of,
    seeded,
)


@pytest.fixture(autouse=True)
def _registries_as_found() -> Iterator[None]:
    """A run's import registers its retriever and the set's policy: gone after each test."""
    from core.chunk import policy_registry
    from core.methods import unregister

    yield
    for name in policy_registry.fixed_names():
        policy_registry.unregister_fixed(name)
    unregister("yours")


def _chunks(rows: list[dict]):  # noqa: ANN202
    return read_file("".join(json.dumps(r) + "\n" for r in rows).encode(), "rows.jsonl")


def _import(rows: list[dict], path: Path, **kwargs):  # noqa: ANN003, ANN202
    shape, chunks = _chunks(rows)
    chunk_set, _ = import_chunks(
        chunks, [load_document(path)], name="mine", shape=shape, origin="rows.jsonl", **kwargs
    )
    return chunk_set


def _same(a, b) -> bool:  # noqa: ANN001
    left, right = a.to_dict(), b.to_dict()
    left.pop("created_at"), right.pop("created_at")
    return left == right


@pytest.mark.parametrize(
    ("path", "extractor", "meta", "base"),
    [
        (SIGCONF, "pypdf", {"page_label": "1"}, 0),  # PyPDFLoader's rows, seeded errors
        (SIGCONF, "pymupdf", {"file_path": "x.pdf", "format": "PDF 1.5"}, 0),
        (MULTICOLUMN, "pypdf", None, 1),  # no hint, pages from 1: found by trial
    ],
)
def test_pending_claims_are_checked_to_what_an_import_that_read_the_loader_makes(
    monkeypatch: pytest.MonkeyPatch, path: Path, extractor: str, meta: dict | None, base: int
) -> None:
    rows = rows_of(path, extractor, meta, base=base)
    seeded_rows = seeded(rows, page_texts(path, extractor)) if base == 0 else None
    loader_text.forget()
    calls = _counted_extractions(monkeypatch)
    first = _import(rows, path, check_later=True)
    assert calls == []  # the loader's text was not read
    counts = first.counts()
    assert counts["claim"]["pending"] == len(rows) and counts["page_claim"]["pending"] == len(rows)
    assert all(c.anchor.detail.endswith("checked in the loader's text once that is read")
               for c in first.chunks)  # fmt: skip
    assert is_pending(first)
    lines = headline(first)
    assert lines[0].startswith(f"Offsets: {len(rows)} pending: placed by our text, checked in ")
    assert "wrong" not in lines[0] and "0 wrong" not in lines[1]  # nothing shown as clean
    assert lines[1].startswith(f"Pages: {len(rows)} pending")

    checked = check_claims(first, [load_document(path)])
    loader_text.forget()
    direct = _import(rows, path)
    assert _same(checked, direct)
    assert not is_pending(checked) and checked.counts()["claim"]["pending"] == 0
    if seeded_rows is not None:
        moved_offset, minus_one, moved_page = seeded_rows
        wrong = {c.anchor.index for c in checked.chunks if c.anchor.claim == "wrong"}
        assert wrong == {moved_offset, minus_one}
        assert checked.chunks[moved_page].anchor.page_claim == "wrong"


def test_a_pending_set_is_kept_and_read_back_and_checked_from_the_file(tmp_path: Path) -> None:
    rows = rows_of(MULTICOLUMN, "pypdf", base=1)
    first = _import(rows, MULTICOLUMN, check_later=True)
    assert first.checks["pending"]["shift"] == -1  # numbered from 1, read as from 0
    kept = load_chunk_set(save_chunk_set(tmp_path, first))
    assert _same(kept, first) and is_pending(kept)
    assert [c.page for c in originals(kept)] == [r["metadata"]["page"] + 1 for r in rows]  # as read
    assert _same(check_claims(kept, [load_document(MULTICOLUMN)]), _import(rows, MULTICOLUMN))


def test_a_text_file_has_nothing_to_check_later(tmp_path: Path) -> None:
    text = "One line of text.\nAnother line here.\n" * 20
    path = tmp_path / "notes.txt"
    path.write_text(text, encoding="utf-8")
    rows = [{"page_content": text[i : i + 40], "metadata": {"source": "notes.txt",
             "start_index": i + (3 if i == 80 else 0)}} for i in range(0, 400, 40)]  # fmt: skip
    later = _import(rows, path, check_later=True)
    assert not is_pending(later) and _same(later, _import(rows, path))
    assert later.counts()["claim"]["wrong"] == 1  # checked at once, in our own text


def test_the_job_keeps_the_checked_set_and_says_what_moved() -> None:
    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    loader_text.forget()
    first = _import(rows, SIGCONF, check_later=True)
    kept, after = [], []
    job = CheckClaims(chunk_set=first, docs=[load_document(SIGCONF)], keep=kept.append,
                      then=[after.append])  # fmt: skip
    assert job.progress()[1].startswith("mine: reading pypdf")
    job.start()
    checked = job.wait()
    assert checked is not None and kept == [checked] and after == [checked]
    assert job.read == job.total == len(load_document(SIGCONF).pages)
    assert job.moved == moved(first, checked)
    level, line = job.summary()
    assert level == "success" and line.startswith("mine: every claim checked in the loader's text")


def test_a_stopped_check_keeps_nothing_and_says_the_claims_stay_pending(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    loader_text.forget()
    first = _import(rows, SIGCONF, check_later=True)
    kept: list = []
    job = CheckClaims(chunk_set=first, docs=[load_document(SIGCONF)], keep=kept.append)
    job.cancel.set()
    assert job.run() is None and job.stopped and kept == []
    assert job.summary() == ("warning", "Stopped: mine's offsets and pages stay unchecked "
                                        "(pending).")  # fmt: skip


def _log_and_labels(chunk_set, doc) -> tuple[list[TraceQuery], list[LabelledQuery]]:  # noqa: ANN001
    placed = [c for c in chunk_set.chunks if c.anchor.char_start is not None]
    labels, log = [], []
    for i in range(3):
        gold = placed[4 * i].anchor
        labels.append(
            LabelledQuery(
                id=f"q{i}",
                query=f"question {i}",
                doc=doc.doc_id,
                gold=(GoldSpan(char_start=gold.char_start, char_end=gold.char_start + 30),),
            )
        )
        order = [placed[4 * i], placed[1]] if i < 2 else [placed[1], placed[2]]
        hits = tuple(
            TraceHit(
                rank=r, chunk_id=c.given.foreign_id, text=c.given.text, source=None, score=None
            )
            for r, c in enumerate(order, start=1)
        )
        log.append(TraceQuery(query_id=f"q{i}", query=f"question {i}", hits=hits))
    return log, labels


def _pending_run():  # noqa: ANN202
    """A PyPDFLoader set of the ACM sample imported with its claims pending, a log over it,
    and the retriever's run scored at once."""
    doc = load_document(SIGCONF)
    first_set = _import(rows_of(SIGCONF, "pypdf", {"page_label": "1"}), SIGCONF, check_later=True)
    log, labels = _log_and_labels(first_set, doc)
    found = LogImport(log, labels, first_set, [doc], name="yours")
    return doc, first_set, log, labels, found, found.run(encoder=FakeEncoder())


def test_a_run_scored_while_claims_are_pending_is_made_again_over_the_checked_set() -> None:
    loader_text.forget()
    doc, first_set, log, labels, found, first = _pending_run()
    assert claims_pending(first)
    gate = threading.Event()
    claims = CheckClaims(chunk_set=first_set, docs=[doc], keep=lambda s: gate.wait(30))
    kept = []
    job = AddMethods(
        found=found,
        first=first,
        methods=(),
        encoder=FakeEncoder(),
        keep=kept.append,
        claims=claims,
        remake=lambda checked: LogImport(log, labels, checked, [doc], name="yours"),
    )
    claims.start()
    job.start()
    while not job.waiting and job.running:
        time.sleep(0.01)
    share, line = job.progress()
    assert line.endswith("then this run is made again over the checked set")
    gate.set()
    job.thread.join(60)
    assert job.result is not None and kept == [job.result]
    assert not claims_pending(job.result) and job.result.created_at == first.created_at
    assert [q.failed for q in job.result.queries] == [q.failed for q in first.queries]
    assert job.result.run_id == first.run_id  # the same run: its tags and links hold
    assert job.summary() == ("success", "The run was made again over the chunk set with its "
                                        "claims checked.")  # fmt: skip


def test_a_stopped_remake_keeps_the_first_run_as_it_was() -> None:
    doc, first_set, log, labels, found, first = _pending_run()
    gate = threading.Event()
    claims = CheckClaims(chunk_set=first_set, docs=[doc], keep=lambda s: gate.wait(30))
    kept: list = []
    job = AddMethods(found=found, first=first, methods=(), encoder=FakeEncoder(),
                     keep=kept.append, claims=claims,
                     remake=lambda checked: LogImport(log, labels, checked, [doc]))  # fmt: skip
    claims.start()
    job.cancel.set()
    job.run()
    gate.set()
    assert job.stopped and [k.run_id for k in kept] == [first.run_id] and claims_pending(kept[0])
    level, line = job.summary()
    assert level == "warning" and "before its claims were checked" in line


def test_the_command_line_checks_a_pending_set_before_it_scores_a_run_over_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from core.cli import main, options
    from core.evaluate import load_run
    from tests.test_import_run import fake_embed_chunks

    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    for k, row in enumerate(rows):
        row["id"] = f"row-{k}"
    doc = load_document(SIGCONF)
    first_set = _import(rows, SIGCONF, check_later=True)
    store = tmp_path / "store"
    save_chunk_set(store / "chunksets", first_set)
    log, labels = _log_and_labels(first_set, doc)
    (tmp_path / "q.jsonl").write_text("".join(json.dumps(q.to_dict()) + "\n" for q in labels))
    (tmp_path / "log.jsonl").write_text(
        "".join(
            json.dumps({"query_id": q.query_id, "hits": [{"chunk_id": h.chunk_id} for h in q.hits]})
            + "\n"
            for q in log
        )  # fmt: skip
    )
    monkeypatch.setattr(options, "load_model", lambda a: (FakeEncoder(), fake_embed_chunks, None))
    argv = ["import-run", str(tmp_path / "log.jsonl"), "--chunks", "mine", "--queries",
            str(tmp_path / "q.jsonl"), "--docs", str(SIGCONF), "--store", str(store),
            "--methods", "none", "--out", str(tmp_path / "run.json")]  # fmt: skip
    assert main(argv) == 0
    assert "its offsets and pages were pending; checking them" in capsys.readouterr().err
    kept = load_chunk_set(store / "chunksets" / "mine.json")
    assert not is_pending(kept) and _same(kept, _import(rows, SIGCONF))
    assert not claims_pending(load_run(tmp_path / "run.json"))


def test_several_documents_and_chunks_no_document_holds_check_as_an_import_makes_them(
    tmp_path: Path,
) -> None:
    """Chunks of a PDF numbered from 1 (a shift detected), one naming no document given and
    one naming none at all, with a Markdown file beside it: the checked set is the set a
    checking import of the same chunks and documents makes."""
    from tests.conftest import SAMPLE_DOCS

    rows = rows_of(MULTICOLUMN, "pypdf", base=1)
    rows.append({"page_content": "Nothing of these documents.",
                 "metadata": {"source": "nowhere.pdf", "page": 2, "start_index": 5}})  # fmt: skip
    rows.append({"page_content": rows[0]["page_content"], "metadata": {"page": 1}})
    docs = [load_document(MULTICOLUMN), load_document(SAMPLE_DOCS / "state_of_the_union.md")]
    shape, chunks = _chunks(rows)
    first, _ = import_chunks(chunks, docs, name="mine", shape=shape, origin="r", check_later=True)
    direct, _ = import_chunks(chunks, docs, name="mine", shape=shape, origin="r")
    assert first.checks["pending"]["docs"] == [docs[0].doc_id]
    assert [c.page for c in originals(first)] == [c.page for c in chunks]  # as read
    assert _same(check_claims(first, docs), direct)
    # the workbench passes its whole library: the import's documents are taken from it
    extra = load_document(SIGCONF)
    assert _same(check_claims(first, [extra, *docs]), direct)


def test_a_check_never_saves_over_a_set_imported_again_under_its_name(tmp_path: Path) -> None:
    from core.imported.claim_check import keep_in

    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    first = _import(rows, SIGCONF, check_later=True)
    save_chunk_set(tmp_path, first)
    keep = keep_in(tmp_path, first)
    newer = _import(rows[:10], SIGCONF, check_later=True)
    save_chunk_set(tmp_path, newer)  # imported again while the first check ran
    keep(check_claims(first, [load_document(SIGCONF)]))
    held = load_chunk_set(tmp_path / "mine.json")
    assert len(held.chunks) == 10 and is_pending(held)
    keep_in(tmp_path, newer)(check_claims(newer, [load_document(SIGCONF)]))
    assert not is_pending(load_chunk_set(tmp_path / "mine.json"))


def test_a_check_stopped_while_it_checks_keeps_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.imported import claim_check

    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    first = _import(rows, SIGCONF, check_later=True)
    kept: list = []
    job = CheckClaims(chunk_set=first, docs=[load_document(SIGCONF)], keep=kept.append)
    real = claim_check.check_claims

    def stopped_meanwhile(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        job.cancel.set()
        return real(*args, **kwargs)

    monkeypatch.setattr(claim_check, "check_claims", stopped_meanwhile)
    assert job.run() is None and job.stopped and kept == []
    assert job.summary()[0] == "warning"


def test_a_check_whose_loader_text_cannot_be_read_says_the_claims_stay_unchecked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    first = _import(rows, SIGCONF, check_later=True)
    loader_text.forget()
    monkeypatch.setattr(loader_text.PageTexts, "page", lambda self, number: None)
    kept: list = []
    job = CheckClaims(chunk_set=first, docs=[load_document(SIGCONF)], keep=kept.append)
    checked = job.run()
    assert checked is not None and checked.counts()["claim"]["unchecked"] == len(rows)
    level, line = job.summary()
    assert level == "warning" and f"{len(rows)} offset(s)" in line and "stay unchecked" in line
    assert "every claim checked" not in line


def test_a_run_whose_sets_check_was_stopped_is_kept_as_scored_and_says_so() -> None:
    doc, first_set, log, labels, found, first = _pending_run()
    claims = CheckClaims(chunk_set=first_set, docs=[doc], keep=lambda s: None)
    claims.cancel.set()
    claims.start()
    kept: list = []
    job = AddMethods(found=found, first=first, methods=(), encoder=FakeEncoder(),
                     keep=kept.append, claims=claims,
                     remake=lambda checked: LogImport(log, labels, checked, [doc]))  # fmt: skip
    job.run()
    assert job.stopped and [k.run_id for k in kept] == [first.run_id] and claims_pending(kept[0])
    level, line = job.summary()
    assert level == "warning" and "before its claims were checked" in line


def test_the_policy_of_a_set_names_the_revision_of_its_spans(tmp_path: Path) -> None:
    from core.chunk import policy_registry
    from core.imported import register_chunk_sets

    rows = rows_of(SIGCONF, "pypdf", {"page_label": "1"})
    first = _import(rows, SIGCONF, check_later=True)
    checked = check_claims(first, [load_document(SIGCONF)])
    assert (first.revision() == checked.revision()) == (moved(first, checked) == [])
    assert _import(rows[:5], SIGCONF).revision() != checked.revision()
    try:
        save_chunk_set(tmp_path, first)
        register_chunk_sets(tmp_path)
        assert policy_registry.get("mine").revision == first.revision()
        save_chunk_set(tmp_path, _import(rows[:5], SIGCONF))
        register_chunk_sets(tmp_path)  # the changed file is read again
        assert policy_registry.get("mine").revision == _import(rows[:5], SIGCONF).revision()
    finally:
        policy_registry.unregister_fixed("mine")
