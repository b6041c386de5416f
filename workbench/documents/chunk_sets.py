"""Glue of imported chunk sets (``core.imported``): offered as policies on every page, the
Library's import form, and the audit of a set (what was checked, the counts, and every
chunk that is ambiguous, missing, or has a wrong offset or page, each with a link to it).

Sets are kept in ``chunksets/`` beside the index (in the store folder, or beside the
triage file for a Chroma server), the folder the CLI's ``import-chunks`` writes to, so a
set imported either way is offered everywhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd  # type: ignore[import-untyped]  # streamlit's own dependency
import streamlit as st

from core.errors import ChunkscopeError
from core.imported import (
    ChunkSet,
    ImportedChunk,
    check_name,
    headline,
    import_chunks,
    pending_note,
    read_chroma,
    read_file,
    register_chunk_sets,
    save_chunk_set,
)
from core.imported.chunkset import FOLDER_NAME, name_from
from core.imported.claim_check import CheckClaims, is_pending, keep_in, same_import
from core.imported.loader_text import EXTRACTORS, PageTexts
from core.imported.loader_text import FOLDER_NAME as LOADER_FOLDER
from core.imported.named_splitter import offer_line
from core.provenance.cite import Citation
from core.provenance.types import Document
from core.render.links import link_url, source_params
from core.render.markup import marked_text_html
from core.render.views import highlight_mark
from workbench.documents import session
from workbench.engine import jobs, run_files
from workbench.frame import roles
from workbench.state import (
    ImportKey,
    every_chunk_widget,
    live_policy_widget,
    overlap_widget,
    size_widget,
    unit_widget,
)
from workbench.widgets import wording
from workbench.widgets.wording import md

NOT_FINE = ("ambiguous", "missing")
SHAPE_LABELS = {None: "sniff it", "langchain": "LangChain", "llamaindex": "LlamaIndex",
                "chunks": "chunk rows"}  # fmt: skip


def sets_dir() -> Path:
    return run_files.runs_dir().parent / FOLDER_NAME


def loader_dir() -> Path:
    """Where the loaders' page texts are kept (as ``chunkscope import-chunks`` keeps them)."""
    return run_files.runs_dir().parent / LOADER_FOLDER


@st.cache_resource(show_spinner=False)
def claim_jobs() -> dict[str, CheckClaims]:
    """The jobs checking a set's pending claims, by set name, in this process."""
    return {}


def claim_job(name: str) -> CheckClaims | None:
    """The live (or just ended, not yet announced) claim check of set ``name``."""
    return claim_jobs().get(name)


def check_later(chunk_set: ChunkSet, docs: list[Document]) -> CheckClaims | None:
    """Start checking ``chunk_set``'s pending claims in the background (the checked set
    replaces it where it is kept); the job already running for it, if any."""
    running = claim_job(chunk_set.name)
    if running is not None and running.running:
        if same_import(running.chunk_set, chunk_set):
            return running
        running.cancel.set()  # a set imported again under its name: the old check is void
    if not is_pending(chunk_set):
        return None
    keep = keep_in(sets_dir(), chunk_set)  # never over a set imported again meanwhile
    job = CheckClaims(chunk_set=chunk_set, docs=docs, folder=loader_dir(), keep=keep)
    claim_jobs()[chunk_set.name] = job
    job.start()
    return job


def _forget_claims(job: CheckClaims) -> None:
    """An ended check, once its summary is shown: the summary kept for the set's audit."""
    if claim_jobs().get(job.name) is job:
        del claim_jobs()[job.name]
    st.session_state.setdefault(ImportKey.CHECKED, {})[job.name] = job.summary()


def claims_panel(chunk_set: ChunkSet) -> None:
    """While a set's claims are pending: the check's progress (then its summary once), or,
    with no check running in this workbench, a button that starts one."""
    job = claim_job(chunk_set.name)
    if job is not None and (job.running or not job.announced):
        jobs.job_panel(job, stop_label="Stop checking the claims", on_done=_forget_claims)
        return
    ended = st.session_state.get(ImportKey.CHECKED, {}).get(chunk_set.name)
    if ended is not None:  # how this session's check of it ended
        jobs.summary_line(*ended)
    if not is_pending(chunk_set):
        return
    st.warning(
        f"{md(chunk_set.name)}'s chunks are placed by our text; their offsets and pages are "
        "pending (the loader's text has not been read): none is shown as right or wrong.",
        icon=":material/pending:",
    )
    if roles.editing_enabled() and st.button("Check the claims now", icon=":material/fact_check:",
                 key=f"{ImportKey.CHECK}{chunk_set.name}"):  # fmt: skip
        pool = session.library()
        check_later(chunk_set, list(pool.values()))  # the import's documents among them
        st.rerun()


def offer() -> dict[str, ChunkSet]:
    """Register the store's sets as policies (each run: a changed file is read again)."""
    try:
        return register_chunk_sets(sets_dir())
    except OSError:
        return {}


def _wrong(chunk: ImportedChunk) -> bool:
    return "wrong" in (chunk.anchor.claim, chunk.anchor.page_claim)


def needs_review(chunk_set: ChunkSet) -> list[ImportedChunk]:
    """Chunks a reader should look at: not anchored in one place, or a wrong offset or
    page."""
    return [c for c in chunk_set.chunks if c.anchor.anchor in NOT_FINE or _wrong(c)]


def _page_cell(chunk: ImportedChunk) -> str:
    """``p. 12`` when the chunk's page holds, ``claims p. 12, is on p. 7`` when not."""
    a = chunk.anchor
    if a.claimed_page is None:
        return ""
    if a.page_claim == "wrong":
        on = ", ".join(map(str, a.pages)) or "?"
        return f"claims p. {a.claimed_page}, is on p. {on}"
    return f"p. {a.claimed_page} ({a.page_claim})"


_TEXT_AT = re.compile(r"text is at ([\d,]+[^;]*)")


def _finding(chunk: ImportedChunk) -> str:
    """The one finding that matters, short ("offset wrong: text at 1,657 in pypdf's
    p. 2", "page wrong", "other spacing"); the audit's last column keeps the full line."""
    a = chunk.anchor
    if a.claim == "wrong":
        at = _TEXT_AT.search(a.detail)
        where = at.group(1).replace("'s text of p.", "'s p.") if at else ""
        return "offset wrong" + (f": text at {where}" if where else "")
    if a.page_claim == "wrong":
        return "page wrong"
    if a.anchor == "missing":
        if "pending" in (a.claim, a.page_claim):
            return "not found in our text yet (the loader's text may place it)"
        return "not found"
    if a.anchor == "ambiguous":
        return "in several places"
    if "unchecked" in (a.claim, a.page_claim):
        return "offset unchecked" if a.claim == "unchecked" else "page unchecked"
    if "pending" in (a.claim, a.page_claim):
        return "claims pending"
    if a.anchor == "aligned":
        if a.detail.startswith("the same characters"):
            return "other spacing"
        if "loader" in a.detail:
            return "placed by the loader's text"
        return f"aligned on {a.coverage:.0%} of its words" if a.coverage else "aligned"
    return ""


def _link(chunk: ImportedChunk, docs: dict[str, Document]) -> str | None:
    a = chunk.anchor
    doc = docs.get(a.doc_id or "")
    if a.char_start is None or a.char_end is None or doc is None or doc.sha256 != a.doc_sha256:
        return None
    return link_url("", source_params(Citation.of_span(doc, a.char_start, a.char_end)))


def audit(chunk_set: ChunkSet) -> None:
    """The counts of a set and a table of the chunks that need a look, linked to Source."""
    counts = chunk_set.counts()
    total = len(chunk_set.chunks)
    cells = st.columns(5)
    for cell, (label, n) in zip(cells, [("chunks", total), *counts["anchor"].items()], strict=True):
        cell.metric(label.capitalize(), f"{n:,}")
    for line in headline(chunk_set):  # what was checked, never a bare count of wrong ones
        st.markdown(f"**{md(line)}**")
    claims_panel(chunk_set)  # a PDF loader's claims being checked in its text
    if named := chunk_set.checks.get("splitter"):
        parts = offer_line(named).split("`")  # the flags stay code, the rest text
        said = "".join(md(p) if i % 2 == 0 else f"`{p}`" for i, p in enumerate(parts))
        st.caption(
            f"{said}. On the Chunks page, pick this set and press Run its splitter live; on "
            "Tune, press Sweep its splitter."
        )
    claims = ", ".join(f"{kind} {n:,}" for kind, n in counts["claim"].items())
    pages = ", ".join(f"{kind} {n:,}" for kind, n in counts["page_claim"].items())
    st.caption(
        f"**{md(chunk_set.name)}** from {md(chunk_set.origin)} ({chunk_set.shape}), "
        f"{len(chunk_set.docs)} document(s). Claimed offsets: {claims}; claimed pages: "
        f"{pages}. `exact`: the text is a slice of our text; `aligned`: the same words with "
        "another extraction's spacing, hyphens or order; a per-page loader's offsets are "
        "checked in that loader's own text of the page; `unchecked`: offsets into a text "
        "we could not reproduce; `pending`: not checked yet (that text is being read). "
        f"Pick **{md(chunk_set.name)}** as the policy on Chunks, "
        "Compare or Evaluate to use these boundaries."
    )
    review = needs_review(chunk_set)
    if not review and not is_pending(chunk_set):
        st.success(
            "Every chunk is anchored in one place, and no offset or page that was checked is wrong."
        )
    wider = st.toggle(
        "Also the aligned chunks and the unchecked claims", key=every_chunk_widget(chunk_set.name),
        help="Every chunk that is not exact with an ok claim, not only those to look at",
    )  # fmt: skip
    if wider:
        review = [
            c for c in chunk_set.chunks if (c.anchor.anchor, c.anchor.claim) != ("exact", "ok")
        ]
    if not review:
        return
    docs = session.library()
    rows = [
        {
            "#": chunk_set.number(c),  # the number the Chunks page draws (None: not drawn)
            "row": c.anchor.index + 1,
            "id": c.given.foreign_id or "",
            "document": c.anchor.doc_id or c.given.source or "",
            "anchor": c.anchor.anchor,
            "claim": c.anchor.claim,
            "page": _page_cell(c),
            "pages": ", ".join(map(str, c.anchor.pages)),
            "why": _finding(c),
            "open": _link(c, docs),
            "text": c.given.text[:160],
            "detail": c.anchor.detail,
        }
        for c in review
    ]
    st.markdown(f"**{len(review):,} chunk(s)" + ("" if wider else " to look at") + "**")
    table = pd.DataFrame(rows)
    table["#"] = table["#"].astype("Int64")  # a chunk not drawn: an empty cell, not "None"
    st.dataframe(
        table,
        hide_index=True,
        height=wording.table_height(len(rows)),
        column_config={
            "#": st.column_config.NumberColumn(
                "#", help="The chunk's number on the Chunks page (none: not drawn there)"
            ),
            "row": st.column_config.NumberColumn("row", help="Its row in the imported file"),
            "open": st.column_config.LinkColumn("open", display_text="in Source"),
            "why": st.column_config.TextColumn(
                width="medium", help="The finding that matters; the last column has all of it"
            ),
            "detail": st.column_config.TextColumn("in full", width="large"),
            "page": st.column_config.TextColumn("page claimed", width="medium"),
            "pages": st.column_config.TextColumn("anchored on"),
            "text": st.column_config.TextColumn("text (start)", width="medium"),
        },
    )


def _keep(shape: str, chunks: list, origin: str, name: str, threshold: float) -> None:
    """Anchor ``chunks`` and save them as a set beside the index (an editor's write)."""
    if not roles.require_editor("import chunk sets"):
        return
    docs = list(session.library().values())
    chunk_set, _ = import_chunks(
        chunks, docs, name=check_name(name or name_from(origin)), shape=shape, origin=origin,
        threshold=threshold, loader_folder=loader_dir(), check_later=True,
    )  # fmt: skip
    save_chunk_set(sets_dir(), chunk_set)
    check_later(chunk_set, docs)  # a PDF loader's claims: checked in its text meanwhile
    offer()
    st.session_state[ImportKey.SHOWN] = chunk_set.name
    st.session_state[ImportKey.PICK] = chunk_set.name  # the picker drawn below shows it
    st.session_state.get(ImportKey.CHECKED, {}).pop(chunk_set.name, None)  # an older check's
    # said above the set's audit until another set is imported: the claim check's end
    # reruns the page, which would take a line drawn here with it
    st.session_state[ImportKey.SAID] = (
        chunk_set.name,
        f"Imported {md(chunk_set.name)}: {len(chunk_set.chunks):,} chunks of "
        f"{len(chunk_set.docs)} document(s), kept beside the index; its audit is below.",
    )


def import_form() -> None:
    """Upload a JSONL/JSON file of chunks, or name a Chroma collection; anchor, audit, keep."""
    st.caption(
        "Chunks your pipeline already made: LangChain Documents (`start_index`), LlamaIndex "
        "TextNodes (`start_char_idx`), plain rows (`doc`, `text`, `char_start`) or a Chroma "
        "collection either library filled. Each is anchored in a document of the library "
        "(named by its source) and the offsets it claims are checked."
    )
    from_file, from_chroma = st.tabs(["From a file", "From a Chroma collection"])
    with from_file, st.form(ImportKey.FILE_FORM, border=False):
        upload = st.file_uploader("JSONL or JSON file of chunks", key=ImportKey.UPLOAD)
        left, right, far = st.columns(3)
        shape = left.selectbox("Shape", list(SHAPE_LABELS), format_func=lambda s: SHAPE_LABELS[s])
        name = right.text_input("Set name", placeholder="from the file name")
        threshold = far.slider("Aligned at", 0.5, 1.0, 0.9, 0.05, help="Share of a chunk's "
                               "words an aligned span must hold")  # fmt: skip
        if st.form_submit_button("Import", icon=":material/upload:") and upload is not None:
            try:
                found, chunks = read_file(upload.getvalue(), upload.name, shape=shape)
                _keep(found, chunks, upload.name, name.strip(), threshold)
            except ChunkscopeError as exc:
                st.error(md(exc), icon=":material/error:")
    with from_chroma, st.form(ImportKey.CHROMA_FORM, border=False):
        left, right, far = st.columns(3)
        where = left.text_input("Chroma folder or HOST:PORT")
        collection = right.text_input("Collection")
        name = far.text_input(
            "Set name", placeholder="from the collection", key=ImportKey.CHROMA_NAME
        )
        if st.form_submit_button("Import", icon=":material/upload:") and where and collection:
            try:
                found, chunks = read_chroma(where.strip(), collection.strip())
                _keep(found, chunks, f"chroma:{where.strip()}/{collection.strip()}",
                      name.strip() or collection.strip(), 0.9)  # fmt: skip
            except ChunkscopeError as exc:
                st.error(md(exc), icon=":material/error:")
    sets_audit()


def sets_audit() -> None:
    """The audit of one imported set, picked among those kept (nothing when none is)."""
    sets = offer()
    if not sets:
        return
    names = list(sets)
    shown = st.session_state.get(ImportKey.SHOWN)
    if st.session_state.get(ImportKey.PICK) not in names:  # first drawn, or its set gone
        st.session_state[ImportKey.PICK] = shown if shown in names else names[0]
    pick = st.selectbox("Imported chunk set", names, key=ImportKey.PICK)
    said = st.session_state.get(ImportKey.SAID)
    if said is not None and said[0] == pick:
        st.success(said[1], icon=":material/check_circle:")
    audit(sets[pick])


def _snippet(doc: Document, start: int, end: int, label: str) -> None:
    """``[start, end)`` lit in a little of its surrounding text."""
    lo, hi = max(0, start - 120), min(len(doc.text), end + 120)
    st.caption(label)
    st.html(marked_text_html(doc.text[lo:hi], lo, [highlight_mark(start, end)]))


def _loader_snippet(doc: Document, label: str, chunk: ImportedChunk, claimed: int) -> None:
    """The loader's own text of the claimed page at the claimed offset."""
    name = label.split()[0].lower()
    if name not in EXTRACTORS or chunk.given.page is None:
        return
    text = (PageTexts(doc, name).page(chunk.given.page) or "").strip()
    end = min(len(text), claimed + len(chunk.given.text))
    st.caption(f"Where it claims to be: chars {claimed:,}-{end:,} of {label}'s text of "
               f"p. {chunk.given.page}")  # fmt: skip
    st.code(text[claimed:end] or "(past the end of that page's text)", wrap_lines=True)


def _claims_said(here: list[ImportedChunk], checked_in: str, waiting: str) -> str:
    """The wrong claims among ``here``, or how many are still pending (never a bare 0)."""
    pending = sum("pending" in (c.anchor.claim, c.anchor.page_claim) for c in here)
    wrong = (
        f"; {sum(c.anchor.claim == 'wrong' for c in here):,} wrong claimed offsets{checked_in}"
        f", {sum(c.anchor.page_claim == 'wrong' for c in here):,} wrong claimed pages"
    )
    if pending == len(here):
        return f"; every claimed offset and page pending ({waiting})."
    return wrong + (f"; {pending:,} pending ({waiting})." if pending else ".")


def chunk_set_notes(doc: Document, policy_name: str) -> None:
    """Under an imported set's chunks: what it holds of ``doc``, and each wrong claimed
    offset with the text it points at beside the text where the chunk really is."""
    chunk_set = offer().get(policy_name)
    if chunk_set is None:
        return
    here = [c for c in chunk_set.chunks if c.anchor.doc_id == doc.doc_id]
    kept = chunk_set.docs.get(doc.doc_id)
    if kept is not None and kept != doc.sha256:
        st.warning(
            f"{md(policy_name)} was anchored in another version of {md(doc.doc_id)} "
            f"(sha256 {kept[:12]}…): import it again against this one."
        )
        return
    if not here:
        held = ", ".join(md(d) for d in chunk_set.docs) or "no document"
        st.info(f"The chunk set {md(policy_name)} holds no chunk of this document ({held}).")
        return
    unplaced = [c for c in here if c.anchor.anchor in NOT_FINE and not _wrong(c)]
    wrong = [c for c in here if _wrong(c)]
    loader = dict(chunk_set.checks.get("extractors") or {}).get(doc.doc_id)
    checked_in = f" (checked in {loader}'s page text)" if loader else ""
    st.caption(
        f"{len(here):,} imported chunks of this document: "
        + ", ".join(
            f"{k} {sum(c.anchor.anchor == k for c in here):,}"
            for k in ("exact", "aligned", "ambiguous", "missing")
        )  # fmt: skip
        + _claims_said(here, checked_in, pending_note(chunk_set))
        + " Ambiguous and missing chunks are not drawn."
    )
    if unplaced or wrong:
        with st.expander(f"{len(unplaced) + len(wrong):,} imported chunk(s) to look at"):
            for chunk in (wrong + unplaced)[:20]:
                a = chunk.anchor
                page = f", page {a.page_claim}" if a.claimed_page is not None else ""
                number = chunk_set.number(chunk)  # as drawn above, not the file's row
                name = f"Chunk {number}" if number else "Not drawn"
                st.markdown(f"**{name}** (row {a.index + 1}; {a.anchor}, claim {a.claim}"
                            f"{page}): {md(a.detail)}")  # fmt: skip
                cells = st.columns(2)
                claimed = chunk.given.claimed_start
                in_ours = loader is None  # a loader's offset is into its page text, not ours
                if (
                    a.claim == "wrong" and in_ours and claimed is not None
                    and 0 <= claimed < len(doc.text)
                ):  # fmt: skip
                    end = min(len(doc.text), claimed + len(chunk.given.text))
                    with cells[0]:
                        where = f"Where it claims to be: chars {claimed:,}-{end:,}"
                        _snippet(doc, claimed, end, where)
                elif a.claim == "wrong" and claimed is not None and claimed >= 0 and loader:
                    with cells[0]:
                        _loader_snippet(doc, loader, chunk, claimed)
                if a.char_start is not None and a.char_end is not None:
                    with cells[1]:
                        _snippet(doc, a.char_start, a.char_end,
                                 f"Where it is: chars {a.char_start:,}-{a.char_end:,}")  # fmt: skip
                elif a.anchor in NOT_FINE:
                    cells[1].caption(f"Its text: {md(chunk.given.text[:300])}")
            if len(unplaced) + len(wrong) > 20:
                st.caption("The first 20 are shown; the Library's audit lists every one.")


def named_splitters() -> dict[str, dict]:
    """Each stored set whose rows name their splitter: ``{set name: what they name}``."""
    return {n: s.checks["splitter"] for n, s in offer().items() if s.checks.get("splitter")}


def _take_splitter(slot: str, named: dict, failed_key: str) -> None:
    """Put the named splitter into ``slot``'s live-policy box with its size and overlap
    (a callback: the widgets take the values on the rerun); a name that cannot be had is
    kept for the page to say in one line."""
    from core.chunk import policy_registry as registry
    from workbench.widgets import controls

    st.session_state.pop(failed_key, None)
    try:
        spec = registry.get(named["policy"])
    except ChunkscopeError as exc:
        st.session_state[failed_key] = str(exc)
        return
    st.session_state[live_policy_widget(slot)] = spec.name
    if named.get("size") is None:
        return
    st.session_state[unit_widget(slot, spec.name)] = spec.unit
    low, high, _ = controls.UNIT_RANGES[spec.unit]
    size = min(max(int(named["size"]), low), high)
    st.session_state[size_widget(slot, spec.name, spec.unit)] = size
    top, _ = controls.overlap_limit(spec.unit, size)
    overlap = min(int(named.get("overlap") or 0), top)
    st.session_state[overlap_widget(slot, spec.name, spec.unit)] = overlap


def splitter_offer(policy_name: str, slot: str) -> None:
    """Under an imported set whose rows name their splitter: run that splitter live in
    this panel (its sliders then move the boundaries the set only photographed)."""
    chunk_set = offer().get(policy_name)
    named = chunk_set.checks.get("splitter") if chunk_set is not None else None
    if not named:
        return
    failed_key = f"{ImportKey.SPLITTER_FAILED}{slot}"
    setting = (
        f" at chunk_size {named['size']:,}, chunk_overlap {named.get('overlap') or 0:,}"
        if named.get("size") is not None
        else ""
    )
    share = "Its rows" if named["rows"] == named["of"] else f"{named['rows']:,} of its rows"
    st.caption(f"{share} name their splitter: {md(named['policy'])}{setting}.")
    st.button(
        "Run its splitter live", key=f"{ImportKey.SPLITTER_TAKE}{slot}",
        icon=":material/play_arrow:", on_click=_take_splitter,
        args=(slot, named, failed_key),
        help="The same splitter on this document's text, its sliders set to the set's "
        "size and overlap; every piece anchored like the imported chunks",
    )  # fmt: skip
    if said := st.session_state.get(failed_key):
        st.error(md(said), icon=":material/error:")
