"""The Chroma client behind a ``ChunkStore``, and what its failures mean to a user.

A folder opens a ``PersistentClient``; ``HOST:PORT`` an ``HttpClient`` whose heartbeat
must answer. Telemetry is off. A server that cannot be reached at open, or that stops
answering later, becomes a ``StoreError`` / ``StoreLostError`` with one line that says
what to do.
"""

from __future__ import annotations

from typing import Any

from core.config import StoreLocation
from core.errors import StoreError, StoreLostError


def connect(location: StoreLocation) -> Any:
    """A Chroma client for ``location`` (the folder is created when missing)."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    try:
        if location.host is not None and location.port is not None:  # a server
            client = chromadb.HttpClient(host=location.host, port=location.port, settings=settings)
            client.heartbeat()
            return client
        assert location.path is not None
        location.path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(location.path), settings=settings)
    except Exception as exc:
        if location.is_server:
            raise StoreError(
                f"cannot reach a Chroma server at {location.host}:{location.port}: start "
                f"one with `chroma run --path DIR --port {location.port}` or fix "
                "--chroma-host / $CHUNKSCOPE_CHROMA"
            ) from exc
        raise StoreError(
            f"cannot open the store folder {location.path}: {exc}; pass --store DIR"
        ) from exc


def lost_server(location: StoreLocation, exc: Exception) -> StoreLostError | None:
    """The one-line error for a server connection that failed or broke mid-run (not a
    refused request, nor any failure of an embedded store); None otherwise."""
    import httpx

    if not (location.is_server and isinstance(exc, (httpx.TransportError, ConnectionError))):
        return None
    return StoreLostError(
        f"the Chroma server at {location.host}:{location.port} stopped answering "
        f"({type(exc).__name__}: {exc}); start it again and rerun: what was stored stays, "
        "an interrupted document is rewritten without duplicates"
    )
