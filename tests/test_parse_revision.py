"""The canonical text of every sample, format fixture and corpus file is pinned under the
current ``PARSE_REVISION`` (``core/ingest/revision.py``).

Stored records are reused while their document's bytes (sha256) and the parse revision are
unchanged, so a change to ingest that changes any canonical text without bumping the
revision would leave stored spans pointing into a text the document no longer has. When
this test fails: bump ``PARSE_REVISION`` (say why in its history), then regenerate with
``CHUNKSCOPE_UPDATE_GOLDEN=1``; regenerating under an unchanged revision is refused.

The text of a file read by OCR also depends on the engine: the golden file names the
engine it was pinned with and the files it read, and those files are compared only under
the same engine (another Tesseract, or none, recognises other text).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from core.errors import ChunkscopeError
from core.formats import load_document
from core.formats.format_registry import is_supported_name
from core.ingest.ocr import engine_version
from core.ingest.revision import PARSE_REVISION
from tests.conftest import (
    CORPUS,
    PDF_PASSWORDS,
    SAMPLE_DOCS,
    corpus_files,
    openable_pdfs,
    text_corpora,
)

GOLDEN = Path(__file__).parent / "data" / "golden" / "canonical_text.json"
FORMATS = Path(__file__).parent / "data" / "formats"
UPDATE = os.environ.get("CHUNKSCOPE_UPDATE_GOLDEN") == "1"


def _files() -> dict[str, Path]:
    found = [*openable_pdfs(), *corpus_files(CORPUS / "financebench" / "pdfs", "*.pdf")]
    found += text_corpora()
    found += sorted(p for p in SAMPLE_DOCS.rglob("*") if p.is_file() and is_supported_name(p.name))
    found += sorted(p for p in FORMATS.rglob("*") if p.is_file() and is_supported_name(p.name))
    return {p.name: p for p in found}


def _text_digest(path: Path) -> tuple[str, bool]:
    """sha256 of the canonical text (or the error a file meant to be refused gets), and
    whether a page of it was read by OCR."""
    try:
        doc = load_document(path, password=PDF_PASSWORDS.get(path.name))
    except ChunkscopeError as exc:
        return f"refused: {type(exc).__name__}", False
    digest = hashlib.sha256(doc.text.encode("utf-8")).hexdigest()
    return digest, any(p.read_by_ocr for p in doc.pages)


def test_canonical_text_is_pinned_under_the_parse_revision():
    read = {name: _text_digest(path) for name, path in sorted(_files().items())}
    found = {name: digest for name, (digest, _) in read.items()}
    ocr_read = sorted(name for name, (_, by_ocr) in read.items() if by_ocr)
    assert len(found) > 20  # the corpus is there: otherwise this pins nothing
    pinned = json.loads(GOLDEN.read_text(encoding="utf-8")) if GOLDEN.exists() else None
    if UPDATE:
        assert engine_version() is not None, "pin the OCR'd files with the OCR engine installed"
        changed = pinned is not None and any(
            pinned["texts"].get(n, h) != h for n, h in found.items()
        )
        assert not changed or pinned["parse_revision"] < PARSE_REVISION, (
            "canonical text changed under the same PARSE_REVISION: bump it first"
        )
        body = {
            "parse_revision": PARSE_REVISION,
            "texts": found,
            "ocr": {"engine": engine_version(), "files": ocr_read},
        }
        GOLDEN.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return
    assert pinned is not None, f"{GOLDEN} is missing: regenerate with CHUNKSCOPE_UPDATE_GOLDEN=1"
    assert pinned["parse_revision"] == PARSE_REVISION, (
        f"PARSE_REVISION is {PARSE_REVISION} but {GOLDEN.name} pins {pinned['parse_revision']}:"
        " regenerate it with CHUNKSCOPE_UPDATE_GOLDEN=1"
    )
    ocr_pin = pinned.get("ocr", {"engine": None, "files": []})
    if engine_version() != ocr_pin["engine"]:  # other OCR text: compare the rest only
        found = {n: h for n, h in found.items() if n not in ocr_pin["files"]}
    else:
        assert ocr_read == ocr_pin["files"], "other files are read by OCR than were pinned"
    moved = sorted(n for n, h in found.items() if n in pinned["texts"] and pinned["texts"][n] != h)
    assert not moved, (
        f"the canonical text of {', '.join(moved)} changed under PARSE_REVISION "
        f"{PARSE_REVISION}: bump it in core/ingest/revision.py, then regenerate"
    )
