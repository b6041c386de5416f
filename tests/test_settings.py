"""The environment variables: every ``CHUNKSCOPE_*`` name in the code is declared in
``core.settings`` and documented, docs/cli.md's table is the settings' own, core reads
them only through the settings, and each is read, typed and refused as it says."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from core import settings
from core.errors import ChunkscopeError, LimitExceededError
from core.ingest import limits

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\bCHUNKSCOPE_[A-Z0-9_]*[A-Z0-9]\b")
DECLARED = {s.name for s in settings.SETTINGS}


def _code_files() -> list[Path]:
    """The application's Python files: core, the workbench, the pages and app.py."""
    files = [ROOT / "app.py"]
    for folder in ("core", "workbench", "pages"):
        files += sorted((ROOT / folder).rglob("*.py"))
    return files


def _doc_rows() -> list[str]:
    """The rows of docs/cli.md's table of variables (header and rule included)."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("## Configuration", 1)[1]
    return [line for line in section.splitlines() if line.startswith("|")]


def test_every_name_in_the_code_is_declared_and_documented() -> None:
    used = {
        (name, path.relative_to(ROOT).as_posix())
        for path in _code_files()
        for name in NAME.findall(path.read_text(encoding="utf-8"))
    }
    assert not {(n, where) for n, where in used if n not in DECLARED}, "add it to core.settings"
    assert len(DECLARED) == len(settings.SETTINGS)  # no name declared twice
    for setting in settings.SETTINGS:
        assert setting.default_text and setting.unit and setting.what, setting.name
        assert "|" not in setting.default_text + setting.unit + setting.what, setting.name
        assert settings.by_name(setting.name) is setting


def test_the_docs_table_is_the_settings_table() -> None:
    documented = [row.split("|")[1].strip().strip("`") for row in _doc_rows()[2:]]
    assert sorted(documented) == sorted(DECLARED)
    assert "\n".join(_doc_rows()) == settings.markdown_table(), (
        "docs/cli.md's Configuration table differs from core.settings: paste "
        "`python -c 'from core import settings; print(settings.markdown_table())'`"
    )


def _env_key(node: ast.AST) -> ast.AST | None:
    """The key of an environment read (``os.environ.get(k)``, ``os.environ[k]``,
    ``os.getenv(k)``), else None."""
    if isinstance(node, ast.Call) and node.args:
        called = ast.unparse(node.func)
        return node.args[0] if called in ("os.environ.get", "os.getenv", "getenv") else None
    is_read = isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load)
    if is_read and ast.unparse(node.value) in ("os.environ", "environ"):
        return node.slice
    return None


def _bypasses(source: str) -> list[str]:
    """What ``source`` does with a variable behind the settings' back: a name spelled
    out (``"CHUNKSCOPE_X"``), or an environment read of one (by a literal or by an
    ``ENV_*`` / ``*_ENV`` constant)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and NAME.fullmatch(str(node.value)):
            found.append(f"spells {node.value}")
        key = _env_key(node)
        named = isinstance(key, ast.Name) and (key.id.startswith("ENV_") or key.id.endswith("_ENV"))
        if named or (isinstance(key, ast.Constant) and NAME.match(str(key.value))):
            found.append(f"reads {ast.unparse(key)}")
    return found


def test_the_bypass_check_sees_a_bypass() -> None:
    source = 'A = os.environ.get("CHUNKSCOPE_X")\nB = os.environ[ENV_STORE]\nC = os.getenv(KEY_ENV)'
    assert sorted(_bypasses(source)) == [
        "reads 'CHUNKSCOPE_X'", "reads ENV_STORE", "reads KEY_ENV", "spells CHUNKSCOPE_X"
    ]  # fmt: skip
    assert _bypasses('os.environ.get(key_env, "")\nos.environ.get("HOME")') == []


def test_core_reads_the_variables_only_through_the_settings() -> None:
    found = {
        path.relative_to(ROOT).as_posix(): bypasses
        for path in sorted((ROOT / "core").rglob("*.py"))
        if path != ROOT / "core" / "settings.py"
        and (bypasses := _bypasses(path.read_text(encoding="utf-8")))
    }
    assert not found, "name and read the variables through core.settings (SETTING.read())"


def test_a_value_is_read_when_asked_and_blank_is_unset(monkeypatch) -> None:
    monkeypatch.delenv("CHUNKSCOPE_STORE", raising=False)
    assert settings.STORE.read() is None
    monkeypatch.setenv("CHUNKSCOPE_STORE", "  ~/somewhere ")
    assert settings.STORE.read() == Path.home() / "somewhere"
    monkeypatch.setenv("CHUNKSCOPE_STORE", "   ")
    assert settings.STORE.read() is None
    monkeypatch.setenv("CHUNKSCOPE_EDITOR_KEY", "  ")  # a key set to nothing is still set
    assert settings.EDITOR_KEY.read() == ""
    monkeypatch.delenv("CHUNKSCOPE_EDITOR_KEY")
    assert settings.EDITOR_KEY.read() is None


@pytest.mark.parametrize(
    ("setting", "raw", "expected"),
    [
        (settings.NATIVE_TEXT, "", True),
        (settings.NATIVE_TEXT, "Off", False),
        (settings.NATIVE_TEXT, "1", True),
        (settings.REFERENCE_REBUILD, "", False),
        (settings.REFERENCE_REBUILD, "1", True),
        (settings.OCR, "", "auto"),
        (settings.OCR, " Never", "never"),
        (settings.STATE_CACHE_MB, "", 2048),
        (settings.STATE_CACHE_MB, "3", 3),
        (settings.TORCH_THREADS, "", None),
        (settings.TORCH_THREADS, "2", 2),
        (settings.VECTOR_CACHE, "OFF", "off"),
        (settings.VECTOR_CACHE, "/tmp/v", Path("/tmp/v")),
        (settings.MAX_PAGES, "", 5000),
        (settings.MAX_PAGES, "12.5", 12.5),
    ],
)
def test_values_are_typed(monkeypatch, setting, raw, expected) -> None:
    monkeypatch.setenv(setting.name, raw)
    assert setting.read() == expected


@pytest.mark.parametrize(
    ("setting", "raw", "error", "message"),
    [
        (settings.OCR, "sometimes", ChunkscopeError, "CHUNKSCOPE_OCR must be one of auto, always"),
        (settings.STATE_CACHE_MB, "0", ChunkscopeError, "positive number of MB, got '0'"),
        (settings.TORCH_THREADS, "many", ChunkscopeError, "CHUNKSCOPE_TORCH_THREADS must be"),
        (settings.MAX_PAGES, "lots", LimitExceededError, "CHUNKSCOPE_MAX_PAGES='lots' is not"),
        (settings.MAX_PAGES, "-1", LimitExceededError, "CHUNKSCOPE_MAX_PAGES must be positive"),
    ],
)
def test_a_bad_value_is_refused_in_one_line(monkeypatch, setting, raw, error, message) -> None:
    monkeypatch.setenv(setting.name, raw)
    with pytest.raises(error, match=re.escape(message)):
        setting.read()


def test_exported_sets_the_variable_for_a_block(monkeypatch) -> None:
    monkeypatch.delenv("CHUNKSCOPE_OCR", raising=False)
    with settings.OCR.exported("never"):
        assert settings.OCR.read() == "never"
    assert settings.OCR.read() == "auto"
    monkeypatch.setenv("CHUNKSCOPE_OCR", "always")
    with pytest.raises(RuntimeError), settings.OCR.exported("never"):
        raise RuntimeError
    assert settings.OCR.read() == "always"


def test_the_limits_take_their_variable_and_default_from_the_settings() -> None:
    for limit in limits.LIMITS.values():
        assert limit.setting in settings.SETTINGS
        assert (limit.env, limit.default) == (limit.setting.name, limit.setting.default)
