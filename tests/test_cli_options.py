"""The commands share their helpers through ``core.cli.options`` (and print runs through
``core.cli.run_table``): no command module imports another, and a run's ``EvalConfig`` is
built from the flags in one function, so ``eval``, ``check`` and ``sweep`` cannot drift."""

from __future__ import annotations

import ast
from pathlib import Path

from core.cli import COMMAND_MODULES

CLI = Path(__file__).resolve().parents[1] / "core" / "cli"


def _imported(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return found


def test_no_command_imports_another_command() -> None:
    crossed = {
        (name, other)
        for name in COMMAND_MODULES
        for other in _imported(CLI / f"{name.rsplit('.', 1)[1]}.py")
        if other in COMMAND_MODULES and other != name
    }
    assert not crossed, crossed


def test_one_function_builds_the_eval_config() -> None:
    builders = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef):
                calls = [
                    c for c in ast.walk(node)
                    if isinstance(c, ast.Call) and getattr(c.func, "id", None) == "EvalConfig"
                ]  # fmt: skip
                if calls:
                    builders.append(f"{path.name}:{node.name}")
    assert builders == ["options.py:eval_config"]
