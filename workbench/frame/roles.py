"""Who may change the library: viewers read, editors write.

A citation link is opened by people who must trust the answers, not change the library.
With ``CHUNKSCOPE_EDITOR_KEY`` set (in the environment, or under that name in Streamlit's
``secrets.toml``), every browser session starts as a viewer: it opens citation links and
the Source, Parse and Chunks views, runs queries on Compare over the existing index (k
up to ``VIEWER_MAX_K``) and reads stored runs, failures and sweeps. The sidebar's "Sign
in to edit" takes the key and makes that session an editor until it ends. Without the
setting every session is an editor (one user on their own machine) and the sidebar says
so in one line.

Two layers, so a hidden button is never the only thing in the way:

- pages draw the controls that write only where ``editing_enabled()``;
- every function that writes (stores an upload, removes a document, saves an imported
  chunk set or run, starts an index job, an evaluation or a sweep, saves a triage tag or
  a cell's run, changes the store) first calls ``require_editor``, which refuses a viewer
  in one line, so a widget value sent by hand changes nothing.

The key is compared in constant time (``hmac.compare_digest``), never put in a URL, the
page, a log or the query parameters; wrong keys are answered more slowly the more of them
the same client has sent (``SignInThrottle``: per client address, else per browser
session; never a delay shared by everyone).
"""

from __future__ import annotations

import hmac
import logging
import os
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from core import settings
from core.errors import LabelError
from core.evaluate import Tag, TriageStore
from workbench.state import RoleKey

ENV_EDITOR_KEY = settings.EDITOR_KEY.name
VIEWER_MAX_K = 50  # a viewer's largest k on Compare
WRONG_KEY = "Wrong key."
FREE_TRIES = 3  # wrong keys answered at once (typos cost nothing)
FIRST_DELAY_S = 1.0  # then each answer waits twice as long as the one before...
MAX_DELAY_S = 16.0  # ...up to this

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EditorGrant:
    """What a session that signed in holds under ``RoleKey.ROLE``: an object no widget value
    can be, so a value sent by hand under that name never makes an editor."""

    signed_in_at: float


# -- the setting and the role ------------------------------------------------------------


def editor_key() -> str | None:
    """The configured key: the environment first, then ``secrets.toml`` (None: no roles).

    Set but empty counts as set: every session stays a viewer (nobody can sign in with
    an empty key), so a blank value never opens the library to everyone."""
    if (key := settings.EDITOR_KEY.read()) is not None:
        return key
    try:  # no secrets file, or one that does not parse, is no setting (never an error)
        if not st.secrets.load_if_toml_exists():
            return None
        value = st.secrets.get(ENV_EDITOR_KEY)
    except Exception:  # noqa: BLE001 - any failure to read secrets means "not set"
        return None
    return None if value is None else str(value).strip()


def protected() -> bool:
    """Whether roles apply: ``CHUNKSCOPE_EDITOR_KEY`` is set."""
    return editor_key() is not None


def is_editor() -> bool:
    """Whether this session may change the library: no key is set, or it signed in."""
    return not protected() or isinstance(st.session_state.get(RoleKey.ROLE), EditorGrant)


def editing_enabled() -> bool:
    """Whether pages draw the controls that write for this session. Drawing them never
    grants anything: the functions they call check ``require_editor`` themselves."""
    return is_editor()


def require_editor(action: str) -> bool:
    """True for an editor; for a viewer, one line saying who may ``action`` and how to
    become one, and False (the caller then writes nothing)."""
    if is_editor():
        return True
    st.warning(
        f"Only an editor can {action}: sign in to edit in the sidebar.", icon=":material/lock:"
    )
    return False


def viewer_note(action: str) -> None:
    """Where a page leaves out the controls that write: one line saying who may ``action``
    (nothing for an editor)."""
    if not editing_enabled():
        st.caption(f":material/lock: Only an editor can {action}: sign in to edit in the sidebar.")


def k_limit(state_key: str) -> int | None:
    """The largest k this session may ask on Compare (None: any). A viewer's k above it,
    kept under ``state_key`` or sent by hand, is brought down to it before the widget
    reads it."""
    if is_editor():
        return None
    if int(st.session_state.get(state_key) or 0) > VIEWER_MAX_K:
        st.session_state[state_key] = VIEWER_MAX_K
    return VIEWER_MAX_K


def editor_synced(widget_key: str, state_key: str, action: str) -> dict:
    """``wording.synced`` for a widget whose value only an editor may set (the store's
    location): for a viewer the change is refused and the widget put back."""

    def copy() -> None:
        if require_editor(action):
            st.session_state[state_key] = st.session_state[widget_key]
        else:  # drawn again from the value in use (the widget's own ``value=``)
            del st.session_state[widget_key]

    return {"key": widget_key, "on_change": copy}


# -- signing in --------------------------------------------------------------------------


@dataclass(slots=True)
class _Client:
    """One client's wrong keys in a row, and the lock its attempts wait on."""

    lock: threading.Lock
    failures: int = 0


class SignInThrottle:
    """Wrong keys counted per client: its address where the server knows it (a guesser
    who opens new browser sessions is still one address), else its browser session.

    A client's first ``FREE_TRIES`` wrong keys are answered at once; after that each of
    its answers, right or wrong, waits twice as long as the last (``FIRST_DELAY_S`` up to
    ``MAX_DELAY_S``), one attempt at a time for that client, so guessing costs the guesser
    time while a typo costs nothing, and nobody else waits for a guesser: another client's
    answer never queues behind one. A right key starts that client's count again. At most
    ``max_clients`` are remembered (the longest unseen forgotten first)."""

    def __init__(
        self, *, sleep: Callable[[float], None] = time.sleep, max_clients: int = 4096
    ) -> None:
        self._sleep = sleep
        self._max_clients = max_clients
        self._lock = threading.Lock()  # guards the table only, never held while waiting
        self._clients: OrderedDict[str, _Client] = OrderedDict()

    def _client(self, client: str) -> _Client:
        with self._lock:
            entry = self._clients.pop(client, None) or _Client(lock=threading.Lock())
            self._clients[client] = entry  # the most recently seen last
            while len(self._clients) > self._max_clients:
                self._clients.popitem(last=False)
            return entry

    def failures(self, client: str) -> int:
        """Wrong keys in a row from ``client``."""
        with self._lock:
            entry = self._clients.get(client)
        return 0 if entry is None else entry.failures

    def counts(self) -> dict[str, int]:
        """Wrong keys in a row, by client (the clients remembered)."""
        with self._lock:
            return {client: entry.failures for client, entry in self._clients.items()}

    def delay_s(self, client: str) -> float:
        """How long ``client``'s next answer waits."""
        extra = self.failures(client) - FREE_TRIES
        return 0.0 if extra < 0 else min(MAX_DELAY_S, FIRST_DELAY_S * 2**extra)

    def check(self, given: str, expected: str, *, client: str) -> bool:
        """Whether ``given`` is the key (an empty key never is), compared in constant time,
        answered after ``client``'s delay."""
        entry = self._client(client)
        with entry.lock:
            if (wait := self.delay_s(client)) > 0:
                self._sleep(wait)
            right = hmac.compare_digest(given.encode(), expected.encode())
            right = right and bool(expected)
            entry.failures = 0 if right else entry.failures + 1
            return right


@st.cache_resource(show_spinner=False)
def throttle() -> SignInThrottle:
    """The server's count of wrong keys, per client."""
    return SignInThrottle()


def client_id() -> str:
    """Who is signing in: ``ip:<address>`` where the server knows the client's address,
    else ``session:<id>`` (this browser session)."""
    address = st.context.ip_address
    if isinstance(address, str) and address:
        return f"ip:{address}"
    ctx = get_script_run_ctx()
    return f"session:{ctx.session_id if ctx is not None else 'none'}"


def _sign_in() -> None:
    """The sign-in form's callback: the key is read, emptied from the form and dropped."""
    given = str(st.session_state.get(RoleKey.KEY_INPUT) or "").strip()
    st.session_state[RoleKey.KEY_INPUT] = ""
    expected = editor_key()
    if not given or expected is None:
        return
    if throttle().check(given, expected, client=client_id()):
        st.session_state[RoleKey.ROLE] = EditorGrant(signed_in_at=time.time())
        _log.info("a session signed in to edit")
    else:
        st.session_state[RoleKey.SIGN_IN_NOTE] = WRONG_KEY
        _log.warning("a wrong editor key was entered")


def sign_in_panel() -> None:
    """The sidebar's line about who may change the library, and the sign-in form."""
    if not protected():
        st.caption(
            f"Open to edits: anyone who can reach this workbench can change its library "
            f"(set `{ENV_EDITOR_KEY}` to keep that to editors).",
        )
        return
    if is_editor():
        st.caption(":material/edit: Signed in to edit: this session can change the library.")
        return
    st.caption(
        ":material/visibility: Viewing: sources, chunks, queries and stored results; "
        "editors change the library."
    )
    with st.expander("Sign in to edit", icon=":material/lock:"):
        with st.form(RoleKey.SIGN_IN_FORM, clear_on_submit=True, border=False):
            st.text_input(
                "Editor key",
                type="password",
                key=RoleKey.KEY_INPUT,
                autocomplete="current-password",
            )
            st.form_submit_button("Sign in", on_click=_sign_in)
        if note := st.session_state.pop(RoleKey.SIGN_IN_NOTE, None):
            st.error(note, icon=":material/key_off:")


# -- what a viewer reads instead of a writable store -------------------------------------


class ReadOnlyTriage(TriageStore):
    """A viewer's view of the triage file, through SQLite's read-only mode.

    ``TriageStore`` creates the file and brings its schema up to date when it opens it,
    which rewrites the file's header; this one never creates, migrates or writes, so a
    viewer reading tags leaves the file's bytes as they were. No file reads as no tags."""

    def __init__(self, path: str | os.PathLike[str]) -> None:  # not super(): it writes
        self.path = Path(path)

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        try:
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        except sqlite3.Error as exc:
            raise LabelError(f"cannot read the triage file {self.path}: {exc}") from exc
        try:
            yield conn
        finally:
            conn.close()

    def tags(self, run_id: str) -> list[Tag]:
        if not self.path.is_file():
            return []
        try:
            return super().tags(run_id)
        except sqlite3.Error:  # a file an editor has not opened since an upgrade
            _log.warning("reading the triage file %s failed", self.path, exc_info=True)
            return []

    def tag(self, **_: object) -> Tag:
        raise LabelError("only an editor can tag failures: sign in to edit in the sidebar")

    def untag(self, **_: object) -> bool:
        raise LabelError("only an editor can remove tags: sign in to edit in the sidebar")
