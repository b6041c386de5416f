"""What keeps the command line's output to the lines it means to print.

- ``OneLineParser``: argparse mistakes (``--size abc``, an unknown ``--policy``) end in
  one ``error:`` line and exit 2, without the usage block;
- ``escape_controls``: control characters (ESC, BEL, CR, C1, bidi overrides; the set of
  ``core.ingest.files.CONTROL_CHARS``) shown as escapes, so a document or a file name
  can neither split an error line nor repaint the terminal;
- ``SafeTerminal``: a stdout wrapper that applies it to everything a table prints
  (JSON output is left alone: ``json.dump`` escapes C0 itself, and the text must stay
  the document's own);
- ``add_limit_arguments``: the ``--max-*`` flags of ``core.ingest.limits``.
"""

from __future__ import annotations

import argparse
import re
import sys
from contextlib import AbstractContextManager
from typing import NoReturn, TextIO

from core.ingest import limits
from core.ingest.files import CONTROL_CHARS

_CONTROLS = re.compile(f"[{CONTROL_CHARS}]")
_CONTROLS_AND_BREAKS = re.compile(f"[\t\n{CONTROL_CHARS}]")


def _escaped(match: re.Match[str]) -> str:
    return ascii(match.group())[1:-1]


def escape_controls(text: str, *, keep_breaks: bool = True) -> str:
    """``text`` with control characters written as ``\\x1b``-style escapes; newlines and
    tabs are kept unless ``keep_breaks`` is False (an error must stay one line)."""
    pattern = _CONTROLS if keep_breaks else _CONTROLS_AND_BREAKS
    return pattern.sub(_escaped, text)


def error_line(message: object) -> str:
    """``error: <message>`` on exactly one line."""
    return "error: " + escape_controls(str(message), keep_breaks=False)


class OneLineParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors are one line (its sub-parsers inherit it)."""

    def error(self, message: str) -> NoReturn:
        hint = f"; see {self.prog} --help"
        print(error_line(f"{self.prog}: {message}{hint}"), file=sys.stderr)
        raise SystemExit(2)


class SafeTerminal:
    """Wraps a text stream; every write has its control characters escaped."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text))
        return len(text)

    def __getattr__(self, name: str) -> object:
        return getattr(self._stream, name)


def add_limit_arguments(parser: argparse.ArgumentParser) -> None:
    """``--max-file-mb``, ``--max-pages``, … one per limit, default: the limit in force."""
    group = parser.add_argument_group("input limits (see docs/limits.md)")
    for limit in limits.LIMITS.values():
        group.add_argument(
            limit.flag,
            dest=f"limit_{limit.key}",
            type=float,
            metavar="N",
            help=f"{limit.what} (default {limit.default:g}, or ${limit.env})",
        )


def limit_arguments(args: argparse.Namespace) -> AbstractContextManager[None]:
    """The ``--max-*`` values given on the command line, in force inside a ``with``."""
    return limits.override(**{key: getattr(args, f"limit_{key}", None) for key in limits.LIMITS})
