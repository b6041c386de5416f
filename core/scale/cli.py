"""``chunkscope index ... --engine ray``: the Ray run behind the ``index`` command.

The driver resolves the store (a Chroma server: workers on other machines cannot share an
embedded folder), loads the encoder once on the CPU for its name, tokenizer folder and
pooling check, and hands workers a recipe to load it themselves on their own device.
The output is the plain command's (one line per document, ``--json`` the same object)
plus a summary line per stage (``--json``: a ``ray`` key); the sources of the documents
that loaded are kept in the server's library after the run, as the plain command keeps
them, so the workbench's Library lists them and their citations open.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from core import methods as registry
from core.cli.progress import ProgressBar
from core.config import resolve_store
from core.embed import load_encoder
from core.errors import ChunkscopeError
from core.methods.embedding import check_late_pooling
from core.scale import RayJob, RayOptions, index_on_ray
from core.scale.cluster import import_ray


def add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine", choices=("plain", "ray"), default="plain",
        help="plain (one process, default) or ray (a Ray Data pipeline; needs --chroma-host)",
    )  # fmt: skip
    parser.add_argument(
        "--ray-address", metavar="auto|HOST:PORT",
        help="join this Ray cluster (default $RAY_ADDRESS, else start a local one)",
    )  # fmt: skip
    parser.add_argument(
        "--workers", type=int, default=1, help="embed workers (actors), each one CPU or GPU share"
    )
    parser.add_argument(
        "--gpus-per-worker", type=float, default=0.0, metavar="G",
        help="GPUs each embed worker reserves (0: CPU workers; 1: one actor per GPU)",
    )  # fmt: skip


def check_ray_arguments(args: argparse.Namespace) -> None:
    """Refuse Ray options without ``--engine ray``, and values out of range."""
    if args.engine != "ray":
        set_here = {
            "--ray-address": args.ray_address is not None,
            "--workers": args.workers != 1,
            "--gpus-per-worker": args.gpus_per_worker != 0.0,
        }
        given = [flag for flag, is_set in set_here.items() if is_set]
        if given:
            raise ChunkscopeError(f"{', '.join(given)} needs --engine ray")
        return
    if args.workers < 1:
        raise ChunkscopeError(f"--workers must be at least 1, not {args.workers}")
    if not 0 <= args.gpus_per_worker <= 8:
        raise ChunkscopeError(f"--gpus-per-worker must be 0 to 8, not {args.gpus_per_worker:g}")


def _server_host(args: argparse.Namespace) -> str:
    if args.store is not None:
        raise ChunkscopeError(
            "--engine ray writes to a Chroma server: use --chroma-host, not --store"
        )
    location = resolve_store(None, args.chroma_host)
    if not location.is_server:
        raise ChunkscopeError(
            "--engine ray writes to a Chroma server: pass --chroma-host HOST:PORT (or set "
            "$CHUNKSCOPE_CHROMA); start one with `chroma run --path DIR --port 8000`"
        )
    return f"{location.host}:{location.port}"


def _progress() -> Callable[[Any], None]:
    bar = ProgressBar("ray: (document, method) pairs stored")
    return lambda event: bar(event.done, event.total)


def run_ray(
    args: argparse.Namespace,
    files: list[Path],
    policy: Any,
    methods: tuple[str, ...],
    should_cancel: Callable[[], bool],
) -> Any:
    """Index ``files`` on Ray; returns ``(RayIndexReport, the server's HOST:PORT)``."""
    import_ray()  # the one-line install hint before anything is loaded
    host = _server_host(args)
    methods = tuple(registry.needs_indexing(methods))
    encoder = load_encoder(args.model, pooling=args.pooling, device="cpu")
    if any(registry.get(m).needs_mean_pooling for m in methods):
        check_late_pooling(encoder)
    job = RayJob(
        policy=policy,
        model=encoder.name,
        model_dir=str(encoder.model_dir),
        make_encoder=functools.partial(
            load_encoder, args.model, pooling=args.pooling, device=args.device
        ),
        host=host,
        parser=args.parser,
        password=args.password,
    )
    options = RayOptions(
        address=args.ray_address, workers=args.workers, gpus_per_worker=args.gpus_per_worker
    )
    run = index_on_ray(files, job=job, methods=methods, options=options, force=args.force,
                       progress=_progress(), should_cancel=should_cancel)  # fmt: skip
    sys.stderr.write("\n")
    return run, host


def print_ray_summary(run: Any, as_json: dict[str, object] | None) -> None:
    """Stage lines on stderr (stdout keeps the plain command's lines), or the JSON key."""
    if as_json is not None:
        as_json["ray"] = run.to_dict()
        json.dump(as_json, sys.stdout)
        sys.stdout.write("\n")
        return
    for line in run.summary_lines():
        print(f"ray {line}", file=sys.stderr)
