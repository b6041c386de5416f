"""Argument groups shared by the commands that load one file and chunk it, the check of
an output path that runs before any work, and the loading of many files in which each
bad file costs one line, not the run."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from core.chunk import policy_from_args
from core.chunk import policy_registry as registry
from core.chunk.live_names import PER_PAGE, parse_param
from core.cli.one_line import error_line
from core.errors import ChunkscopeError
from core.formats import load_document
from core.formats.format_registry import describe_formats
from core.ingest.ocr import ENV_OCR, OCR_POLICIES, policy_override


def add_file_and_policy_options(parser: argparse.ArgumentParser) -> None:
    """``FILE``, ``--password``, the policy arguments (``--policy`` required) and
    ``--parser``: what ``chunk`` and ``embed`` need to reproduce the same chunk spans."""
    parser.add_argument("file", metavar="FILE", help="a document: " + describe_formats())
    parser.add_argument("--password", help="password of an encrypted PDF")
    add_policy_arguments(parser, default=None, required=True)
    parser.add_argument(
        "--parser", choices=("fast", "layout"), default="fast", help="block parser (fast)"
    )


def add_policy_arguments(
    parser: argparse.ArgumentParser, *, default: str | None, required: bool = False
) -> None:
    """``--policy`` (a registered policy; without ``default``, ``query`` takes the one the
    index holds), ``--size``, ``--overlap``, ``--unit`` and one flag per policy option, all
    read from the policy registry (``core.chunk.policy_registry``). An unknown name is refused by
    ``policy_of`` with the registry's one-line message."""
    names = registry.policy_names()
    if default is not None:
        note = f"default {default}"
    else:
        note = "required" if required else "default: the policy the index holds"
    units = "; ".join(
        f"{s.name} {s.unit}" + "".join(f" or {u}" for u in s.units if u != s.unit)
        for s in registry.all_policies()
    )
    parser.add_argument(
        "--policy", default=default, required=required, metavar="{" + ",".join(names) + "}",
        help=f"chunking policy ({note}): "
        + "; ".join(f"{s.name}, {s.summary}" for s in registry.all_policies()),
    )  # fmt: skip
    parser.add_argument("--size", type=int, help="chunk size in --unit (default per policy)")
    parser.add_argument("--overlap", type=int, help="overlap in --unit (default per policy)")
    parser.add_argument(
        "--unit", choices=registry.all_units(),
        help=f"unit of --size/--overlap (default first: {units})",
    )  # fmt: skip
    add_policy_option_flags(parser)
    add_live_policy_arguments(parser)


def add_live_policy_arguments(parser: argparse.ArgumentParser) -> None:
    """``--param KEY=VALUE`` and ``--per-page`` for a splitter of the user's own
    (``--policy langchain:CLASS``, ``llamaindex:CLASS``, ``chonkie:CLASS``,
    ``py:package.module:factory``; ``core.imported.live``)."""
    parser.add_argument(
        "--param", action="append", default=[], metavar="KEY=VALUE",
        help="a parameter of your splitter (--policy langchain:CLASS, llamaindex:CLASS, "
        "chonkie:CLASS or py:package.module:factory), repeatable; a Python literal or a word",
    )  # fmt: skip
    parser.add_argument(
        "--per-page",
        action="store_true",
        help="run your splitter page by page, as a per-page loader feeds it",
    )


def live_params(args: argparse.Namespace) -> dict[str, object]:
    """The ``--param`` and ``--per-page`` given, as a live policy's parameters."""
    params = dict(parse_param(item) for item in getattr(args, "param", None) or [])
    if getattr(args, "per_page", False):
        params[PER_PAGE] = True
    return params


def add_policy_option_flags(parser: argparse.ArgumentParser) -> None:
    """One ``store_true`` flag per policy option, saying which policies take it."""
    for option in registry.OPTIONS:
        takers = " or ".join(registry.accepting(option.name))
        parser.add_argument(
            option.flag, dest=option.name, action="store_true",
            help=f"{takers} (key suffix -{option.suffix}): {option.help}",
        )  # fmt: skip


def add_ocr_argument(parser: argparse.ArgumentParser) -> None:
    """``--ocr auto|always|never``: which PDF pages are read by OCR (``core.ingest.ocr``)."""
    parser.add_argument(
        "--ocr", choices=OCR_POLICIES, default=None,
        help="read PDF pages by OCR (Tesseract): auto, the pages without a text layer "
        f"(default, or ${ENV_OCR}); always, every page from its image; never",
    )  # fmt: skip


def ocr_argument(args: argparse.Namespace) -> AbstractContextManager[None]:
    """The ``--ocr`` given on the command line, in force inside a ``with``."""
    return policy_override(getattr(args, "ocr", None))


def policy_of(args: argparse.Namespace) -> Any:
    """The ``ChunkPolicy`` the policy arguments ask for (``PolicyError``: one line)."""
    options = {o.name: bool(getattr(args, o.name, False)) for o in registry.OPTIONS}
    return policy_from_args(
        args.policy, args.size, args.overlap, args.unit, params=live_params(args), **options
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


def load_each(paths: Sequence[Path], **options: Any) -> tuple[list[Any], list[str]]:
    """Load every file, one ``error:`` line on stderr for each that fails; return the
    documents and the failures' messages (a bad file never ends a run over many)."""
    docs, failures = [], []
    for path in paths:
        try:
            docs.append(load_document(path, **options))
        except ChunkscopeError as exc:
            failures.append(str(exc))
            print(error_line(exc), file=sys.stderr)
    return docs, failures


def failed_files_line(failures: Sequence[str], total: int) -> str:
    """The closing line of a run in which some files failed (the exit status is 2)."""
    return f"{len(failures)} of {total} files could not be read (see the lines above)"
