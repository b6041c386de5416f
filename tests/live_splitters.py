"""Splitter factories for the ``py:`` live policy tests (``core.imported.live``)."""

from __future__ import annotations

import re


def paragraphs(size: int, overlap: int, joiner: str = " ", drop: str = ""):
    """An object with ``split_text``: paragraphs, each cut at words into windows of at
    most ``size`` characters (``overlap`` is not used), with the paragraph's lines joined
    by ``joiner`` and the word ``drop`` left out (a splitter that rewrites its text)."""

    class Splitter:
        def split_text(self, text: str) -> list[str]:
            out = []
            for para in re.split(r"\n\s*\n", text):
                window: list[str] = []
                for word in para.split():
                    if window and len(joiner.join([*window, word])) > size:
                        out.append(joiner.join(window))
                        window = []
                    if word != drop:
                        window.append(word)
                if window:
                    out.append(joiner.join(window))
            return out

    return Splitter()


def lines(size: int, overlap: int):
    """A callable ``str -> list[str]``: the text's non-empty lines."""
    return lambda text: [line for line in text.splitlines() if line.strip()]


lines.unit = "sentences"  # type: ignore[attr-defined]


def raising(size: int, overlap: int):
    """A splitter that fails on every text."""

    def split(text: str) -> list[str]:
        raise RuntimeError("the splitter broke\nsecond line")

    return split
