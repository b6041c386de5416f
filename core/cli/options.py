"""What the commands share, so no command imports another: the argument groups (the
file and policy, the store, the model, an embeddings server), the parsing of ``--methods``,
``--k`` and ``--docs``, the model a run loads, the one ``EvalConfig`` of a run's flags,
the chunker and diagnosis of ``eval`` and ``check``, the check of an output path that runs
before any work, and the loading of many files in which each bad file costs one line, not
the run."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import core.embed
from core import defaults
from core import methods as registry
from core.chunk import chunk_document, policy_from_args, policy_registry
from core.chunk.live_names import PER_PAGE, parse_param
from core.cli.one_line import error_line
from core.diagnose.run_failures import suggest_run
from core.embed.http import DEFAULT_KEY_ENV, HttpEncoder
from core.errors import ChunkscopeError, LabelError, ModelError
from core.evaluate import EvalConfig
from core.formats import load_document, parse_document
from core.formats.format_registry import describe_formats
from core.index.indexer import method_records
from core.index.sources import collect_files
from core.ingest.ocr import ENV_OCR, OCR_POLICIES, policy_override
from core.methods.embedding import http_default_methods, require_usable
from core.model.tokens import load_tokenizer
from core.provenance.types import ChunkPolicy


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
    names = policy_registry.policy_names()
    if default is not None:
        note = f"default {default}"
    else:
        note = "required" if required else "default: the policy the index holds"
    units = "; ".join(
        f"{s.name} {s.unit}" + "".join(f" or {u}" for u in s.units if u != s.unit)
        for s in policy_registry.all_policies()
    )
    parser.add_argument(
        "--policy", default=default, required=required, metavar="{" + ",".join(names) + "}",
        help=f"chunking policy ({note}): "
        + "; ".join(f"{s.name}, {s.summary}" for s in policy_registry.all_policies()),
    )  # fmt: skip
    parser.add_argument("--size", type=int, help="chunk size in --unit (default per policy)")
    parser.add_argument("--overlap", type=int, help="overlap in --unit (default per policy)")
    parser.add_argument(
        "--unit", choices=policy_registry.all_units(),
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
    for option in policy_registry.OPTIONS:
        takers = " or ".join(policy_registry.accepting(option.name))
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
    options = {o.name: bool(getattr(args, o.name, False)) for o in policy_registry.OPTIONS}
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


# -- the store, the model, an embeddings server ------------------------------------------


def add_store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--store", metavar="DIR", help="store folder (default: $CHUNKSCOPE_STORE or .chunkscope/)"
    )
    parser.add_argument(
        "--chroma-host", metavar="HOST:PORT", help="use a Chroma server (or $CHUNKSCOPE_CHROMA)"
    )


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", metavar="DIR", help="local model folder (default MiniLM-L6)")
    parser.add_argument("--pooling", help="mean or cls, for a model folder without a config")
    parser.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto)")


def add_embed_arguments(parser: argparse.ArgumentParser) -> None:
    """``--embed-url``, ``--embed-model``, ``--embed-key-env``: vectors from an
    OpenAI-compatible embeddings server (``core.embed.http``); read by
    :func:`http_encoder_of`. The default key variable is spelled here, not imported, so
    ``--help`` loads no HTTP client (a test holds it equal to ``DEFAULT_KEY_ENV`` of
    ``core.embed.http``)."""
    group = parser.add_argument_group("your embedder over HTTP")
    group.add_argument(
        "--embed-url",
        metavar="URL",
        help="an OpenAI-compatible embeddings server (http://HOST:PORT[/v1/embeddings]) "
        "that encodes the chunks instead of a local model; late chunking is refused",
    )
    group.add_argument("--embed-model", metavar="NAME", help="the model the server is asked for")
    group.add_argument(
        "--embed-key-env",
        metavar="VAR",
        help="environment variable holding the API key, sent as a bearer token "
        "(default $CHUNKSCOPE_EMBED_KEY, when set)",
    )


def http_encoder_of(args: argparse.Namespace) -> HttpEncoder | None:
    """The ``core.embed.http.HttpEncoder`` that ``--embed-url``/``--embed-model``/
    ``--embed-key-env`` ask for, or None without ``--embed-url`` (a namespace without
    these flags gives None too). Nothing is sent until the first text is encoded.
    ``ModelError`` (one line) for a flag without its partner or next to ``--model``."""
    url = getattr(args, "embed_url", None)
    model = getattr(args, "embed_model", None)
    key_env = getattr(args, "embed_key_env", None)
    if not url:
        if model or key_env:
            raise ModelError("--embed-model and --embed-key-env go with --embed-url: give it")
        return None
    if not model:
        raise ModelError("--embed-url needs --embed-model NAME: the model the server is asked for")
    if getattr(args, "model", None):
        raise ModelError("--model and --embed-url both name the encoder: give one of them")

    return HttpEncoder(
        url, model, key_env=key_env or DEFAULT_KEY_ENV, require_key=key_env is not None
    )


def parse_methods(text: str | None) -> tuple[str, ...] | None:
    """``"A,hybrid(B,C)"`` -> ``("A", "hybrid(B,C;rrf60)")`` for registered methods A, B
    and C: the registry's names (``core.methods``); None stays None (the command's
    default)."""
    if text is None:
        return None

    return registry.parse_methods(text)


def methods_help(default: str) -> str:
    """The ``--methods`` help: every registered method, and how to name a fusion."""
    names = ", ".join(registry.base_methods())
    return f"comma list of {names}, or hybrid(A,B;rrf60) / hybrid(A,B;w0.5,0.5) ({default})"


# -- a run's inputs -----------------------------------------------------------------------


def parse_list(text: str, what: str) -> list[str]:
    items = [part.strip() for part in text.split(",") if part.strip()]
    if not items:
        raise LabelError(f"give at least one value for {what}")
    return items


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(k) for k in parse_list(text, "--k"))
    except ValueError:
        raise LabelError(f"--k takes comma-separated positive integers, got {text!r}") from None
    if min(ks) < 1:
        raise LabelError("--k values must be at least 1")
    return ks


def expand_docs(paths: Sequence[str]) -> list[Path]:
    """The files ``index`` would read for the same paths (``core.index.sources.
    collect_files``: folders recursively, hidden folders skipped), so ``index DIR`` and
    ``eval --docs DIR`` read the same documents; a folder with none is a ``LabelError``."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise LabelError(f"{path} does not exist: check --docs")
        inside = collect_files([path])
        if path.is_dir() and not inside:
            raise LabelError(f"{path} holds no document ({describe_formats()})")
        found.extend(inside)
    return list(dict.fromkeys(found))


def load_model(args: argparse.Namespace) -> tuple[Any, Callable[..., Any], Any]:
    """``(encoder, method_records, tokenizer)`` for ``--model``, or for ``--embed-url``
    (the server encodes; the default model's tokenizer counts chunk tokens, torch is not
    loaded): the seam tests replace."""
    remote = http_encoder_of(args)
    if remote is not None:
        return remote, method_records, load_tokenizer(remote.model_dir)

    # torch (deterministic algorithms on) loads with the weights, at the first text
    # encoded: a run whose vectors are all cached imports neither.
    # looked up when called, so a replaced loader (a test's small encoder) is the one used
    encoder = core.embed.load_encoder(args.model, deterministic=True)
    return encoder, method_records, load_tokenizer(args.model)


def eval_config(args: argparse.Namespace, *, policy: ChunkPolicy | None = None) -> EvalConfig:
    """The one ``EvalConfig`` of ``eval``, ``check`` and ``sweep`` (one per grid point)
    from their flags: ``--methods`` (default ``core.defaults.METHODS``; with
    ``--embed-url``, those of ``core.defaults.COMPARED`` the server can run), ``--k``,
    ``--scope``, ``--threshold``, ``--seed``, ``--resamples``, and ``policy`` or, without
    it, the policy arguments. ``LabelError`` (one line) for a value the run cannot take."""
    if http_encoder_of(args) is not None:  # checks the --embed-* flags before any work
        methods = parse_methods(args.methods) or http_default_methods()
        require_usable(methods)
    else:
        methods = parse_methods(args.methods) or defaults.METHODS
    try:
        return EvalConfig(
            policy=policy_of(args) if policy is None else policy,
            methods=methods,
            ks=parse_ks(args.k),
            scope=args.scope,
            threshold=args.threshold,
            seed=args.seed,
            resamples=args.resamples,
        )
    except ValueError as exc:
        raise LabelError(str(exc)) from None


def doc_parts(parser: Any, policy: Any, tokenizer: Any) -> Callable[[Any], Any]:
    """``doc -> (blocks, chunks)``: the document's blocks, parsed once per document, and
    its chunks under ``policy`` (the run's chunker, and what its diagnosis reads)."""
    parsed: dict[str, Any] = {}

    def parts(doc: Any) -> Any:
        if doc.sha256 not in parsed:
            parsed[doc.sha256] = parse_document(doc, parser=parser).blocks
        blocks = parsed[doc.sha256]
        return blocks, chunk_document(doc, blocks, policy, tokenizer)

    return parts


def with_suggestions(
    result: Any,
    docs: Sequence[Any],
    parts: Callable[..., Any],
    *,
    encoder: Any = None,
    embed: Any = None,
) -> Any:
    """The run with the diagnosis's suggested cause stored per failed query and method
    (``core.diagnose``), with the repairs it tried when the run's ``encoder`` is given, so
    ``diagnose``, ``check --max-new`` and triage exports read it."""
    by_id = {d.doc_id: d for d in docs}
    return suggest_run(result, by_id, chunker=parts, encoder=encoder, embed=embed)[0]
