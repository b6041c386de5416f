"""Reading a source file from disk, bounded: only regular files, at most the size limit.

A FIFO would block the reader forever, a device such as ``/dev/zero`` never ends, a
symlink loop or a folder cannot be read: each is refused with one line before a byte is
read. The file is opened without blocking and checked with ``fstat`` on the open
descriptor, so what is read is what was checked; at most ``file_mb`` MB plus one byte is
ever read (``core.ingest.limits``).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from pathlib import Path

from core.errors import LimitExceededError, UnsupportedFileError
from core.ingest import limits

_CHUNK_BYTES = 1 << 20


# Characters that can split a line, repaint a terminal or reorder what is shown: C0
# controls but tab and newline, DEL, C1 controls, the line and paragraph separators and
# the bidirectional marks, embeddings, overrides and isolates.
CONTROL_CHARS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_NAME_CONTROLS = re.compile(f"[\t\n{CONTROL_CHARS}]")


def display_name(text: str) -> str:
    """A name fit for a one-line message: control characters (newlines, ESC, a bidi
    override) shown as escapes, so a file name can neither split nor repaint an error
    line, nor show its extension reversed."""
    return _NAME_CONTROLS.sub(lambda m: ascii(m.group())[1:-1], text)


def read_source(path: Path, display: str) -> bytes:
    """The bytes of the regular file ``path``; ``display`` names it in errors."""
    shown = display_name(display)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise UnsupportedFileError(f"{shown} does not exist; check the path") from None
    except IsADirectoryError:
        raise UnsupportedFileError(f"{shown} is a folder; give a file") from None
    except PermissionError:
        raise UnsupportedFileError(f"{shown} is not readable; check its permissions") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnsupportedFileError(f"{shown} is a symlink loop; give a file") from None
        raise UnsupportedFileError(f"{shown} cannot be opened ({exc.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise UnsupportedFileError(f"{shown} is a folder; give a file")
        raise UnsupportedFileError(f"{shown} is {_kind(mode)}, not a regular file; give a file")
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        return _read_bounded(handle, shown)


def _read_bounded(handle, shown: str) -> bytes:  # noqa: ANN001
    cap = int(limits.value("file_mb") * 1_000_000)
    parts: list[bytes] = []
    size = 0
    while size <= cap:
        block = handle.read(min(_CHUNK_BYTES, cap + 1 - size))
        if not block:
            break
        parts.append(block)
        size += len(block)
    if size > cap:
        spec = limits.LIMITS["file_mb"]
        raise LimitExceededError(
            f"{shown} is larger than the limit of {cap / 1_000_000:g} MB a file; "
            f"{spec.how_to_raise()}"
        )
    return b"".join(parts)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"
