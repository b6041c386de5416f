"""The whitespace-free view (``core.align.exact.whitespace_free_view``), computed on code
points at once, is the view its definition gives: the text's non-whitespace characters
(``\\s`` as Python's ``re`` reads it), each with its canonical offset, and the places
where whitespace stood; and the words of a region sliced by offset are those inside it."""

from __future__ import annotations

import re
import sys

import pytest

from core.align.exact import _whitespace, exact_matches, whitespace_free_view
from core.align.words import words_of
from core.formats import load_document
from core.imported.anchor import DocumentText
from tests.conftest import SAMPLE_DOCS


def reference(text: str, start: int, end: int) -> tuple[str, list[int], list[int]]:
    pieces, offsets = [], []
    for match in re.finditer(r"\S+", text[start:end]):
        pieces.append(match.group())
        offsets.extend(range(start + match.start(), start + match.end()))
    starts = [i for i in range(1, len(offsets)) if offsets[i] - offsets[i - 1] > 1]
    return "".join(pieces), offsets, starts


def test_the_whitespace_it_knows_is_every_code_point_re_calls_whitespace() -> None:
    every = [c for c in range(sys.maxunicode + 1) if re.match(r"\s", chr(c))]
    assert _whitespace().tolist() == every


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "one",
        "  two words\n\tthree\u00a0four\u2003five\u3000six  ",
        "a\ud800b c",  # a lone surrogate, as a damaged text layer can hold
        "ﬁnal\u200bword \u2028line\x1cend",
    ],
)
@pytest.mark.parametrize("cut", [(0, None), (2, -1)])
def test_the_view_is_its_definition(text: str, cut: tuple[int, int | None]) -> None:
    start, end = cut[0], len(text) + (cut[1] or 0)
    start = min(start, end)
    view = whitespace_free_view(text, start, end)
    assert (view.text, view.offsets, view.starts) == reference(text, start, end)


def test_the_view_of_bundled_documents_is_its_definition() -> None:
    for path in sorted(SAMPLE_DOCS.iterdir())[:6]:
        if path.suffix not in (".md", ".txt", ".pdf", ".html"):
            continue
        text = load_document(path).text
        view = whitespace_free_view(text, 0, len(text))
        assert (view.text, view.offsets, view.starts) == reference(text, 0, len(text)), path


def test_matches_read_the_same_with_and_without_the_known_places_of_whitespace() -> None:
    text = "note book and notebook, he said; the said note book"
    view = whitespace_free_view(text, 0, len(text))
    bare = type(view)(text=view.text, offsets=view.offsets)  # starts read from the offsets
    for passage in ("note book", "notebook", "he said", "said", "book and"):
        pieces = passage.split()
        found = list(exact_matches(text, view, pieces, (0, len(text))))
        assert found == list(exact_matches(text, bare, pieces, (0, len(text)))), passage
    assert list(exact_matches(text, view, ["note", "book"], (0, len(text)))) == [(0, 9), (42, 51)]


def test_a_pages_words_sliced_by_offset_are_the_words_inside_it() -> None:
    pdf = next(p for p in sorted(SAMPLE_DOCS.iterdir()) if p.suffix == ".pdf")
    doc = load_document(pdf)
    text = DocumentText(doc)
    every = [w for p in doc.pages for w in words_of(doc.text, p.char_start, p.char_end)]
    assert text.words(0, len(doc.text)) == every
    for start, end in [(0, 50), (17, 4_000), (len(doc.text) // 3, len(doc.text) // 2)]:
        inside = [w for w in every if start <= w.char_start and w.char_end <= end]
        assert text.words(start, end) == inside
