"""The workbench by page: each page imports only its own package and the shared ones.

Read from the source with ``ast``, without importing anything (importing a page would run
it). The workbench has two kinds of package:

- shared (``SHARED``): the frame and roles, the session's documents, common widgets, the
  engine that runs work, and ``workbench.state``; any page or package may import them,
  and they import no page's package;
- a page's own (``PAGE_PACKAGES``): imported by that page (``pages/<name>.py``) and by
  modules of that package, never by another page or package.

Every package under ``workbench/`` is one or the other, so a new one must be placed here.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = frozenset({"frame", "documents", "widgets", "engine", "state"})
# page script name -> its own package under workbench/ (Parse and Chunks draw only shared parts)
PAGE_PACKAGES = {
    "library": "library",
    "source": "source",
    "compare": "compare",
    "map": "map",
    "evaluate": "evaluate",
    "tune": "tune",
}


def workbench_imports(path: Path) -> set[str]:
    """The ``workbench.<package>`` names a file imports (anywhere in it)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] != "workbench":
                continue
            if len(parts) > 1:
                found.add(parts[1])
            else:  # from workbench import frame, ...
                found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "workbench" and len(parts) > 1:
                    found.add(parts[1])
    return found


def owner(path: Path) -> str:
    """``page:<name>`` for a page script, else the workbench package (or module) it is in."""
    rel = path.relative_to(ROOT)
    if rel.parts[0] == "pages":
        return f"page:{path.stem}"
    if rel.parts[0] == "app.py" or rel.name == "app.py":
        return "app"
    return rel.parts[1].removesuffix(".py")


def violations(imports: Mapping[str, Iterable[str]]) -> list[str]:
    """Every import that breaks the rules, as ``"<owner> imports <package>"``, for a map of
    owner (``page:<name>``, ``app`` or a workbench package) to the packages it imports."""
    wrong = []
    for who, used in imports.items():
        for package in sorted(set(used)):
            if package in SHARED or package == who:
                continue
            if who.startswith("page:") and PAGE_PACKAGES.get(who[5:]) == package:
                continue
            wrong.append(f"{who} imports {package}")
    return wrong


def _all_imports() -> dict[str, set[str]]:
    files = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]
    files += sorted((ROOT / "workbench").rglob("*.py"))
    imports: dict[str, set[str]] = {}
    for path in files:
        imports.setdefault(owner(path), set()).update(workbench_imports(path))
    return imports


def test_every_workbench_package_is_shared_or_a_pages() -> None:
    packages = {p.name for p in (ROOT / "workbench").iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in (ROOT / "workbench").glob("*.py") if p.stem != "__init__"}
    assert packages | modules == SHARED | set(PAGE_PACKAGES.values())


def test_every_page_package_has_its_page() -> None:
    pages = {p.stem for p in (ROOT / "pages").glob("*.py")}
    assert set(PAGE_PACKAGES) <= pages


def test_pages_import_only_their_own_package_and_the_shared_ones() -> None:
    assert violations(_all_imports()) == []


def test_no_flat_private_modules_are_left() -> None:
    assert not list((ROOT / "workbench").glob("_ui*.py"))


def test_the_rules_catch_a_page_reaching_into_another_pages_package() -> None:
    imports = _all_imports()
    imports["page:map"] = imports["page:map"] | {"evaluate"}
    imports["widgets"] = imports["widgets"] | {"tune"}
    imports["compare"] = imports["compare"] | {"source"}
    assert sorted(violations(imports)) == [
        "compare imports source",
        "page:map imports evaluate",
        "widgets imports tune",
    ]


def test_imports_are_read_from_every_form_of_import(tmp_path: Path) -> None:
    script = tmp_path / "page.py"
    script.write_text(
        "from workbench import frame\n"
        "import workbench.tune.sweep_panel\n"
        "def f():\n    from workbench.evaluate.triage import step\n"
    )
    assert workbench_imports(script) == {"frame", "tune", "evaluate"}
