"""Deep links to the Source view and what their parameters prove.

A link carries ``doc`` (doc_id), ``span`` (``start-end``, half-open character offsets of
the canonical text) and, when made from a citation, ``sha`` (the cited version's
sha256) and ``qh`` (``quote_hash`` of the quoted text). With both, a link verifies on its
own: the loaded document must have that hash and its slice must hash to ``qh``. A link
whose document changed is stale and is reported as such, never re-pointed.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

from core.provenance.cite import Citation, CitationStatus
from core.provenance.types import Document

# At most 12 digits an offset: no document is near 10**12 characters, and a longer run
# of digits (a crafted link) would make ``int`` refuse it or cost quadratic time.
_SPAN = re.compile(r"([0-9]{1,12})-([0-9]{1,12})")

SOURCE_PATH = "source"


def quote_hash(quote: str) -> str:
    """12 hex digits of the quote's BLAKE2b (UTF-8)."""
    return hashlib.blake2b(quote.encode("utf-8"), digest_size=6).hexdigest()


def source_params(citation: Citation) -> dict[str, str]:
    return {
        "doc": citation.doc_id,
        "span": f"{citation.char_start}-{citation.char_end}",
        "sha": citation.doc_sha256,
        "qh": quote_hash(citation.quote),
    }


def link_url(base: str, params: dict[str, str]) -> str:
    """``base/source?…`` with ``params`` URL-encoded (``base`` empty: a relative link)."""
    prefix = f"{base.rstrip('/')}/" if base else ""
    return f"{prefix}{SOURCE_PATH}?{urlencode(params)}"


def parse_span(value: str) -> tuple[int, int] | None:
    """``"120-180"`` -> ``(120, 180)``; None for anything else (ASCII digits only, at
    most 12 each: ``str.isdigit`` also accepts superscripts, which ``int`` rejects)."""
    match = _SPAN.fullmatch(value)
    if match is None or int(match[2]) < int(match[1]):
        return None
    return int(match[1]), int(match[2])


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkCheck:
    """The verdict on a link: ``status`` plus a headline and one line of detail."""

    status: CitationStatus
    headline: str
    detail: str
    verified: bool = True  # False: nothing in the link to check against

    @property
    def ok(self) -> bool:
        return self.status is CitationStatus.OK

    @property
    def tone(self) -> str:
        """Badge colour: ok (verified), info (nothing to verify), bad (stale/mismatch)."""
        if not self.ok:
            return "bad"
        return "ok" if self.verified else "info"


def check_link(
    doc: Document,
    char_start: int,
    char_end: int,
    *,
    sha: str = "",
    qh: str = "",
    previous_shas: Sequence[str] = (),
) -> LinkCheck:
    """Verify a link against the loaded ``doc``: span inside the text, document hash,
    quote hash. ``previous_shas`` are versions of this doc_id seen earlier (for the text)."""
    if char_end > len(doc.text):
        return LinkCheck(
            status=CitationStatus.MISMATCH,
            headline="Mismatch: the span lies outside the document",
            detail=f"chars {char_start}-{char_end}, but {doc.doc_id} has {len(doc.text):,}",
        )
    if sha and sha != doc.sha256:
        known = " (an earlier version read in this session)" if sha in previous_shas else ""
        return LinkCheck(
            status=CitationStatus.STALE,
            headline="Stale: the document changed since this citation was made",
            detail=f"cited version sha256 {sha[:12]}…{known}; loaded version "
            f"{doc.sha256[:12]}…. The offsets shown point into the loaded version and may "
            "no longer hold the cited text.",
        )
    if qh and qh != quote_hash(doc.text[char_start:char_end]):
        return LinkCheck(
            status=CitationStatus.MISMATCH,
            headline="Mismatch: the offsets do not hold the quoted text",
            detail=f"same document bytes, but chars {char_start}-{char_end} differ from the quote",
        )
    where = f"{doc.doc_id}, sha256 {doc.sha256[:12]}…, chars {char_start}-{char_end}"
    if not sha and not qh:
        return LinkCheck(
            status=CitationStatus.OK,
            headline="Unverified span: the link carries no document hash and no quote hash",
            detail=f"{where}; citations opened from the app always carry both",
            verified=False,
        )
    if not qh:  # the document is the cited one; nothing says the span holds the quote
        return LinkCheck(
            status=CitationStatus.OK,
            headline="Document verified, the span's text was not: the link carries no quote hash",
            detail=f"{where}; the document hash matches, the quoted text is unknown",
            verified=False,
        )
    checked = [
        "the offsets hold the quoted text",
        "the document hash matches" if sha else "",
    ]
    return LinkCheck(
        status=CitationStatus.OK,
        headline="Verified: " + " and ".join(c for c in checked if c),
        detail=where,
    )
