"""Shared fixtures. No test may reach the network: any connection to a non-loopback
address fails the test that made it."""

from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("CHUNKSCOPE_SHARED", ROOT.parent / "shared"))
CORPUS = SHARED / "corpus"
PDF_DIR = CORPUS / "pdfs"
EVAL_DIR = CORPUS / "chunking_evaluation"
TEXT_CORPORA = EVAL_DIR / "corpora"
SAMPLE_DOCS = ROOT / "sample_docs"

# Files of the shared corpus that must fail to open, with the error type's name.
BAD_PDFS = {
    "plumber_empty.pdf": "EmptyFileError",
    "ocrmypdf_invalid.pdf": "NotAPdfError",
    "pypdfsf_unreadablemetadata.pdf": "ZeroPagesError",
}
PDF_PASSWORDS = {
    "crazyones-encrypted-256.pdf": "password",
    "pypdfsf_lo-writer-password.pdf": "openpassword",
}


def openable_pdfs() -> list[Path]:
    return sorted(p for p in PDF_DIR.glob("*.pdf") if p.name not in BAD_PDFS)


def text_corpora() -> list[Path]:
    return sorted(TEXT_CORPORA.glob("*.md"))


class NetworkAccessError(RuntimeError):
    pass


def _is_loopback(address: object) -> bool:
    if not (isinstance(address, tuple) and address):
        return isinstance(address, (str, bytes))  # an AF_UNIX path is local
    host = str(address[0])
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host.split("%")[0]).is_loopback
    except ValueError:
        return False


@pytest.fixture(autouse=True)
def _editors_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key exported in the shell would make every workbench session a viewer; the
    tests of roles set one themselves."""
    monkeypatch.delenv("CHUNKSCOPE_EDITOR_KEY", raising=False)


@pytest.fixture(autouse=True)
def _store_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``eval`` and ``import-run`` keep every run in the store's ``runs/``: a test's runs go
    to its own folder, never to the working folder's ``.chunkscope``; tests of the default
    store unset it themselves."""
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "default-store"))


@pytest.fixture(autouse=True)
def _no_shared_vector_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake encoders share names across tests: no test reads another's vectors from the
    on-disk default cache (``core.embed.cache.shared_cache``); its own tests set a folder."""
    monkeypatch.setenv("CHUNKSCOPE_VECTOR_CACHE", "off")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guarded_connect(self: socket.socket, address: object) -> object:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise NetworkAccessError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    def guarded_connect_ex(self: socket.socket, address: object) -> object:
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address):
            raise NetworkAccessError(f"test tried to reach the network: {address!r}")
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", guarded_connect_ex)


# Tiers by module, so `make test-fast` can leave out what is slow by nature: Ray clusters,
# hostile files built to take the limits' full time and memory, whole workbench pages run
# under AppTest, and sweeps of every page of every corpus file (the compiled reader and
# the table finder against their references, every policy on every file, the benchmark's
# own cases). `make test` runs every tier.
TIER_MODULES = {
    "ray": ("test_scale.py", "test_scale_cluster.py", "test_scale_workbench.py"),
    "corpus": (
        "test_bench.py",
        "test_stext_native.py",
        "test_tables_ruled.py",
        "test_chunk_corpus.py",
        "test_parse_revision.py",
        "test_ocr_corpus.py",
        "test_margin_labels_crowded.py",
    ),  # fmt: skip
    "hostile": (
        "test_hostile_app.py",
        "test_hostile_cli.py",
        "test_hostile_files.py",
        "test_hostile_ingest.py",
    ),  # fmt: skip
}


# Single tests of the same nature in modules that are otherwise quick.
TIER_TESTS = {
    "test_a_zip_bomb_is_refused_before_it_is_read": "hostile",
    "test_killed_run_then_rerun_ends_with_exact_records": "hostile",
    "test_block_invariants_of_the_other_parsers": "corpus",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if tier := TIER_TESTS.get(getattr(item, "originalname", item.name)):
            item.add_marker(getattr(pytest.mark, tier))
        name = Path(str(item.fspath)).name
        for tier, modules in TIER_MODULES.items():
            if name in modules:
                item.add_marker(getattr(pytest.mark, tier))
        if name.startswith("test_app_"):
            item.add_marker(pytest.mark.app)
