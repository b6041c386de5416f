"""Transcripts: WebVTT (through webvtt-py) and SRT (through srt), read as turns of speech.

Canonical text, built from the parsed cues (so every offset holds by construction):

* A cue's text has its markup removed (WebVTT cue tags and ``<v>`` voice spans by
  webvtt-py, SRT's ``<i>``-style tags and ``{\\an8}`` codes here), character references
  decoded (``&amp;`` -> ``&``), and every whitespace run folded to one space; a cue
  left empty is dropped.
* Speaker: a WebVTT voice (``<v Alice>``), else a leading ``NAME:`` in capitals or
  ``>> Name:`` (the caption conventions), which is then removed from the cue's text. A
  cue without a speaker continues the turn of the last speaker named.
* A turn is a run of cues of one speaker. In a transcript that names no speaker at all,
  a pause of ``PAUSE_S`` seconds or more between cues starts a new turn.
* A turn reads ``"Speaker: " + cue texts joined by " "`` (no prefix without a speaker);
  turns are joined by ``"\\n\\n"``.

Every cue keeps its span and its time range in seconds (``Document.cues``), so any span
of the text maps to the times of the cues it touches. Each turn is one ``TextLine``
(``page == 0``, no box, ``source_block`` = the turn's index). Reflowable: no pages.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from core.errors import EmptyFileError, UnsupportedFileError
from core.ingest.request import LoadRequest
from core.ingest.text import decode_text
from core.provenance.cues import Cue
from core.provenance.types import Document, TextLine

PAUSE_S = 2.0
_SPACE = re.compile(r"\s+")
_SRT_MARKUP = re.compile(r"<[^<>\n]{0,200}>|\{\\[^{}\n]{0,50}\}")
_CAPS_SPEAKER = re.compile(r"^(?:>>\s*)?([A-Z][A-Z0-9.'\- ]{0,38}[A-Z0-9.]):\s+(?=\S)")
_CHEVRON_SPEAKER = re.compile(r"^>>\s*([A-Z][\w.'\- ]{0,38}?):\s+(?=\S)")
_VTT_TIME = re.compile(r"^(?:(\d+):)?([0-5]?\d):([0-5]?\d(?:\.\d{1,3})?)$")


@dataclass(frozen=True, slots=True)
class RawCue:
    """A cue as the caption library parsed it: seconds, speaker ("" if none), plain text."""

    start_s: float
    end_s: float
    speaker: str
    text: str


def vtt_cues(data: bytes, name: str) -> list[RawCue]:
    """The cues of a WebVTT file (``UnsupportedFileError`` when it is not WebVTT)."""
    import webvtt
    from webvtt.errors import MalformedCaptionError, MalformedFileError

    text = decode_text(data, name)
    try:
        captions = list(webvtt.from_string(text).captions)
    except (MalformedFileError, MalformedCaptionError) as exc:
        raise UnsupportedFileError(f"{name} is not a valid WebVTT file ({exc}); check it") from None
    return [
        RawCue(
            start_s=_vtt_seconds(c.start, name),
            end_s=_vtt_seconds(c.end, name),
            speaker=(c.voice or "").strip(),
            text=html.unescape(c.text),
        )
        for c in captions
    ]


def srt_cues(data: bytes, name: str) -> list[RawCue]:
    """The cues of an SRT file (``UnsupportedFileError`` when it does not parse)."""
    import srt

    text = decode_text(data, name)
    try:
        subtitles = list(srt.parse(text))
    except srt.SRTParseError as exc:
        where = str(exc).split(" (unmatched", 1)[0]
        raise UnsupportedFileError(f"{name} is not a valid SRT file ({where}); check it") from None
    return [
        RawCue(
            start_s=s.start.total_seconds(),
            end_s=max(s.end, s.start).total_seconds(),
            speaker="",
            text=html.unescape(_SRT_MARKUP.sub("", s.content)),
        )
        for s in subtitles
    ]


def _vtt_seconds(stamp: str, name: str) -> float:
    match = _VTT_TIME.match(stamp.strip())
    if not match:
        raise UnsupportedFileError(f"{name}: bad WebVTT timestamp {stamp!r}; check the file")
    hours, minutes, seconds = match.groups()
    return int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds)


def _speaker_and_text(cue: RawCue) -> tuple[str, str]:
    text = _SPACE.sub(" ", cue.text).strip()
    if cue.speaker:
        return _SPACE.sub(" ", cue.speaker), text
    match = _CAPS_SPEAKER.match(text) or _CHEVRON_SPEAKER.match(text)
    if match:
        return match.group(1).strip(), text[match.end() :]
    return "", text


def _turns(cues: list[RawCue]) -> list[tuple[str, list[RawCue]]]:
    """Cues grouped into turns (see the module docstring), each cue's text cleaned."""
    cleaned = []
    for cue in cues:
        speaker, text = _speaker_and_text(cue)
        if text:
            cleaned.append(RawCue(cue.start_s, cue.end_s, speaker, text))
    named = any(cue.speaker for cue in cleaned)
    turns: list[tuple[str, list[RawCue]]] = []
    for cue in cleaned:
        if turns and _continues(turns[-1], cue, named=named):
            speaker, members = turns[-1]
            members.append(RawCue(cue.start_s, cue.end_s, speaker, cue.text))
        else:
            turns.append((cue.speaker, [cue]))
    return turns


def _continues(turn: tuple[str, list[RawCue]], cue: RawCue, *, named: bool) -> bool:
    """Whether ``cue`` belongs to ``turn``: the same speaker or none named (in a
    transcript that names speakers), else no pause of ``PAUSE_S`` before it."""
    speaker, members = turn
    if named:
        return not cue.speaker or cue.speaker == speaker
    return cue.start_s - members[-1].end_s < PAUSE_S


def _canonical(turns: list[tuple[str, list[RawCue]]]) -> tuple[str, list[Cue], list[TextLine]]:
    """The canonical text, every cue's span and times, and one line per turn."""
    parts: list[str] = []
    cues: list[Cue] = []
    lines: list[TextLine] = []
    position = 0
    for number, (speaker, members) in enumerate(turns):
        if number:
            parts.append("\n\n")
            position += 2
        turn_start = position
        if speaker:
            parts.append(f"{speaker}: ")
            position += len(speaker) + 2
        for i, cue in enumerate(members):
            if i:
                parts.append(" ")
                position += 1
            parts.append(cue.text)
            end = position + len(cue.text)
            cues.append(
                Cue(
                    char_start=position,
                    char_end=end,
                    start_s=cue.start_s,
                    end_s=max(cue.end_s, cue.start_s),
                    speaker=speaker,
                )
            )
            position = end
        lines.append(
            TextLine(
                char_start=turn_start, char_end=position, page=0, bbox_pt=None, source_block=number
            )
        )
    return "".join(parts), cues, lines


def load_transcript(req: LoadRequest, *, kind: str) -> Document:
    """A transcript ``Document`` of format ``kind`` (``"vtt"`` or ``"srt"``)."""
    raw = vtt_cues(req.data, req.name) if kind == "vtt" else srt_cues(req.data, req.name)
    turns = _turns(raw)
    if not turns:
        raise EmptyFileError(f"{req.name} holds no cues with text; give a transcript with content")
    text, cues, lines = _canonical(turns)
    return Document(
        doc_id=req.doc_id,
        sha256=req.sha256,
        source=req.source,
        kind=kind,
        text=text,
        title=req.stem,
        lines=tuple(lines),
        cues=tuple(cues),
    )
