"""Limits that bound the time and memory one input can take.

Every document is read under these limits; past one, loading stops with
``LimitExceededError``, whose one-line message names the limit, the value found, and how
to raise it (the environment variable, and the CLI flag). The defaults keep parse + chunk
of any accepted input under about 2 GB and 60 s on a 2-core machine (measured numbers are
in docs/limits.md).

A value comes from, in order: ``override(...)`` (the CLI flags, for one command), the
environment variable, the default. ``0`` or a negative value is refused (a limit cannot
be switched off).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NoReturn

from core import settings
from core.errors import LimitExceededError

__all__ = ["LIMITS", "Limit", "check", "exceeded", "override", "value"]


@dataclass(frozen=True, slots=True)
class Limit:
    """One limit: its key, unit, its environment variable (``core.settings``: the
    variable's name and the default) and CLI flag."""

    key: str
    unit: str  # "characters"
    what: str  # "characters a page": the limit's name in the error message
    setting: settings.Setting[float]
    flag: str

    @property
    def default(self) -> float:
        return self.setting.default

    @property
    def env(self) -> str:
        return self.setting.name

    def how_to_raise(self) -> str:
        return f"raise it with {self.flag} N or {self.env}=N"


LIMITS: dict[str, Limit] = {
    limit.key: limit
    for limit in (
        Limit("file_mb", "MB", "MB a file", settings.MAX_FILE_MB, "--max-file-mb"),
        Limit("pages", "pages", "pages a document", settings.MAX_PAGES, "--max-pages"),
        Limit(
            "page_content_mb", "MB of content", "MB of decoded content a page",
            settings.MAX_PAGE_CONTENT_MB, "--max-page-content-mb",
        ),
        Limit(
            "content_mb", "MB of content", "MB of decoded content a document",
            settings.MAX_CONTENT_MB, "--max-content-mb",
        ),
        Limit(
            "page_chars", "characters", "characters a page", settings.MAX_PAGE_CHARS,
            "--max-page-chars",
        ),
        Limit(
            "chars", "characters", "characters a document", settings.MAX_CHARS, "--max-chars"
        ),
        Limit("lines", "lines", "lines a document", settings.MAX_LINES, "--max-lines"),
        Limit(
            "markdown_tokens", "Markdown block tokens", "Markdown block tokens a document",
            settings.MAX_MARKDOWN_TOKENS, "--max-markdown-tokens",
        ),
        Limit(
            "layout_s", "seconds in the layout model", "seconds of layout model a document",
            settings.LAYOUT_TIMEOUT_S, "--layout-timeout",
        ),
        Limit(
            "ocr_page_s", "seconds of OCR", "seconds of OCR a page", settings.OCR_TIMEOUT_S,
            "--ocr-timeout",
        ),
        Limit(
            "ocr_s", "seconds of OCR", "seconds of OCR a document", settings.OCR_DOCUMENT_S,
            "--ocr-document-timeout",
        ),
    )
}  # fmt: skip

_overrides: dict[str, float] = {}


def value(key: str) -> float:
    """The limit in force for ``key`` (override, else environment, else default)."""
    if key in _overrides:
        return _overrides[key]
    return LIMITS[key].setting.read()


@contextmanager
def override(**values: float | None) -> Iterator[None]:
    """Limits set for the duration of a ``with`` block (None keeps the current one)."""
    previous = dict(_overrides)
    for key, number in values.items():
        if key not in LIMITS:
            raise KeyError(key)
        if number is not None:
            if number <= 0:
                raise LimitExceededError(f"{LIMITS[key].flag} must be positive, got {number:g}")
            _overrides[key] = float(number)
    try:
        yield
    finally:
        _overrides.clear()
        _overrides.update(previous)


def check(key: str, found: float, name: str, *, where: str = "") -> None:
    """Raise ``LimitExceededError`` when ``found`` exceeds the limit ``key``.

    ``name`` is the file's name; ``where`` says where in it (``"page 3"``)."""
    limit = value(key)
    if found <= limit:
        return
    shown, bound = _number(found), _number(limit)
    if shown in (bound, f"{limit:.1f}"):  # 5.0004 MB against 5: not "5.0, over the limit of 5"
        shown = f"more than {bound}"
    _refuse(key, shown, bound, name, where)


def exceeded(key: str, name: str, *, where: str = "") -> NoReturn:
    """Raise the ``LimitExceededError`` of ``key`` for work stopped as it went past the
    limit ("more than N"), when the whole count was never made."""
    bound = _number(value(key))
    _refuse(key, f"more than {bound}", bound, name, where)


def _refuse(key: str, shown: str, bound: str, name: str, where: str) -> NoReturn:
    spec = LIMITS[key]
    place = f" {where}" if where else ""
    raise LimitExceededError(
        f"{name}{place} has {shown} {spec.unit}, over the limit of {bound} {spec.what}; "
        f"{spec.how_to_raise()}"
    )


def _number(value: float) -> str:
    """``3044751`` -> ``"3,044,751"``; ``7.25`` -> ``"7.2"``; ``5.0`` -> ``"5"``."""
    if value >= 10 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:.1f}"
