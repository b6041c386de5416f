"""Retrieval methods: every method registered once, read everywhere.

The CLI choices, the index run, the comparison, the evaluation, the charts and the pages
ask the registry which methods exist, what each needs and what its score means, so a new
method is one module and one ``register`` call. The built-in entries are registered here,
once, when the package is first imported: ``naive``, ``late``, ``contextual`` (``dense``),
``bm25``, ``contextual-bm25`` (``lexical``). A fusion ``hybrid(a,b,...;rrf60)`` or
``hybrid(a,b;w0.7,0.3)`` is built from its name on demand (``fusion``), so any combination
of registered methods is a method.

Modules:

- ``spec``: what a method is: ``MethodSpec``, a named index step and a score;
- ``method_registry``: the registry of methods, and the method lists each view starts on;
- ``dense``: the dense methods, one vector per chunk scored by cosine;
- ``embedding``: a dense method's spec composed with the functions of ``core.embed``;
- ``lexical``: BM25 over the chunk text or over the contextual prefix and the text;
- ``fusion``: hybrids: the fused rankings of two or more methods.
"""

from __future__ import annotations

from core.methods import dense, lexical
from core.methods import method_registry as registry
from core.methods.method_registry import (
    BENCHED,
    EXTERNAL_COLOUR,
    EXTERNAL_ORDER,
    FUSED,
    PAIRED,
    SUGGESTED_FUSIONS,
    BenchMethods,
    base_methods,
    delta_pairs,
    embedding_method,
    embedding_methods,
    external_spec,
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
    "BM25",
    "COSINE",
    "EXTERNAL_COLOUR",
    "EXTERNAL_ORDER",
    "FUSED",
    "PAIRED",
    "SUGGESTED_FUSIONS",
    "BenchMethods",
    "DenseEmbedding",
    "MethodSpec",
    "ScoreScale",
    "UnknownMethodError",
    "base_methods",
    "delta_pairs",
    "embedding_method",
    "embedding_methods",
    "external_spec",
    "get",
    "needs_indexing",
    "parse_methods",
    "register",
    "register_external",
    "split_names",
    "unregister",
]

registry.register_builtins((*dense.builtin_specs(), *lexical.builtin_specs()))
registry.load_plugins()  # installed packages' chunkscope.methods entry points
