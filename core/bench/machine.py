"""The machine a benchmark ran on: cores, load, torch threads, device, library versions.

Load averages are read at the start and at the end of the run: on a shared machine they
say how much of the noise came from other processes.
"""

from __future__ import annotations

import os
import platform
from importlib import metadata
from typing import Any

LIBRARIES: tuple[str, ...] = (
    "chunkscope",
    "torch",
    "transformers",
    "tokenizers",
    "sentence-transformers",
    "chromadb",
    "pymupdf",
    "chonkie",
    "numpy",
    "streamlit",
)


def library_versions() -> dict[str, str | None]:
    """Installed versions (``None`` when a package is missing); imports nothing."""
    found: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def usable_cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def machine_info(device: str) -> dict[str, Any]:
    """Facts about this machine for ``device`` (``cpu`` or ``cuda``)."""
    import torch

    cuda = torch.cuda.is_available()
    device_name = platform.processor() or platform.machine()
    if device == "cuda" and cuda:
        device_name = torch.cuda.get_device_name(0)
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable_cores(),
        "torch_threads": torch.get_num_threads(),
        "cuda_available": cuda,
        "device": f"{device} ({device_name})",
        "load_average_1m_start": load_average(),
        "libraries": library_versions(),
        "pdf_text_reader": _text_reader(),
    }


def _text_reader() -> str:
    """Which reading of a PDF page's characters the parse timings used."""
    from core.native import stext as stext_native

    return "compiled" if stext_native.available() else "rawdict"
