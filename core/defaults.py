"""The defaults every command and page starts on, in one place: the chunking policy, the
methods, the cut-offs and the number of results shown. A user's pick always wins; these
are what nobody picked.

- ``POLICY``: ``structure`` at its own default unit and sizes, ``structure-tokens-240-24``
  (``POLICY_KEY``): chunks that follow the document's sections, 240 model tokens with 24
  of overlap. ``chunkscope index`` stores it; ``eval``, ``sweep``, ``check`` evaluate
  with it; Compare and Map show it first when the index holds it; Evaluate, Tune and
  Chunks start on it. So the policy the index holds is the one Compare shows and the one
  a run is scored with, unless the user picks another.
- ``METHODS``: ``naive``, ``late``, ``bm25``: one vector per chunk, late chunking, and
  the lexical baseline. What ``eval``, ``sweep``, ``check`` and ``import-run`` (beside the
  imported retriever) rank with, and what Evaluate, Tune and "Import a run" start on. A
  contextual prefix doubles what is encoded, so it is one pick away, not a default.
- ``COMPARED``: what Compare starts on: ``METHODS`` plus ``contextual`` and the hybrid
  ``hybrid(late,bm25;rrf60)``. Compare reads one query from the index, which
  ``chunkscope index`` fills with every registered method, so showing more costs nothing.
- ``KS``: ``1, 5, 10``, the cut-offs of hit@k and recall@k (``--k`` of ``eval``,
  ``sweep``, ``check``, ``import-run``; the Evaluate form).
- ``K``: ``10`` results per method (``chunkscope query --k``; Compare's k).
- ``EMBED_METHOD``: ``naive``, the method ``chunkscope embed`` uses without ``--method``.

Plain values only, so every stage may read them; the names are checked against the
policy and method registries by ``tests/test_defaults.py``.
"""

from __future__ import annotations

POLICY = "structure"
POLICY_KEY = "structure-tokens-240-24"  # POLICY at its registered default unit and sizes
METHODS: tuple[str, ...] = ("naive", "late", "bm25")
COMPARED: tuple[str, ...] = ("naive", "late", "contextual", "bm25", "hybrid(late,bm25;rrf60)")
KS: tuple[int, ...] = (1, 5, 10)
K = 10
EMBED_METHOD = "naive"


def methods_arg() -> str:
    """``METHODS`` as a ``--methods`` value: ``naive,late,bm25``."""
    return ",".join(METHODS)


def ks_arg() -> str:
    """``KS`` as a ``--k`` value: ``1,5,10``."""
    return ",".join(str(k) for k in KS)
