"""The library: source bytes kept beside the index, in a folder or a Chroma collection,
and ``chunkscope library list|remove`` (with ``index`` adding to it)."""

from __future__ import annotations

import itertools
import json

import pytest
from conftest import PDF_DIR
from fakes import FakeEncoder, fake_embed_chunks

import core.embed
import core.library
import core.methods.embedding
from core.cli import main
from core.errors import LibraryError
from core.formats import load_document, sha256_of
from core.library import Library, LibraryEntry, remove_document
from core.store import ChunkStore

PUMP_V1 = b"# Pump\n\nThe unit stops at 90 degrees.\n"
PUMP_V2 = b"# Pump\n\nThe unit stops at 95 degrees.\n"
FIXED = ["--policy", "fixed", "--size", "100", "--overlap", "0", "--methods", "naive"]


def _clock():
    ticks = itertools.count()
    return lambda: f"2026-01-01T00:00:{next(ticks):02d}+00:00"


@pytest.fixture(params=["folder", "chroma"])
def library(request, tmp_path) -> Library:
    if request.param == "folder":
        return Library(core.library._FolderBackend(tmp_path / "library"), clock=_clock())
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(
        path=str(tmp_path / "chroma"), settings=Settings(anonymized_telemetry=False)
    )
    return Library(core.library._ChromaBackend(client, "test"), clock=_clock())


def _add(library: Library, data: bytes, name: str = "pump.md") -> LibraryEntry:
    return library.add(data, name=name, doc_id="pump", sha256=sha256_of(data))


def test_add_read_replace_and_remove(library):
    first = _add(library, PUMP_V1)
    assert library.read(first) == PUMP_V1
    assert first.size_bytes == len(PUMP_V1) and not first.encrypted
    second = _add(library, PUMP_V2)
    assert [e.sha256 for e in library.current()] == [second.sha256]
    assert [e.sha256 for e in library.history("pump")] == [second.sha256, first.sha256]
    assert library.find("pump") == second
    assert library.find("pump", first.sha256) == first  # the old bytes stay readable
    assert library.read(library.find("pump", first.sha256)) == PUMP_V1
    again = _add(library, PUMP_V1)  # re-adding old bytes makes them current again
    assert library.find("pump").sha256 == first.sha256 and again.added_at > second.added_at
    assert {e.sha256 for e in library.remove("pump")} == {first.sha256, second.sha256}
    assert library.versions() == [] and library.find("pump") is None


def test_bytes_that_do_not_match_their_hash_are_refused(library):
    with pytest.raises(LibraryError, match="do not match sha256"):
        library.add(PUMP_V1, name="pump.md", doc_id="pump", sha256=sha256_of(PUMP_V2))


def test_large_files_travel_in_parts(library, monkeypatch):
    monkeypatch.setattr(core.library, "PART_BYTES", 1000)
    data = bytes(range(256)) * 70  # 17,920 bytes: 18 parts of 1,000
    entry = _add(library, data, "blob.txt")
    assert library.read(entry) == data


def test_an_encrypted_pdf_is_kept_as_it_came(library):
    path = PDF_DIR / "crazyones-encrypted-256.pdf"
    data = path.read_bytes()
    entry = library.add(data, name=path.name, doc_id="crazy", sha256=sha256_of(data))
    assert entry.encrypted and library.read(entry) == data
    assert b"password" not in json.dumps(entry.to_dict()).encode().lower()


def test_damaged_bytes_are_reported_not_served(tmp_path):
    library = Library.in_folder(tmp_path / "lib")
    entry = _add(library, PUMP_V1)
    (tmp_path / "lib" / f"{entry.sha256}.bin").write_bytes(b"other")
    with pytest.raises(LibraryError, match="missing or damaged"):
        library.read(entry)


@pytest.fixture()
def fake_model(monkeypatch):
    monkeypatch.setattr(core.embed, "load_encoder", lambda *a, **k: FakeEncoder())
    monkeypatch.setattr(core.methods.embedding, "embed_chunks", fake_embed_chunks)


def cli(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_index_adds_and_remove_drops_everywhere(fake_model, tmp_path, capsys):
    docs, store = tmp_path / "docs", tmp_path / "store"
    docs.mkdir()
    (docs / "pump.md").write_bytes(PUMP_V1)
    assert cli(capsys, "index", docs, *FIXED, "--store", store)[0] == 0
    (docs / "pump.md").write_bytes(PUMP_V2)  # a changed version replaces the current one
    assert cli(capsys, "index", docs, *FIXED, "--store", store)[0] == 0
    rc, out, _ = cli(capsys, "library", "list", "--store", store, "--all", "--json")
    listed = json.loads(out)
    assert rc == 0 and listed["where"] == str(store / "library")
    rows = [(r["doc_id"], r["sha256"], r["current"]) for r in listed["documents"]]
    assert rows == [("pump", sha256_of(PUMP_V2), True), ("pump", sha256_of(PUMP_V1), False)]
    rc, out, _ = cli(capsys, "library", "list", "--store", store)
    assert out.splitlines()[-1] == f"1 document version(s) in {store / 'library'}"
    rc, out, _ = cli(capsys, "library", "remove", "pump", "--store", store, "--json")
    removed = json.loads(out)
    assert rc == 0 and len(removed["versions"]) == 2 and removed["records"] >= 1
    opened = ChunkStore.open(store)
    assert opened.indexed_documents() == [] and Library.of_store(opened).versions() == []
    rc, _, err = cli(capsys, "library", "remove", "pump", "--store", store)
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("error: no document 'pump' in the library or the index")


def test_remove_document_drops_records_of_every_collection(tmp_path):
    from fakes import paragraph_chunks

    from core.provenance.types import ChunkPolicy

    store = ChunkStore.open(tmp_path / "store")
    doc = load_document(PUMP_V1, name="pump.md")
    Library.of_store(store).add(PUMP_V1, name="pump.md", doc_id="pump", sha256=doc.sha256)
    policy = ChunkPolicy(name="fixed", size=100, overlap=0)
    chunks = paragraph_chunks(doc, policy)
    for method in ("naive", "late"):
        vectors = fake_embed_chunks(doc, chunks, method, FakeEncoder())
        store.upsert_document(doc, chunks, vectors, model="m", method=method, policy=policy)
    removal = remove_document(store, "pump")
    assert removal.records == 2 * len(chunks) and len(removal.versions) == 1
    assert store.count(model="m", method="late", policy=policy) == 0
