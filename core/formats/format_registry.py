"""The registry of input formats: one frozen ``FormatSpec`` per format, registered once.

A format composes a loader of ``core.ingest`` (bytes to a ``Document``) with a block
parser of ``core.parse``; the built-in ones are listed in ``core.formats.catalogue`` and
registered by the package (``core.registry``).

Everything that needs to know which files the workbench reads asks this registry: the
loader's dispatch (``core.formats.load_document``), folder discovery for ``index`` and
``eval``, the parsers' dispatch (``core.formats.parse_document``), the Library's upload
types and the kind label in the UI. A new format is one module with a loader and a block
parser plus one ``register(FormatSpec(...))``; nothing else has to be edited.

Dispatch (``resolve_format``), in this order:

1. a format whose ``sniff`` is decisive (``content_wins``) and matches the first KiB
   claims the bytes whatever the file is called (a PDF named ``.txt`` is a PDF); a file
   whose suffix names another format is claimed only when it also passes the format's
   stricter ``claims`` test (a ``.txt`` that merely mentions ``%PDF-`` stays text);
2. the format that lists the file's suffix; if it has a ``sniff`` that does not match,
   the file is refused with that format's ``mismatch`` message (a ``.pdf`` without a
   ``%PDF-`` header, a ``.docx`` that is not a ZIP);
3. bytes that start like a known binary container (PNG, JPEG, ZIP, GIF) are refused;
4. anything else is the default format (UTF-8 text).

Suffixes are lower-case and start with a dot. ``Document.kind`` holds the format's
``name``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import ChunkscopeError, UnsupportedFileError
from core.ingest.request import LoadRequest
from core.registry import Registry

if TYPE_CHECKING:
    from core.provenance.types import Block, Document

__all__ = [
    "FormatSpec",
    "all_formats",
    "describe_formats",
    "describe_suffixes",
    "get_format",
    "is_supported_name",
    "register",
    "registered",
    "resolve_format",
    "supported_suffixes",
    "unregister",
    "upload_format",
]

_BINARY_MAGIC: tuple[bytes, ...] = (b"\x89PNG", b"PK\x03\x04", b"\xff\xd8\xff", b"GIF8")
SNIFF_BYTES = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class FormatSpec:
    """One input format.

    ``load`` builds the ``Document`` (raising ``ChunkscopeError`` subclasses for bad
    files); ``parse`` turns it into candidate blocks for ``core.parse.blocks.finish``;
    ``parse_layout`` is the optional layout-model parser (PDF). ``paged`` formats have
    pages, boxes and a rendered image; reflowable ones have offsets only. ``sniff`` sees
    the first ``SNIFF_BYTES`` bytes.
    """

    name: str
    label: str
    suffixes: tuple[str, ...]
    load: Callable[[LoadRequest], Document]
    parse: Callable[[Document], list[Block | None]]
    paged: bool = False
    sniff: Callable[[bytes], bool] | None = None
    content_wins: bool = False
    mismatch: str = ""
    mismatch_error: type[ChunkscopeError] = UnsupportedFileError
    parse_layout: Callable[..., list[Block | None]] | None = None
    default: bool = False
    claims: Callable[[bytes], bool] | None = None

    def __post_init__(self) -> None:
        if not self.name or not self.label:
            raise ValueError("a format needs a name and a label")
        for suffix in self.suffixes:
            if not suffix.startswith(".") or suffix != suffix.lower():
                raise ValueError(f"format {self.name}: suffix {suffix!r} must be '.lower'")
        if self.content_wins and self.sniff is None:
            raise ValueError(f"format {self.name}: content_wins needs a sniff")


def _check_new(spec: FormatSpec, others: Mapping[str, FormatSpec]) -> None:
    """A new format's suffixes must be free, and there is one default format at most."""
    taken = {s: f.name for f in others.values() for s in f.suffixes}
    clash = [s for s in spec.suffixes if s in taken]
    if clash:
        raise ValueError(f"suffix {clash[0]} already belongs to format {taken[clash[0]]!r}")
    if spec.default and any(f.default for f in others.values()):
        raise ValueError("there is already a default format")


_FORMATS: Registry[FormatSpec] = Registry("format", check=_check_new)


def register(spec: FormatSpec) -> FormatSpec:
    """Add a format; its name and suffixes must be new (raises ``ValueError``)."""
    return _FORMATS.register(spec)


register_builtins = _FORMATS.register_all
load_plugins = _FORMATS.load_plugins  # the chunkscope.formats entry points (core.registry)
unregister = _FORMATS.unregister
registered = _FORMATS.registered  # ``spec`` registered for a ``with`` block (tests, plug-ins)


def all_formats() -> tuple[FormatSpec, ...]:
    """Every registered format, in registration order."""
    return tuple(_FORMATS.values())


def get_format(name: str) -> FormatSpec:
    try:
        return _FORMATS[name]
    except KeyError:
        raise UnsupportedFileError(f"unknown document format {name!r}") from None


def supported_suffixes() -> tuple[str, ...]:
    """Every registered suffix (``".pdf"``, ``".md"``, ...), in registration order."""
    return tuple(s for f in _FORMATS.values() for s in f.suffixes)


def is_supported_name(path: str | Path) -> bool:
    return Path(path).suffix.lower() in supported_suffixes()


def describe_formats() -> str:
    """``"PDF, text, Markdown, ..."``: the labels, for messages and help texts."""
    return ", ".join(dict.fromkeys(f.label for f in _FORMATS.values()))


def describe_suffixes() -> str:
    """``"PDF (.pdf), text (.txt, .text), ..."``: each format with its suffixes, for the
    line that refuses a file and says what would be read instead."""
    return ", ".join(f"{f.label} ({', '.join(f.suffixes)})" for f in _FORMATS.values())


def upload_format(data: bytes, name: str) -> FormatSpec:
    """The format an uploaded file is read as: ``resolve_format``'s, except that a file
    whose suffix no format lists is refused unless a decisive sniff claims its bytes (a
    PDF named ``scan.bin`` is read; ``budget.xlsx`` or ``notes.log`` is not).

    The command line reads any unclaimed UTF-8 file as text; an upload is held to the
    formats the Library offers, and a refused one gets one line naming every accepted
    format with its suffixes (``UnsupportedFileError``)."""
    if is_supported_name(name):
        return resolve_format(data, name)
    with contextlib.suppress(UnsupportedFileError):  # a binary container: refused below
        spec = resolve_format(data, name)
        if not spec.default:
            return spec
    suffix = Path(name).suffix.lower()
    what = f"{suffix} files are" if suffix else "a file without a suffix is"
    accepted = describe_suffixes()
    raise UnsupportedFileError(f"{name}: {what} not read here; upload one of: {accepted}")


def resolve_format(data: bytes, name: str) -> FormatSpec:
    """The format that reads ``data`` (named ``name``); see the module docstring."""
    head = data[:SNIFF_BYTES]
    suffix = Path(name).suffix.lower()
    by_suffix = next((f for f in _FORMATS.values() if suffix in f.suffixes), None)
    for spec in _FORMATS.values():
        if spec.content_wins and spec.sniff is not None and spec.sniff(head):
            named_other = by_suffix is not None and by_suffix is not spec
            if not named_other or spec.claims is None or spec.claims(head):
                return spec
    if by_suffix is not None:
        if by_suffix.sniff is not None and not by_suffix.sniff(head):
            raise by_suffix.mismatch_error(
                by_suffix.mismatch.format(name=name)
                or f"{name} is not a {by_suffix.label} file; check the file"
            )
        return by_suffix
    if head.startswith(_BINARY_MAGIC):
        raise UnsupportedFileError(
            f"{name} is a binary file of a kind Chunkscope does not read; "
            f"give one of: {describe_formats()}"
        )
    default = next((f for f in _FORMATS.values() if f.default), None)
    if default is None:
        raise UnsupportedFileError(f"{name}: no format reads this file")
    return default
