"""The link that opens the Map page on a query and its gold spans (the failure reader's
"show on the map"): ``map?q=<query>&doc=<doc_id>&gold=<start>-<end>[,…]&sha=<sha256>``.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlencode

MAP_PATH = "map"


def map_params(
    query: str, doc_id: str, spans: Sequence[tuple[int, int]], *, doc_sha256: str | None = None
) -> dict[str, str]:
    """The link's parameters (for ``st.page_link("pages/map.py", query_params=...)``)."""
    params = {"q": query, "doc": doc_id, "gold": ",".join(f"{a}-{b}" for a, b in spans)}
    if doc_sha256:
        params["sha"] = doc_sha256
    return params


def map_link(
    query: str, doc_id: str, spans: Sequence[tuple[int, int]], *, doc_sha256: str | None = None
) -> str:
    """``map?q=…&doc=…&gold=a-b,…``: the Map page opened on ``query`` with the gold spans
    of ``doc_id`` marked (half-open character offsets of its canonical text)."""
    return f"{MAP_PATH}?{urlencode(map_params(query, doc_id, spans, doc_sha256=doc_sha256))}"
