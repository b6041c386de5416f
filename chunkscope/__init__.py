"""Chunkscope, by the project's name: ``import chunkscope`` gives the library (``core``,
docs/layout.md) under it, so an installed pipeline imports ``chunkscope.chunk``,
``chunkscope.formats`` and the rest as ``core.chunk``, ``core.formats`` ... are in this
repository. ``chunkscope.__version__`` is the installed version.

The workbench (``app.py``, ``pages/``, ``workbench/``, the bundled samples) is installed
with the package under ``chunkscope/app/`` and started by ``chunkscope ui``.
"""

from __future__ import annotations

import importlib
import sys
from importlib.metadata import PackageNotFoundError, version

import core

try:
    __version__ = version("chunkscope")
except PackageNotFoundError:  # a source checkout that was never installed
    __version__ = "0+source"

_STAGES = (
    "errors", "settings", "config", "registry", "provenance", "align", "model", "ingest",
    "parse", "formats", "chunk", "embed", "methods", "store", "imported", "index",
    "library", "retrieve", "evaluate", "diagnose", "projection", "tune", "render", "cli",
)  # fmt: skip


def __getattr__(name: str) -> object:
    """``chunkscope.<stage>`` is ``core.<stage>``, imported on first use."""
    if name in _STAGES:
        module = importlib.import_module(f"core.{name}")
        sys.modules.setdefault(f"chunkscope.{name}", module)
        return module
    raise AttributeError(f"module 'chunkscope' has no attribute {name!r}")


__all__ = ["__version__", "core"]
