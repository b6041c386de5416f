"""Character spans to token spans, and macro-window ownership, against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.embed.token_spans import (
    DocTokens,
    plan_windows,
    token_spans,
    tokenize_document,
    window_starts,
    windows_of_spans,
)
from core.model.paths import default_model_dir

AWKWARD = "Naïve café 😀 résumé\u0301 — ﬁne Straße  \t\n漢字テスト ok.\r\nEnd!"


@pytest.fixture(scope="module")
def tokenizer():
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(default_model_dir(), local_files_only=True)


def brute_force_tokens(tokenizer, text: str, start: int, end: int) -> list[int]:
    """Indices of tokens that overlap ``[start, end)`` by >= 1 character (empty offsets
    count as covering the character they start at), straight from the tokenizer."""
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    out = []
    for i, (ts, te) in enumerate(enc["offset_mapping"]):
        te = max(te, ts + 1)
        if ts < end and te > start and end > start:
            out.append(i)
    return out


def test_offsets_are_code_points_and_quote_the_text(tokenizer) -> None:
    tokens = tokenize_document(tokenizer, AWKWARD)
    pieces = {AWKWARD[s:e] for s, e in zip(tokens.starts, tokens.ends, strict=True)}
    assert "😀" in pieces  # one code point (four UTF-8 bytes) -> [UNK] covering exactly it
    assert "caf" in "".join(pieces) and "ﬁ" in pieces or "ﬁne" in pieces
    assert all(0 <= s < e <= len(AWKWARD) for s, e in zip(tokens.starts, tokens.ends, strict=True))
    assert np.all(np.diff(tokens.starts) >= 0) and np.all(np.diff(tokens.ends) >= 0)


def test_awkward_boundaries_map_exactly(tokenizer) -> None:
    text = AWKWARD
    tokens = tokenize_document(tokenizer, text)
    emoji = text.index("😀")
    spans = [
        (0, 1),  # first character, inside a word
        (0, len(text)),
        (len(text) - 1, len(text)),  # last character
        (2, 8),  # starts and ends inside words
        (5, 6),  # the space only
        (emoji, emoji + 1),  # the emoji alone
        (emoji + 1, emoji + 3),  # from just after the emoji
        (text.index("\t"), text.index("漢")),  # whitespace only
        (text.index("漢") + 1, text.index("漢") + 2),  # inside a CJK run
        (text.index("\u0301"), text.index("\u0301") + 1),  # a lone combining mark
        (7, 7),  # empty
    ]
    starts = np.array([s for s, _ in spans])
    ends = np.array([e for _, e in spans])
    got_first, got_stop = token_spans(tokens, starts, ends)
    for (s, e), first, stop in zip(spans, got_first, got_stop, strict=True):
        assert list(range(first, stop)) == brute_force_tokens(tokenizer, text, s, e), (s, e)


def test_a_boundary_inside_a_token_gives_it_to_both_chunks(tokenizer) -> None:
    text = "an unbelievably long word"
    tokens = tokenize_document(tokenizer, text)
    inside = [i for i in range(len(tokens)) if tokens.ends[i] - tokens.starts[i] >= 3]
    cut = int(tokens.starts[inside[0]]) + 1  # one character into a multi-character token
    first, stop = token_spans(tokens, np.array([0, cut]), np.array([cut, len(text)]))
    left = set(range(first[0], stop[0]))
    right = set(range(first[1], stop[1]))
    assert left & right == {inside[0]}
    assert left | right == set(range(len(tokens)))


TEXT_ALPHABET = st.sampled_from(
    list("abcxyz ABC.,;-'\"")
    + ["é", "ß", "ﬁ", "😀", "👍🏽", "\u0301", "漢", "ا", "ל", "\n", "\r\n", "\t", "  "]
)


@settings(max_examples=60, deadline=None)
@given(
    pieces=st.lists(TEXT_ALPHABET, min_size=1, max_size=60),
    cuts=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 200)), min_size=1, max_size=6),
)
def test_span_mapping_matches_brute_force(tokenizer, pieces: list[str], cuts) -> None:
    text = "".join(pieces)
    spans = [(min(a, b) % (len(text) + 1), max(a, b) % (len(text) + 1)) for a, b in cuts]
    spans = [(min(a, b), max(a, b)) for a, b in spans]
    tokens = tokenize_document(tokenizer, text)
    first, stop = token_spans(
        tokens, np.array([s for s, _ in spans]), np.array([e for _, e in spans])
    )
    for (s, e), a, b in zip(spans, first, stop, strict=True):
        assert list(range(a, b)) == brute_force_tokens(tokenizer, text, s, e)


def brute_force_owner(n: int, starts: np.ndarray, window: int) -> list[int]:
    owners = []
    for t in range(n):
        best, owner = -1, -1
        for k, lo in enumerate(starts.tolist()):
            hi = min(lo + window, n)
            if not lo <= t < hi:
                continue
            left = t - lo if lo > 0 else n + 1
            right = hi - 1 - t if hi < n else n + 1
            if min(left, right) > best:
                best, owner = min(left, right), k
        owners.append(owner)
    return owners


@pytest.mark.parametrize(
    ("n", "window", "stride"),
    [
        (0, 8, 8),
        (5, 8, 7),
        (8, 8, 7),
        (9, 8, 7),
        (40, 8, 8),
        (41, 8, 6),
        (100, 10, 3),
        (57, 16, 14),
        (300, 254, 222),
    ],
)
def test_windows_cover_every_token_once_and_overlap_as_configured(n, window, stride) -> None:
    margin = max(1, window // 4)
    plan = plan_windows(n, window, stride, margin)
    assert plan.starts[0] == 0 and plan.stops[-1] == n
    assert np.all(plan.stops - plan.starts == min(window, n))
    # Consecutive windows overlap by window - stride, except the end-aligned last one.
    gaps = np.diff(plan.starts)
    assert np.all(gaps[:-1] == stride) and (len(gaps) == 0 or 1 <= gaps[-1] <= stride)
    # Owned ranges partition [0, n) in order, each inside its window.
    assert plan.owned_starts[0] == 0 and plan.owned_stops[-1] == n
    assert np.array_equal(plan.owned_starts[1:], plan.owned_stops[:-1])
    assert np.all(plan.owned_starts >= plan.starts) and np.all(plan.owned_stops <= plan.stops)
    counts = np.zeros(n, dtype=int)
    owner = np.zeros(n, dtype=int)
    for k, (lo, hi) in enumerate(zip(plan.owned_starts, plan.owned_stops, strict=True)):
        counts[lo:hi] += 1
        owner[lo:hi] = k
    assert np.all(counts == 1)
    assert owner.tolist() == brute_force_owner(n, plan.starts, window)
    for t in range(n):
        lo, hi = plan.starts[owner[t]], plan.stops[owner[t]]
        left_ok = lo == 0 or t - lo >= margin
        right_ok = hi == n or hi - 1 - t >= margin
        assert plan.full_context[t] == (left_ok and right_ok)


def test_a_document_that_fits_one_window_is_all_full_context() -> None:
    plan = plan_windows(200, 254, 222, 63)
    assert plan.count == 1 and plan.full_context.all()


def test_window_starts_validation() -> None:
    with pytest.raises(ValueError):
        window_starts(10, 4, 5)
    with pytest.raises(ValueError):
        window_starts(10, 0, 1)


def test_windows_of_spans_lists_owning_windows() -> None:
    plan = plan_windows(50, 10, 8, 2)
    starts = np.array([0, 5, 9, 20, 49, 3])
    stops = np.array([3, 15, 30, 21, 50, 3])
    got = windows_of_spans(plan, starts, stops)
    for (s, e), windows in zip(zip(starts, stops, strict=True), got, strict=True):
        expected = sorted(
            {
                k
                for k in range(plan.count)
                for t in range(s, e)
                if plan.owned_starts[k] <= t < plan.owned_stops[k]
            }
        )
        assert list(windows) == expected


def test_empty_document_has_no_tokens(tokenizer) -> None:
    tokens = tokenize_document(tokenizer, "")
    assert isinstance(tokens, DocTokens) and len(tokens) == 0
    assert len(tokenize_document(tokenizer, " \n\t ")) == 0
