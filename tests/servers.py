"""A Streamlit server a test starts: a free port, the wait for its health check, and the
stop of its process group (a server started with ``start_new_session=True``). Shared by
the browser tests' app and the installed package's ``chunkscope ui``."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

START_TIMEOUT_S = 90


def free_port() -> int:
    """A port nothing listens on now, on the loopback address."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_healthy(url: str, process: subprocess.Popen, log: Path, what: str) -> None:
    """Return once ``url`` answers Streamlit's health check; ``RuntimeError`` with the tail
    of ``log`` when ``process`` (``what``) exits first, or after ``START_TIMEOUT_S``."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited early:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.status == 200 and answer.read().decode() == "ok":
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{what} did not answer on {url} within {START_TIMEOUT_S} s")


def stop_group(process: subprocess.Popen) -> None:
    """Stop the server's process group: SIGTERM, then SIGKILL if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=5)
