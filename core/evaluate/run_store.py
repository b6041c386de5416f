"""The store's runs: one folder the command line and the workbench both keep runs in.

Every run ``eval`` and ``import-run`` make, and every run the workbench's Evaluate page
makes, is saved as ``runs/RUN_ID.json`` in the store folder (``runs_folder``), beside the
index and the imported chunk sets; for a Chroma server the folder is beside the triage
file (``core.config.store_folder``). Evaluate lists the folder's runs newest first
(``run_files``), so a run made on the command line is open in the workbench at once.
"""

from __future__ import annotations

import os
from pathlib import Path

from core.config import store_folder
from core.evaluate.run_file import EvalRun, save_run

RUNS_DIRNAME = "runs"


def runs_folder(store: str | Path | None = None) -> Path:
    """``runs/`` in the store folder ``store``; without one (the default store, or a Chroma
    server), in ``$CHUNKSCOPE_STORE`` or ``./.chunkscope``."""
    if store is not None and str(store).strip():
        return Path(str(store).strip()).expanduser().resolve() / RUNS_DIRNAME
    return store_folder() / RUNS_DIRNAME


def keep_run(run: EvalRun, folder: Path) -> Path:
    """Save ``run`` in the runs ``folder`` as ``RUN_ID.json`` (replacing the same run),
    written aside and moved in, so a page listing the folder never reads half a run."""
    path = folder / f"{run.run_id}.json"
    partial = save_run(run, folder / f".{run.run_id}.json.{os.getpid()}.part")
    partial.replace(path)
    return path


def run_files(folder: Path) -> list[Path]:
    """The runs kept in ``folder``, newest first (none when it does not exist)."""
    if not folder.is_dir():
        return []
    return sorted(folder.glob("run-*.json"), key=lambda p: -p.stat().st_mtime)
