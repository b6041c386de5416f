"""The compiled PDF reader, ``core.native._stext`` (``core/native/stext.c``), as an
optional extension of the package: ``pip install -e .`` builds it against the MuPDF
headers and library inside the installed PyMuPDF wheel; the compiled word scanners,
``core.native._words`` (``core/native/words.c``, Python's headers only), the same way;
and the workbench (``app.py``, ``pages/``, ``workbench/``, ``sample_docs/``,
``.streamlit/config.toml``) copied into the built package as ``chunkscope/app/``, where
``chunkscope ui`` starts it (the repository keeps its layout; an editable install runs the
checkout's own ``app.py``). Everything else about the package is in pyproject.toml.

PyMuPDF must be importable where the build runs: the Makefile installs the pinned
requirements first and then runs ``pip install --no-build-isolation --no-deps -e .``, so
the module is compiled against the very PyMuPDF that loads it. Where the build cannot
run (no C compiler, no Python or MuPDF headers, no PyMuPDF, no MuPDF library to link),
the installation goes on without the module, one line says so, and PDFs are read in
Python (``core.native.stext`` says which reader is in use); likewise words are scanned
by regular expressions where the word scanners cannot be built (``core.native.words``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import BaseError, CCompilerError

SOURCE = "core/native/stext.c"
WORDS_SOURCE = "core/native/words.c"  # the word scanners: Python's headers only
ROOT = Path(__file__).resolve().parent
# The workbench, as the wheel carries it under chunkscope/app/ (relative to the checkout).
APP_FILES = ("app.py", ".streamlit/config.toml")
APP_TREES = ("pages", "workbench", "sample_docs")


def mupdf_paths() -> tuple[Path, Path]:
    """The include folder and the shared MuPDF C library of the installed PyMuPDF."""
    import pymupdf  # the one that will load the module (see the module docstring)

    folder = Path(pymupdf.__file__).parent
    include = folder / "mupdf-devel" / "include"
    if not (include / "mupdf" / "fitz.h").is_file():
        raise FileNotFoundError(f"no MuPDF headers in {include}")
    libraries = [
        p
        for pattern in ("libmupdf.so*", "libmupdf*.dylib")
        for p in folder.glob(pattern)
        if "cpp" not in p.name
    ]
    if not libraries:
        raise FileNotFoundError(f"no MuPDF C library in {folder}")
    return include, sorted(libraries)[-1]


class OptionalBuild(build_ext):
    """``build_ext`` that never fails the installation: a module that cannot be built is
    left out with one line on stderr."""

    def build_extension(self, ext: Extension) -> None:
        reader = ext.name == "core.native._stext"
        try:
            if reader:
                include, library = mupdf_paths()
                ext.include_dirs = [str(include)]
                ext.extra_objects = [str(library)]  # linked by path: its soname is recorded
                ext.extra_link_args = [f"-Wl,-rpath,{library.parent}"]
            super().build_extension(ext)
        except (ImportError, OSError, BaseError, CCompilerError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            what, fallback = (
                ("PDF reader", "PDFs are read") if reader else ("word scanner", "words are scanned")
            )
            print(
                f"chunkscope: compiled {what} not built ({reason[:300]}); {fallback} in Python",
                file=sys.stderr,
            )

    def copy_file(self, infile: str, outfile: str, *args: Any, **kwargs: Any) -> Any:
        """The built module copied next to its source as a new file, never written over
        the old one: a process that loaded the old one keeps reading it."""
        Path(outfile).unlink(missing_ok=True)
        return super().copy_file(infile, outfile, *args, **kwargs)


class BuildWithWorkbench(build_py):
    """``build_py`` that also copies the workbench into ``chunkscope/app/`` (see the
    module docstring); an editable install builds nothing here and runs the checkout."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "chunkscope" / "app"
        files = [ROOT / name for name in APP_FILES]
        for tree in APP_TREES:
            files += [p for p in (ROOT / tree).rglob("*") if p.is_file() and _shipped(p)]
        for source in files:
            if source.is_file():
                dest = target / source.relative_to(ROOT)
                self.mkpath(str(dest.parent))
                self.copy_file(str(source), str(dest), preserve_mode=False)


def _shipped(path: Path) -> bool:
    return "__pycache__" not in path.parts and path.suffix not in (".pyc", ".so")


setup(
    ext_modules=[
        Extension(
            "core.native._stext",
            [SOURCE],
            depends=[SOURCE],
            optional=True,
            # no fused multiply-add: every float step as Python's own (tested equal)
            extra_compile_args=["-ffp-contract=off"],
        ),
        Extension("core.native._words", [WORDS_SOURCE], depends=[WORDS_SOURCE], optional=True),
    ],
    cmdclass={"build_ext": OptionalBuild, "build_py": BuildWithWorkbench},
)
