"""Hostile files uploaded in a real browser: one line each for the bad ones, the good ones
load, and the workbench stays usable (its pages draw, a later upload still works)."""

from __future__ import annotations

import hostile_files as h

from tests.browser.test_workbench import current_document, go_to, open_app, shot, upload

BAD = {
    "cycle.pdf": h.page_tree_cycle_pdf(),
    "bomb.pdf": h.text_bomb_pdf(4_000_000),
    "bomb-120mb.pdf": h.text_bomb_pdf(120_000_000),
}
POSTER = h.one_page_pdf(h.text_ops(["A poster of a page."]), media_box=b"[0 0 14400 14400]")
HOSTILE_NAME = "[click](javascript:alert(1)) **BOLD** :red[x].md"


def _payload(name: str, data: bytes) -> dict[str, object]:
    return {"name": name, "mimeType": "application/octet-stream", "buffer": data}


def test_hostile_uploads_show_one_line_each_and_the_page_stays_usable(page, app_url, artifacts):
    open_app(page, app_url)
    files = [_payload(n, d) for n, d in BAD.items()]
    files += [_payload(HOSTILE_NAME, b"# Named\n\nBody.\n"), _payload("poster.pdf", POSTER)]
    upload(page, files)
    errors = page.get_by_test_id("stAlertContentError")
    assert errors.count() == len(BAD)
    texts = [errors.nth(i).inner_text().strip() for i in range(errors.count())]
    for name in BAD:
        (line,) = [t for t in texts if t.startswith(name)]
        assert "\n" not in line and "Traceback" not in line, line
    success = page.get_by_test_id("stAlertContentSuccess").filter(has_text="javascript")
    assert success.first.inner_text().startswith(HOSTILE_NAME)  # shown as written
    assert page.locator("[data-testid=stMain] a[href^='javascript']").count() == 0
    assert page.locator("[data-testid=stException]").count() == 0
    shot(page, artifacts, "hostile-library")

    assert current_document(page).startswith("poster")  # the batch's last file is picked
    go_to(page, "Parse")
    assert page.locator("[data-testid=stMain] img[src^='data:image/png']").count() >= 1
    assert page.locator("[data-testid=stException]").count() == 0
    shot(page, artifacts, "hostile-poster-parse")

    go_to(page, "Library")  # still usable: a good file uploads after the bad batch
    upload(page, [_payload("after.txt", b"A later file.\n\nIt loads.")])
    assert page.get_by_test_id("stAlertContentSuccess").filter(has_text="after.txt").count() == 1
    assert page.locator("[data-testid=stException]").count() == 0
