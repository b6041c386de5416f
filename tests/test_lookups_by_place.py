"""Two lookups that answer by place what a whole-text reading answered: a document's word
pairs (``core.diagnose.terms.DocumentPairs`` against ``every_pair``) and a passage's
places in a whitespace-free view (``core.align.exact.SampledIndex`` against ``str.find``),
on corpus texts, crafted edge cases and random text."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from core.align.exact import SampledIndex, exact_candidates, whitespace_free_view
from core.chunk import chunk_document
from core.diagnose import terms as terms_kept
from core.diagnose.terms import ChunkShares, DocumentPairs, chunk_shares, every_pair, phrase_words
from core.formats import load_document, parse_document
from core.methods.lexical import term_spans
from core.provenance.types import ChunkPolicy
from tests.conftest import CORPUS

PDFS = ("sample-sigconf.pdf", "elstest-5p.pdf", "Seige_of_Vicksburg_Sample_OCR.pdf")
FILING = CORPUS / "financebench" / "pdfs" / "MGMRESORTS_2022Q4_EARNINGS.pdf"
EDGES = (
    "10-K and 10\u2011Q; PP&E, Pfizer's net-income 12% % percent change; A-b x\n-y net\n\nincome",
    "Net   Income\nnet income's Inventories inventory ies-ies a-b-c AT&T's T&E-related",
    "\u0130stanbul \u03a3 \u03a3\u0391\u03a3 net sales",  # lower-casing changes the length
    "",
    "%-%  --  net- income _net_ income x_net income",
)


def _scanned(text: str, needle: str, low: int, high: int) -> list[int]:
    out, at = [], text.find(needle, low, high)
    while at >= 0:
        out.append(at)
        at = text.find(needle, at + 1, high)
    return out


def _asked(text: str, rnd: random.Random) -> list[tuple[str, str]]:
    """The text's own pairs and compounds, and pairs it may not hold."""
    full = sorted(every_pair(text))
    forms = sorted({w[2] for w in phrase_words(text)}) or ["net"]
    asked = rnd.sample(full, min(300, len(full)))
    asked += [(rnd.choice(forms), rnd.choice(forms)) for _ in range(300)]
    asked += [("", rnd.choice(forms) + rnd.choice(forms)) for _ in range(60)]
    asked += [(a, b + "x") for a, b in asked[:40]]
    asked += [("percent", "change"), ("net", "income"), ("", "10k"), ("", "10q"), ("", "")]
    return asked


@pytest.mark.corpus
def test_word_pairs_by_place_are_every_pair_on_corpus_texts() -> None:
    rnd = random.Random(3)
    texts = [load_document(CORPUS / "pdfs" / name).text for name in PDFS]
    texts += [load_document(FILING).text, *EDGES]
    checked = held = by_place = batches = 0
    for text in texts:
        full = every_pair(text)
        asked = _asked(text, rnd)
        for first in range(0, len(asked), 40):  # each batch by place (a text asked about
            lazy = DocumentPairs(text)  # more pairs than that is read whole)
            for pair in asked[first : first + 40]:
                assert (pair in lazy) == (pair in full), (pair, text[:40])
                checked += 1
                held += pair in full
            by_place += lazy._all is None  # never read whole
            batches += 1
    assert checked > 3_000 and held > 1_000 and by_place > 0.8 * batches


def test_word_pairs_by_place_on_random_text() -> None:
    rnd = random.Random(9)
    alphabet = "aZn e t -\u2010\u2011\n\t'\u2019s&%_\u0130\u03a3.,"
    for _ in range(3_000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 40)))
        full, lazy = every_pair(text), DocumentPairs(text)
        forms = sorted({w[2] for w in phrase_words(text)}) or ["a"]
        asked = [*full, *((rnd.choice(forms), rnd.choice(forms)) for _ in range(6))]
        asked += [("", rnd.choice(forms) + rnd.choice(forms)) for _ in range(3)]
        for pair in asked:
            assert (pair in lazy) == (pair in full), (pair, text)


def test_a_text_asked_about_many_pairs_is_read_whole_once() -> None:
    text = "Net income rose. " * 50 + "Gross margin fell."
    pairs = DocumentPairs(text)
    asked = [("net", "income"), ("gross", "margin"), ("margin", "fell")] + [
        ("net", f"x{k}") for k in range(60)
    ]
    assert all(pair in pairs for pair in asked[:3])
    assert not any(pair in pairs for pair in asked[3:])
    assert pairs._all is not None  # past the looks by place


def test_a_pair_is_read_as_a_reader_reads_it() -> None:
    text = "Net income rose; the PP&E-related costs and 12% change. Inventories\nsold"
    pairs = DocumentPairs(text)
    assert ("net", "income") in pairs and ("income", "rose") in pairs
    assert ("rose", "the") not in pairs  # a semicolon stands between them
    assert ("", "pp&erelated") in pairs and ("percent", "change") in pairs
    assert ("inventory", "sold") in pairs  # across a line break, plural read as one
    assert ("net", "sales") not in pairs and "net income" not in pairs


def test_word_pairs_by_place_where_whitespace_is_far_or_places_many() -> None:
    """A script without spaces, a line of dashes or of hyphenated words, and a first word
    standing in thousands of places are read whole (bounded time), with the same
    answers."""
    texts = [
        "\u6587" * 30_000 + " net income " + "\u5b57" * 500 + "-x",  # no space for long
        "-" * 50_000 + " net-income rose",
        "a-b " * 6_000 + "net income",
        "net " * 6_000 + "net income",
    ]
    asked = [("net", "income"), ("", "netincome"), ("", "ab"), ("net", "net"), ("income", "x")]
    for text in texts:
        full, lazy = every_pair(text), DocumentPairs(text)
        for pair in asked:
            assert (pair in lazy) == (pair in full), (pair, text[:20])


def test_places_by_the_sampled_index_are_the_scanned_places() -> None:
    rnd = random.Random(5)
    text = load_document(CORPUS / "pdfs" / PDFS[0]).text
    view = whitespace_free_view(text, 0, len(text)).text
    view += "." * 400 + "ab" * 300  # dot leaders and a repeated pair: many places
    index = SampledIndex(view)
    for _ in range(2_000):
        start = rnd.randrange(0, len(view) - 10)
        needle = view[start : start + rnd.choice([5, 30, 35, 36, 60, 200, 900])]
        low = rnd.choice([0, 0, max(0, start - 50), start + 1])
        high = rnd.choice([len(view), len(view), start + len(needle), start + len(needle) - 1])
        assert index.find_all(needle, low, high) == _scanned(view, needle, low, high), (start,)
    for needle in ("." * 60, "ab" * 40, "b" + "ab" * 30, "zzz" * 20):
        assert index.find_all(needle, 0, len(view)) == _scanned(view, needle, 0, len(view))


def test_exact_places_are_the_same_with_and_without_the_index() -> None:
    text = "Net income was $12.5 million.\n\nNet income was $12.5 million in 2022 as well. " * 6
    view = whitespace_free_view(text, 0, len(text))
    index = SampledIndex(view.text)
    for passage in (
        "Net income was $12.5 million.",
        "income was $12.5 million in 2022 as",
        "Net income was $12.5 million. Net income was $12.5 million in 2022",
    ):
        pieces = passage.split()
        plain = list(exact_candidates(text, view, pieces, (0, len(text))))
        assert list(exact_candidates(text, view, pieces, (0, len(text)), index=index)) == plain
        assert plain


def _cut(text: str, bounds: list[tuple[int, int]]) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(chunk_id=f"{len(text)}:{hash(text)}:{a}:{b}", text=text[a:b],
                        char_start=a, char_end=b)
        for a, b in bounds
    ]  # fmt: skip


def _windows(n: int, rnd: random.Random) -> list[tuple[int, int]]:
    """Overlapping windows of random sizes, their ends in order (a splitter's)."""
    out, at = [], 0
    while at < n:
        size = rnd.randint(1, 400)
        out.append((at, min(n, at + size)))
        at += max(1, size - rnd.randint(0, size // 2))
    return out


def _same_shares(text: str, bounds: list[tuple[int, int]], extra: list[str]) -> int:
    terms_kept.forget()
    chunks = _cut(text, bounds)
    full = chunk_shares(chunks)
    lazy = ChunkShares(chunks, text, term_spans(text))
    asked = [*full, *term_spans(text), *extra]
    for term in asked:
        assert lazy.get(term, 0.0) == full.get(term, 0.0), (term, text[:40])
    rnd = random.Random(len(text))
    for _ in range(5):  # the chunks holding any of some terms, as each chunk's words say
        some = rnd.sample(asked, min(3, len(asked)))
        held = {
            c.chunk_id for c in chunks if set(some) & terms_kept.chunk_terms(c.chunk_id, c.text)
        }
        assert ChunkShares(chunks, text, term_spans(text)).holding(some) == held, some
    return len(asked)


@pytest.mark.corpus
def test_chunk_shares_by_term_are_every_chunks_on_corpus_texts() -> None:
    """Read from the document's term spans and the words the chunks' edges cut: the same
    shares as every chunk's words, on corpus texts cut by the structure policy and by
    random windows (cutting words, possessives, apostrophes)."""
    rnd = random.Random(5)
    texts = [load_document(CORPUS / "pdfs" / name) for name in PDFS]
    texts.append(load_document(FILING))
    checked = 0
    for doc in texts:
        chunks = chunk_document(
            doc,
            parse_document(doc).blocks,
            ChunkPolicy(name="structure", size=240, overlap=24, unit="tokens"),
        )
        checked += _same_shares(doc.text, [(c.char_start, c.char_end) for c in chunks], [])
        cuts = _windows(len(doc.text), rnd)
        inner = [(a + 3, b - 2) for a, b in rnd.sample(cuts, 3) if b - a > 6]
        checked += _same_shares(doc.text, cuts + inner, ["pfizer", "s", "zzz"])  # read by
        # place, the chunks inside others from their own words
    for text in EDGES:
        for _ in range(20):
            checked += _same_shares(text, _windows(len(text), rnd), ["pfizer", "s", "net"])
    assert checked > 10_000


def test_chunk_shares_by_term_on_random_text_and_chunks_out_of_order() -> None:
    rnd = random.Random(11)
    alphabet = "aZn e t Pfizer's -\u2010\n\t'\u2019s&%_\u0130\u03a3.,9"
    for _ in range(2_000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(1, 60)))
        bounds = _windows(len(text), rnd)
        _same_shares(text, bounds, ["s", "pfizer", "a"])
        shuffled = [(a, b) for a, b in bounds]
        if len(shuffled) > 1:  # a chunk inside another: read from its own words
            a, b = shuffled[0]
            shuffled.append((a + 1, max(a + 2, b - 1)) if b - a > 3 else (0, len(text)))
            _same_shares(text, shuffled, ["s"])
            rnd.shuffle(shuffled)  # in any order; many inside others: every chunk read
            _same_shares(text, [*shuffled, *((a, a + 1) for a, _ in shuffled)], ["s"])
