"""A child process for the interruption tests: index text files with the fake encoder.

    python tests/index_worker.py STORE_DIR KILL_AFTER_BATCHES FILE...

Indexes every FILE (all three methods, store batches of 8 records) through
``core.index.indexer.index_documents`` with the real parse and chunk stages; with
``KILL_AFTER_BATCHES > 0`` the process ends itself with ``os._exit(17)`` (no cleanup, like
a kill) right after that many store batches were written. Prints one JSON line with
the report when it finishes.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fakes import FakeEncoder, fake_embed_chunks  # noqa: E402

from core.formats import load_document  # noqa: E402
from core.index.indexer import IndexProgress, default_steps, index_documents  # noqa: E402
from core.provenance.types import ChunkPolicy  # noqa: E402
from core.store import ChunkStore  # noqa: E402

POLICY = ChunkPolicy(name="fixed", size=600, overlap=50)
METHODS = ("naive", "late", "contextual")
KILLED_EXIT = 17


def main(argv: list[str]) -> int:
    store_dir, kill_after, files = argv[0], int(argv[1]), argv[2:]
    store = ChunkStore.open(store_dir, batch_size=8)
    docs = [load_document(f) for f in files]
    batches = 0

    def progress(event: IndexProgress) -> None:
        nonlocal batches
        if event.stage == "store":
            batches += 1
            if kill_after and batches >= kill_after:
                sys.stdout.flush()
                os._exit(KILLED_EXIT)

    report = index_documents(
        docs,
        policy=POLICY,
        methods=METHODS,
        encoder=FakeEncoder(),
        store=store,
        progress=progress,
        steps=default_steps(embed=fake_embed_chunks),
    )
    summary = {d.doc_id: [d.n_chunks, list(d.indexed), list(d.skipped)] for d in report.documents}
    print(json.dumps({"batches": batches, "documents": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
