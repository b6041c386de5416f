"""Every package's docstring is a true map of its modules.

Read from the source with ``ast``, without importing anything. A package is a folder under
``core/`` or ``workbench/`` that holds an ``__init__.py``; every folder of ``core`` that
holds Python modules must be one (setuptools leaves any other out of the wheel).

The map is a ``Modules:`` line in the package's docstring followed by one entry per
module: a dash, the module's name in double backticks, a colon and what it holds (a longer
description goes on indented lines below it)::

    Modules:

    - ``name``: what the module holds;
    - ``sub``: what the subpackage holds.

A name is a module (``name.py``) or a subpackage (``name/``) of the package. The map
ends at the first line that is neither an entry, nor indented, nor blank. The rules:

- the map lists every module and subpackage of the package, each once, and nothing else;
- in any docstring of ``core`` or ``workbench`` (modules, classes, functions), a file
  named in backticks (``name.py`` or ``name.c``: beside the module or at the repository
  root; a path with a ``/``: from the root) exists,
  and a dotted name under ``core`` or ``workbench`` (``core.chunk.policy_registry``,
  ``core.formats.parse_document``) is a module, or a module and a name bound at its top.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOPS = ("core", "workbench")

HEADER = "Modules:"
ENTRY = re.compile(r"- ``([A-Za-z_][A-Za-z0-9_]*)``: \S")
FILE = re.compile(r"``?([A-Za-z0-9_][A-Za-z0-9_/.-]*\.(?:py|c))``?")
DOTTED = re.compile(r"(?<![\w.])((?:core|workbench)(?:\.[A-Za-z_]\w*)+)")


def _packages(root: Path) -> list[Path]:
    """Every package folder under the tops of ``root``, the tops themselves included."""
    found = []
    for top in TOPS:
        base = root / top
        if not base.is_dir():
            continue
        found += sorted(p.parent for p in base.rglob("__init__.py"))
    return found


def _members(package: Path) -> set[str]:
    """The modules and subpackages of ``package`` (``__init__`` aside)."""
    names = {p.stem for p in package.glob("*.py") if p.name != "__init__.py"}
    names |= {d.name for d in package.iterdir() if (d / "__init__.py").is_file()}
    return names


def _map(docstring: str) -> tuple[list[str], list[str]]:
    """The names a docstring's ``Modules:`` section lists, and what is wrong with its form."""
    lines = docstring.splitlines()
    starts = [i for i, line in enumerate(lines) if line.strip() == HEADER]
    if len(starts) != 1:
        found = "none" if not starts else f"{len(starts)}"
        return [], [f"one '{HEADER}' line expected, found {found}"]
    names: list[str] = []
    problems: list[str] = []
    for line in lines[starts[0] + 1 :]:
        if not line.strip() or (names and line[:1].isspace()):
            continue
        if not line.startswith("- "):
            break
        entry = ENTRY.match(line)
        if entry is None:
            problems.append(f"not one module a line: {line.strip()!r}")
        else:
            names.append(entry.group(1))
    return names, problems


def _map_problems(package: Path, root: Path) -> list[str]:
    """What is wrong with the map in ``package``'s docstring (none when it is true)."""
    where = package.relative_to(root).as_posix()
    docstring = ast.get_docstring(_parsed(package / "__init__.py"))
    members = _members(package)
    if not docstring:
        return [f"{where}: no docstring (write one with the map of its modules)"]
    if not members and HEADER not in (line.strip() for line in docstring.splitlines()):
        return []  # nothing to map
    names, problems = _map(docstring)
    twice = sorted({n for n in names if names.count(n) > 1})
    missing = sorted(members - set(names))
    ghosts = sorted(set(names) - members)
    problems += [f"listed twice: {twice}"] * bool(twice)
    problems += [f"modules missing from the map: {missing}"] * bool(missing)
    problems += [f"listed but not modules of the package: {ghosts}"] * bool(ghosts)
    return [f"{where}: {p}" for p in problems]


@functools.cache
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _modules(root: Path) -> dict[str, Path]:
    """Every module of the tops of ``root`` by dotted name (a package: its ``__init__``)."""
    found = {}
    for top in TOPS:
        for path in sorted((root / top).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _bound(body: list[ast.stmt]) -> Iterator[str]:
    """The names a module's top-level statements bind (inside ``if``/``try`` too)."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            yield node.name
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            yield from ((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                yield from (n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.If, ast.Try, ast.With)):
            yield from _bound(node.body)
            yield from _bound(getattr(node, "orelse", []))
            yield from _bound(getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                yield from _bound(handler.body)


def _resolves(dotted: str, modules: dict[str, Path]) -> bool:
    """Whether ``dotted`` is a module, or a module and a name bound at its top (what
    follows that name, an attribute of it, is not checked)."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        module = ".".join(parts[:k])
        if module in modules:
            return k == len(parts) or parts[k] in set(_bound(_parsed(modules[module]).body))
    return False


def _docstrings(path: Path) -> Iterator[str]:
    for node in ast.walk(_parsed(path)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node)
            if docstring:
                yield docstring


def _name_problems(path: Path, root: Path, modules: dict[str, Path]) -> list[str]:
    """The files and dotted names that ``path``'s docstrings name and that do not exist."""
    wrong = []
    for docstring in _docstrings(path):
        for name in FILE.findall(docstring):
            places = [root / name] if "/" in name else [path.parent / name, root / name]
            if not any(place.is_file() for place in places):
                wrong.append(name)
        wrong += [name for name in DOTTED.findall(docstring) if not _resolves(name, modules)]
    where = path.relative_to(root).as_posix()
    return [f"{where}: names {name}, which does not exist" for name in dict.fromkeys(wrong)]


def test_every_folder_of_core_is_a_package() -> None:
    folders = {p.parent for p in (ROOT / "core").rglob("*.py")}
    loose = sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").is_file())
    assert not loose, f"add an __init__.py with a map of its modules to: {loose}"


def test_every_package_docstring_maps_its_modules() -> None:
    packages = _packages(ROOT)
    assert ROOT / "core" in packages and ROOT / "core" / "chunk" in packages
    problems = [p for package in packages for p in _map_problems(package, ROOT)]
    assert not problems, "\n".join(problems)


def test_docstrings_name_only_what_exists() -> None:
    modules = _modules(ROOT)
    problems = [p for path in modules.values() for p in _name_problems(path, ROOT, modules)]
    assert not problems, "\n".join(problems)


def test_a_wrong_map_is_caught(tmp_path: Path) -> None:
    package = tmp_path / "core" / "pkg"
    (package / "sub").mkdir(parents=True)
    (tmp_path / "core" / "__init__.py").write_text('"""Modules:\n\n- ``pkg``: it."""\n')
    (package / "sub" / "__init__.py").write_text("")
    for name in ("kept", "forgotten"):
        (package / f"{name}.py").write_text("VALUE = 1\n")
    (package / "__init__.py").write_text(
        '"""A package (``kept.py``, ``gone.py``; ``core.pkg.kept.VALUE``,\n'
        "``core.pkg.kept.OTHER``, ``core.pkg.ghost``).\n\nModules:\n\n"
        "- ``kept``: a module,\n  said on two lines;\n- ``sub``: a subpackage;\n"
        "- ``ghost``: no such module;\n- ``kept`` / ``sub``: two on one line.\n"
        '\nProse after the map.\n"""\n'
    )
    assert _packages(tmp_path) == [tmp_path / "core", package, package / "sub"]
    assert _map_problems(tmp_path / "core", tmp_path) == []
    assert _map_problems(package, tmp_path) == [
        "core/pkg: not one module a line: '- ``kept`` / ``sub``: two on one line.'",
        "core/pkg: modules missing from the map: ['forgotten']",
        "core/pkg: listed but not modules of the package: ['ghost']",
    ]
    assert _map_problems(package / "sub", tmp_path) == [
        "core/pkg/sub: no docstring (write one with the map of its modules)"
    ]
    modules = _modules(tmp_path)
    assert _name_problems(package / "__init__.py", tmp_path, modules) == [
        "core/pkg/__init__.py: names gone.py, which does not exist",
        "core/pkg/__init__.py: names core.pkg.kept.OTHER, which does not exist",
        "core/pkg/__init__.py: names core.pkg.ghost, which does not exist",
    ]
