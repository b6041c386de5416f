"""``chunkscope library list|remove``: the documents whose bytes the store keeps.

``list`` prints one line per current version (``--all``: every kept version, older ones
marked ``old``); ``remove DOC_ID`` drops every kept version of the document, its records in
every collection and its markers. ``--json`` prints one JSON object. ``chunkscope index``
adds what it reads; the workbench adds what is uploaded.
"""

from __future__ import annotations

import argparse
import json
import sys

from core.cli.options import add_store_arguments
from core.library import Library, remove_document
from core.store import ChunkStore


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "library",
        help="list or remove the documents kept beside the index",
        description=__doc__.split("\n\n")[1] if __doc__ else None,
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the documents the library keeps")
    listing.add_argument("--all", action="store_true", help="older versions too")
    removing = actions.add_parser("remove", help="remove a document everywhere")
    removing.add_argument("doc_id", metavar="DOC_ID")
    for sub in (listing, removing):
        add_store_arguments(sub)
        sub.add_argument("--json", action="store_true", help="print JSON")
    listing.set_defaults(func=run_list)
    removing.set_defaults(func=run_remove)


def _rows(library, everything: bool) -> list[dict[str, object]]:  # noqa: ANN001
    current = {e.sha256 for e in library.current()}
    entries = library.versions() if everything else library.current()
    return [{**e.to_dict(), "current": e.sha256 in current} for e in entries]


def run_list(args: argparse.Namespace) -> int:
    store = ChunkStore.open(args.store, host=args.chroma_host)
    library = Library.of_store(store)
    rows = _rows(library, args.all)
    if args.json:
        json.dump({"where": library.where(), "documents": rows}, sys.stdout)
        sys.stdout.write("\n")
        return 0
    for row in rows:
        flag = "" if row["current"] else " old"
        lock = " encrypted" if row["encrypted"] else ""
        print(
            f"{row['doc_id']}  {str(row['sha256'])[:12]}  {row['size_bytes']:,} bytes  "
            f"{row['added_at']}  {row['name']}{lock}{flag}"
        )
    print(f"{len(rows)} document version(s) in {library.where()}")
    return 0


def run_remove(args: argparse.Namespace) -> int:
    store = ChunkStore.open(args.store, host=args.chroma_host)
    removal = remove_document(store, args.doc_id)
    if args.json:
        out = {
            "doc_id": removal.doc_id,
            "versions": [e.to_dict() for e in removal.versions],
            "records": removal.records,
        }
        json.dump(out, sys.stdout)
        sys.stdout.write("\n")
        return 0
    print(
        f"removed {removal.doc_id}: {len(removal.versions)} kept version(s), "
        f"{removal.records:,} chunk record(s)"
    )
    return 0
