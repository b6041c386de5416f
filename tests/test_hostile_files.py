"""Crafted hostile files through ``chunkscope chunk``, each in its own process under a
3 GB address-space cap: every one ends within 60 s either with exact offsets (exit 0,
every chunk equal to its slice of the text) or with exactly one ``error:`` line and exit
2, and each case states which, and which words its line must hold.

The files are generated here (``hostile_files``); nothing big is committed.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import hostile_files as h
import pytest

ROOT = Path(__file__).resolve().parent.parent
ADDRESS_CAP_BYTES = 3 << 30
TIME_LIMIT_S = 60.0
RSS_LIMIT_MB = 2048


@dataclass(frozen=True)
class Case:
    name: str  # the file name it is written under
    make: Callable[[Path], None]  # writes the file (or FIFO, link...) at the given path
    error: str | None  # None: must succeed with exact offsets; else words of the line
    args: tuple[str, ...] = ()


def _bytes(data: bytes | Callable[[], bytes]) -> Callable[[Path], None]:
    return lambda path: path.write_bytes(data() if callable(data) else data)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _device(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _loop(path: Path) -> None:
    path.symlink_to(path.name)


CASES = [
    Case("bomb-4mb.pdf", _bytes(lambda: h.text_bomb_pdf(4_000_000)), "characters a page"),
    Case("bomb-120mb.pdf", _bytes(lambda: h.text_bomb_pdf(120_000_000)), "decompression bomb"),
    Case("image-bomb.pdf", _bytes(lambda: h.image_bomb_pdf(20_000)), None),
    Case("cycle.pdf", _bytes(h.page_tree_cycle_pdf), "cycle in page tree"),
    Case("count-lie.pdf", _bytes(h.count_lie_pdf), "is damaged"),
    Case("surrogate.pdf", _bytes(h.lone_surrogate_pdf), None),
    Case(
        "huge-page.pdf",
        _bytes(h.one_page_pdf(h.text_ops(["Huge."]), media_box=b"[0 0 14400 14400]")),
        None,
    ),
    Case(
        "zero-page.pdf", _bytes(h.one_page_pdf(h.text_ops(["Zero."]), media_box=b"[0 0 0 0]")), None
    ),
    Case("rotate-45.pdf", _bytes(h.one_page_pdf(h.text_ops(["Forty-five."]), rotate=45)), None),
    Case("rotate-91.pdf", _bytes(h.one_page_pdf(h.text_ops(["Ninety-one."]), rotate=91)), None),
    Case("pages-3000.pdf", _bytes(lambda: h.many_pages_pdf(3000)), None),
    Case(
        "off-page-5000.pdf",
        _bytes(lambda: h.off_page_text_pdf(5000)),
        "MB of decoded content a document",
    ),
    Case("mesh-200.pdf", _bytes(lambda: h.mesh_pdf(200)), None),
    Case("meshes-100x40.pdf", _bytes(lambda: h.mesh_pdf(100, n_pages=40)), None),
    Case("chars-200k.pdf", _bytes(lambda: h.many_chars_pdf(200_000)), "characters a page"),
    Case(
        "chars-200k-raised.pdf",
        _bytes(lambda: h.many_chars_pdf(200_000)),
        None,
        ("--max-page-chars", "300000"),
    ),
    Case("form-loop.pdf", _bytes(h.form_loop_pdf), None),
    Case("outline-cycle.pdf", _bytes(h.outline_cycle_pdf), None),
    Case("deep-nesting.pdf", _bytes(h.deep_nesting_pdf), "past a limit of the PDF library"),
    Case("junk.pdf", _bytes(b"%PDF-1.7\n" + bytes(range(256)) * 4000), "not a readable PDF"),
    Case("pdf-marker.txt", _bytes(h.text_file_with_pdf_marker()), None),
    Case("line-50mb.txt", _bytes(lambda: b"word " * 10_000_000), "characters a document"),
    Case("line-4m-chars.txt", _bytes(lambda: b"word " * 799_000), None),
    Case("brackets-3.9m.md", _bytes(lambda: b"[" * 3_900_000), None),  # 3.9 M tokens
    Case(  # 1.9 M cells, three block tokens each: the parse stops at the millionth
        "wide-table.md",
        _bytes(lambda: h.wide_table_markdown(50_000, 37)),
        "Markdown block tokens a document",
    ),
    Case("items-995k-tokens.md", _bytes(lambda: b"- a\n\n" * 199_000), None),  # under the limit
    Case(
        "nested.md",
        _bytes(lambda: b"".join(b"  " * (i % 40) + b"- item\n" for i in range(86_000))),
        None,
    ),
    Case("big.txt", _bytes(lambda: b"a line\n" * 300_000), "--max-file-mb", ("--max-file-mb", "1")),
    Case("lines.txt", _bytes(lambda: b"a\n" * 500_000), "lines a document"),
    Case("controls.txt", _bytes(b"Hello \x1b[31mred\x07 and \xc2\x9b2J.\n\nMore \r text.\n"), None),
    Case("fifo.txt", _fifo, "FIFO"),
    Case("zero-device.txt", _device, "a device"),
    Case("loop.txt", _loop, "symlink loop"),
    Case("new\nline.md", _bytes(b"# Title\n\nBody text.\n"), None),
    Case("[click](javascript:alert(1)) **B** $x^2$.md", _bytes(b"# T\n\nBody.\n"), None),
    Case("binary.txt", _bytes(b"\x00\x01\x02" * 100), "binary file"),
]


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_CAP_BYTES, ADDRESS_CAP_BYTES))


def run_capped(argv: list[str], cwd: Path) -> tuple[int, str, str, float, float]:
    """``(exit status, stdout, stderr, seconds, peak RSS in MB)`` of ``python -m core``."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT)}
    out_path, err_path = cwd / "stdout.txt", cwd / "stderr.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "core", *argv],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            env=env,
            preexec_fn=_cap_memory,
        )
        killer = threading.Timer(TIME_LIMIT_S + 30, proc.kill)
        killer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        killer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        elapsed = time.perf_counter() - started
    return (
        proc.returncode,
        out_path.read_text(encoding="utf-8", errors="replace"),
        err_path.read_text(encoding="utf-8", errors="replace"),
        elapsed,
        usage.ru_maxrss / 1024,
    )


@pytest.mark.parametrize("case", CASES, ids=[c.name.replace("\n", "\\n")[:24] for c in CASES])
def test_hostile_file_ends_in_bounded_time_with_offsets_or_one_line(case: Case, tmp_path: Path):
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / case.name
    case.make(path)
    argv = ["chunk", str(path), "--policy", "structure", "--json", "--with-text", *case.args]
    rc, out, err, elapsed, rss_mb = run_capped(argv, tmp_path)
    assert elapsed < TIME_LIMIT_S, f"{case.name}: {elapsed:.1f} s"
    assert rss_mb < RSS_LIMIT_MB, f"{case.name}: {rss_mb:.0f} MB"
    if case.error is None:
        assert rc == 0, err[-2000:]
        payload = json.loads(out)
        text = payload["document"]["text"]
        assert text.strip(), "an accepted file must keep its text"
        assert not any("\ud800" <= c <= "\udfff" for c in text)
        for chunk in payload["chunks"]:
            assert text[chunk["char_start"] : chunk["char_end"]] == chunk["text"]
        assert payload["chunks"], "an accepted file with text must give chunks"
    else:
        lines = err.splitlines()
        assert rc == 2 and out == "", err[-2000:]
        assert len(lines) == 1 and lines[0].startswith("error: "), err[-2000:]
        assert case.error in lines[0], lines[0]
