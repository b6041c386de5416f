"""Chunkscope installed as a user installs it, for the tests of the installed package: a
fresh virtual environment (``python -m venv`` from the interpreter behind this one), the
project put into it by pip from its wheel or from a copy of the checkout (``pip install
.``), run from a folder of its own with no ``PYTHONPATH``, so nothing comes from the
checkout.

Offline: the new environment's dependencies are the ones already installed beside this
interpreter, made visible to it by a ``.pth`` file (nothing is downloaded, torch is not
installed twice), and pip runs with ``--no-index --no-deps --no-build-isolation``. The
environment's own ``site-packages`` comes first on its path, so what pip installed there
is what it imports."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.servers import free_port, stop_group, wait_healthy

ROOT = Path(__file__).resolve().parents[1]
PIP = ("-m", "pip", "--disable-pip-version-check", "--no-input")
OFFLINE = ("--no-index", "--no-deps", "--no-build-isolation", "-q")


def copy_checkout(work: Path) -> Path:
    """A copy of the checkout (its files git knows or would add) in ``work/src``: what a
    clone holds, without the build outputs and the ``.venv`` of this one."""
    if shutil.which("git") is None:
        pytest.skip("git is needed to list the checkout's files")
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=ROOT, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    source = work / "src"
    for name in filter(None, listed):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    return source


def _ran(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``command`` run to its end; its output is the failure's message when it fails."""
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False,
                          **kwargs)  # fmt: skip
    assert done.returncode == 0, f"{' '.join(command)}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    return done


def build_wheel(work: Path) -> Path:
    """The wheel of a copy of the checkout, built offline in ``work``."""
    source = copy_checkout(work)
    _ran([sys.executable, *PIP, "wheel", ".", *OFFLINE, "-w", str(work / "out")], cwd=source)
    [found] = (work / "out").glob("chunkscope-*.whl")
    return found


def site_packages(venv: Path) -> Path:
    """The ``site-packages`` folder of the virtual environment ``venv``."""
    return Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))


def fresh_venv(venv: Path) -> Path:
    """A new virtual environment at ``venv`` whose dependencies are this interpreter's
    (one ``.pth`` line per folder of them); returns its ``python``. pip itself comes from
    there too (``python -m pip`` in the new environment installs into it)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    _ran([base, "-m", "venv", "--without-pip", str(venv)])
    here = dict.fromkeys(str(Path(sysconfig.get_path(k)).resolve()) for k in ("purelib", "platlib"))
    site = site_packages(venv)
    assert site.is_dir(), site
    (site / "_chunkscope_test_dependencies.pth").write_text("\n".join(here) + "\n", "utf-8")
    return venv / "bin" / "python"


def pip_install(venv: Path, *what: str, cwd: Path | None = None) -> None:
    """``python -m pip install`` of ``what`` (a wheel, ``.``, a folder) into ``venv``,
    offline."""
    _ran([str(venv / "bin" / "python"), *PIP, "install", *OFFLINE, *what], cwd=cwd, env=env_of())


def installed_venv(work: Path, *, wheel: Path | None = None) -> Path:
    """A fresh virtual environment in ``work/venv`` with Chunkscope installed by pip: from
    ``wheel``, else from a copy of the checkout (``pip install .``)."""
    venv = work / "venv"
    fresh_venv(venv)
    if wheel is not None:
        pip_install(venv, str(wheel))
    else:
        pip_install(venv, ".", cwd=copy_checkout(work))
    return venv


def env_of() -> dict[str, str]:
    """This process's environment without what would import from elsewhere (the path,
    another Python home, a Chroma server) and offline."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env.pop("CHUNKSCOPE_CHROMA", None)
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    return env


def run_in(venv: Path, *command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``command`` (``python`` or a console script of ``venv``'s ``bin/``, then its
    arguments) run from ``cwd``; never raises on its exit status."""
    return subprocess.run(
        [str(venv / "bin" / command[0]), *command[1:]], cwd=cwd, env=env_of(),
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip


@contextlib.contextmanager
def serving(venv: Path, *, store: Path, cwd: Path, address: str = "localhost") -> Iterator[str]:
    """``chunkscope ui --port N --store DIR`` (``venv``'s console script) run from ``cwd``,
    its output in ``cwd/ui.log``; yields ``http://127.0.0.1:N`` once the server answers
    its health check, and stops the server's process group afterwards (``ui`` becomes
    the server)."""
    port = free_port()
    log = cwd / "ui.log"
    command = [str(venv / "bin" / "chunkscope"), "ui", "--port", str(port), "--store", str(store)]
    if address != "localhost":
        command += ["--address", address]
    with log.open("w") as sink:
        server = subprocess.Popen(
            command, cwd=cwd, env=env_of(), stdout=sink, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, server, log, "chunkscope ui")
        yield url
    finally:
        stop_group(server)
