"""``chunkscope ui``: start the workbench (``streamlit run app.py``) where Chunkscope is
installed, as ``mlflow ui`` or ``phoenix serve`` start theirs.

The app is the repository's ``app.py`` in a source checkout or an editable install, else
the copy a wheel installs under ``chunkscope/app/`` (``setup.py``; found by
``core.cli.app_files``, which ``open`` shares). The workbench's
settings (``.streamlit/config.toml`` beside the app) are passed as flags, since Streamlit
reads that file only from the working folder; the store is ``--store``, else the one
every command uses from this folder (``core.config``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from core.cli.app_files import UiError, app_path, config_flags
from core.config import ENV_STORE, store_folder


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "ui",
        help="start the workbench in a browser",
        description="Start the Chunkscope workbench (Streamlit) on --port; Ctrl+C stops it.",
    )
    parser.add_argument("--port", type=int, default=8501, help="port to serve on (8501)")
    parser.add_argument(
        "--store", metavar="DIR",
        help=f"the store folder (default: ${ENV_STORE}, else ./.chunkscope)",
    )  # fmt: skip
    parser.add_argument("--address", default="localhost", help="address to listen on (localhost)")
    parser.set_defaults(func=run)


def command(app: Path, port: int, address: str) -> list[str]:
    """The ``streamlit run`` command line that serves ``app`` on ``address:port``."""
    return [
        sys.executable, "-m", "streamlit", "run", str(app), *config_flags(app),
        f"--server.port={port}", f"--server.address={address}",
    ]  # fmt: skip


def run(args: argparse.Namespace) -> int:
    app = app_path()
    env = dict(os.environ)
    if args.store:
        env[ENV_STORE] = str(Path(args.store).resolve())
    where = Path(args.store).resolve() if args.store else store_folder()
    print(f"Chunkscope workbench on http://{args.address}:{args.port} (store {where})", flush=True)
    try:  # the process becomes the server: a signal that stops it stops the server
        os.execve(sys.executable, command(app, args.port, args.address), env)
    except OSError as exc:
        raise UiError(f"could not start Streamlit: {exc}") from None
    return 0  # not reached: execve does not return
