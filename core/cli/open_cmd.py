"""``chunkscope open RUN.json``: the workbench started on a run's first failure.

The run is kept in the store's ``runs/`` folder (``core.evaluate.run_store``), then
``streamlit run app.py`` (the app ``chunkscope ui`` serves: the checkout's, else the
installed copy, its settings passed as flags: ``core.cli.ui_cmd``) starts with
``CHUNKSCOPE_OPEN_RUN`` set to its id (and ``CHUNKSCOPE_STORE`` to ``--store`` when
given): each new browser session lands on Evaluate at ``?run=RUN_ID``, the run picked and
the failure reader on its first failure.
``--docs`` keeps the run's documents (those of its corpus, matched by id and sha256) in
the store's library, where the workbench reads them: the reader then shows each failure's
gold on its page, its full-depth ranks and its repairs. A run over an imported chunk set
(``import-run``) brings that set along, so the workbench chunks its documents as the run
did. ``--dry-run`` prints the command and the address, and starts nothing.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from core.cli.app_files import app_path, config_flags
from core.cli.options import expand_docs
from core.errors import LabelError
from core.evaluate import EvalRun, load_run
from core.evaluate.run_store import keep_run, runs_folder
from core.formats.loading import doc_id_for, sha256_of
from core.imported.chunkset import FOLDER_NAME as CHUNKSETS
from core.ingest.files import display_name, read_source
from core.library import Library
from core.settings import OPEN_RUN, STORE


@dataclass(frozen=True, slots=True)
class Launch:
    """What ``open`` runs: the command, the variables it adds, the page it lands on."""

    run_id: str
    kept: Path
    argv: tuple[str, ...]
    env: dict[str, str]
    url: str
    kept_docs: tuple[str, ...] = ()
    missing_docs: tuple[str, ...] = ()
    chunk_set: str = ""  # the imported chunk set the run's chunks came from, kept beside it


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "open",
        help="start the workbench on a saved run's first failure",
        description="Keep RUN.json in the store's runs/ folder and start the workbench "
        "(streamlit run app.py) on it: Evaluate, that run, its first failure.",
    )
    parser.add_argument("run", metavar="RUN.json", help="a run written by eval or import-run")
    parser.add_argument("--store", metavar="DIR", help="store folder (default: the default store)")
    parser.add_argument("--port", type=int, default=8501, help="the workbench's port")
    parser.add_argument(
        "--docs", nargs="+", metavar="PATH",
        help="the run's documents, or folders of them: kept in the store's library so the "
        "reader shows each failure on its page",
    )  # fmt: skip
    parser.add_argument(
        "--dry-run", action="store_true", help="print the command and address; start nothing"
    )
    parser.set_defaults(func=run)


def keep_documents(run: EvalRun, paths: list[Path], library: Library) -> list[str]:
    """Keep in ``library`` the files among ``paths`` that are documents of ``run`` (same
    id, same sha256, as ``load_document`` names and hashes them); returns their ids. Only
    the bytes are read: no file is parsed, and other files are left out."""
    kept = []
    for path in paths:
        data = read_source(path, str(path))
        doc_id, digest = doc_id_for(display_name(path.name)), sha256_of(data)
        if run.corpus.get(doc_id) == digest:
            library.add(data, name=path.name, doc_id=doc_id, sha256=digest)
            kept.append(doc_id)
    return kept


def keep_chunk_set(run: EvalRun, target: Path) -> str:
    """The run's imported chunk set (its policy is one: ``import-run`` and ``eval`` over an
    imported set), copied from the store the command line uses into the ``target`` store
    folder, where the workbench registers it as a policy and chunks the run's documents
    as the run did; its name, or '' when the run's policy is no set held there."""
    name = str(run.policy.get("name", ""))
    source = runs_folder(None).parent / CHUNKSETS / f"{name}.json"
    copy = target / CHUNKSETS / source.name
    if not name or not source.is_file():
        return ""
    data = source.read_bytes()
    if not copy.exists():
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(data)
    elif copy.read_bytes() != data:  # (the same file when the store is the command line's)
        raise LabelError(
            f"{copy} is another chunk set of the name {name}: the run's is {source}; open the "
            "run from the store that imported it, or give --store a store without that set"
        )
    return name


def launch(
    run_path: str | Path,
    *,
    store: str | None = None,
    port: int = 8501,
    docs: list[str] | None = None,
) -> Launch:
    """Keep the run (and ``docs``, the run's documents among them) in the store and build
    the command that opens it (nothing started)."""
    if not 0 < port < 65536:
        raise LabelError(f"--port {port} is not a port number (1-65535)")
    app = app_path()
    saved = load_run(run_path)
    folder = runs_folder(store)
    chunk_set = keep_chunk_set(saved, folder.parent)  # first: it may refuse, keeping nothing
    kept = folder / f"{saved.run_id}.json"
    if Path(run_path).resolve() != kept.resolve():  # already kept: never written over, as
        kept = keep_run(saved, folder)  # an import-run adding its methods may rewrite it
    found = (
        keep_documents(saved, expand_docs(docs), Library.in_folder(kept.parent.parent / "library"))
        if docs
        else []
    )
    missing = tuple(sorted(set(saved.corpus) - set(found))) if docs else ()
    env = {OPEN_RUN.name: saved.run_id}
    if store is not None:
        env[STORE.name] = str(kept.parent.parent)
    argv = (sys.executable, "-m", "streamlit", "run", str(app), *config_flags(app),
            "--server.port", str(port))  # fmt: skip
    url = f"http://localhost:{port}/evaluate?run={saved.run_id}"
    return Launch(run_id=saved.run_id, kept=kept, argv=argv, env=env, url=url,
                  kept_docs=tuple(found), missing_docs=missing, chunk_set=chunk_set)  # fmt: skip


def run(args: argparse.Namespace) -> int:
    found = launch(args.run, store=args.store, port=args.port, docs=args.docs)
    print(f"kept {found.run_id} in {found.kept.parent}; the workbench opens it at {found.url}",
          file=sys.stderr)  # fmt: skip
    if args.docs:
        total = len(found.kept_docs) + len(found.missing_docs)
        missing = (
            f"; not among --docs: {', '.join(found.missing_docs)}" if found.missing_docs else ""
        )
        print(f"kept {len(found.kept_docs)} of the run's {total} documents in the store's "
              f"library{missing}", file=sys.stderr)  # fmt: skip
    if found.chunk_set:
        print(f"its chunks are the imported set {found.chunk_set}, kept in the store too",
              file=sys.stderr)  # fmt: skip
    if args.dry_run:
        assigned = " ".join(f"{k}={shlex.quote(v)}" for k, v in found.env.items())
        print(f"{assigned} {shlex.join(found.argv)}")
        return 0
    return subprocess.call(list(found.argv), env=os.environ | found.env)
