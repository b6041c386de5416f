"""Errors a user can cause. Each message is one line that says what to do.

The CLI prints ``error: <message>`` and exits 2; the UI shows the message in place.
Anything that is not a ``ChunkscopeError`` is a bug and keeps its traceback.
"""


class ChunkscopeError(Exception):
    """Base of every user-facing error."""


class EmptyFileError(ChunkscopeError):
    pass


class NotAPdfError(ChunkscopeError):
    pass


class ZeroPagesError(ChunkscopeError):
    pass


class PasswordRequiredError(ChunkscopeError):
    pass


class WrongPasswordError(ChunkscopeError):
    pass


class UnsupportedFileError(ChunkscopeError):
    pass


class ModelError(ChunkscopeError):
    """The model directory is missing, unreadable, or unfit for the asked method."""


class PoolingError(ModelError):
    """Late chunking was asked of a model that is not mean-pooled."""


class StoreError(ChunkscopeError):
    pass


class StoreLostError(StoreError):
    """The store stopped answering mid-run (a Chroma server went away): every later
    document would fail the same way, so a run stops at the first one."""


class LabelError(ChunkscopeError):
    """A labelled query set is malformed or points at a missing document."""


class LimitExceededError(ChunkscopeError):
    """An input is past one of the limits of ``core.ingest.limits`` (the message names the
    limit and how to raise it)."""


class DamagedPdfError(NotAPdfError):
    """MuPDF could open the file but not read it (a cycle in the page tree, a lying page
    count, a broken object): the PDF is damaged."""


class OcrUnavailableError(ChunkscopeError):
    """OCR was asked for (``--ocr always``) but its engine is not installed, or it failed
    on a page."""


class LibraryError(ChunkscopeError):
    """A document or version the library does not hold, or bytes it lost."""


class RecordError(ChunkscopeError, ValueError):
    """A stored record (a run or sweep file, store metadata, a triage row) is malformed:
    the message names the field, where it sits and what it should be. A ``ValueError``
    too, so a reader that wraps malformed input in its own message keeps doing so."""
