"""``chunkscope query "TEXT"``: rank stored chunks under several methods side by side.

Searches one document (``--doc DOC_ID``) or the whole index. Without ``--policy`` the
policy the index holds for this model is used (an error lists them if there are
several); without ``--methods``, every method indexed under that policy. ``--json``
prints ``{"query", "score_kinds", "results": {method: [{"rank", "chunk_id", "score",
"score_kind", "char_start", "char_end", "pages", "citation", "text", "matched",
"part_ranks", ...}]}, "rank_changes": [{"chunk_id", "ranks", "scores", ...}], ...}``;
otherwise the methods are printed in columns (each score on its method's own scale),
then the rank changes.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap
from typing import Any

import core.embed
from core import defaults
from core import methods as registry
from core.cli.options import (
    add_model_arguments,
    add_policy_arguments,
    add_store_arguments,
    methods_help,
    parse_methods,
    policy_of,
)
from core.errors import StoreError
from core.retrieve.comparison import check_query, compare, comparison_to_dict
from core.store import ChunkStore


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "query",
        help="rank indexed chunks for a query under several methods",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    parser.add_argument("text", metavar="TEXT", help="the query")
    parser.add_argument("--doc", metavar="DOC_ID", help="search only this document")
    parser.add_argument("--methods", help=methods_help("default: every method indexed"))
    parser.add_argument(
        "--k", type=int, default=defaults.K, help=f"results per method (default {defaults.K})"
    )
    add_policy_arguments(parser, default=None)
    add_model_arguments(parser)
    add_store_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def resolve_policy(args: argparse.Namespace, indexed: list[Any], model: str) -> Any:
    """The asked policy, or the single policy stored for ``model``."""
    if args.policy is not None:
        return policy_of(args)
    policies = {d.policy_key: d.policy for d in indexed if d.model == model and d.complete}
    if not policies:
        raise StoreError(
            f"nothing indexed for {model} in this store: run `chunkscope index PATH` first"
        )
    if len(policies) > 1:
        raise StoreError(
            f"the index holds several policies for {model} ({', '.join(sorted(policies))}): "
            "pass --policy (and --size/--overlap/--unit)"
        )
    return next(iter(policies.values()))


def resolve_methods(
    args: argparse.Namespace, indexed: list[Any], model: str, key: str
) -> tuple[str, ...]:
    """The asked methods, or every method that holds the searched scope under ``key``."""
    asked = parse_methods(args.methods)
    if asked:
        return asked
    held = {
        d.method
        for d in indexed
        if d.model == model
        and d.policy_key == key
        and d.complete
        and (args.doc is None or d.doc_id == args.doc)
    }

    methods = tuple(m for m in registry.base_methods() if m in held)
    if not methods:
        what = f"no document {args.doc!r}" if args.doc else "nothing"
        raise StoreError(
            f"{what} indexed for {model} under policy {key}: run `chunkscope index PATH` "
            "with that policy first"
        )
    return methods


def run(args: argparse.Namespace) -> int:
    check_query(args.text)
    if args.k < 1:
        raise StoreError(f"--k must be at least 1, got {args.k}")
    store = ChunkStore.open(args.store, host=args.chroma_host)
    indexed = store.indexed_documents()
    # looked up when called, so a replaced loader (a test's small encoder) is the one used
    encoder = core.embed.load_encoder(args.model, pooling=args.pooling, device=args.device)
    policy = resolve_policy(args, indexed, encoder.name)
    methods = resolve_methods(args, indexed, encoder.name, policy.key)
    cmp = compare(
        args.text,
        methods=methods,
        encoder=encoder,
        store=store,
        policy=policy,
        k=args.k,
        doc_id=args.doc,
    )
    if args.json:
        json.dump(comparison_to_dict(cmp), sys.stdout, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        width = shutil.get_terminal_size((120, 24)).columns
        sys.stdout.write(render_comparison(cmp, width=width))
    return 0


def _cell(hit: Any, width: int, with_doc: bool) -> list[str]:
    """Score and citation (wrapped), then up to two lines of the chunk's text."""
    citation = hit.citation.render()
    if not with_doc:
        citation = citation.removeprefix(f"{hit.doc_id}, ")
    head = textwrap.wrap(f"{hit.score:.3f}  {citation}", width=width) or [""]
    flat = " ".join(hit.text.split())
    body = textwrap.wrap(textwrap.shorten(flat, width=2 * width, placeholder=" …"), width=width)
    return head + body[:2]


def _heading(method: str) -> str:
    return f"{method} ({registry.get(method).score.label})"


def render_comparison(cmp: Any, *, width: int = 120) -> str:
    """Methods in columns (score and citation, then two lines of text), rank changes below;
    each column is headed by its method and what its scores are."""
    n = len(cmp.methods)
    col = max(24, (width - 5) // n - 2)
    scope = f"document {cmp.doc_id}" if cmp.doc_id else "all documents"
    out = [
        f"query: {cmp.query}",
        f"model {cmp.model}, policy {cmp.policy.key}, {scope}, "
        f"{'exact ranks' if cmp.exact else 'approximate ranks beyond the top'}",
        "",
        "rank " + "  ".join(_heading(m).ljust(col) for m in cmp.methods),
    ]
    for row in range(max(len(cmp.results[m]) for m in cmp.methods)):
        cells = [
            _cell(cmp.results[m][row], col, cmp.doc_id is None) if row < len(cmp.results[m]) else []
            for m in cmp.methods
        ]
        for line in range(max(len(c) for c in cells)):
            prefix = f"{row + 1:>4} " if line == 0 else "     "
            parts = [(c[line] if line < len(c) else "").ljust(col) for c in cells]
            out.append((prefix + "  ".join(parts)).rstrip())
    if n > 1:
        hits = {h.chunk_id: h for m in cmp.methods for h in cmp.results[m]}
        note = "" if cmp.exact else " (-: beyond the searched depth)"
        out += ["", "rank under " + " / ".join(cmp.methods) + note]
        for change in cmp.rank_changes:
            ranks = " / ".join("-" if r is None else str(r) for r in change.ranks.values())
            out.append(f"  {ranks:<18} {hits[change.chunk_id].citation.render()}")
    return "\n".join(out) + "\n"
