"""Your own splitter on the Chunks page (``AppTest``): typed as ``KIND:TARGET`` beside the
policy picker, its summary says its unit, and the size slider drives its chunk_size with
a visible redraw; a name that cannot be had is one line in place, and the picked policy
stays."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from core.chunk import policy_registry as registry
from workbench.state import live_policy_widget, policy_widget

pytest.importorskip("langchain_text_splitters")


@pytest.fixture(autouse=True)
def store(tmp_path, monkeypatch) -> Iterator[None]:
    monkeypatch.setenv("CHUNKSCOPE_STORE", str(tmp_path / "store"))
    monkeypatch.delenv("CHUNKSCOPE_CHROMA", raising=False)
    yield
    for name in registry.policy_names():
        if registry.get(name).live:
            registry.unregister(name)


def _chunks_page() -> AppTest:
    at = AppTest.from_file("../app.py", default_timeout=300).run()
    at.switch_page("pages/chunks.py").run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _count(at: AppTest) -> int:
    return int(next(m for m in at.metric if m.label == "Chunks").value)


def test_the_sliders_drive_your_splitter() -> None:
    at = _chunks_page()
    at.text_input(key=live_policy_widget("a")).set_value("langchain:RecursiveCharacterTextSplitter")
    at.run()
    assert not at.exception and not at.error, [e.value for e in (*at.exception, *at.error)]
    assert any("your langchain splitter" in c.value and "characters" in c.value for c in at.caption)
    before = _count(at)
    next(s for s in at.slider if s.label == "Size (chars)").set_value(400).run()
    assert _count(at) > before  # smaller pieces, more chunks: the splitter re-ran


def test_an_unknown_splitter_is_one_line_in_place() -> None:
    at = _chunks_page()
    at.text_input(key=live_policy_widget("a")).set_value("langchain:NoSuchSplitter").run()
    assert not at.exception
    [said] = [e.value.replace("\\", "") for e in at.error]  # markdown escapes aside
    assert (
        said
        == "langchain:NoSuchSplitter: langchain_text_splitters has no splitter 'NoSuchSplitter'"
    )
    assert _count(at) > 0  # the picked policy still chunks


def test_an_overlap_that_changes_nothing_says_why() -> None:
    at = _chunks_page()
    at.button_group(key=policy_widget("a")).set_value("structure").run()
    next(s for s in at.slider if s.label == "Size (tokens)").set_value(1024).run()
    next(s for s in at.slider if s.label == "Overlap (tokens)").set_value(64).run()
    assert not at.exception, [e.value for e in at.exception]
    said = [c.value for c in at.caption if "changes nothing on this document" in c.value]
    assert len(said) == 1 and "Chunks of separate blocks never overlap" in said[0]
    next(s for s in at.slider if s.label == "Size (tokens)").set_value(64).run()
    assert not [c for c in at.caption if "changes nothing" in c.value]  # blocks split: it does
