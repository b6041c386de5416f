"""Library: upload documents or use the samples; what each one is, and how long."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.errors import ChunkscopeError
from core.ingest.files import display_name
from core.render.charts import document_lengths_figure, length_percentiles, overflow_share
from workbench.documents import chunk_sets, kept_docs, session
from workbench.frame import roles, sidebar
from workbench.library import uploads
from workbench.state import ImportKey, Key, LibraryKey
from workbench.widgets import wording
from workbench.widgets.wording import md

sidebar.entry("pages/library.py")
GARBLED_HELP = (
    "Blocks (and their characters) whose text is not language: glyphs of a custom-encoded "
    "font, unmapped code points (fast parser)"
)

st.title("Library")
st.caption(
    "Documents to inspect: the bundled samples and every document kept in the store's "
    "library (uploaded in any session, or added by `chunkscope index`). "
    "PDFs keep a character-exact map to their pages; every other format is reflowable: "
    "character offsets, plus cue times for transcripts and raw byte ranges for HTML."
)

files = None
if roles.editing_enabled():
    limit_mb = st.get_option("server.maxUploadSize")
    files = st.file_uploader(
        f"Add documents: {wording.format_labels()} (several at once, up to {limit_mb} MB each)",
        # no type= list: the browser would refuse with a MIME type alone
        help=wording.upload_help(),
        accept_multiple_files=True,
        key=LibraryKey.UPLOADER,
    )
    uploads.read_uploads(files or [])
else:
    roles.viewer_note("add, remove or import documents")

held = {n for f in files or [] for n in (f.name, display_name(f.name))}
for note in st.session_state[Key.NOTES]:  # notes of files still in the uploader only
    if note.name in held:
        show = {"success": st.success, "warning": st.warning, "error": st.error}[note.level]
        show(uploads.note_line(note))
if removed := st.session_state.pop(Key.REMOVED, None):
    st.success(md(removed))

for name in list(st.session_state[Key.PENDING]):
    with st.form(f"password-{name}", border=True):
        password = st.text_input(f"Password for {md(display_name(name))}", type="password")
        if st.form_submit_button("Open", icon=":material/lock_open:"):
            data = st.session_state[Key.PENDING][name]
            uploads.replace_note(uploads.read_upload(name, data, password))
            st.rerun()

for entry in kept_docs.locked_entries():
    with st.form(f"unlock-{entry.sha256}", border=True):
        password = st.text_input(
            f"{md(entry.name)} is kept encrypted: password to open it in this session",
            type="password",
        )
        if st.form_submit_button("Open", icon=":material/lock_open:"):
            try:
                kept_docs.open_entry(entry, password)
                st.rerun()
            except ChunkscopeError as exc:
                st.error(md(exc))

info = session.model_info_or_stop()  # lengths are counted in the model's tokens
rows: list[dict[str, Any]] = session.library_rows()
if not rows:
    st.info("The library is empty: upload a document above.")
    st.stop()
rows = kept_docs.with_garbled(rows, session.library())

st.subheader(f"{len(rows)} documents")
st.dataframe(
    rows,
    hide_index=True,
    column_config={
        "chars": st.column_config.NumberColumn(format="localized"),
        "tokens": st.column_config.NumberColumn(format="localized"),
        "sha256": st.column_config.TextColumn(help="First 12 hex digits of the file's SHA-256"),
        "no text layer": st.column_config.TextColumn(help="Pages without extractable text"),
        "indexed": st.column_config.TextColumn(help="Stored in the chunk store (this version?)"),
        "garbled blocks": st.column_config.NumberColumn(help=GARBLED_HELP),
        "garbled chars": st.column_config.NumberColumn(format="localized", help=GARBLED_HELP),
    },
)
if garbled := [r for r in rows if r["garbled blocks"]]:
    st.caption(
        f"{len(garbled)} document(s) hold garbled text: "
        + ", ".join(f"{md(r['document'])} ({r['garbled blocks']})" for r in garbled[:8])
        + (f" and {len(garbled) - 8} more" if len(garbled) > 8 else "")
        + ". The Parse page marks those blocks: their offsets hold, their words do not."
    )

kept = [e.doc_id for e in kept_docs.kept_entries()]
if kept and roles.editing_enabled():
    with st.expander("Remove a document", icon=":material/delete:"):
        st.caption(
            "Removes every kept version of it, its chunks in every collection of the index "
            "and its cached results, for every session; its citations then report it gone."
        )
        chosen = st.session_state.get(Key.DOC)
        gone = st.selectbox(
            "Document to remove",
            kept,
            index=kept.index(chosen) if chosen in kept else None,  # the sidebar's document
            key=LibraryKey.REMOVE_PICK,
        )
        if st.button("Remove", disabled=gone is None, key=LibraryKey.REMOVE_GO):
            try:
                if (removal := kept_docs.remove(str(gone))) is not None:
                    st.session_state[Key.REMOVED] = (
                        f"{removal.doc_id} removed: {len(removal.versions)} kept version(s), "
                        f"{removal.records:,} chunk record(s)"
                    )
                    st.rerun()
            except ChunkscopeError as exc:
                st.error(md(exc))

if roles.editing_enabled():
    # keyed: stays open when a claim check's end reruns the page
    with st.expander("Import chunks", icon=":material/input:", key=ImportKey.OPEN):
        chunk_sets.import_form()
elif chunk_sets.offer():  # a viewer reads the audit of the sets already imported
    with st.expander("Imported chunk sets", icon=":material/input:"):
        chunk_sets.sets_audit()

lengths = [int(r["tokens"]) for r in rows]
stats = length_percentiles(lengths)
cols = st.columns(4)
cols[0].metric("Median length", f"{stats['p50']:,.0f} tokens")
cols[1].metric("90th percentile", f"{stats['p90']:,.0f} tokens")
cols[2].metric(
    "One late pass",
    f"{info.whole_doc_tokens} tokens",
    help=f"A chunk alone is cut at {info.text_tokens} tokens",
)
cols[3].metric("Too long for one pass", f"{overflow_share(lengths, info.whole_doc_tokens):.0%}")
if blank := lengths.count(0):
    st.caption(f"{blank} document(s) without text (no text layer) are left out of these numbers.")
st.plotly_chart(
    document_lengths_figure(
        [str(r["document"]) for r in rows],
        lengths,
        info.whole_doc_tokens,
        chunk_window_tokens=info.text_tokens,
    ),
    config={"displayModeBar": False},
)
st.caption(
    f"Late chunking encodes a document of up to {info.whole_doc_tokens} tokens (the model's "
    f"positions) in one pass, so every chunk sees all of it; longer documents run in "
    f"overlapping {info.text_tokens}-token windows and a chunk sees only its window."
)
