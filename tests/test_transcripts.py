"""Transcripts (WebVTT, SRT): turns as blocks, cue times on chunks and citations, the
structure policy's turn rules, and one-line errors for bad files."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import pytest
from conftest import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st
from test_chunk import assert_chunk_invariants
from test_chunk_corpus import POLICIES

from core.chunk import chunk_document, sentence_spans
from core.cli import main
from core.errors import ChunkscopeError, EmptyFileError, UnsupportedFileError
from core.formats import load_document, parse_document
from core.model.tokens import load_tokenizer
from core.provenance.cite import Citation, format_clock
from core.provenance.types import Block, ChunkPolicy, Document

DATA = ROOT / "tests" / "data" / "formats"
NOT_UTF8 = {"srt_gb2312.srt"}
TRANSCRIPTS = sorted(
    p for p in [*DATA.rglob("*.vtt"), *DATA.rglob("*.srt")] if p.name not in NOT_UTF8
)


@functools.cache
def parsed(path: Path) -> tuple[Document, tuple[Block, ...]]:
    doc = load_document(path)
    return doc, parse_document(doc).blocks


def brute_time_range(doc: Document, start: int, end: int) -> tuple[float, float] | None:
    inside = [c for c in doc.cues if c.char_start < end and c.char_end > start]
    if not inside:
        return None
    return min(c.start_s for c in inside), max(c.end_s for c in inside)


def test_the_transcripts_are_there() -> None:
    assert {p.suffix for p in TRANSCRIPTS} == {".vtt", ".srt"} and len(TRANSCRIPTS) >= 11


def test_a_transcript_that_is_not_utf8_fails_in_one_line() -> None:
    with pytest.raises(UnsupportedFileError, match="not UTF-8 text .* save it as UTF-8$"):
        load_document(DATA / "third_party" / "srt_gb2312.srt")


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_turns_and_cues_are_exact(path: Path) -> None:
    doc, blocks = parsed(path)
    assert doc.kind == path.suffix[1:] and not doc.is_paged and doc.cues
    assert [b.kind for b in blocks] == ["turn"] * len(doc.lines)
    for block in blocks:
        assert doc.text[block.char_start : block.char_end] == block.text
        assert (block.start_s, block.end_s) == brute_time_range(
            doc, block.char_start, block.char_end
        )
        if block.speaker:
            assert block.text.startswith(block.speaker + ": ")
    for cue in doc.cues:
        cue_text = doc.text[cue.char_start : cue.char_end]
        assert cue_text == cue_text.strip() and "\n" not in cue_text
        assert re.search(r"<[a-zA-Z/0-9][^<>]*>|\{\\", cue_text) is None  # markup removed
        holder = [
            b for b in blocks if b.char_start <= cue.char_start and cue.char_end <= b.char_end
        ]
        assert len(holder) == 1 and holder[0].speaker == cue.speaker
    speakers = [b.speaker for b in blocks]
    assert all(a != b for a, b in zip(speakers, speakers[1:], strict=False)) or not any(speakers)


def test_what_the_lecture_says() -> None:
    doc, blocks = parsed(DATA / "lecture-3.vtt")
    assert [b.speaker for b in blocks] == [
        "Dr. Meyer",
        "Student",
        "Dr. Meyer",
        "Student",
        "Dr. Meyer",
    ]
    assert "Darcy's law" in doc.text and "<i>" not in doc.text  # cue tags removed
    assert "fractures & faults" in doc.text  # &amp; decoded
    assert blocks[0].start_s == 745.0 and format_clock(745.0) == "00:12:25"


def test_srt_speakers_markup_and_continuations() -> None:
    doc, blocks = parsed(DATA / "interview.srt")
    assert [b.speaker for b in blocks] == ["ANNA", "MARK", "ANNA", "MARK", "ANNA", "MARK"]
    assert blocks[0].text == (
        "ANNA: Thanks for joining us to talk about the new pump line. "
        "It has been a long year for the engineering team."
    )
    assert "{\\an8}" not in doc.text and "\r" not in doc.text
    river, turns = parsed(DATA / "river.srt")
    assert [t.speaker for t in turns] == ["", ""]  # no speakers: a 4 s pause starts a turn
    assert turns[1].text.startswith("After the weir")


@pytest.mark.parametrize("policy", POLICIES, ids=lambda p: p.key)
@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_every_policy_keeps_offsets_and_times(path: Path, policy: ChunkPolicy) -> None:
    doc, blocks = parsed(path)
    tokenizer = load_tokenizer()
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert_chunk_invariants(doc, blocks, policy, chunks, tokenizer)
    for chunk in chunks:
        assert doc.text[chunk.char_start : chunk.char_end] == chunk.text
        assert (chunk.start_s, chunk.end_s) == brute_time_range(
            doc, chunk.char_start, chunk.char_end
        )
        cite = Citation.of_chunk(chunk)
        assert cite.verify(doc).value == "ok"
        assert Citation.from_dict(cite.to_dict()) == cite
        assert f"{format_clock(chunk.start_s)}-{format_clock(chunk.end_s)}" in cite.render()


@pytest.mark.parametrize("size", [24, 40, 64, 96])
def test_structure_never_cuts_a_turn_mid_sentence(size: int) -> None:
    doc, blocks = parsed(DATA / "lecture-3.vtt")
    policy = ChunkPolicy(name="structure", size=size, overlap=0, unit="tokens")
    chunks = chunk_document(doc, blocks, policy, load_tokenizer())
    ends = {e for s, e in sentence_spans(doc.text)} | {b.char_end for b in blocks}
    starts = {s for s, e in sentence_spans(doc.text)} | {b.char_start for b in blocks}
    for chunk in chunks:
        if not chunk.oversize:
            assert chunk.char_end in ends and chunk.char_start in starts, chunk.text
        for turn in blocks:  # never starts inside a "Speaker: " prefix
            prefix_end = turn.char_start + len(turn.speaker) + 2
            assert not turn.char_start < chunk.char_start < prefix_end


def test_structure_ends_chunks_at_speaker_changes() -> None:
    doc, blocks = parsed(DATA / "lecture-3.vtt")
    turn_starts = {b.char_start for b in blocks}
    for size in (32, 48, 64, 96):  # without rule 7, two turns open mid-chunk here
        policy = ChunkPolicy(name="structure", size=size, overlap=0, unit="tokens")
        for chunk in chunk_document(doc, blocks, policy, load_tokenizer()):
            for start in (s for s in turn_starts if chunk.char_start < s < chunk.char_end):
                turn = next(b for b in blocks if b.char_start == start)
                assert turn.char_end <= chunk.char_end  # a turn opened mid-chunk ends in it


def test_a_turns_opening_moves_to_the_next_chunk_at_a_speaker_change() -> None:
    vtt = (
        "WEBVTT\n\n00:01.000 --> 00:02.000\n<v Ann>Short question here?\n\n"
        "00:03.000 --> 00:04.000\n<v Bo>First answer sentence.\n\n"
        "00:05.000 --> 00:06.000\n<v Bo>Second answer sentence.\n\n"
        "00:07.000 --> 00:08.000\n<v Bo>Third answer sentence.\n"
    )
    doc = load_document(vtt.encode(), name="qa.vtt")
    blocks = parse_document(doc).blocks
    tokenizer = load_tokenizer()
    # 60 chars: Ann's turn (25) and Bo's first sentence (26) fit together, his second does
    # not; Bo's first two sentences fit together, so they open the next chunk and the
    # first chunk ends where the speaker changes (without rule 7: "Ann: ... Bo: First
    # answer sentence." and "Second answer sentence. Third answer sentence.").
    policy = ChunkPolicy(name="structure", size=60, overlap=0, unit="chars")
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert [c.text for c in chunks] == [
        "Ann: Short question here?",
        "Bo: First answer sentence. Second answer sentence.",
        "Third answer sentence.",
    ]
    assert [(c.start_s, c.end_s) for c in chunks] == [(1.0, 2.0), (3.0, 6.0), (7.0, 8.0)]
    # 80 chars: Bo's whole turn (73) fits, so it is one chunk
    policy = ChunkPolicy(name="structure", size=80, overlap=0, unit="chars")
    chunks = chunk_document(doc, blocks, policy, tokenizer)
    assert [c.text for c in chunks] == [blocks[0].text, blocks[1].text]


def test_a_transcript_citation_shows_its_time_range() -> None:
    doc, blocks = parsed(DATA / "lecture-3.vtt")
    start = doc.text.index("Does the same tensor")  # test-side lookup of a known quote
    cite = Citation.of_span(
        doc, start, start + len("Does the same tensor apply to fractured granite?")
    )
    assert cite.render() == f"lecture-3, 00:13:39-00:13:44, chars {start}-{cite.char_end}"
    assert cite.to_dict()["start_s"] == cite.start_s


def test_cli_parse_json_carries_speakers_and_times(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", str(DATA / "interview.srt"), "--json"]) == 0
    blocks = json.loads(capsys.readouterr().out)["blocks"]
    assert [b["speaker"] for b in blocks][:2] == ["ANNA", "MARK"]
    assert blocks[0]["start_s"] == 1.0 and blocks[0]["end_s"] == 5.7
    assert main(["chunk", str(DATA / "lecture-3.vtt"), "--policy", "fixed"]) == 0
    assert "00:12:25" in capsys.readouterr().out  # the table shows where a chunk starts


def test_cli_chunk_json_carries_times(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["chunk", str(DATA / "interview.srt"), "--policy", "structure", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["document"]["kind"] == "srt"
    assert all(c["start_s"] <= c["end_s"] for c in out["chunks"])


@pytest.mark.parametrize(
    ("name", "data", "error", "words"),
    [
        ("nohead.vtt", b"00:00:01.000 --> 00:00:02.000\nhi\n", UnsupportedFileError, "WEBVTT"),
        ("nocues.vtt", b"WEBVTT\n\nNOTE nothing here\n", EmptyFileError, "no cues"),
        ("garbage.srt", b"this is not\na subtitle file\n", UnsupportedFileError, "not a valid SRT"),
        ("binary.srt", b"1\n\x00\x01\x02", UnsupportedFileError, "binary"),
        (
            "latin1.vtt",
            b"WEBVTT\n\n00:01.000 --> 00:02.000\ncaf\xe9\n",
            UnsupportedFileError,
            "UTF-8",
        ),
    ],
)
def test_bad_transcripts_fail_in_one_line(name, data, error, words, tmp_path, capsys) -> None:
    with pytest.raises(error, match=words) as caught:
        load_document(data, name=name)
    assert "\n" not in str(caught.value) and isinstance(caught.value, ChunkscopeError)
    path = tmp_path / name
    path.write_bytes(data)
    assert main(["parse", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1


def test_stored_hits_keep_the_time_range(tmp_path: Path) -> None:
    from fakes import FakeEncoder, fake_embed_chunks

    from core.store import ChunkStore

    doc, blocks = parsed(DATA / "lecture-3.vtt")
    policy = ChunkPolicy(name="structure", size=96, overlap=0, unit="tokens")
    chunks = chunk_document(doc, blocks, policy, load_tokenizer())
    encoder = FakeEncoder()
    vectors = fake_embed_chunks(doc, chunks, "naive", encoder)
    store = ChunkStore.open(tmp_path / "store")
    store.upsert_document(doc, chunks, vectors, model=encoder.name, method="naive", policy=policy)
    hits = store.query(vectors[1].vector, model=encoder.name, method="naive", policy=policy, k=3)
    by_id = {c.chunk_id: c for c in chunks}
    assert hits and all(h.start_s is not None for h in hits)
    for hit in hits:
        chunk = by_id[hit.chunk_id]
        assert (hit.start_s, hit.end_s) == (chunk.start_s, chunk.end_s)
        assert hit.citation == Citation.of_chunk(chunk)
        assert format_clock(chunk.start_s) in hit.citation.render()


_CUE_TEXT = st.lists(
    st.sampled_from(
        ["word", "Caf\u00e9", "&amp;", "<i>it</i>", "<b>", "2 < 3", "\u05e9\u05dc\u05d5\u05dd",
         "e\u0301", "\U0001f680", "  ", "\n", "Dr.", "Note:", "ok.", "?", "-"]
    ),
    min_size=1,
    max_size=8,
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["", "Ann", "Dr. Bo", "C3"]), _CUE_TEXT, st.floats(0, 5)),
        min_size=1,
        max_size=25,
    ),
    st.sampled_from(["vtt", "srt"]),
)
def test_random_cues_keep_spans_and_times(cues, kind) -> None:
    def stamp(seconds: float, sep: str) -> str:
        ms = round(seconds * 1000)
        return (
            f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}{sep}{ms % 1000:03d}"
        )

    now, parts = 0.0, ["WEBVTT", ""] if kind == "vtt" else []
    for n, (speaker, words, gap) in enumerate(cues, 1):
        text = " ".join(words)
        if kind == "vtt":
            voice = f"<v {speaker}>" if speaker else ""
            parts += [f"{stamp(now, '.')} --> {stamp(now + 1, '.')}", voice + text, ""]
        else:
            prefix = f"{speaker.upper()}: " if speaker else ""
            parts += [str(n), f"{stamp(now, ',')} --> {stamp(now + 1, ',')}", prefix + text, ""]
        now += 1 + gap
    try:
        doc = load_document("\n".join(parts).encode(), name=f"random.{kind}")
    except EmptyFileError:
        return
    blocks = parse_document(doc).blocks
    assert [(b.char_start, b.char_end) for b in blocks] == [
        (ln.char_start, ln.char_end) for ln in doc.lines
    ]
    for cue in doc.cues:
        assert (
            doc.text[cue.char_start : cue.char_end].strip()
            == doc.text[cue.char_start : cue.char_end]
        )
    for block in blocks:
        assert doc.text[block.char_start : block.char_end] == block.text
        assert (block.start_s, block.end_s) == brute_time_range(
            doc, block.char_start, block.char_end
        )
    policy = ChunkPolicy(name="structure", size=12, overlap=0, unit="tokens")
    for chunk in chunk_document(doc, blocks, policy, load_tokenizer()):
        assert doc.text[chunk.char_start : chunk.char_end] == chunk.text
        assert (chunk.start_s, chunk.end_s) == brute_time_range(
            doc, chunk.char_start, chunk.char_end
        )
