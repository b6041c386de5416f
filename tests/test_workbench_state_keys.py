"""Every session-state key of the workbench is declared once, in ``workbench/state.py``.

Reads the sources (no Streamlit run): no other module of ``workbench/``, ``pages/`` or
``app.py`` spells a ``cs_`` string (f-strings included) or re-exports a key under a name of
its own; in ``state.py`` no two keys are equal, and no prefix (a value ending in ``_`` or
``.``, from which a function there builds the keys made per document, slot or run) starts
a key or a prefix of another area, so two areas can never write one key.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pytest

from workbench import state

ROOT = Path(__file__).resolve().parents[1]
STATE = ROOT / "workbench" / "state.py"
# Modules still spelling keys themselves while they are being changed elsewhere; each is
# removed from here once it builds its keys with ``workbench.state`` (a test below fails
# when one no longer needs to be here).
PENDING_MODULES: tuple[str, ...] = ()
KEY_TEXT = re.compile(r"(?<![A-Za-z0-9_])cs_")


def _modules() -> list[Path]:
    found = [*(ROOT / "workbench").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"]
    return sorted(p for p in found if p != STATE)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _key_strings(path: Path) -> list[str]:
    """``line: text`` of each string constant (f-string parts included) naming a key."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return [
        f"{_rel(path)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and KEY_TEXT.search(node.value)
    ]


def _entries() -> list[tuple[str, str, str]]:
    """(class, attribute, value) of every key and prefix declared in ``state.py``."""
    out = []
    for cls_name, cls in vars(state).items():
        if not inspect.isclass(cls) or cls.__module__ != state.__name__:
            continue
        for name, value in vars(cls).items():
            if not name.startswith("_") and isinstance(value, str):
                out.append((cls_name, name, value))
    return out


def _is_prefix(value: str) -> bool:
    return value.endswith(("_", "."))


def test_no_module_but_state_spells_a_key():
    spelled = [
        hit
        for path in _modules()
        if _rel(path) not in PENDING_MODULES
        for hit in _key_strings(path)
    ]
    assert not spelled, "declare these in workbench/state.py:\n" + "\n".join(spelled)


def test_pending_modules_still_need_their_exception():
    stale = [m for m in PENDING_MODULES if not _key_strings(ROOT / m)]
    assert not stale, f"these spell no key now: drop them from PENDING_MODULES: {stale}"


def test_no_module_re_exports_a_key():
    """A key is read as ``SomeKey.NAME`` where it is used, never copied to a module name."""
    classes = {c for c, _, _ in _entries()}
    copies = []
    for path in _modules():
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
            if (
                isinstance(value, ast.Attribute)
                and isinstance(value.value, ast.Name)
                and value.value.id in classes
            ):
                copies.append(f"{_rel(path)}:{node.lineno}")
    assert not copies, copies


def test_state_spells_keys_only_as_class_attributes():
    """The functions of ``state.py`` build keys from its prefixes, never from a literal."""
    tree = ast.parse(STATE.read_text(encoding="utf-8"))
    declared = {
        id(stmt.value)
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for stmt in cls.body
        if isinstance(stmt, ast.Assign)
    }
    loose = [
        f"state.py:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and KEY_TEXT.search(node.value)
        and id(node) not in declared
        and node is not tree.body[0].value  # the module docstring
    ]
    assert not loose, loose


def test_every_key_is_unique_and_namespaced():
    entries = _entries()
    assert len(entries) > 50  # every area's keys are read, not an empty module
    bad = [f"{c}.{n} = {v!r}" for c, n, v in entries if not v.startswith("cs_")]
    assert not bad, bad
    by_value: dict[str, list[str]] = {}
    for c, n, v in entries:
        by_value.setdefault(v, []).append(f"{c}.{n}")
    shared = {v: names for v, names in by_value.items() if len(names) > 1}
    assert not shared, shared


def test_no_prefix_lets_two_areas_write_one_key():
    """A prefix covers keys of its own area only (``QaKey.PREFIX`` names all of its class),
    and no prefix starts another, so no built key can equal a key or another built key."""
    entries = _entries()
    prefixes = [(c, n, v) for c, n, v in entries if _is_prefix(v)]
    assert prefixes  # the per-document, per-slot and per-run keys are declared here too
    clashes = [
        f"{c}.{n} = {p!r} starts {c2}.{n2} = {v!r}"
        for c, n, p in prefixes
        for c2, n2, v in entries
        if (c2, n2) != (c, n) and v.startswith(p) and (c2 != c or _is_prefix(v))
    ]
    assert not clashes, "\n".join(clashes)


def _builders() -> list:
    return [
        f
        for f in vars(state).values()
        if inspect.isfunction(f)
        and f.__module__ == state.__name__
        and not f.__name__.startswith("_")
    ]


@pytest.mark.parametrize("builder", _builders(), ids=lambda f: f.__name__)
def test_each_built_key_starts_with_one_declared_prefix(builder):
    params = inspect.signature(builder).parameters
    one = builder(*(f"{p}1" for p in params))
    other = builder(*(f"{p}2" for p in params))
    prefixes = [v for _, _, v in _entries() if _is_prefix(v) and one.startswith(v)]
    assert len(prefixes) == 1, (one, prefixes)
    assert one != other  # every argument is part of the key
    assert all(f"{p}1" in one for p in params), one
    assert one not in {v for _, _, v in _entries()}
