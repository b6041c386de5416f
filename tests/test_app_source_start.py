"""A page opened on a fresh workbench process (a citation link after a restart) says
what it is waiting for while the frame reads every document, instead of a blank area;
once read, later runs show no such line."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.formats import load_document
from tests.conftest import SAMPLE_DOCS
from tests.test_app_pages import TIMEOUT_S, store_dir  # noqa: F401
from workbench.documents import reads, session

SAMPLE = SAMPLE_DOCS / "sample-sigconf.pdf"


def _source_link() -> dict[str, str]:
    doc = load_document(SAMPLE)
    return {"doc": doc.doc_id, "span": "0-40", "sha": doc.sha256}


def test_a_link_on_a_fresh_process_shows_a_line_while_documents_are_read(
    store_dir,  # noqa: F811
    monkeypatch,
):
    monkeypatch.setattr(reads, "_WARM", [])  # as after a restart

    def reading_that_never_ends() -> dict:
        raise RuntimeError("still reading")

    monkeypatch.setattr(session, "samples", reading_that_never_ends)
    at = AppTest.from_file("../app.py", default_timeout=TIMEOUT_S)
    at.query_params.update(_source_link())
    at.switch_page("pages/source.py").run()
    # The frame is stuck reading the documents: the main area already says so.
    assert [i.value for i in at.main.info] == [reads.COLD_START_LINE]
    assert at.exception  # the failure shows beside the line (its text is redacted)

    monkeypatch.undo()  # the documents can be read: the link opens, the line is gone
    monkeypatch.setattr(reads, "_WARM", [])
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.title[0].value == "Source"
    assert reads.COLD_START_LINE not in [i.value for i in at.main.info]
    assert reads._WARM == [True]
    at.run()  # a later run of the warm process: no line either
    assert reads.COLD_START_LINE not in [i.value for i in at.main.info]


@pytest.fixture(autouse=True)
def _warm_after():
    yield
    reads._WARM[:] = [True]
