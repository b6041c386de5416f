"""Shared fixtures. No test may reach the network: any connection to a non-loopback
address fails the test that made it."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

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


SOURCES = CORPUS / "SOURCES.md"


def _listed(name: str) -> bool:
    """Whether the corpus's SOURCES.md names ``name`` (False when there is no SOURCES.md)."""
    return SOURCES.is_file() and name in SOURCES.read_text(encoding="utf-8")


def _missing(what: str) -> str:
    return (
        f"the shared corpus lacks {what}: set CHUNKSCOPE_SHARED to the folder that holds "
        f"corpus/ (now {SHARED}; see corpus/SOURCES.md)"
    )


def need_corpus(path: Path) -> Path:
    """``path``, a file or folder of the shared corpus, when it is there.

    A missing one fails the test in one line naming ``CHUNKSCOPE_SHARED``: a test that
    reads the corpus never passes, or is skipped, because the corpus is not where it looks.
    The one exception is a file that this copy of the corpus does not describe (its
    SOURCES.md does not name it, the full corpus has it: the pdf.js paper, the other
    FinanceBench filings): that test is skipped, with the reason.
    """
    if path.exists():
        return path
    if SOURCES.is_file() and not _listed(path.name):
        pytest.skip(f"{path.name} is not in this copy of the shared corpus (SOURCES.md)")
    pytest.fail(_missing(str(path)), pytrace=False)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Without the shared corpus (no ``corpus/SOURCES.md`` under ``CHUNKSCOPE_SHARED``) the
    run stops at once, in one line, rather than failing test by test."""
    if not SOURCES.is_file():
        pytest.exit(_missing(str(SOURCES)), returncode=1)


def corpus_files(folder: Path, pattern: str) -> list[Path]:
    """The files of ``folder`` that match ``pattern``, sorted; never an empty list (a test
    over no files would pass having checked nothing): fails as ``need_corpus`` does.
    Called at collection, a failure here is a collection error of the test module."""
    found = sorted(need_corpus(folder).glob(pattern))
    if not found:
        pytest.fail(_missing(f"{folder / pattern}"), pytrace=False)
    return found


def openable_pdfs() -> list[Path]:
    return [p for p in corpus_files(PDF_DIR, "*.pdf") if p.name not in BAD_PDFS]


def text_corpora() -> list[Path]:
    return corpus_files(TEXT_CORPORA, "*.md")


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


@pytest.fixture(autouse=True, scope="session")
def _nothing_kept_in_the_working_folder(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[None]:
    """No test keeps anything in the working folder's ``.chunkscope``, which every run and
    every parallel worker would share: the default store (the triage tags of a command
    given no ``--db``, a page's runs) is a folder of this process's own, and there is no
    on-disk vector cache (fake encoders share names: no test may read another's vectors;
    the cache's own tests set a folder). For the whole session, so that module fixtures,
    which are set up before any test's own fixtures, keep nothing there either. Tests of
    the default location unset ``CHUNKSCOPE_STORE`` themselves."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CHUNKSCOPE_STORE", str(tmp_path_factory.mktemp("default-store")))
        patch.setenv("CHUNKSCOPE_VECTOR_CACHE", "off")
        yield


@pytest.fixture(autouse=True, scope="session")
def _default_model_loaded_once() -> Iterator[None]:
    """Each test process loads the default model's weights once, on first use: every
    encoder of it (the test helpers', a command's, a page's) shares them, as they are only
    read. Other folders (the tiny test models, broken copies) and deterministic loads, which
    switch torch's algorithms as they load, load as they always do."""
    from core.embed import encoder as encoder_module
    from core.model.paths import default_model_dir

    real = encoder_module._weights_loader
    default = default_model_dir().resolve()
    shared: dict[str, Any] = {}

    def loader(model_dir: Path, *, deterministic: bool) -> Callable[[str], Any]:
        load = real(model_dir, deterministic=deterministic)
        if deterministic or Path(model_dir).resolve() != default:
            return load

        def once(device: str) -> Any:
            if device not in shared:
                shared[device] = load(device)
            return shared[device]

        return once

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(encoder_module, "_weights_loader", loader)
        yield


@pytest.fixture(autouse=True)
def _store_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``eval`` and ``import-run`` keep every run in the store's ``runs/``: each test's runs go
    to a folder of its own, never to the working folder's ``.chunkscope``; tests of the default
    store unset it themselves."""
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "default-store"))


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
