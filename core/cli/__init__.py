"""``chunkscope`` command line. Each command lives in its own module with two functions:

``register(subparsers)`` adds its sub-parser and sets ``func``; ``func(args) -> int`` runs it.
Heavy imports (torch, chromadb) stay inside the command functions so ``--help`` is instant.
``COMMAND_MODULES`` below lists the commands in the order ``chunkscope --help`` shows.

Modules:

- ``parse_cmd``: ``chunkscope parse``: one file's typed blocks;
- ``chunk_cmd``: ``chunkscope chunk``: one file's chunks under a policy;
- ``export_cmd``: ``chunkscope export``: chunks as LangChain or LlamaIndex JSONL;
- ``embed_cmd``: ``chunkscope embed``: one file's chunks embedded;
- ``index_cmd``: ``chunkscope index``: files chunked, embedded and stored;
- ``library_cmd``: ``chunkscope library``: the documents whose bytes the store keeps;
- ``query_cmd``: ``chunkscope query``: stored chunks ranked under methods side by side;
- ``import_cmd``: ``chunkscope import-chunking-eval`` and ``import-qa``: labelled sets;
- ``import_chunks_cmd``: ``chunkscope import-chunks``: a pipeline's chunks, anchored;
- ``import_run_cmd``: ``chunkscope import-run``: a retriever's log as a run;
- ``eval_cmd``: ``chunkscope eval``: a labelled query set scored per method;
- ``sweep_cmd``: ``chunkscope sweep``: every cell of a policy and method grid;
- ``check_cmd``: ``chunkscope check``: the regression gate for CI;
- ``triage_cmd``: ``chunkscope triage``: a saved run's failures sampled, tagged, exported;
- ``diagnose_cmd``: ``chunkscope diagnose``: why each failure of a saved run failed;
- ``open_cmd``: ``chunkscope open``: the workbench started on a saved run's first failure;
- ``bench_cmd``: ``chunkscope bench``: the benchmark;
- ``ui_cmd``: ``chunkscope ui``: the workbench started where Chunkscope is installed;
- ``one_line``: the parser and terminal that keep errors and output to their lines;
- ``app_files``: where the workbench's ``app.py`` and settings are (``ui`` and ``open``);
- ``options``: what the commands share: argument groups, the parsing of ``--methods``,
  ``--k`` and ``--docs``, the model a run loads, the one ``EvalConfig`` of a run's flags,
  output-path checks, bulk loading;
- ``run_table``: a run as the commands print it: tables, ``--json`` and ``--out``;
- ``progress``: a one-line progress bar on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import sys

from core.cli.one_line import (
    OneLineParser,
    SafeTerminal,
    add_limit_arguments,
    error_line,
    limit_arguments,
)
from core.cli.options import add_ocr_argument, ocr_argument
from core.config import resolve_store
from core.errors import ChunkscopeError
from core.imported.chunkset import register_chunk_sets, sets_folder
from core.registry import plugins

# Order here is the order in `chunkscope --help`.
COMMAND_MODULES: tuple[str, ...] = (
    "core.cli.parse_cmd",
    "core.cli.chunk_cmd",
    "core.cli.export_cmd",
    "core.cli.embed_cmd",
    "core.cli.index_cmd",
    "core.cli.library_cmd",
    "core.cli.query_cmd",
    "core.cli.import_cmd",
    "core.cli.import_chunks_cmd",
    "core.cli.import_run_cmd",
    "core.cli.eval_cmd",
    "core.cli.sweep_cmd",
    "core.cli.check_cmd",
    "core.cli.triage_cmd",
    "core.cli.diagnose_cmd",
    "core.cli.open_cmd",
    "core.cli.bench_cmd",
    "core.cli.ui_cmd",
)
# Commands that read documents take the --max-* flags of core.ingest.limits.
LIMITED_COMMANDS: tuple[str, ...] = (
    "parse", "chunk", "export", "embed", "index", "eval", "sweep", "check",
)  # fmt: skip
# Commands that read PDFs take --ocr (core.ingest.ocr).
OCR_COMMANDS: tuple[str, ...] = (*LIMITED_COMMANDS, "import-qa", "import-chunks", "import-run")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="chunkscope",
        description="Inspect chunking, provenance and late chunking on real documents.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    for name in LIMITED_COMMANDS:
        add_limit_arguments(subparsers.choices[name])
    for name in OCR_COMMANDS:
        add_ocr_argument(subparsers.choices[name])
    parser.epilog = plugins_epilog()
    return parser


def plugins_epilog() -> str | None:
    """The installed plugins (``core.registry``: entry points of the chunkscope.policies,
    .methods and .formats groups), each with its package, for ``chunkscope --help``."""
    found = plugins()
    if not found:
        return None
    parts = []
    for plugin in found:
        what = ", ".join(plugin.entries) or plugin.name
        state = f"failed to load: {plugin.error}" if plugin.error else f"from {plugin.package}"
        parts.append(f"{plugin.kind} {what} ({state})")
    return "plugins: " + "; ".join(parts)


def _offer_chunk_sets(args: argparse.Namespace | None) -> None:
    """Register the store's imported chunk sets as policies (``core.imported``), so every
    command that takes or reads a policy knows them: the default store's before the
    parser lists the policies, the store a command names once it is parsed."""
    store, host = getattr(args, "store", None), getattr(args, "chroma_host", None)
    if args is not None and store is None and host is None:
        return  # the default store's sets are registered already
    register_chunk_sets(sets_folder(resolve_store(store, host)))


def main(argv: list[str] | None = None) -> int:
    # A malformed $CHUNKSCOPE_CHROMA: a command that opens the store says so in its one
    # line; one that does not (parse, --help) still runs.
    with contextlib.suppress(ChunkscopeError):
        _offer_chunk_sets(None)
    parser = build_parser()
    args = parser.parse_args(argv)
    stdout = sys.stdout
    if not getattr(args, "json", False):  # tables show document text: no raw controls
        sys.stdout = SafeTerminal(stdout)
    try:
        _offer_chunk_sets(args)
        with limit_arguments(args), ocr_argument(args):
            return int(args.func(args) or 0)
    except ChunkscopeError as exc:
        print(error_line(exc), file=sys.stderr)
        return 2
    except OSError as exc:  # a file or folder the system refused: say which, in one line
        print(error_line(exc), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    finally:
        sys.stdout = stdout


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
