"""The words of a query, a chunk and a document as the failure signals read them: the
lexical index's terms (``core.methods.lexical.word_spans``: ``\\w+`` runs, lower-cased,
stopwords out, Snowball stems), with the spans they stand at (half-open, into the text
given) and the shares of chunks that hold them."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Container, Iterator, Mapping, Sequence
from dataclasses import dataclass

from core.methods.lexical import WORD, stems_of, term_set, word_spans
from core.provenance.types import Chunk

FIGURE = re.compile(r"\d[\d,]*(?:\.\d+)?%?")  # a figure as a text states it: 1,234.5%


def figure_list(text: str) -> list[str]:
    """The figures a text states, in order, thousands separators and % signs aside."""
    return [m.group().replace(",", "").rstrip("%") for m in FIGURE.finditer(text)]


Span = tuple[int, int]
# A fiscal period as questions write it (FY2022, Q2, Q22023, Q2'2023, H1): a date, not a name.
PERIOD = re.compile(r"(?:fy|cy|h[12]|q[1-4])(?:['’]?\d{2,4})?|\d{1,2}q\d{2,4}", re.I)


def name_like(word: str) -> bool:
    """A name, model number or figure: capitalised after the first letter, or with a digit."""
    return (
        any(ch.isdigit() for ch in word)
        or (word[:1].isupper() and not word.isupper())
        or (len(word) > 1 and word.isupper())
    )


_CHUNK_TERMS: dict[str, frozenset[str]] = {}
CHUNK_TERMS_KEPT = 200_000


def forget() -> None:
    """Drop the chunks' terms and the documents' word pairs kept in memory (a first
    diagnosis of every document again)."""
    _CHUNK_TERMS.clear()
    _PAIRS.clear()


def chunk_terms(chunk_id: str, text: str) -> frozenset[str]:
    """A chunk's terms, kept by its content-addressed id (at most ``CHUNK_TERMS_KEPT``)."""
    found = _CHUNK_TERMS.get(chunk_id)
    if found is None:
        if len(_CHUNK_TERMS) >= CHUNK_TERMS_KEPT:
            _CHUNK_TERMS.clear()
        found = _CHUNK_TERMS[chunk_id] = frozenset(terms_of(text))
    return found


def chunk_shares(chunks: Sequence[Chunk]) -> dict[str, float]:
    """Each term: the share of ``chunks`` that hold it."""
    counts: dict[str, int] = {}
    for chunk in chunks:
        for term in chunk_terms(chunk.chunk_id, chunk.text):
            counts[term] = counts.get(term, 0) + 1
    return {t: n / max(1, len(chunks)) for t, n in counts.items()}


APOSTROPHES = "'\u2019"  # inside a word (lexical.WORD): "Pfizer's" is one word


def _wordy(ch: str) -> bool:
    """``\\w`` of a str pattern: alphanumeric (``str.isalnum``) or the underscore."""
    return ch.isalnum() or ch == "_"


class ChunkShares(Mapping[str, float]):
    """``chunk_shares(chunks)`` read term by term from the document's term spans
    (``spans``: ``lexical.term_spans(text)``), not from every chunk's words: the diagnosis
    asks only for the query's terms. A chunk holds a term when one of its document's
    words with that term stands whole in it, or when the word its edge cuts, read as the
    chunk's own text reads it (a part of a word, a possessive without its "s"), has that
    term; any other word of a chunk is a whole word of the document. A chunk that ends
    before one starting earlier (a chunk inside another) is read whole, from its own words;
    where those are more than ``ODD_SHARE`` of the chunks, and for a listing of every
    term, every chunk is (``chunk_shares``). Equal to ``chunk_shares`` (tested on the
    corpus and on random cuts); ``holding`` names the chunks that hold any of some terms."""

    ODD_SHARE = 0.1

    def __init__(self, chunks: Sequence[Chunk], text: str, spans: Mapping[str, list[Span]]):
        self._chunks = chunks
        self._text = text
        self._spans = spans
        order = sorted(range(len(chunks)), key=lambda i: (chunks[i].char_start, chunks[i].char_end))
        chain: list[int] = []
        self._odd: list[int] = []  # chunks ending before a chunk that starts earlier
        reached = -1
        for i in order:
            if chunks[i].char_end >= reached:
                chain.append(i)
                reached = chunks[i].char_end
            else:
                self._odd.append(i)
        self._chain = chain
        self._starts = [chunks[i].char_start for i in chain]
        self._ends = [chunks[i].char_end for i in chain]
        self._by_place = len(self._odd) <= self.ODD_SHARE * len(chunks)
        self._whole: dict[str, float] | None = None
        self._edges: dict[str, set[int]] | None = None
        self._places: dict[str, list[tuple[int, int]]] = {}

    def _every(self) -> dict[str, float]:
        if self._whole is None:
            self._whole = chunk_shares(self._chunks)
        return self._whole

    def _edge_terms(self) -> dict[str, set[int]]:
        """The terms of the words the chain's chunks' edges cut, each with the chunks
        (their places in the chain) whose edge holds it."""
        if self._edges is not None:
            return self._edges
        text, n = self._text, len(self._text)
        cut: dict[str, set[int]] = {}
        words: list[tuple[int, str]] = []
        for place, (start, end) in enumerate(zip(self._starts, self._ends, strict=True)):
            first = WORD.search(text, start, end)
            if first is None:
                continue
            at = first.start()
            if at > 0 and (
                _wordy(text[at - 1])
                or (text[at - 1] in APOSTROPHES and at > 1 and _wordy(text[at - 2]))
            ):  # the document's word began before the chunk
                words.append((place, first.group().lower()))
            # the chunk's last word, where the document's word goes on past the chunk
            if end - start >= 2 and text[end - 1] in APOSTROPHES and _wordy(text[end - 2]):
                stop = end - 1  # "Pfizer'" then "s": the chunk reads "Pfizer"
                on = end < n and _wordy(text[end])
            elif _wordy(text[end - 1]):
                stop = end
                on = end < n and (
                    _wordy(text[end])
                    or (text[end] in APOSTROPHES and end + 1 < n and _wordy(text[end + 1]))
                )
            else:
                continue
            if not on:
                continue
            back = stop - 1
            while back > start and (
                _wordy(text[back - 1])
                or (text[back - 1] in APOSTROPHES and back - 1 > start
                    and _wordy(text[back - 2]))
            ):  # fmt: skip
                back -= 1
            last = WORD.match(text, back, end)
            if last is None or last.end() != stop:
                raise _Unread
            words.append((place, last.group().lower()))
        stems = stems_of(w for _, w in words)
        for place, word in words:
            term = stems.get(word)
            if term is not None:
                cut.setdefault(term, set()).add(place)
        self._edges = cut
        return cut

    def _placeable(self) -> bool:
        """Whether the shares are read by place (the chunks' edge words read once: a last
        word not read as expected turns every chunk's words on instead)."""
        if self._by_place and self._edges is None:
            try:
                self._edge_terms()
            except _Unread:
                self._by_place = False
        return self._by_place

    def _ranges(self, term: str) -> list[tuple[int, int]]:
        """The chain's places holding ``term``, as ranges ``[lo, hi)`` in order, merged,
        and one place for each edge word with it."""
        found = self._places.get(term)
        if found is not None:
            return found
        starts, ends = self._starts, self._ends
        ranges: list[tuple[int, int]] = []
        for a, b in self._spans.get(term, ()):
            lo, hi = bisect_left(ends, b), bisect_right(starts, a)
            if lo >= hi:
                continue  # no chunk holds this word whole
            if ranges and lo <= ranges[-1][1]:
                ranges[-1] = (ranges[-1][0], max(ranges[-1][1], hi))
            else:
                ranges.append((lo, hi))
        for place in sorted(self._edge_terms().get(term, ())):
            if not any(lo <= place < hi for lo, hi in ranges):
                ranges.append((place, place + 1))
        self._places[term] = ranges
        return ranges

    def _odd_holding(self, term: str) -> list[int]:
        return [i for i in self._odd if term in chunk_terms(self._chunks[i].chunk_id,
                                                            self._chunks[i].text)]  # fmt: skip

    def holding(self, terms: Sequence[str]) -> set[str]:
        """The ids of the chunks that hold any of ``terms``."""
        if self._placeable():
            out: set[str] = set()
            for term in terms:
                for lo, hi in self._ranges(term):
                    out.update(self._chunks[self._chain[p]].chunk_id for p in range(lo, hi))
                out.update(self._chunks[i].chunk_id for i in self._odd_holding(term))
            return out
        wanted = set(terms)
        return {c.chunk_id for c in self._chunks if wanted & chunk_terms(c.chunk_id, c.text)}

    def __getitem__(self, term: str) -> float:
        if not self._placeable():
            return self._every()[term]
        count = sum(hi - lo for lo, hi in self._ranges(term)) + len(self._odd_holding(term))
        if not count:
            raise KeyError(term)
        return count / max(1, len(self._chunks))

    def __iter__(self) -> Iterator[str]:
        return iter(self._every())

    def __len__(self) -> int:
        return len(self._every())


class _Unread(Exception):
    """A chunk's last word not read as expected: every chunk is read instead."""


def first_terms(text: str) -> dict[str, Span]:
    """Each indexed term of ``text`` with the span of its first occurrence."""
    first: dict[str, Span] = {}
    for a, b, term in word_spans(text):
        first.setdefault(term, (a, b))
    return first


def query_terms(query: str) -> dict[str, str]:
    """The query's indexed terms (stems) with the word each came from, in order."""
    return {term: query[a:b] for a, b, term in word_spans(query)}


def terms_of(text: str) -> set[str]:
    """The indexed terms ``text`` holds."""
    return term_set(text)


# -- the query's key terms, as a reader looks them up -----------------------------------

# A word as phrases are matched: letters, digits and "&" (PP&E), a possessive kept with it,
# or a percent sign (read as "percent").
_PHRASE_WORD = re.compile(r"[^\W_]+(?:&[^\W_]+)*(?:['’]s\b)?|%")
HYPHENS = "-‐‑"
_HYPHEN_CHARS = tuple(HYPHENS)
_HYPHEN = re.compile(f"[{HYPHENS}]")
# What may stand between the two words of a phrase: spaces, a hyphen, a line break.
_JOIN = re.compile(f"\\s+|[{HYPHENS}]\\s*")
# What may stand between two words a query's phrase shows joined: spaces and hyphens.
JOINED_GAP = re.compile(f"[{HYPHENS}\\s]*")
# Words that name a metric the question asks to compute (the answer is a computation when
# the document never names it), and the phrases that do so only together.
METRIC_WORDS = frozenset(
    "ratio margin conversion intensive turnover cagr ebitda payout".split()  # noqa: SIM905
)
METRIC_PHRASES = frozenset({("percent", "change"), ("percentage", "change"), ("growth", "rate")})
# Words that qualify or count but never make a term with their neighbour ("three main
# companies", "substantially increased"): they stand alone, looked up by their stem.
LOOSE_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve first second third
    main major key primary significant potential important overall various certain
    specific particular notable new""".split()  # noqa: SIM905
)
# "Define X as ..." and "X (here) is defined as ...": the term a question defines.
_DEFINE_AS = re.compile(r"\bdefine\s+([^.?!:;()]{1,60}?)\s+as\b", re.I)
_DEFINED_AS = re.compile(r"([^.?!:;(),]{1,60}?)\s+(?:here\s+)?(?:is|are)\s+defined\s+as\b", re.I)


def phrase_form(word: str) -> str:
    """A word as phrases compare it: lower case, a possessive and a plural ending off,
    "%" read as "percent" (so "inventories" matches "inventory", "PP&E" only "PP&E")."""
    w = word.lower().replace("’", "'")
    if w == "%":
        return "percent"
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) > 4 and w.endswith("ies"):
        return w[:-3] + "y"
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def phrase_words(text: str) -> list[tuple[int, int, str, bool]]:
    """``(start, end, form, joined)`` of each word of ``text``: ``joined`` when only
    spaces or a hyphen stand between it and the word before (a phrase may span them)."""
    out: list[tuple[int, int, str, bool]] = []
    last = None
    for m in _PHRASE_WORD.finditer(text):
        joined = last is not None and _JOIN.fullmatch(text, last, m.start()) is not None
        out.append((m.start(), m.end(), phrase_form(m.group()), joined))
        last = m.end()
    return out


_PAIRS: dict[tuple[str, str], DocumentPairs] = {}


def document_pairs(doc_id: str, sha256: str, text: str) -> DocumentPairs:
    """The pairs of adjacent words a document holds (``DocumentPairs``), kept per
    document."""
    key = (doc_id, sha256)
    found = _PAIRS.get(key)
    if found is None:
        if len(_PAIRS) >= 64:
            _PAIRS.clear()
        found = _PAIRS[key] = DocumentPairs(text)
    return found


def every_pair(text: str) -> frozenset[tuple[str, str]]:
    """Every pair of adjacent words of ``text`` (their phrase forms, the second joined to
    the first: ``phrase_words``), and each hyphenated compound as one word (``("",
    "10k")`` for "10-K")."""
    words = phrase_words(text)
    pairs = {(a[2], b[2]) for a, b in zip(words, words[1:], strict=False) if b[3]}
    hyphened = {  # a hyphenated compound, also as one word ("10-K" as "10k")
        ("", a[2] + b[2])
        for a, b in zip(words, words[1:], strict=False)
        if b[3] and text[a[1] : b[0]] in _HYPHEN_CHARS
    }
    return frozenset(pairs | hyphened)


class DocumentPairs:
    """``pair in DocumentPairs(text)`` exactly when ``pair in every_pair(text)``, answered
    pair by pair: a diagnosis asks about a few of a query's phrases, and reading every
    word of a filing for them took most of a first diagnosis. A pair's first word is looked
    for where the lower-cased text holds the start of its form (its form less the last
    letter, which a plural or "-ies" may change), at the start of a word; each place is read
    as ``phrase_words`` reads it (from the last whitespace before it: no word spans one),
    with the word after it. A compound is looked for at each hyphen. A text whose
    lower-casing is not character by character (its length changes, or a capital sigma),
    a place with no whitespace within ``_REACH`` characters before it, a first word
    found in more than ``_MOST_STARTS`` places, or a text asked about more than
    ``_MOST_LOOKS`` pairs (the diagnoses of many failures in one filing) is read whole,
    once."""

    def __init__(self, text: str) -> None:
        self.text = text
        lowered = text.lower()  # each character's own (a capital sigma's depends on its
        # neighbours, so a text holding one is read whole)
        plain = len(lowered) == len(text) and "\u03a3" not in text
        self._lowered = lowered if plain else None
        self._answers: dict[tuple[str, str], bool] = {}
        self._all: frozenset[tuple[str, str]] | None = None
        self._compounds: set[str] | None = None

    def __contains__(self, pair: object) -> bool:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            return False
        found = self._answers.get(pair)
        if found is None:
            if len(self._answers) >= _MOST_LOOKS:  # asked often: reading it whole is cheaper
                found = pair in self._whole()
            else:
                found = self._look(str(pair[0]), str(pair[1]))
            self._answers[pair] = found
        return found

    def _look(self, first: str, second: str) -> bool:
        if self._lowered is None or not second:
            return (first, second) in self._whole()
        if not first:
            return second in self.compounds()
        starts = self._starts(first)
        words = self._words_at(starts) if len(starts) <= _MOST_STARTS else None
        if words is None:
            return (first, second) in self._whole()
        return any(
            form == first and phrase_form(after.group()) == second and joined
            for form, after, joined in words
        )

    def _whole(self) -> frozenset[tuple[str, str]]:
        if self._all is None:
            self._all = every_pair(self.text)
        return self._all

    def _starts(self, form: str) -> list[int]:
        """Where a word whose phrase form is ``form`` may start."""
        lowered, text = self._lowered, self.text
        assert lowered is not None
        prefix = form if len(form) <= 2 else form[:-1]  # a short form is its word's
        out = []
        at = lowered.find(prefix)
        while at >= 0:
            if at == 0 or not text[at - 1].isalnum():
                out.append(at)
            at = lowered.find(prefix, at + 1)
        if form == "percent":
            out = sorted({*out, *(m.start() for m in re.finditer("%", text))})
        return out

    def _words_at(self, starts: list[int]) -> list[tuple[str, re.Match[str], bool]] | None:
        """For each start where ``phrase_words`` finds a word: its form, the word after it
        and whether the two are joined; ``None`` when a start has no whitespace near
        enough before it."""
        text = self.text
        out = []
        for at in starts:
            origin = _after_space(text, at)
            if origin is None:
                return None
            found = _PHRASE_WORD.finditer(text, origin)
            for word in found:
                if word.start() < at:
                    continue
                if word.start() == at:
                    after = next(found, None)
                    if after is not None:
                        joined = _JOIN.fullmatch(text, word.end(), after.start()) is not None
                        out.append((phrase_form(word.group()), after, joined))
                break
        return out

    def compounds(self) -> set[str]:
        """Each hyphenated compound of the text as one word (its two forms joined)."""
        if self._compounds is None:
            self._compounds = self._compounds_at_hyphens()
            if self._compounds is None:  # a hyphen without whitespace near: read whole
                self._compounds = {b for a, b in self._whole() if not a}
        return self._compounds

    def _compounds_at_hyphens(self) -> set[str] | None:
        text = self.text
        out: set[str] = set()
        hyphens = [m.start() for m in _HYPHEN.finditer(text)]
        if len(hyphens) > _MOST_STARTS:
            return None
        for at in hyphens:
            origin = _after_space(text, at)
            if origin is None:
                return None
            for word in _PHRASE_WORD.finditer(text, origin):
                if word.end() < at:
                    continue
                if word.end() == at:
                    after = _PHRASE_WORD.search(text, at)
                    if after is not None and after.start() == at + 1:
                        out.add(phrase_form(word.group()) + phrase_form(after.group()))
                break
        return out


def _after_space(text: str, at: int) -> int | None:
    """The offset just past the last whitespace before ``at`` (0 when none): a phrase
    word never holds whitespace, so ``phrase_words`` reads the same words from there;
    ``None`` when no whitespace stands within ``_REACH`` characters before it (a run of
    dashes, or a script written without spaces: the text is then read whole)."""
    low = max(0, at - _REACH)
    found = _TO_LAST_SPACE.match(text, low, at)
    if found is not None:
        return found.end()
    return 0 if low == 0 else None


_REACH = 256
_TO_LAST_SPACE = re.compile(r".*\s", re.S)
_MOST_STARTS = 4_000  # places of a first word, or hyphens, past which the text is read whole
_MOST_LOOKS = 48  # pairs looked up by place in one text, after which it is read whole


@dataclass(frozen=True, slots=True)
class KeyWord:
    """One content word of a query as a reader weighs it: its surface form, its stem (the
    index's term), its weight, and the query's phrases it stands in (pairs of adjacent
    content words, the hyphenated compounds among them); a word in no phrase stands alone
    and is looked up by its stem."""

    word: str
    stem: str
    weight: float
    phrases: tuple[tuple[str, str], ...]
    shown: tuple[str, ...]  # each phrase as the query writes it


def key_words(query: str, weights: Mapping[str, float]) -> list[KeyWord]:
    """The query's content words (``weights``: stem -> weight, prompt and function words
    out, as ``core.diagnose.repairs.content_words`` gives them), each with the phrases it
    stands in. Two content words form a phrase when nothing but spaces or a hyphen stands
    between them and neither is a name, a figure or a fiscal period, a number word, an
    adverb (-ly) or a qualifier (``LOOSE_WORDS``: "main", "potential", ...), which stand
    alone; words of a term the question defines ("define X as ...", "X is defined as")
    are left out: the question names its inputs."""
    stems = {a: t for a, _, t in word_spans(query)}
    defined = defined_words(query)
    seq: list[tuple[int, int, str, bool, bool] | None] = []  # start, end, stem, alone, joined
    for a, b, form, joined in phrase_words(query):
        stem = "percent" if query[a:b] == "%" else stems.get(a, "")
        if not stem or (stem not in weights and stem != "percent") or form in defined:
            seq.append(None)
            continue
        word = query[a:b]
        alone = name_like(word) and not (sentence_start(query, a) and word[1:].islower())
        alone = alone or form in LOOSE_WORDS or (len(form) > 4 and form.endswith("ly"))
        seq.append((a, b, stem, alone, joined))
    out: dict[str, KeyWord] = {}
    for i, item in enumerate(seq):
        if item is None:
            continue
        a, b, stem, alone, _ = item
        pairs: list[tuple[str, str]] = []
        shown: list[str] = []
        before = seq[i - 1] if i else None
        after = seq[i + 1] if i + 1 < len(seq) else None
        if not alone:
            for left, right in ((before, item), (item, after)):
                if left is None or right is None or left[3] or right[3] or not right[4]:
                    continue
                pairs.append((phrase_form(query[left[0] : left[1]]),
                              phrase_form(query[right[0] : right[1]])))  # fmt: skip
                shown.append(query[left[0] : right[1]])
        had = out.get(stem)
        if had is None or len(pairs) > len(had.phrases):
            out[stem] = KeyWord(word=query[a:b], stem=stem, weight=weights.get(stem, 1.0),
                                phrases=tuple(pairs), shown=tuple(shown))  # fmt: skip
    return list(out.values())


def sentence_start(text: str, at: int) -> bool:
    """Whether ``at`` begins a sentence (the text's start, or after ". ", "? ", "! ")."""
    before = text[:at].rstrip()
    return not before or before[-1] in ".?!:"


def defined_words(query: str) -> set[str]:
    """The phrase forms of the words of a term the question defines ("Define working
    capital ratio as ...", "FCF here is defined as ...")."""
    out: set[str] = set()
    for m in _DEFINE_AS.finditer(query):
        out |= {w[2] for w in phrase_words(m.group(1))}
    for m in _DEFINED_AS.finditer(query):
        out |= {w[2] for w in phrase_words(m.group(1))[-3:]}
    return out


@dataclass(frozen=True, slots=True)
class Absence:
    """The query's key terms the document never uses, as a reader looks them up: the share
    of the query's content weight they hold, the terms as the query writes them, and a
    metric the question asks to compute that the document never names ('' when none), and
    whether that metric is one the question defines."""

    share: float
    terms: tuple[str, ...]
    metric: str
    defined: bool = False  # the metric is a term the question defines


def absence(query: str, weights: Mapping[str, float], doc_terms: Mapping[str, object] | set[str],
            pairs: Container[tuple[str, str]]) -> Absence:  # fmt: skip
    """Which of the query's key words the document lacks: a word is present when one of
    its phrases stands in the document (two adjacent words, a hyphen or spaces between),
    else, unless the question joins it to a neighbour by a hyphen ("capital-intensive": a
    compound term, looked up whole), when its stem does or a hyphenated compound of the
    document written as one word ("10K" for "10-K"). Two words the document holds apart
    are not a gap: the adjacent words of a question are mostly not a term ("eBay repay",
    "dollar reduce", "revenue came"), and readers did not call those misses vocabulary.
    The metric is read by phrase: a term of ``METRIC_WORDS`` none of whose phrases the
    document holds ("gross margin" where the document says "gross" and "margin" apart),
    counted absent with its phrase shown; else a term the question defines that the
    document never names."""
    words = key_words(query, weights)
    total = sum(w.weight for w in words)
    absent: list[KeyWord] = []
    unphrased: list[KeyWord] = []  # in phrases, none of them in the document
    compounds = {w.stem: [s for s in w.shown if _HYPHEN.search(s)] for w in words}
    for w in words:
        in_phrase = any(p in pairs for p in w.phrases)
        if w.phrases and not in_phrase:
            unphrased.append(w)
        joined = compounds[w.stem]  # "capital-intensive"
        alone = not joined and (w.stem in doc_terms or ("", phrase_form(w.word)) in pairs)
        one_word = any(  # "non-cash" where the document writes "noncash"
            t in doc_terms for s in joined for _, _, t in word_spans(_HYPHEN.sub("", s))
        )  # fmt: skip
        if not (in_phrase or alone or one_word):
            absent.append(w)
    metric, metric_word = "", None
    for w in [w for w in words if w in unphrased or (w in absent and not w.phrases)]:
        form = phrase_form(w.word)
        named = [  # the metric word ends its phrase: "gross margin", not "margin slip"
            s for s, p in zip(w.shown, w.phrases, strict=True)
            if (form in METRIC_WORDS and p[1] == form) or p in METRIC_PHRASES
        ]  # fmt: skip
        if named or (not w.phrases and form in METRIC_WORDS):
            metric, metric_word = (named[0] if named else w.word), w
            break
    if metric_word is not None and metric_word not in absent:
        absent.append(metric_word)  # a metric is a term: "quick ratio" though "ratio" stands
    shown: list[str] = []
    for w in absent:
        if metric and w is not metric_word and metric in w.shown:
            continue  # a word of the metric's phrase: the metric names it
        names = compounds[w.stem] or [w.word]
        names = [metric] if w is metric_word else names
        shown += [n for n in names if n not in shown]
    defined = "" if metric else _defined_absent(query, weights, doc_terms, pairs)
    return Absence(
        share=sum(w.weight for w in absent) / total if total else 0.0,
        terms=tuple(shown), metric=metric or defined, defined=bool(defined),
    )  # fmt: skip


def _defined_absent(query: str, weights: Mapping[str, float],
                    doc_terms: Mapping[str, object] | set[str],
                    pairs: Container[tuple[str, str]]) -> str:  # fmt: skip
    """A term the question defines ("ROA is defined as ...") that the document never
    names: a metric to compute from the inputs the definition gives ('' when none). The
    term is its content words (``weights``: function and prompt words out), a possessive
    name before it aside ("Acme's quick ratio"), looked up as ``absence`` looks up words."""
    spans = [m.span(1) for m in _DEFINE_AS.finditer(query)]
    for m in _DEFINED_AS.finditer(query):
        last = phrase_words(m.group(1))[-3:]
        if last:
            spans.append((m.start(1) + last[0][0], m.start(1) + last[-1][1]))
    stem_of = {a: t for a, _, t in word_spans(query)}
    for start, end in spans:
        term = query[start:end]
        kept = [
            (term[a:b], form, stem_of.get(start + a, ""))
            for a, b, form, _ in phrase_words(term)
            if not term[a:b].lower().endswith(("'s", "’s"))
        ]  # fmt: skip
        kept = [(word, form, stem) for word, form, stem in kept if stem in weights]
        if not kept:
            continue
        forms = [form for _, form, _ in kept]
        held = all(stem in doc_terms for _, _, stem in kept) and all(
            p in pairs for p in zip(forms, forms[1:], strict=False)
        )
        if not held:
            return " ".join(word for word, _, _ in kept)
    return ""
