"""The compiled PDF reader's one build path: ``setup.py`` declares ``core.native._stext``
(and the word scanners, ``core.native._words``) as optional extensions of the package,
and a build that cannot run leaves the installation going, says so in one line, and
leaves PDFs (and words) to the Python reading.

(That the two readings give the same text, boxes and tables is ``test_stext_native.py``'s
and the CHUNKSCOPE_NATIVE_TEXT=0 runs' business.)
"""

from __future__ import annotations

import os
import runpy
import subprocess
import sys
from pathlib import Path

import pymupdf
import pytest
import setuptools

ROOT = Path(__file__).resolve().parents[1]
LINE = "PDFs are read in Python"
WORDS_LINE = "words are scanned in Python"


def _build(tmp_path: Path, env: dict[str, str], prelude: str = "") -> subprocess.CompletedProcess:
    """``setup.py build_ext`` into ``tmp_path`` (nothing written in the tree)."""
    script = (
        f"{prelude}import runpy, sys; sys.argv = ['setup.py', 'build_ext', "
        f"'--build-lib', {str(tmp_path / 'lib')!r}, '--build-temp', {str(tmp_path / 'tmp')!r}]; "
        "runpy.run_path('setup.py', run_name='__main__')"
    )
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _built(tmp_path: Path, name: str = "_stext") -> list[Path]:
    return sorted((tmp_path / "lib").rglob(f"{name}*")) if (tmp_path / "lib").exists() else []


def test_the_packaging_declares_the_optional_extension(monkeypatch: pytest.MonkeyPatch) -> None:
    declared: dict = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kw: declared.update(kw))
    runpy.run_path(str(ROOT / "setup.py"), run_name="__main__")
    reader, scanner = declared["ext_modules"]
    assert isinstance(reader, setuptools.Extension) and isinstance(scanner, setuptools.Extension)
    assert reader.name == "core.native._stext" and scanner.name == "core.native._words"
    assert reader.sources == ["core/native/stext.c"] and scanner.sources == ["core/native/words.c"]
    assert all((ROOT / ext.sources[0]).is_file() and ext.optional for ext in (reader, scanner))
    assert declared["cmdclass"]["build_ext"].__name__ == "OptionalBuild"


def test_a_build_without_a_compiler_goes_on_and_says_so_in_one_line(tmp_path: Path) -> None:
    done = _build(tmp_path, {"CC": str(tmp_path / "no-such-cc"), "LDSHARED": "no-such-ld"})
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if LINE in line]
    assert len(said) == 1 and said[0].startswith("chunkscope: compiled PDF reader not built (")
    assert "no-such-cc" in said[0]
    assert _built(tmp_path) == []
    scanner = [line for line in done.stderr.splitlines() if WORDS_LINE in line]
    assert len(scanner) == 1 and scanner[0].startswith("chunkscope: compiled word scanner not ")
    assert _built(tmp_path, "_words") == []


def test_a_build_without_pymupdf_goes_on_and_says_so_in_one_line(tmp_path: Path) -> None:
    done = _build(tmp_path, {}, prelude="import sys; sys.modules['pymupdf'] = None; ")
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if LINE in line]
    assert len(said) == 1 and "pymupdf" in said[0]
    assert _built(tmp_path) == []
    assert WORDS_LINE not in done.stderr  # the word scanner needs no MuPDF
    assert len(_built(tmp_path, "_words")) == 1


def test_without_the_module_the_reader_says_in_one_line_that_python_reads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "one.pdf"
    with pymupdf.open() as pdf:
        pdf.new_page().insert_text((72, 72), "read in Python")
        pdf.save(path)
    probe = (
        "import runpy, sys\n"
        "sys.modules['core.native._stext'] = None  # as after a failed build\n"
        "runpy.run_module('core.native.stext', run_name='__main__')  # make's line\n"
        "from core.formats import load_document\n"
        "from core.native import stext\n"
        "assert not stext.available()\n"
        f"doc = load_document({str(path)!r})\n"
        "print(doc.text.strip(), doc.char_bbox_pt.shape)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CHUNKSCOPE_NATIVE_TEXT"}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "not built" in lines[0] and lines[0].endswith(LINE)
    assert done.stdout.strip() == "read in Python (14, 4)"
