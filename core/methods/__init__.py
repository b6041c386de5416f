"""Retrieval methods: every method registered once, read everywhere.

The CLI choices, the index run, the comparison, the evaluation, the charts and the pages
ask the registry (``registry.py``) which methods exist, what each needs and what its
score means, so a new method is one module and one ``register`` call. The built-in
entries are registered here, once, when the package is first imported: ``naive``,
``late``, ``contextual`` (``dense.py``), ``bm25``, ``contextual-bm25`` (``lexical.py``).
A fusion ``hybrid(a,b,...;rrf60)`` or ``hybrid(a,b;w0.7,0.3)`` is built from its name on
demand (``fusion.py``), so any combination of registered methods is a method.
``embedding.py`` composes a dense method's spec with the functions of ``core.embed``.
"""

from __future__ import annotations

from core.methods import dense, lexical
from core.methods import method_registry as registry
from core.methods.method_registry import (
    BENCHED,
    BESIDE_A_RUN,
    COMPARED,
    EMBEDDED,
    EVALUATED,
    EXTERNAL_COLOUR,
    EXTERNAL_ORDER,
    FUSED,
    PAIRED,
    SUGGESTED_FUSIONS,
    SWEPT,
    BenchMethods,
    base_methods,
    delta_pairs,
    embedding_method,
    embedding_methods,
    get,
    needs_indexing,
    parse_methods,
    register,
    register_external,
    split_names,
    unregister,
)
from core.methods.spec import (
    BM25,
    COSINE,
    DenseEmbedding,
    MethodSpec,
    ScoreScale,
    UnknownMethodError,
)

__all__ = [
    "BENCHED",
    "BESIDE_A_RUN",
    "BM25",
    "COMPARED",
    "COSINE",
    "EMBEDDED",
    "EVALUATED",
    "EXTERNAL_COLOUR",
    "EXTERNAL_ORDER",
    "FUSED",
    "PAIRED",
    "SUGGESTED_FUSIONS",
    "SWEPT",
    "BenchMethods",
    "DenseEmbedding",
    "MethodSpec",
    "ScoreScale",
    "UnknownMethodError",
    "base_methods",
    "delta_pairs",
    "embedding_method",
    "embedding_methods",
    "get",
    "needs_indexing",
    "parse_methods",
    "register",
    "register_external",
    "split_names",
    "unregister",
]

registry.register_builtins((*dense.builtin_specs(), *lexical.builtin_specs()))
