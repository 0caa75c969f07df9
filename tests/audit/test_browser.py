"""The audit UI in a real browser: Debian's headless Chromium driven by Playwright.

No browser is downloaded: Playwright launches /usr/bin/chromium. Every Playwright call
runs in one worker thread, so its event loop never touches the main thread (a later
test's ``asyncio.run()`` must still work; see shared NOTES.md). The app is served by
werkzeug on 127.0.0.1 with an ephemeral port, in a background thread.

Without a browser these tests skip, except in CI (``CI`` set), where they fail.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import pytest
from conftest import git
from distilled_repo import SCRIPT, Distilled

# Overridable so a test can prove the closing "web UI untested" line (tests/cli/test_docs_examples.py).
CHROMIUM = os.environ.get("SCARWARDEN_TEST_CHROMIUM", "/usr/bin/chromium")
pytestmark = pytest.mark.browser
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
T = TypeVar("T")


def _missing() -> str | None:
    if not os.access(CHROMIUM, os.X_OK):
        return f"no browser at {CHROMIUM} (apt-get install chromium)"
    try:
        import flask  # noqa: F401
        import playwright.sync_api  # noqa: F401
    except ImportError as exc:
        return f"{exc.name} is not installed"
    return None


class Browser:
    """A Chromium owned by one worker thread; ``run(fn)`` calls ``fn(browser)`` there."""

    def __init__(self, home: Path) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="playwright")
        self.pool.submit(self._start, home).result(timeout=120)

    def _start(self, home: Path) -> None:
        from playwright.sync_api import sync_playwright

        self.pw = sync_playwright().start()
        self.browser = self.pw.chromium.launch(
            executable_path=CHROMIUM, args=ARGS, headless=True, env={**os.environ, "HOME": str(home)}
        )

    def run(self, fn: Callable[[Any], T]) -> T:
        return self.pool.submit(fn, self.browser).result(timeout=120)

    def close(self) -> None:
        def stop() -> None:
            self.browser.close()
            self.pw.stop()

        try:
            self.pool.submit(stop).result(timeout=60)
        finally:
            self.pool.shutdown(wait=True)


def open_browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """A headless Chromium for one test module, closed after it (skipped without one,
    failed under CI); each browser test module's ``browser`` fixture yields from it."""
    reason = _missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: {reason}")
        pytest.skip(reason)
    b = Browser(tmp_path_factory.mktemp("browser-home"))
    try:
        yield b
    finally:
        b.close()


def serve_app(root: Path) -> Iterator[str]:
    """The UI for the repository at ``root`` on 127.0.0.1:<free port>, served through
    waitress as ``scarwarden serve`` serves it; its address, then stopped."""
    from waitress import create_server

    from scarwarden.audit.web.app import create_app
    from scarwarden.audit.web.security import LOOPBACK_HOSTS

    server = create_server(
        create_app(root, allowed_hosts=LOOPBACK_HOSTS), host="127.0.0.1", port=0, threads=4
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}"
    finally:
        server.close()
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    yield from open_browser(tmp_path_factory)


@pytest.fixture
def live(distilled: Distilled) -> Iterator[str]:
    """The UI for the distilled repo, served on 127.0.0.1:<free port>."""
    from werkzeug.serving import make_server

    from scarwarden.audit.web.app import create_app
    from scarwarden.audit.web.security import LOOPBACK_HOSTS

    app = create_app(distilled.repo.root, allowed_hosts=LOOPBACK_HOSTS)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def test_one_click_from_a_rule_to_the_scar_that_taught_it(
    browser: Browser, live: str, distilled: Distilled
) -> None:
    def body(b: Any) -> dict[str, Any]:
        page = b.new_page()
        page.goto(live + "/")
        page.get_by_role("link", name="PB-01", exact=True).first.click()
        page.wait_for_url("**/rules/PB-01")
        card = page.locator("section#ep-hkgnqdz88f")
        out = {
            "url": page.url,
            "title": page.locator("h1").inner_text(),
            "correction": card.locator("dd.f-correction").inner_text(),
            "emoji": page.locator(f"section#{distilled.emoji.id} dd.f-correction").inner_text(),
            "history": page.locator("section.commit h3").all_inner_texts(),
        }
        page.close()
        return out

    seen = browser.run(body)
    assert seen["url"] == live + "/rules/PB-01"
    assert seen["title"] == "PB-01 Lead LinkedIn posts with the reader's pain"
    assert seen["correction"] == (
        "Open with the pain the reader already feels, such as the "
        "Monday morning ticket backlog, then introduce the beta; "
        "move the hashtags to the end"
    )
    assert seen["emoji"] == distilled.emoji.get("correction")
    assert seen["history"][0].startswith("CHANGED")
    assert "distill: 3 episodes -> 1 new rule, 1 changed, 1 retired" in seen["history"][0]


def test_task_with_memory_on_and_off(browser: Browser, live: str) -> None:
    task = "Draft a LinkedIn post announcing our beta"

    def body(b: Any) -> dict[str, Any]:
        page = b.new_page()
        page.goto(live + "/task")
        page.fill("textarea#task", task)
        page.check("input[name=memory][value=both]")
        page.get_by_role("button", name="Recall and answer").click()
        page.wait_for_selector(".columns")
        out: dict[str, Any] = {
            "verdict": page.locator("#verdict .v").inner_text(),
            "rules": page.locator("table.recalled td a.rid").all_inner_texts(),
            "on": page.locator(".column.mem-on").inner_text(),
            "off": page.locator(".column.mem-off").inner_text(),
        }
        page.check("input[name=memory][value=off]")
        page.get_by_role("button", name="Recall and answer").click()
        page.wait_for_load_state()
        out["off_only"] = page.locator(".column").count(), page.locator("#verdict").count()
        page.close()
        return out

    seen = browser.run(body)
    assert seen["verdict"] == "ACT"
    assert seen["rules"][0] == "PB-01"
    assert seen["on"].startswith("With memory")
    assert "Cite as: [PB-01, learnt in ep-hkgnqdz88f" in seen["on"]
    assert seen["off"].startswith("Without memory")
    assert "Without memory, a model gets only the bare task" in seen["off"]
    assert task in seen["off"] and "PB-01" not in seen["off"]
    assert seen["off_only"] == (1, 0)


def test_script_in_an_episode_renders_as_text(browser: Browser, live: str, distilled: Distilled) -> None:
    def body(b: Any) -> dict[str, Any]:
        page = b.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(f"{live}/episodes/{distilled.script.id}")
        out = {
            "task": page.locator("dd.f-task").inner_text(),
            "action": page.locator("dd.f-action").inner_text(),
            "scripts": page.evaluate("document.querySelectorAll('script').length"),
            "bold": page.evaluate("document.querySelectorAll('main b').length"),
        }
        page.goto(live + "/ledger?q=changelog")
        out["ledger"] = page.locator("table.ledger").inner_text()
        out["dialogs"] = list(dialogs)
        page.close()
        return out

    seen = browser.run(body)
    assert seen["task"] == f"Draft a LinkedIn post quoting {SCRIPT} from the changelog"
    assert seen["action"].endswith(f"including {SCRIPT} & <b>bold</b> tags")
    assert seen["scripts"] == 0 and seen["bold"] == 0
    assert SCRIPT in seen["ledger"]
    assert seen["dialogs"] == []


def test_human_answer_form_commits_from_the_browser(
    browser: Browser, live: str, distilled: Distilled
) -> None:
    task = "Book the team offsite venue in Lisbon"

    def body(b: Any) -> dict[str, Any]:
        page = b.new_page()
        page.goto(f"{live}/task?task={task}")
        verdict = page.locator("#verdict .v").inner_text()
        page.fill("textarea#answer", "Use the agency portal and stay under 4000 EUR")
        page.get_by_role("button", name="Record the answer").click()
        page.wait_for_url("**/episodes/**")
        out = {
            "verdict": verdict,
            "url": page.url,
            "notice": page.locator("p.ok").inner_text(),
            "correction": page.locator("dd.f-correction").inner_text(),
        }
        page.close()
        return out

    seen = browser.run(body)
    assert seen["verdict"] == "ASK_HUMAN"
    ep_id = seen["url"].split("/episodes/")[1].split("?")[0]
    assert seen["notice"] == f"Recorded and committed as {ep_id}."
    assert seen["correction"] == "Use the agency portal and stay under 4000 EUR"
    # Chromium sent a same-origin POST with the token: the write went through as a commit.
    assert f"Scarwarden-Episode: {ep_id}" in git(distilled.repo.root, "log", "-1", "--format=%B").stdout
