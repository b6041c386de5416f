"""Argument groups shared by the commands that load one file and chunk it, and the
check of an output path that runs before any work."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from core.errors import ChunkscopeError
from core.ingest.formats import describe_formats


def add_file_and_policy_options(parser: argparse.ArgumentParser) -> None:
    """``FILE``, ``--password``, ``--policy``, ``--size``, ``--overlap``, ``--unit``,
    ``--parser``: what ``chunk`` and ``embed`` need to reproduce the same chunk spans."""
    parser.add_argument("file", metavar="FILE", help="a document: " + describe_formats())
    parser.add_argument("--password", help="password of an encrypted PDF")
    parser.add_argument(
        "--policy", required=True, choices=("fixed", "sentence", "structure"), help="policy"
    )
    parser.add_argument("--size", type=int, help="chunk size in --unit (default per policy)")
    parser.add_argument("--overlap", type=int, help="overlap in --unit (default per policy)")
    parser.add_argument(
        "--unit",
        choices=("chars", "tokens", "sentences"),
        help="unit of --size/--overlap (default: chars; sentence: sentences; structure: tokens)",
    )
    parser.add_argument(
        "--parser", choices=("fast", "layout"), default="fast", help="block parser (fast)"
    )


def check_out(path: str | os.PathLike[str] | None) -> None:
    """Refuse an ``--out`` that cannot be written before the work that fills it starts
    (an evaluation of the shared set runs for minutes). Nothing is created here."""
    if path is None:
        return
    file = Path(path)
    if file.is_dir():
        raise ChunkscopeError(f"--out {file} is a folder: name a file")
    folder = file.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent  # the nearest existing folder: the rest gets created
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise ChunkscopeError(
            f"cannot write --out {file}: {folder} is not a writable folder; pass another path"
        )
