"""The compiled word scanners (``core.native.words``) give what their Python twins give.

The words of ``core.align.words`` and the lexical words of ``core.methods.lexical``
against their regular expressions, on every text of the shared corpus's retrieval set, on
PDF texts of the corpus and on random text made of the characters the patterns treat
specially (hyphens, soft hyphens, combining marks, apostrophes, whitespace of several
kinds, letters that change length when lower-cased); the window steps of word alignment
against ``core.align.window``'s Python steps on random ids; a whole alignment both ways.
Where a C compiler and Python's headers are present (as where ``make`` runs), the scanners
must have been built.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import sysconfig
from collections import Counter
from pathlib import Path

import pytest

from core.align import window, words
from core.align.window import align_words
from core.formats import load_document
from core.methods import lexical
from core.native import words as native
from tests.conftest import CORPUS, corpus_files

ROOT = Path(__file__).resolve().parents[1]
TEXTS = corpus_files(CORPUS / "chunking_evaluation", "**/*.md")
PDFS = ("sample-sigconf.pdf", "elstest-5p.pdf", "Seige_of_Vicksburg_Sample_OCR.pdf")
built = pytest.mark.skipif(not native.available(), reason="compiled word scanner not built")
# Characters the patterns treat specially, and plain ones around them.
ALPHABET = "aZ9_ -\u00ad\u2010\u2011\u2012\n\t\u3000\u00a0'\u2019\u0301\u0308\u20ddéİßﬁ٣Ⅻ²x.,;&%"


def _py_words(text: str, start: int = 0, end: int | None = None) -> list[words.Word]:
    stop = len(text) if end is None else end
    found = []
    for match in words._word_pattern().finditer(text, start, stop):
        norm = words.normalise_word(match.group())
        if norm:
            found.append(words.Word(match.start(), match.end(), norm))
    return found


def _py_lowered(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group().lower()) for m in lexical._WORD.finditer(text)]


def _texts() -> list[str]:
    found = [path.read_text(encoding="utf-8") for path in TEXTS]
    found += [load_document(CORPUS / "pdfs" / name).text for name in PDFS]
    return found


def test_the_scanners_are_built_where_they_can_be() -> None:
    python_h = Path(sysconfig.get_paths()["include"]) / "Python.h"
    switch = os.environ.get("CHUNKSCOPE_NATIVE_TEXT", "1").strip().lower()
    off = switch in ("0", "false", "no", "off")
    if off or not python_h.is_file() or shutil.which(os.environ.get("CC", "cc")) is None:
        pytest.skip("no compiler or Python headers here, or the compiled steps are off")
    assert native.available(), native.status()


@pytest.mark.corpus
@built
def test_every_corpus_text_scans_to_the_patterns_words() -> None:
    texts = _texts()
    assert len(texts) >= 8
    scanned = 0
    for text in texts:
        assert words.words_of(text) == _py_words(text)
        assert words.words_of(text, 1000, 20000) == _py_words(text, 1000, 20000)
        assert lexical.lowered_words(text) == _py_lowered(text)
        scanned += len(text)
    assert scanned > 1_000_000


@built
def test_random_text_scans_to_the_patterns_words() -> None:
    rnd = random.Random(7)
    for _ in range(20_000):
        text = "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 30)))
        start, end = rnd.randint(-2, len(text) + 1), rnd.randint(-2, len(text) + 3)
        assert words.words_of(text, start, end) == _py_words(text, start, end), (text, start)
        assert lexical.lowered_words(text) == _py_lowered(text), text


@built
def test_scanned_words_are_words_with_their_offsets() -> None:
    text = "Docu-\nment ﬁnance, well\u2010known 'Pfizer\u2019s' Ⅻ x_y"
    found = words.words_of(text)
    assert all(type(w) is words.Word for w in found)
    assert [(text[w.char_start : w.char_end], w.norm) for w in found] == [
        ("Docu-\nment", "document"), ("ﬁnance", "finance"), ("well\u2010known", "wellknown"),
        ("Pfizer", "pfizer"), ("s", "s"), ("Ⅻ", "xii"), ("x", "x"), ("y", "y"),
    ]  # fmt: skip
    assert lexical.lowered_words("Pfizer\u2019s İ x_y")[0] == (0, 8, "pfizer\u2019s")
    assert lexical.word_spans("The Pfizer's revenues") == [(4, 12, "pfizer"), (13, 21, "revenu")]


@built
def test_the_window_steps_are_their_python_twins() -> None:
    rnd = random.Random(3)
    for _ in range(20_000):
        size = rnd.randint(1, 6)
        wanted = Counter({i: rnd.randint(1, 3) for i in range(size)})
        ids = [rnd.randint(-1, size - 1) for _ in range(rnd.randint(0, 40))]
        need = rnd.randint(1, sum(wanted.values()))
        counts = [wanted[i] for i in range(size)]
        assert native.tight_window(ids, counts, need) == window._tight_window(ids, wanted, need)
        run = rnd.randint(1, 12)
        assert native.best_matched(ids, counts, run) == window.best_matched(ids, wanted, run)


@pytest.mark.corpus
@built
def test_term_spans_are_their_python_twins(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stemmed words and each term's spans (``core.methods.lexical``) made in C are
    those the Python loops make, on corpus texts and random text."""
    rnd = random.Random(11)
    texts = _texts()[:6] + [
        "".join(rnd.choice(ALPHABET) for _ in range(rnd.randint(0, 60))) for _ in range(2_000)
    ]
    compiled = [(lexical.word_spans(t), lexical.term_spans(t)) for t in texts]
    monkeypatch.setattr(native, "available", lambda: False)
    assert [(lexical.word_spans(t), lexical.term_spans(t)) for t in texts] == compiled
    assert sum(len(spans) for _, spans in compiled[:6]) > 1_000
    for text, (spans, _) in zip(texts, compiled, strict=True):
        assert lexical.term_set(text) == {term for _, _, term in spans}


@built
def test_bad_arguments_are_errors_not_crashes() -> None:
    with pytest.raises(ValueError):
        native.tight_window([5], [1], 1)  # an id past the counts
    with pytest.raises(TypeError):
        native.word_ids([(0, 1)], {})
    with pytest.raises(ValueError):
        native._module.scan_words("a", 0, 1, b"\0", words.Word, words.normalise_word)
    with pytest.raises(TypeError):
        native._module.scan_words("a", 0, 1, native._mark_bits(), dict, words.normalise_word)
    with pytest.raises(TypeError):
        native._module.scan_words("é", 0, 1, native._mark_bits(), words.Word, lambda w: 1)
    with pytest.raises(TypeError):
        native.stemmed([(0, 1)], {}, grouped=True)  # not (start, end, word)
    with pytest.raises(TypeError):
        native.stemmed([(0, 1, ["unhashable"])], {}, grouped=False)


@pytest.mark.corpus
@built
def test_alignments_are_the_same_either_way(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = load_document(CORPUS / "pdfs" / "sample-sigconf.pdf")
    region = words.words_of(doc.text)
    rnd = random.Random(5)
    cases = []
    for _ in range(60):
        start = rnd.randrange(0, len(doc.text) - 600)
        passage = doc.text[start : start + rnd.randint(20, 600)]
        mangled = " ".join(w for w in passage.split() if rnd.random() > 0.2)
        cases += [(passage, 0.9), (mangled, 0.7), (mangled[::-1], 0.5)]
    compiled = [align_words(doc.text, region, p, t) for p, t in cases]
    monkeypatch.setattr(native, "available", lambda: False)
    assert [align_words(doc.text, region, p, t) for p, t in cases] == compiled
    assert sum(a.found for a in compiled) >= 60


def test_without_the_module_words_are_scanned_in_python_and_it_says_so() -> None:
    probe = (
        "import runpy, sys\n"
        "sys.modules['core.native._words'] = None  # as after a failed build\n"
        "runpy.run_module('core.native.words', run_name='__main__')  # make's line\n"
        "from core.native import words as native\n"
        "from core.align.words import words_of\n"
        "from core.methods.lexical import word_spans\n"
        "assert not native.available()\n"
        "print([tuple(w) for w in words_of('Well-\\nknown ﬁne')], word_spans('The pages'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "CHUNKSCOPE_NATIVE_TEXT"}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "not built" in lines[0]
    assert lines[0].endswith("words are scanned in Python")
    assert done.stdout.strip() == "[(0, 11, 'wellknown'), (12, 15, 'fine')] [(4, 9, 'page')]"
