"""Hostile files uploaded through the workbench (``AppTest``, no browser): one batch of
crafted files shows one line per bad file, the good ones load, and every page stays
usable on what was loaded (a page too large to draw at 2x, a lone surrogate, a name
full of markdown), and a deep link with a 5,000-digit span is refused in one line."""

from __future__ import annotations

import hostile_files as h
from test_app_pages import app, html_of, open_page, plain, store_dir, upload  # noqa: F401

HUGE = h.one_page_pdf(h.text_ops(["A poster of a page."]), media_box=b"[0 0 14400 14400]")
BAD = {
    "cycle.pdf": (h.page_tree_cycle_pdf(), "is damaged (cycle in page tree)"),
    "bomb.pdf": (h.text_bomb_pdf(4_000_000), "over the limit of 100,000 characters a page"),
    "bomb-120mb.pdf": (h.text_bomb_pdf(120_000_000), "decompression bomb"),
    "count.pdf": (h.count_lie_pdf(), "is damaged"),
    "long.txt": (b"word " * 1_000_000, "over the limit of 4,000,000 characters a document"),
    "two\nlines\x1b[2J.pdf": (h.count_lie_pdf(), "is damaged"),
}
HOSTILE_NAME = "[click](javascript:alert(1)) **BOLD** :red[x] $x^2$.md"
GOOD = {
    "poster.pdf": HUGE,
    "surrogate.pdf": h.lone_surrogate_pdf(),
    "marker.txt": h.text_file_with_pdf_marker(),
    HOSTILE_NAME: b"# Named\n\nA file whose name is full of markdown.\n",
}


def test_a_hostile_batch_shows_one_line_per_bad_file_and_loads_the_rest(app):  # noqa: F811
    files = [(name, data) for name, (data, _) in BAD.items()] + list(GOOD.items())
    upload(app, *files)
    errors = [plain(e.value) for e in app.error]
    assert len(errors) == len(BAD), errors
    for name, (_, words) in BAD.items():
        shown = name.replace("\n", "\\n").replace("\x1b", "\\x1b")  # as escaped for display
        (line,) = [e for e in errors if shown in e]
        assert "\n" not in line and "Traceback" not in line and words in line, line
    names = set(app.dataframe[0].value["document"])
    assert {"poster", "surrogate", "marker"} <= names
    successes = [s.value for s in app.success]
    (named,) = [s for s in successes if "javascript" in s]
    assert named.startswith(r"**\[click\]\(javascript\:alert\(1\)\) \*\*BOLD\*\* \:red\[x\]")
    assert plain(named).startswith(f"**{HOSTILE_NAME}**")


def test_pages_stay_usable_on_a_page_too_large_to_draw_at_2x(app):  # noqa: F811
    upload(app, ("poster.pdf", HUGE))
    app.sidebar.selectbox[0].set_value("poster").run()
    for page in ("parse", "chunks"):
        open_page(app, page)
        body = html_of(app)
        assert "data:image/png;base64," in body and "cannot be drawn" not in body


def test_a_lone_surrogate_document_is_parsed_and_chunked(app):  # noqa: F811
    upload(app, ("surrogate.pdf", h.lone_surrogate_pdf()))
    app.sidebar.selectbox[0].set_value("surrogate").run()
    for page in ("parse", "chunks"):
        open_page(app, page)
        assert "\ufffdb" in html_of(app)


def test_a_deep_link_with_a_five_thousand_digit_span_is_one_line(app):  # noqa: F811
    span = "1" * 5000 + "-" + "2" * 5000
    open_page(app, "source", doc="sample-sigconf", span=span)
    (error,) = app.error
    assert "is not two character offsets" in plain(error.value)


def test_the_layout_model_past_its_time_limit_is_one_line_in_place(app, monkeypatch):  # noqa: F811
    monkeypatch.setenv("CHUNKSCOPE_LAYOUT_TIMEOUT_S", "0.000000001")
    upload(app, ("slow-layout.pdf", h.many_pages_pdf(4)))
    app.sidebar.selectbox[0].set_value("slow-layout").run()
    open_page(app, "parse")
    app.button_group(key="cs_w_parser").set_value("layout").run()
    assert not app.exception, [e.value for e in app.exception]
    (error,) = app.error
    assert "the layout model spent" in plain(error.value) and "fast parser" in plain(error.value)


def test_markdown_past_its_block_tokens_is_one_line_at_upload(app, monkeypatch):  # noqa: F811
    monkeypatch.setenv("CHUNKSCOPE_MAX_MARKDOWN_TOKENS", "300")
    many = b"".join(b"- item %d\n" % i for i in range(100))  # 5 tokens an item
    upload(app, ("many.md", many), ("few.md", b"# Few\n\nTwo blocks.\n"))
    assert not app.exception, [e.value for e in app.exception]
    (error,) = app.error
    line = plain(error.value)
    assert "**many.md** has more than 300 Markdown block tokens" in line and "\n" not in line
    assert "CHUNKSCOPE_MAX_MARKDOWN_TOKENS=N" in line
    assert "few" in set(app.dataframe[0].value["document"])
