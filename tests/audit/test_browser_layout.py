"""Untrusted text that could break a page's layout, in a real browser (headless
Chromium, as tests/audit/test_browser.py drives it) against the UI served by waitress."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from conftest import Cli
from test_browser import Browser, open_browser, serve_app

from scarwarden.repo import MemoryRepo

pytestmark = pytest.mark.browser

#: One word longer than any screen: an episode may hold 64 KiB, a rule 20,000 characters.
WORD = "A" * 15000


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    yield from open_browser(tmp_path_factory)


@pytest.fixture
def live(demo_repo: MemoryRepo) -> Iterator[str]:
    yield from serve_app(demo_repo.root)


def test_a_word_longer_than_the_page_does_not_widen_it(
    browser: Browser, live: str, cli: Cli, demo_repo: MemoryRepo
) -> None:
    """A 15,000-character word in an episode's task and in a rule widened the ledger to
    630,000 pixels, the playbook to 165,000 and the recall log and task page too: every
    other row scrolled off sideways. It now wraps inside its own cell or block."""
    task = f"Paste {WORD} into the form"
    added = cli("episode", "add", "--task", task, "--outcome", "It broke", "--tag", "paste", "--json")
    assert added.exit_code == 0, added.output
    ep_id = json.loads(added.output)["id"]
    rule = cli("rule", "add", "--text", f"Never paste {WORD} into a form.", "--cites", ep_id, "--json")
    assert rule.exit_code == 0, rule.output
    rule_id = json.loads(rule.output)["id"]
    assert cli("recall", task).exit_code == 0  # a line in the recall log
    pages = ["/", f"/rules/{rule_id}", f"/episodes/{ep_id}", "/ledger", "/log", "/task?task=paste+a+form"]

    def body(b: Any) -> dict[str, int]:
        page = b.new_page(viewport={"width": 1200, "height": 900})
        widths = {}
        for path in pages:
            assert page.goto(live + path).status == 200, path
            widths[path] = page.evaluate("document.documentElement.scrollWidth")
        page.close()
        return widths

    widths = browser.run(body)
    assert widths == {path: 1200 for path in pages}


def test_characters_that_reorder_or_hide_text_are_shown(
    browser: Browser, live: str, cli: Cli, demo_repo: MemoryRepo
) -> None:
    """A right-to-left override (U+202E) in an episode made the page show "Reply to
    remotsuc yrgna eht" for what is stored as "Reply to \u202ethe angry customer", and a
    zero-width space hid itself inside a word: the audit page did not show the evidence
    as stored. Such characters are now shown as their code point (U+202E), in page
    text only: the forms still send the task exactly as stored."""
    task = "Reply to \u202ethe angry customer about the pass\u200bword reset"
    added = cli("episode", "add", "--task", task, "--outcome", "Sent", "--tag", "bidi", "--json")
    assert added.exit_code == 0, added.output
    ep_id = json.loads(added.output)["id"]
    shown = "Reply to U+202Ethe angry customer about the passU+200Bword reset"

    def body(b: Any) -> dict[str, Any]:
        page = b.new_page(viewport={"width": 1200, "height": 900})
        page.goto(f"{live}/episodes/{ep_id}")
        out = {"dd": page.locator("dd.f-task").inner_text()}
        page.goto(f"{live}/ledger?tag=bidi")
        out["ledger"] = page.locator("table.ledger tbody td.text").inner_text()
        page.goto(f"{live}/task?{urlencode({'task': task})}")
        out["textarea"] = page.locator("textarea#task").input_value()
        page.close()
        return out

    seen = browser.run(body)
    assert seen["dd"] == shown
    assert seen["ledger"] == shown
    assert seen["textarea"] == task
