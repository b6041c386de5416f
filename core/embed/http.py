"""Your embedder over HTTP: texts to vectors through an OpenAI-compatible embeddings server.

Servers such as text-embeddings-inference, Ollama, vLLM and infinity answer
``POST <base>/v1/embeddings`` with the JSON body ``{"model": NAME, "input": [texts]}`` by
``{"data": [{"embedding": [floats], "index": i}, ...]}``. :class:`HttpEncoder` sends the
texts ``batch_size`` at a time (64 by default), puts each answer's rows back in the order
of its inputs by their ``index`` (a server may answer in any order), and L2-normalises
every row, so scores are cosines as with the local encoder, whatever the server's own
normalisation.

What such a server can and cannot give:

- one vector per text, each text encoded alone: the methods whose vectors are texts
  encoded alone (``core.methods.embedding.encodes_texts_alone``) run on it unchanged;
- no token states: late chunking pools the states of a whole document's tokens, so it is
  refused with its reason (``core.methods.embedding.method_support`` and
  ``require_usable``), and so is a fusion that needs it;
- no view of its tokenizer: chunk sizes and each record's ``token_count`` are counted
  with the tokenizer of ``model_dir`` (the packaged MiniLM-L6's unless another local
  folder is named), which chunking counts with too; ``truncated_tokens`` is recorded as 0
  because what the server cut, if anything, it does not say. ``max_tokens`` and
  ``position_limit`` are 0 (:data:`UNKNOWN_LIMIT`) for the same reason.

Failures are one-line :class:`EmbedServerError` messages (a ``ModelError``): the server
cannot be reached, answers an HTTP error (status and the first 200 characters of its
body), a malformed answer, or vectors of another dimension than its first answer's.
Connection errors, timeouts, 429 and 5xx are tried again, ``tries`` attempts in all (3),
waiting ``backoff_s * 2**n`` between them (0.5 s, 1 s; a numeric ``Retry-After`` of at
most :data:`MAX_WAIT_S` is honoured instead), through ``sleep`` (``time.sleep`` unless
given, so a caller can record the waits instead of waiting); another 4xx fails at once,
since sending the same request again would get the same answer. Redirects are not
followed (the bearer key would travel to wherever they point).

The API key is read from an environment variable (``key_env``, default
:data:`DEFAULT_KEY_ENV`) when the encoder is built and sent as
``Authorization: Bearer <key>``. It is never part of the name, the identity, the repr or
a message: an answer body that quotes it is masked before it is shown.
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from core import settings
from core.errors import ModelError
from core.model.paths import default_model_dir, resolve_model_dir

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_KEY_ENV",
    "DimensionChangedError",
    "EmbedServerError",
    "HttpEncoder",
    "MalformedAnswerError",
    "ServerHttpError",
    "ServerUnreachableError",
    "TokenStatesError",
    "endpoint_url",
]

DEFAULT_KEY_ENV = settings.EMBED_KEY.name
DEFAULT_BATCH_SIZE = 64  # texts per request
DEFAULT_TIMEOUT_S = 60.0  # per socket operation of one request (connect, each read)
DEFAULT_TRIES = 3  # attempts per request, the first included
DEFAULT_BACKOFF_S = 0.5  # wait before the second attempt; doubled before each later one
MAX_WAIT_S = 30.0  # the longest Retry-After honoured
ENDPOINT_PATH = "/v1/embeddings"
UNKNOWN_LIMIT = 0  # max_tokens / position_limit: the server's own limits are not visible
BODY_CHARS = 200  # of an error answer's body, shown in its message
MASK = "***"
Progress = Callable[[int, int], None]


class EmbedServerError(ModelError):
    """The embeddings server failed; the message is one line naming its URL."""


class ServerUnreachableError(EmbedServerError):
    """No connection, or no answer within the timeout, on every attempt."""


class ServerHttpError(EmbedServerError):
    """The server answered an HTTP error status (``status``)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class MalformedAnswerError(EmbedServerError):
    """A 200 answer that is not the ``{"data": [{"embedding", "index"}]}`` shape."""


class DimensionChangedError(EmbedServerError):
    """An answer's vectors have another dimension than the first answer's."""


class TokenStatesError(ModelError):
    """A method that needs token states (late chunking) was asked of an embeddings server."""


def endpoint_url(url: str) -> str:
    """``http(s)://host[:port][/prefix]/v1/embeddings`` for a base URL given with or
    without that suffix (``…/v1`` gets ``/embeddings``); ``ModelError`` for another scheme,
    no host, or credentials in the URL (the key belongs in an environment variable)."""
    parts = urlsplit(url.strip())
    if parts.username is not None or parts.password is not None:
        raise ModelError(
            f"--embed-url holds credentials: put the key in ${DEFAULT_KEY_ENV} "
            "(or the variable --embed-key-env names) instead"
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelError(
            f"--embed-url takes http(s)://HOST[:PORT][{ENDPOINT_PATH}], got {_one_line(url)!r}"
        )
    try:
        parts.port  # noqa: B018 - a port that is not a number raises here, not mid-run
    except ValueError:
        raise ModelError(f"--embed-url has a bad port: {_one_line(url)!r}") from None
    path = parts.path.rstrip("/")
    if not path.endswith(ENDPOINT_PATH):
        path = path + "/embeddings" if path.endswith("/v1") else path + ENDPOINT_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def _host_port(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    return f"{host}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


@dataclass(frozen=True, slots=True, kw_only=True)
class _Failure:
    """What went wrong with the last attempt of a request: ``connection``, ``timeout`` or
    a retried HTTP ``status`` (with the start of its body and its ``Retry-After``)."""

    kind: str
    detail: str = ""
    status: int = 0
    retry_after: str = ""


def _connection_failure(exc: BaseException) -> _Failure:
    """A timeout (urllib wraps one while connecting in a ``URLError``) or a connection
    error, with the operating system's words for it."""
    reason = getattr(exc, "reason", exc)
    if isinstance(exc, TimeoutError) or isinstance(reason, TimeoutError):
        return _Failure(kind="timeout")
    words = getattr(reason, "strerror", None) or str(reason) or type(reason).__name__
    return _Failure(kind="connection", detail=_one_line(words))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Turns a redirect into its HTTP error: following it would carry the bearer key to
    wherever it points."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class HttpEncoder:
    """A ``core.protocols.TextEncoder`` whose vectors come from an OpenAI-compatible
    ``/v1/embeddings`` server (see the module docstring).

    ``name`` is ``http:<model>@<host>:<port>``: it labels runs and keys cached vectors
    (through ``identity``, which adds the endpoint's path), so two servers or two models
    never share vectors. ``dim`` is learned from the first answer; every later answer must
    have it. ``requests`` counts the POSTs sent (retries included) and ``texts_sent`` the
    texts in them.
    """

    def __init__(
        self,
        url: str,
        model: str,
        *,
        key_env: str = DEFAULT_KEY_ENV,
        require_key: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        tries: int = DEFAULT_TRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        token_model_dir: str | os.PathLike[str] | None = None,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        if not model.strip():
            raise ModelError("--embed-model names the model the server is asked for: give one")
        if batch_size < 1 or tries < 1 or timeout_s <= 0 or backoff_s < 0:
            raise ValueError("batch_size and tries must be >= 1, timeout_s > 0, backoff_s >= 0")
        self.url = endpoint_url(url)  # what is requested, a query string included
        self.shown_url = urlunsplit(urlsplit(self.url)._replace(query=""))  # what is shown
        self.model = model.strip()
        self.name = f"http:{self.model}@{_host_port(self.url)}"
        self.batch_size = batch_size
        self.timeout_s = float(timeout_s)
        self.tries = tries
        self.backoff_s = float(backoff_s)
        self._sleep = time.sleep if sleep is None else sleep
        self.key_env = key_env
        self._key = _read_key(key_env, required=require_key)
        self._model_dir = (
            resolve_model_dir(token_model_dir) if token_model_dir else default_model_dir()
        )
        self._dim: int | None = None
        self._opener = urllib.request.build_opener(_NoRedirect)
        self.requests = 0
        self.texts_sent = 0

    def __repr__(self) -> str:
        key = f"${self.key_env} set" if self._key else "no key"
        return f"HttpEncoder(name={self.name!r}, url={self.shown_url!r}, {key})"

    # -- what the engine reads (core.protocols.TextEncoder) -----------------------------

    @property
    def model_dir(self) -> Path:
        """The local folder whose tokenizer counts tokens (chunk sizes, ``token_count``);
        the server's own tokenizer is not visible."""
        return self._model_dir

    @property
    def pooling(self) -> str:
        """``unknown``: the server pools as it is configured."""
        return "unknown"

    @property
    def max_tokens(self) -> int:
        """0 (:data:`UNKNOWN_LIMIT`): the server truncates at its own limit."""
        return UNKNOWN_LIMIT

    @property
    def position_limit(self) -> int:
        return UNKNOWN_LIMIT

    @property
    def device(self) -> str:
        return "remote"

    @property
    def identity(self) -> str:
        """Name and endpoint URL: what decides the vectors, as far as can be seen (part of
        every cache key)."""
        return f"{self.name}|{self.shown_url}"

    @property
    def dim(self) -> int:
        """Columns of every vector, as the first answer had them; asked before any text
        was encoded, one short probe text is sent to learn it."""
        if self._dim is None:
            self.encode_texts(["dimension probe"])
        assert self._dim is not None
        return self._dim

    # -- encoding ------------------------------------------------------------------------

    def encode_texts(self, texts: Sequence[str], *, progress: Progress | None = None) -> np.ndarray:
        """``(len(texts), dim)`` float32 rows, L2-normalised, in the order of ``texts``;
        one request per ``batch_size`` texts; ``progress(done, total)`` in texts."""
        total = len(texts)
        if progress is not None:
            progress(0, total)
        rows: list[np.ndarray] = []
        for lo in range(0, total, self.batch_size):
            batch = [str(t) for t in texts[lo : lo + self.batch_size]]
            rows.append(self._vectors(self._post({"model": self.model, "input": batch}), batch))
            if progress is not None:
                progress(lo + len(batch), total)
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        return np.vstack(rows)

    def encode_query(self, text: str) -> np.ndarray:
        """One query text: ``(dim,)`` float32, L2-normalised."""
        return self.encode_texts([text])[0]

    def _post(self, payload: dict[str, Any]) -> Any:
        """The parsed JSON answer to ``payload``, after at most ``tries`` attempts."""
        body = json.dumps(payload).encode("ascii")  # escapes survive any text, lone surrogates too
        failure = _Failure(kind="connection")
        for attempt in range(self.tries):
            if attempt:
                self._sleep(self._wait(attempt, failure))
            self.requests += 1
            self.texts_sent += len(payload["input"])
            try:
                with self._opener.open(self._request(body), timeout=self.timeout_s) as answer:
                    raw = answer.read()
            except urllib.error.HTTPError as exc:
                status, text = exc.code, self._body_of(exc)
                if status != 429 and not 500 <= status < 600:
                    self._http_error(status, text)
                retry_after = exc.headers.get("Retry-After", "") if exc.headers else ""
                failure = _Failure(kind="status", detail=text, status=status,
                                   retry_after=str(retry_after))  # fmt: skip
                continue
            except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
                failure = _connection_failure(exc)
                continue
            try:
                return json.loads(raw)
            except ValueError:
                self._malformed(f"not JSON ({_one_line(raw[:60].decode('utf-8', 'replace'))!r})")
        self._give_up(failure)

    def _request(self, body: bytes) -> urllib.request.Request:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": "chunkscope",
        }
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return urllib.request.Request(self.url, data=body, headers=headers, method="POST")

    def _wait(self, attempt: int, failure: _Failure) -> float:
        """Seconds before retry ``attempt`` (1 for the second try): the backoff, or the
        server's numeric ``Retry-After`` when it is at most ``MAX_WAIT_S``."""
        try:
            asked = float(failure.retry_after)
        except ValueError:
            asked = -1.0
        if 0 <= asked <= MAX_WAIT_S:
            return asked
        return self.backoff_s * 2 ** (attempt - 1)

    def _body_of(self, exc: urllib.error.HTTPError) -> str:
        try:
            raw = exc.read()
        except (OSError, http.client.HTTPException):
            raw = b""
        return self._clean(raw.decode("utf-8", "replace"))[:BODY_CHARS]

    def _clean(self, text: str) -> str:
        """One line, the key masked wherever the server quoted it."""
        line = _one_line(text)
        return line.replace(self._key, MASK) if self._key else line

    def _http_error(self, status: int, text: str, *, tries: int = 1) -> NoReturn:
        hint = {
            401: f"check the key in ${self.key_env}",
            403: f"check the key in ${self.key_env}",
            404: f"check --embed-url (…{ENDPOINT_PATH}) and --embed-model",
        }.get(status)
        if 300 <= status < 400:
            hint = "redirects are not followed: give the final URL in --embed-url"
        after = f" ({tries} tries)" if tries > 1 else ""
        said = f": {text}" if text else ""
        tail = f"; {hint}" if hint else ""
        raise ServerHttpError(
            self._clean(
                f"the embeddings server at {self.shown_url} answered HTTP {status}"
                f"{after}{said}{tail}"
            ),
            status=status,
        )

    def _give_up(self, failure: _Failure) -> NoReturn:
        if failure.kind == "status":
            self._http_error(failure.status, failure.detail, tries=self.tries)
        if failure.kind == "timeout":
            raise ServerUnreachableError(
                f"the embeddings server at {self.shown_url} did not answer within "
                f"{self.timeout_s:g} s ({self.tries} tries): check that it is up and not "
                "overloaded"
            )
        raise ServerUnreachableError(
            self._clean(
                f"cannot reach the embeddings server at {self.shown_url}: start it or fix "
                f"--embed-url ({failure.detail}; {self.tries} tries)"
            )
        )

    def _malformed(self, what: str) -> NoReturn:
        raise MalformedAnswerError(
            self._clean(
                f"the embeddings server at {self.shown_url} gave a malformed answer: {what} "
                '(expected {"data": [{"embedding": [numbers], "index": i}, ...]})'
            )
        )

    def _vectors(self, answer: Any, batch: Sequence[str]) -> np.ndarray:
        """The rows of ``answer`` in input order, checked and L2-normalised."""
        n = len(batch)
        data = answer.get("data") if isinstance(answer, dict) else None
        if not isinstance(data, list):
            self._malformed('no "data" list')
        if len(data) != n:
            self._malformed(f"{len(data)} vectors for {n} texts")
        slots: list[Any] = [None] * n
        for position, item in enumerate(data):
            if not isinstance(item, dict) or "embedding" not in item:
                self._malformed(f'item {position} has no "embedding"')
            index = item.get("index", position)
            if type(index) is not int or not 0 <= index < n or slots[index] is not None:
                self._malformed(f"item {position} has index {index!r}: want 0-{n - 1}, once each")
            slots[index] = item["embedding"]
        try:
            matrix = np.asarray(slots, dtype=np.float64)
        except (ValueError, TypeError):
            self._malformed("an embedding is not a list of numbers, or rows differ in length")
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            self._malformed("an embedding is not a non-empty list of numbers")
        if not np.all(np.isfinite(matrix)):
            self._malformed("an embedding holds a value that is not a finite number")
        self._check_dim(int(matrix.shape[1]))
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        if np.any(norms == 0):
            self._malformed("a zero vector, which has no direction to compare")
        return (matrix / norms).astype(np.float32)

    def _check_dim(self, dim: int) -> None:
        if self._dim is None:
            self._dim = dim
        elif dim != self._dim:
            raise DimensionChangedError(
                self._clean(
                    f"the embeddings server at {self.shown_url} answered vectors of {dim} "
                    f"dimensions after {self._dim}: the model behind it changed; run again "
                    f"once it serves one model ({self.model})"
                )
            )


def _read_key(key_env: str, *, required: bool) -> str:
    """The key in ``$key_env``; ``""`` when unset, unless ``required`` (named by the
    user): then a ``ModelError`` naming the variable, never its value."""
    if key_env == settings.EMBED_KEY.name:
        key = settings.EMBED_KEY.read() or ""
    else:  # a variable the user named (--embed-key-env)
        key = os.environ.get(key_env, "").strip()
    if required and not key:
        raise ModelError(f"${key_env} is empty or not set: export the API key there")
    return key
