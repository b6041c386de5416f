"""Where the chunk store lives: a local folder or a Chroma server.

Resolution order, first match wins:

1. ``--chroma-host HOST:PORT`` (``host=``) given explicitly: a Chroma server.
2. ``--store DIR`` (``path=``) given explicitly: an embedded store in that folder.
3. ``$CHUNKSCOPE_CHROMA`` set: a Chroma server.
4. ``$CHUNKSCOPE_STORE`` set: an embedded store in that folder.
5. ``.chunkscope/`` under the current working directory.

Passing both a folder and a host explicitly is an error: they name two different stores.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core import settings
from core.errors import StoreError

ENV_STORE = settings.STORE.name
ENV_CHROMA = settings.CHROMA.name
DEFAULT_STORE_DIRNAME = ".chunkscope"


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreLocation:
    """Exactly one of ``path`` (embedded store) or ``host``/``port`` (server) is set."""

    path: Path | None = None
    host: str | None = None
    port: int | None = None

    def __post_init__(self) -> None:
        if (self.path is None) == (self.host is None):
            raise ValueError("a store location is either a folder or a server")
        if (self.host is None) != (self.port is None):
            raise ValueError("a server location needs both host and port")

    @property
    def is_server(self) -> bool:
        return self.host is not None

    def describe(self) -> str:
        return f"chroma server {self.host}:{self.port}" if self.is_server else f"{self.path}"


def parse_host(value: str) -> tuple[str, int]:
    """Split ``HOST:PORT`` (``[::1]:8000`` for IPv6) into host and port."""
    text = value.strip()
    if text.startswith(("http://", "https://")):
        raise StoreError(f"give the Chroma server as HOST:PORT without a scheme, not {value!r}")
    host, sep, port_text = text.rpartition(":")
    if text.startswith("["):
        host = host.removeprefix("[").removesuffix("]")
    if not sep or not host or not port_text.isdigit():
        raise StoreError(f"expected HOST:PORT for the Chroma server, got {value!r}")
    port = int(port_text)
    if not 0 < port < 65536:
        raise StoreError(f"port out of range in {value!r}: use 1-65535")
    return host, port


def resolve_store(
    path: str | os.PathLike[str] | None = None, host: str | None = None
) -> StoreLocation:
    """Apply the resolution order above; the folder is made absolute but not created."""
    if path is not None and host is not None:
        raise StoreError("pass either --store DIR or --chroma-host HOST:PORT, not both")
    if host is not None:
        name, port = parse_host(host)
        return StoreLocation(host=name, port=port)
    if path is not None:
        return StoreLocation(path=Path(path).expanduser().resolve())
    env_host = settings.CHROMA.read()
    if env_host:
        name, port = parse_host(env_host)
        return StoreLocation(host=name, port=port)
    return StoreLocation(path=store_folder().resolve())


def store_folder() -> Path:
    """``$CHUNKSCOPE_STORE``, else ``.chunkscope/`` in the working folder (not resolved):
    the embedded store's folder, and for a server where the files beside it live."""
    return settings.STORE.read() or Path.cwd() / DEFAULT_STORE_DIRNAME
