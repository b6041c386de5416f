"""mypy on ``core``, the workbench, its pages and ``app.py``, and on the test fakes against
the Protocols they stand in for.

``tests/protocol_checks.py`` assigns every implementation of a swapped part (encoder,
store, a method's index step, the records function), real and fake, to its Protocol,
so this test fails when one drifts from its interface, and on any other type error in
``core``, ``workbench``, ``pages`` or ``app.py`` (the last three fully annotated). The
settings are ``[tool.mypy]`` in pyproject.toml. About 1 min without mypy's
cache, 8 s with it, on this 2-core machine; no timeout, since load only slows it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("core", "workbench", "pages", "app.py", "tests/fakes.py", "tests/protocol_checks.py")


@pytest.mark.typing
def test_mypy_finds_no_error_in_core_the_workbench_or_the_fakes() -> None:
    # No wall-clock limit: on a loaded 2-core machine mypy took longer than any fixed one,
    # and a type check that passes slowly has still passed.
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--explicit-package-bases", *CHECKED],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if "No module named mypy" in done.stderr:
        pytest.fail("mypy is not installed: pip install -r requirements-dev.txt")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout
