"""The layers of ``core``: imports point down the pipeline, imports inside functions
counted too (they hide a cycle as well as a top-level one does).

Read from the source with ``ast``, without importing anything. Four rules:

- ``core`` never imports Streamlit, nor the workbench or the pages;
- a module of a stage imports no module of a later stage (``STAGES`` below: the pipeline
  order of the table of core in docs/layout.md, the provenance records and text alignment
  at the bottom), and every module of core has a stage;
- the import graph has no cycle between our modules beyond the ``KNOWN_KNOTS`` listed
  here as debts: a new cycle fails, and so does a listed one that has grown or gone (the
  list is then brought up to date);
- a module of core imports another at its top, never inside a function, unless the other
  loads a heavy package when imported (``LAZY_CORE``, each with its reason): a lazy
  import of a cheap module fails, and so does a listed module no longer imported lazily.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI = ("streamlit", "workbench", "pages")

# The stages of core in pipeline order (docs/layout.md): a module may import modules of its
# own stage and of earlier ones, never of a later one. Stages on one line share a rank.
STAGES: tuple[tuple[str, ...], ...] = (
    # the errors; a generic bounded cache; the CHUNKSCOPE_* environment variables; the
    # defaults every command and page starts on (plain values)
    ("core.errors", "core.bounded_cache", "core.settings", "core.defaults"),
    # records, boxes, citations; text alignment; the compiled reader; the model's files
    # and tokenizer; where the store lives; the generic registry; the interfaces
    # (annotations only)
    ("core.provenance", "core.align", "core.native", "core.model", "core.config",
     "core.registry", "core.protocols"),
    ("core.tables",),
    ("core.ingest",),
    ("core.parse",),
    ("core.formats",),  # composes the loaders of ingest with the parsers of parse
    ("core.chunk",),
    ("core.embed",),
    ("core.methods",),  # composes embed's vector functions into methods
    ("core.store",),
    ("core.imported",),
    ("core.index", "core.library"),
    ("core.retrieve",),  # one ranking contract: Compare's store and Evaluate's memory
    ("core.evaluate",),
    ("core.diagnose", "core.projection"),
    ("core.tune",),
    ("core.render",),
    ("core.cli", "core.bench", "core.scale", "core.__main__", "core"),
)  # fmt: skip
# Narrower rules inside a stage's allowance: (importer prefix, what it must not import).
FORBIDDEN: tuple[tuple[str, str], ...] = (
    # reading a Chroma collection opens it with the store's client (core.store.client)
    ("core.imported", "core.store.chroma"),
)
# Cycles still to untie, each as its set of modules (none: a new one fails).
KNOWN_KNOTS: tuple[frozenset[str], ...] = ()
# The modules (a package: its modules too) that may be imported inside a function, each
# because importing it loads a heavy package that its importers' paths must not load.
# Measured with ``python -X importtime``: PyMuPDF costs 0.6-0.9 s with the pymupdf4llm and
# onnxruntime it loads, and ``chunkscope --help``'s parser, ``core.evaluate`` and
# ``core.retrieve.comparison`` load none of it.
LAZY_CORE: dict[str, str] = {
    "core.ingest.pdf": "opens PDFs: PyMuPDF (the format catalogue loads it for a PDF)",
    "core.ingest.pdf_text": "PyMuPDF's text flags at import",
    "core.parse.heuristic": "parses PDF pages: PyMuPDF",
    "core.parse.layout": "parses PDF pages: PyMuPDF",
    "core.native": "PyMuPDF (stext), and the compiled _stext: absent until built",
    "core.render": "draws PDF pages and charts: PyMuPDF and Plotly (export, bench only)",
    "core.bench.ocr_cases": "renders PDF pages for OCR: PyMuPDF",
    "core.bench.table_cases": "finds tables on PDF pages: PyMuPDF",
}
# Imports inside functions still to move up, each as (importer, imported).
LAZY_DEBTS: tuple[tuple[str, str], ...] = ()


def _rank(module: str) -> int | None:
    """The rank of ``module``'s stage (its longest listed prefix; ``core`` itself only
    names the package's own ``__init__``), None when unlisted."""
    best: tuple[int, int] | None = None
    for rank, stage in enumerate(STAGES):
        for prefix in stage:
            inside = module == prefix or ("." in prefix and module.startswith(prefix + "."))
            if inside and (best is None or len(prefix) > best[0]):
                best = (len(prefix), rank)
    return None if best is None else best[1]


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / "core").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


@functools.cache
def _parsed(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once per process (several rules read every file)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _type_only(tree: ast.Module) -> set[int]:
    """Ids of the nodes under ``if TYPE_CHECKING:``: names for annotations, never run."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for inner in node.body:
                skipped.update(id(n) for n in ast.walk(inner))
    return skipped


def _imported(node: ast.AST, package: str, known: set[str]) -> set[str]:
    """What one statement of a module of ``package`` imports (none when it is no import):
    ``from pkg import mod`` counts as ``pkg.mod`` when that is a module, else as ``pkg``."""
    if isinstance(node, ast.Import):
        return {a.name for a in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    return {
        f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names
    }


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """What ``name`` imports anywhere in its file, function bodies included (``from pkg
    import mod`` counts as ``pkg.mod`` when that is a module, else as ``pkg``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = _parsed(path)
    skipped = _type_only(tree)
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        out |= _imported(node, package, known)
    ours = {m for m in out if m in known and m != name}
    return ours | {m for m in out if m.split(".")[0] in UI}


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def _knots(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[frozenset[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for nxt in edges:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = set()
                while True:
                    member = stack.pop()
                    on.discard(member)
                    members.add(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(frozenset(members))
    return found


def test_core_never_imports_the_ui() -> None:
    ui = {
        (name, m) for name, deps in _graph().items() for m in deps
        if m.split(".")[0] in UI
    }  # fmt: skip
    assert not ui, ui


def test_every_module_has_a_stage() -> None:
    unlisted = sorted(m for m in _modules() if _rank(m) is None)
    assert not unlisted, f"place these in STAGES: {unlisted}"


def test_no_stage_imports_a_later_one() -> None:
    wrong = []
    for name, deps in _graph().items():
        mine = _rank(name)
        for dep in deps:
            theirs = _rank(dep)
            if mine is not None and theirs is not None and theirs > mine:
                wrong.append((name, dep))
            wrong += [(name, dep) for who, banned in FORBIDDEN
                      if name.startswith(who) and dep.startswith(banned)]  # fmt: skip
    assert not wrong, wrong


def test_a_later_import_is_caught() -> None:
    assert _rank("core.chunk.fixed") == _rank("core.chunk")
    assert _rank("core.chunk")  # type: ignore[operator]
    assert _rank("core.embed.late") > _rank("core.chunk.fixed")  # type: ignore[operator]
    assert _rank("core.somewhere_new") is None


def test_the_only_cycles_are_the_known_debts() -> None:
    knots = set(_knots(_graph()))
    assert knots == set(KNOWN_KNOTS), (
        f"new or changed import cycles: {[sorted(k) for k in knots - set(KNOWN_KNOTS)]}; "
        f"gone or changed: {[sorted(k) for k in set(KNOWN_KNOTS) - knots]}"
    )


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _knots(graph) == [frozenset({"a", "b", "c"})]


def _inner_imports(name: str, path: Path, known: set[str]) -> set[tuple[str, str]]:
    """``(name, module)`` for each module of core that ``name`` imports inside a function
    (``if TYPE_CHECKING:`` blocks aside), resolved as ``_imports`` does."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    tree = _parsed(path)
    skipped = _type_only(tree)
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inside.update(id(n) for n in ast.walk(node) if n is not node)
    out: set[tuple[str, str]] = set()
    for node in ast.walk(tree):
        if id(node) not in inside or id(node) in skipped:
            continue
        out.update((name, m) for m in _imported(node, package, known) if m in known)
    return out


def _lazy_allowed(module: str) -> str | None:
    """The ``LAZY_CORE`` entry that covers ``module``, None when none does."""
    for entry in LAZY_CORE:
        if module == entry or module.startswith(entry + "."):
            return entry
    return None


def _lazy_imports() -> set[tuple[str, str]]:
    modules = _modules()
    known = set(modules)
    found: set[tuple[str, str]] = set()
    for name, path in modules.items():
        found |= _inner_imports(name, path, known)
    return found


def test_imports_inside_functions_are_only_of_heavy_modules() -> None:
    lazy = _lazy_imports()
    cheap = {pair for pair in lazy if _lazy_allowed(pair[1]) is None}
    assert cheap == set(LAZY_DEBTS), (
        f"import these at the top of the module: {sorted(cheap - set(LAZY_DEBTS))}; "
        f"gone from LAZY_DEBTS: {sorted(set(LAZY_DEBTS) - cheap)}"
    )
    used = {_lazy_allowed(module) for _, module in lazy}
    assert set(LAZY_CORE) <= used, f"no longer imported lazily: {set(LAZY_CORE) - used}"


def test_a_lazy_import_of_a_cheap_module_is_caught(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from core.chunk import fixed\n"
        "def f():\n    from core.errors import ChunkscopeError\n"
        "    from core.render import pages\n    return ChunkscopeError, pages\n",
        encoding="utf-8",
    )
    known = {"core.errors", "core.render", "core.render.pages", "core.chunk.fixed"}
    found = _inner_imports("core.x", path, known)
    assert found == {("core.x", "core.errors"), ("core.x", "core.render.pages")}
    assert _lazy_allowed("core.errors") is None
    assert _lazy_allowed("core.render.pages") == "core.render"
    assert _lazy_allowed("core.ingest.pdf_lines") is None  # a prefix of a name is not its package
