"""Where the workbench's files are, for the commands that start it (``ui``, ``open``):
the repository's ``app.py`` in a source checkout or an editable install, else the copy a
wheel installs under ``chunkscope/app/``, and its ``.streamlit/config.toml`` as flags
(Streamlit reads that file only from the working folder)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import core
from core.errors import ChunkscopeError

PACKAGE_ROOT = Path(core.__file__).resolve().parents[1]


class UiError(ChunkscopeError):
    """The workbench cannot start: no app found, or no Streamlit installed."""


def app_path() -> Path:
    """The workbench's ``app.py``: the checkout's, else the installed copy."""
    for candidate in (PACKAGE_ROOT / "app.py", PACKAGE_ROOT / "chunkscope" / "app" / "app.py"):
        if candidate.is_file() and (candidate.parent / "pages").is_dir():
            return candidate
    raise UiError(
        f"no workbench found beside {PACKAGE_ROOT}: reinstall chunkscope (pip install chunkscope)"
    )


def config_flags(app: Path) -> list[str]:
    """``--section.option=value`` for every setting of the app's ``.streamlit/config.toml``."""
    path = app.parent / ".streamlit" / "config.toml"
    if not path.is_file():
        return []
    flags = []
    for section, options in tomllib.loads(path.read_text(encoding="utf-8")).items():
        for option, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags.append(f"--{section}.{option}={text}")
    return flags
