"""The HTTP encoder against a fake OpenAI-compatible embeddings server on loopback.

The server (``FakeEmbeddings``) answers ``POST /v1/embeddings`` with hashed-trigram
vectors (``tests.fakes.trigram_vector``) scaled by 3, so an encoder that forgot to
normalise would be caught; it records every request and can be scripted to fail the next
ones (a status, a malformed body, another dimension). No test waits: the encoder's
``sleep`` records the waits between retries (checked against the backoff), and a closed
port refuses at once.
"""

from __future__ import annotations

import http.server
import json
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.cli import main
from core.embed import VectorCache
from core.embed.http import (
    DEFAULT_KEY_ENV,
    DimensionChangedError,
    HttpEncoder,
    MalformedAnswerError,
    ServerHttpError,
    ServerUnreachableError,
    TokenStatesError,
    endpoint_url,
)
from core.errors import ModelError
from core.methods.embedding import (
    embed_chunks,
    http_default_methods,
    method_support,
    require_usable,
)
from tests.fakes import FAKE_DIM, trigram_vector
from tests.test_cli_eval import _span
from tests.test_embed_encoder import make_chunks, make_text_document

SECRET = "sk-test-0123456789abcdef"
SCALE = 3.0  # the server's vectors are not unit length
FAST: dict[str, Any] = {"timeout_s": 5.0, "sleep": lambda seconds: None}  # retries never wait


@dataclass
class FakeEmbeddings:
    """Requests seen and the scripted answers still to give (``None``: a normal answer;
    an int: that status, its body quoting the request's Authorization header; a
    ``(status, body)`` pair: that status and body; ``"json"``:
    a body that is not JSON; ``"dim:N"``: vectors of N columns; ``"raw:TEXT"``: TEXT)."""

    url: str = ""
    shuffle: bool = True
    script: list[Any] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def inputs(self) -> list[str]:
        return [t for r in self.requests for t in r["input"]]

    def answer(self, payload: dict[str, Any], auth: str) -> tuple[int, bytes]:
        self.requests.append({"input": payload["input"], "model": payload["model"], "auth": auth})
        step = self.script.pop(0) if self.script else None
        if isinstance(step, int):
            return step, f"overloaded; you sent {auth!r}".encode()
        if isinstance(step, tuple):
            return step[0], step[1].encode()
        if step == "json":
            return 200, b'{"data": [{"embedding": [0.1, '
        if isinstance(step, str) and step.startswith("raw:"):
            return 200, step[4:].encode()
        dim = int(step[4:]) if isinstance(step, str) and step.startswith("dim:") else FAKE_DIM
        data = [
            {
                "object": "embedding",
                "index": i,
                "embedding": (trigram_vector(t, dim) * SCALE).tolist(),
            }
            for i, t in enumerate(payload["input"])
        ]
        if self.shuffle:
            data.reverse()
        return 200, json.dumps({"object": "list", "data": data, "model": payload["model"]}).encode()


def _handler(server: FakeEmbeddings) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
            length = int(self.headers.get("Content-Length", "0"))
            payload = json.loads(self.rfile.read(length))
            if self.path != "/v1/embeddings":
                status, body = 404, b'{"error": "not found"}'
            else:
                status, body = server.answer(payload, self.headers.get("Authorization", ""))
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "0")
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

    return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeEmbeddings]:
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv(DEFAULT_KEY_ENV, SECRET)
    fake = FakeEmbeddings()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def _one_line(exc: BaseException) -> str:
    """The error's message, checked to be one line that never quotes the key."""
    message = str(exc)
    assert "\n" not in message and message.strip() == message
    assert SECRET not in message and SECRET not in repr(exc)
    return message


TEXTS = [f"text number {i} about {word}" for i, word in enumerate("abcdefghij")]


def test_batches_keep_the_order_when_the_server_shuffles(server: FakeEmbeddings) -> None:
    encoder = HttpEncoder(server.url, "fake-model", batch_size=4, **FAST)
    vectors = encoder.encode_texts(TEXTS)
    assert len(server.requests) == 3 == -(-len(TEXTS) // 4)
    assert [len(r["input"]) for r in server.requests] == [4, 4, 2]
    assert server.inputs == TEXTS and {r["model"] for r in server.requests} == {"fake-model"}
    expected = np.vstack([trigram_vector(t) for t in TEXTS])
    np.testing.assert_allclose(vectors, expected, atol=1e-6)
    assert vectors.dtype == np.float32 and vectors.shape == (len(TEXTS), FAKE_DIM)
    assert encoder.dim == FAKE_DIM and len(server.requests) == 3  # learned, not probed


def test_vectors_are_unit_length_and_a_query_is_one_row(server: FakeEmbeddings) -> None:
    encoder = HttpEncoder(server.url, "fake-model", **FAST)
    norms = np.linalg.norm(encoder.encode_texts(TEXTS), axis=1)
    np.testing.assert_allclose(norms, 1.0, atol=1e-6)
    query = encoder.encode_query("where is the harbour")
    assert query.shape == (FAKE_DIM,) and abs(float(np.linalg.norm(query)) - 1.0) < 1e-6


def test_progress_counts_texts(server: FakeEmbeddings) -> None:
    seen: list[tuple[int, int]] = []
    HttpEncoder(server.url, "m", batch_size=4, **FAST).encode_texts(
        TEXTS, progress=lambda d, t: seen.append((d, t))
    )
    assert seen == [(0, 10), (4, 10), (8, 10), (10, 10)]


def test_the_bearer_key_comes_from_the_variable_and_is_never_shown(
    server: FakeEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = HttpEncoder(server.url, "m", **FAST)
    encoder.encode_texts(["one"])
    assert server.requests[-1]["auth"] == f"Bearer {SECRET}"
    assert SECRET not in repr(encoder) + encoder.name + encoder.identity
    server.script = [401]  # its body quotes the Authorization header back
    with pytest.raises(ServerHttpError) as caught:
        encoder.encode_texts(["two"])
    message = _one_line(caught.value)
    assert "HTTP 401" in message and "***" in message and f"${DEFAULT_KEY_ENV}" in message

    monkeypatch.setenv("TEAM_EMBED_KEY", "other-key-42")
    HttpEncoder(server.url, "m", key_env="TEAM_EMBED_KEY", **FAST).encode_texts(["three"])
    assert server.requests[-1]["auth"] == "Bearer other-key-42"
    monkeypatch.delenv(DEFAULT_KEY_ENV)
    HttpEncoder(server.url, "m", **FAST).encode_texts(["four"])
    assert server.requests[-1]["auth"] == ""  # no key, no header
    with pytest.raises(ModelError, match=r"\$NOT_SET_KEY is empty or not set"):
        HttpEncoder(server.url, "m", key_env="NOT_SET_KEY", require_key=True)


def test_503_twice_then_200_is_answered(server: FakeEmbeddings) -> None:
    server.script = [503, 503]
    waits: list[float] = []
    encoder = HttpEncoder(server.url, "m", tries=3, **{**FAST, "sleep": waits.append})
    vectors = encoder.encode_texts(["retry me"])
    assert len(server.requests) == 3
    assert waits == [0.5, 1.0]  # the default backoff, doubled
    np.testing.assert_allclose(vectors[0], trigram_vector("retry me"), atol=1e-6)


def test_a_429_is_tried_again(server: FakeEmbeddings) -> None:
    server.script = [429]
    waits: list[float] = []
    HttpEncoder(server.url, "m", backoff_s=2, **{**FAST, "sleep": waits.append}).encode_texts(
        ["slow down"]
    )
    assert len(server.requests) == 2
    assert waits == [0.0]  # the server's Retry-After: 0, not the backoff


def test_retries_are_bounded(server: FakeEmbeddings) -> None:
    server.script = [503] * 10
    waits: list[float] = []
    with pytest.raises(ServerHttpError) as caught:
        encoder = HttpEncoder(
            server.url, "m", tries=3, backoff_s=0.25, **{**FAST, "sleep": waits.append}
        )
        encoder.encode_texts(["never"])
    assert waits == [0.25, 0.5]  # two waits between three tries, then it gives up
    assert len(server.requests) == 3 and caught.value.status == 503
    message = _one_line(caught.value)
    assert message.startswith(f"the embeddings server at {server.url}/v1/embeddings")
    assert "HTTP 503 (3 tries): overloaded" in message


def test_another_4xx_is_not_tried_again(server: FakeEmbeddings) -> None:
    server.script = [400]
    with pytest.raises(ServerHttpError) as caught:
        HttpEncoder(server.url, "m", **FAST).encode_texts(["bad"])
    assert len(server.requests) == 1 and caught.value.status == 400
    assert "HTTP 400: overloaded" in _one_line(caught.value)


def test_the_body_shown_is_cut_at_200_characters(server: FakeEmbeddings) -> None:
    server.script = [(422, "x" * 1000)]
    with pytest.raises(ServerHttpError) as caught:
        HttpEncoder(server.url, "m", **FAST).encode_texts(["long"])
    message = _one_line(caught.value)
    assert "x" * 200 in message and "x" * 201 not in message


def test_a_wrong_path_is_a_404_with_a_hint(server: FakeEmbeddings) -> None:
    encoder = HttpEncoder(f"{server.url}/wrong", "m", **FAST)
    with pytest.raises(ServerHttpError) as caught:
        encoder.encode_texts(["x"])
    assert "HTTP 404" in _one_line(caught.value) and "--embed-url" in str(caught.value)


def test_a_server_that_is_down_is_one_line() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    waits: list[float] = []
    encoder = HttpEncoder(
        f"http://127.0.0.1:{port}", "m", tries=3, **{**FAST, "sleep": waits.append}
    )
    with pytest.raises(ServerUnreachableError) as caught:
        encoder.encode_texts(["x"])
    assert waits == [0.5, 1.0] and encoder.requests == 3
    message = _one_line(caught.value)
    assert message.startswith(
        f"cannot reach the embeddings server at http://127.0.0.1:{port}/v1/embeddings: "
        "start it or fix --embed-url"
    )
    assert "3 tries" in message


def test_another_dimension_mid_run_is_one_line(server: FakeEmbeddings) -> None:
    server.script = [None, "dim:32"]
    with pytest.raises(DimensionChangedError) as caught:
        HttpEncoder(server.url, "m", batch_size=2, **FAST).encode_texts(TEXTS[:4])
    message = _one_line(caught.value)
    assert f"vectors of 32 dimensions after {FAKE_DIM}" in message


@pytest.mark.parametrize(
    ("step", "words"),
    [
        ("json", "not JSON"),
        ("raw:{}", 'no "data" list'),
        ('raw:{"data": []}', "0 vectors for 2 texts"),
        ('raw:{"data": [{"index": 0}, {"index": 1}]}', 'item 0 has no "embedding"'),
        (
            'raw:{"data": [{"embedding": [1], "index": 0}, {"embedding": [1], "index": 0}]}',
            "item 1 has index 0",
        ),
        (
            'raw:{"data": [{"embedding": "AAAA", "index": 0}, {"embedding": [1], "index": 1}]}',
            "not a list of numbers",
        ),
        (
            'raw:{"data": [{"embedding": [0, 0], "index": 0}, {"embedding": [1, 0], "index": 1}]}',
            "a zero vector",
        ),
    ],
)
def test_a_malformed_answer_is_one_line(server: FakeEmbeddings, step: str, words: str) -> None:
    server.script = [step]
    with pytest.raises(MalformedAnswerError) as caught:
        HttpEncoder(server.url, "m", **FAST).encode_texts(["a", "b"])
    message = _one_line(caught.value)
    assert "gave a malformed answer" in message and words in message
    assert len(server.requests) == 1  # a malformed answer is not tried again


def test_urls_names_and_flags() -> None:
    for given in (
        "http://h:8080",
        "http://h:8080/",
        "http://h:8080/v1",
        "http://h:8080/v1/embeddings/",
    ):
        assert endpoint_url(given) == "http://h:8080/v1/embeddings"
    assert (
        endpoint_url("https://api.example.com/openai")
        == "https://api.example.com/openai/v1/embeddings"
    )
    encoder = HttpEncoder("https://api.example.com", "BAAI/bge-small-en-v1.5")
    assert encoder.name == "http:BAAI/bge-small-en-v1.5@api.example.com:443"
    assert encoder.pooling == "unknown" and encoder.max_tokens == 0 and encoder.device == "remote"
    assert (encoder.model_dir / "tokenizer.json").is_file()  # the default model counts tokens
    hidden = HttpEncoder("http://h:1/v1?token=abc", "m")
    assert hidden.url == "http://h:1/v1/embeddings?token=abc"  # requested as given
    assert "abc" not in hidden.shown_url + hidden.identity + repr(hidden)
    for bad in ("ftp://h/v1", "localhost:8080", "http://user:pw@h:1", "http://h:port"):
        with pytest.raises(ModelError) as caught:
            HttpEncoder(bad, "m")
        assert "--embed-url" in str(caught.value) and "pw" not in str(caught.value)


def test_late_and_its_fusions_are_refused_with_the_reason() -> None:
    support = method_support(["naive", "late", "contextual", "bm25", "hybrid(late,bm25)"])
    assert support.usable == ("naive", "contextual", "bm25")
    assert set(support.refused) == {"late", "hybrid(late,bm25;rrf60)"}
    assert "token states" in support.refused["late"]
    assert support.refused["hybrid(late,bm25;rrf60)"].startswith(
        "hybrid(late,bm25;rrf60) fuses late"
    )
    defaults = http_default_methods()
    assert {"naive", "contextual", "bm25"} <= set(defaults) and "late" not in defaults
    require_usable(["naive", "hybrid(naive,bm25)"])
    with pytest.raises(TokenStatesError) as caught:
        require_usable(["naive", "late"])
    assert _one_line(caught.value).startswith("late pools the token states of a whole document")


def test_embed_chunks_runs_naive_and_contextual_over_http_and_caches(
    server: FakeEmbeddings,
) -> None:
    text = "First sentence here. Second one there. Third and last."
    doc = make_text_document(text)
    chunks = make_chunks(doc, [(0, 20), (21, 38), (39, len(text))], heading_paths=[("H",)] * 3)
    encoder = HttpEncoder(server.url, "m", **FAST)
    cache = VectorCache()
    naive = embed_chunks(doc, chunks, "naive", encoder, cache=cache)
    contextual = embed_chunks(doc, chunks, "contextual", encoder, cache=cache)
    np.testing.assert_allclose(naive[0].vector, trigram_vector(chunks[0].text), atol=1e-6)
    assert server.inputs[3].startswith("A title\nH\n\n")  # the contextual prefix was sent
    assert naive[0].token_count == contextual[0].token_count > 0
    assert naive[0].truncated_tokens == 0
    sent = len(server.requests)
    embed_chunks(doc, chunks, "naive", encoder, cache=cache)
    embed_chunks(doc, chunks, "contextual", encoder, cache=cache)
    assert len(server.requests) == sent
    with pytest.raises(ModelError, match="token states"):
        embed_chunks(doc, chunks, "late", encoder)


# -- chunkscope eval --embed-url ----------------------------------------------------------

HARBOUR = """# Harbour notes

The harbour master logs every ship that docks after dark, with its cargo and crew.

The lighthouse keeper trims the lamp wick each evening before sunset.
"""
ORCHARD = """# Orchard notes

Apple trees in the orchard are pruned in late winter before the buds open.

Bees from the hives on the hill pollinate the blossom in spring.
"""
QUERIES = {"harbour": "who logs ships at night", "bees": "what pollinates the blossom"}


@pytest.fixture
def labelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "harbour.md").write_text(HARBOUR, "utf-8")
    (docs / "orchard.md").write_text(ORCHARD, "utf-8")
    rows = [
        {"id": "harbour", "query": QUERIES["harbour"], "doc": "harbour.md",
         "gold": [_span(HARBOUR, "The harbour master logs every ship")]},
        {"id": "bees", "query": QUERIES["bees"], "doc": "orchard.md",
         "gold": [_span(ORCHARD, "Bees from the hives")]},
    ]  # fmt: skip
    (tmp_path / "q.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n", "utf-8")
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    return tmp_path


def _eval_args(ws: Path, url: str, *extra: str) -> list[str]:
    return [
        "eval", "--queries", str(ws / "q.jsonl"), "--docs", str(ws / "docs"),
        "--size", "120", "--overlap", "0", "--embed-url", url, "--embed-model", "team-model",
        "--resamples", "50", *extra,
    ]  # fmt: skip


def test_eval_over_http_writes_a_run_of_that_model_and_caches(
    server: FakeEmbeddings, labelled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_file, cache = labelled / "run.json", labelled / "vectors"
    args = _eval_args(labelled, server.url, "--methods", "naive,bm25", "--cache", str(cache))
    assert main([*args, "--out", str(run_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    name = f"http:team-model@127.0.0.1:{server.url.rsplit(':', 1)[1]}"
    assert out["model"] == name and out["methods"] == ["naive", "bm25"]
    assert json.loads(run_file.read_text("utf-8"))["model"] == name
    assert out["n_queries"] == 2 and out["metrics"]["naive"]["hit@1"] is not None
    assert all(r["auth"] == f"Bearer {SECRET}" for r in server.requests)
    chunk_texts = set(server.inputs) - set(QUERIES.values())
    assert chunk_texts and any("harbour master" in t for t in chunk_texts)

    server.requests.clear()
    assert main([*args, "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["metrics"] == out["metrics"]
    # Chunks and queries both come from the vector cache: at most the model's dimension is
    # asked again (one probe text when the encoder opens).
    assert len(server.inputs) <= 1 and not set(server.inputs) & (
        chunk_texts | set(QUERIES.values())
    )


def test_eval_over_http_defaults_to_the_methods_it_can_run(
    server: FakeEmbeddings, labelled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*_eval_args(labelled, server.url), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert tuple(out["methods"]) == http_default_methods() and "late" not in out["methods"]


@pytest.mark.parametrize("methods", ["late", "naive,hybrid(late,bm25)"])
def test_eval_over_http_refuses_late_in_one_line(
    server: FakeEmbeddings, labelled: Path, capsys: pytest.CaptureFixture[str], methods: str
) -> None:
    assert main([*_eval_args(labelled, server.url), "--methods", methods]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ")
    assert "token states" in err and "--embed-url" in err
    assert server.requests == []  # refused before anything was sent


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--embed-model", "m"], "go with --embed-url"),
        (["--embed-url", "http://127.0.0.1:9"], "--embed-url needs --embed-model"),
        (["--embed-url", "http://127.0.0.1:9", "--embed-model", "m", "--model", "x"],
         "both name the encoder"),
        (["--embed-url", "http://127.0.0.1:9", "--embed-model", "m", "--embed-key-env", "NOPE_KEY"],
         "$NOPE_KEY is empty or not set"),
    ],
)  # fmt: skip
def test_eval_embed_flag_mistakes_are_one_line(
    labelled: Path, capsys: pytest.CaptureFixture[str], extra: list[str], words: str
) -> None:
    base = ["eval", "--queries", str(labelled / "q.jsonl"), "--docs", str(labelled / "docs")]
    assert main([*base, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and words in err


def test_eval_help_names_the_default_key_variable(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["eval", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert f"(default ${DEFAULT_KEY_ENV}, when set)" in help_text and "--embed-url URL" in help_text


def test_eval_with_the_server_down_is_one_line(
    labelled: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert main(_eval_args(labelled, f"http://127.0.0.1:{port}", "--methods", "naive")) == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error" in line]
    assert len(errors) == 1  # the progress bar aside, one line
    assert errors[0].startswith(
        f"error: cannot reach the embeddings server at http://127.0.0.1:{port}"
    )
