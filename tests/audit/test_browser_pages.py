"""The pages added for issue 18, in a real browser, and one screenshot per page.

The screenshots land in a temporary folder and are checked to be real PNGs; with
``SCARWARDEN_SCREENSHOTS=docs/img`` they are written there instead, which is how the
ones in docs/audit.md are made::

    SCARWARDEN_SCREENSHOTS=docs/img python -m pytest tests/audit/test_browser_pages.py
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from distilled_repo import Distilled
from test_browser import Browser, open_browser, serve_app

pytestmark = pytest.mark.browser

#: Each page of the UI, as docs/audit.md shows it: (file name, path).
PAGES = [
    ("playbook", "/"),
    ("rule", "/rules/PB-01"),
    ("episode", "/episodes/ep-hkgnqdz88f"),
    ("ledger", "/ledger"),
    ("task", "/task?task=Draft+a+LinkedIn+post+announcing+our+beta"),
    ("task-ask-human", "/task?task=Book+the+team+offsite+venue+in+Lisbon"),
    ("log", "/log"),
    ("distill", "/distill"),
]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    yield from open_browser(tmp_path_factory)


@pytest.fixture
def live(distilled: Distilled) -> Iterator[str]:
    """The UI for the distilled repo on 127.0.0.1:<free port>, served as `serve` does."""
    yield from serve_app(distilled.repo.root)


def test_one_screenshot_per_page(browser: Browser, live: str, tmp_path: Path) -> None:
    target = os.environ.get("SCARWARDEN_SCREENSHOTS")
    out = (ROOT / target) if target else tmp_path
    out.mkdir(parents=True, exist_ok=True)

    def body(b: Any) -> list[tuple[str, int, str]]:
        page = b.new_page(viewport={"width": 1200, "height": 800})
        seen = []
        for name, path in PAGES:
            response = page.goto(live + path)
            page.screenshot(path=str(out / f"audit-{name}.png"), full_page=False)
            seen.append((name, response.status if response else 0, page.locator("h1").first.inner_text()))
        page.close()
        return seen

    seen = browser.run(body)
    assert [status for _, status, _ in seen] == [200] * len(PAGES), seen
    assert dict((n, h) for n, _, h in seen)["log"] == "Recall log"
    for name, _ in PAGES:
        png = (out / f"audit-{name}.png").read_bytes()
        assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 5000, name
    if target:  # the docs show every page
        doc = (ROOT / "docs" / "audit.md").read_text()
        for name, _ in PAGES:
            assert f"img/audit-{name}.png" in doc, name


def test_static_export_search_works_without_a_server(
    browser: Browser, distilled: Distilled, make_cli: Any, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    assert make_cli(distilled.repo.root)("audit", "--html", str(site)).exit_code == 0
    script = f"{distilled.script.id}"

    def body(b: Any) -> dict[str, Any]:
        page = b.new_page()
        errors: list[str] = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto((site / "index.html").as_uri())
        page.fill("#static-search", "discount code")
        page.wait_for_selector("#search-results li")
        out: dict[str, Any] = {"results": page.locator("#search-results li a").all_inner_texts()}
        page.locator("#search-results li a", has_text="PB-02").first.click()
        page.wait_for_load_state()
        out["landed"] = page.locator("h1").inner_text()
        page.goto((site / "ledger.html").as_uri())
        page.fill("#static-search", "changelog")
        page.wait_for_selector("#search-results li")
        out["ledger_results"] = page.locator("#search-results li").all_inner_texts()
        out["scripts_run_from_text"] = page.evaluate(
            "document.querySelectorAll('#search-results script, #search-results b').length"
        )
        out["errors"] = errors
        page.close()
        return out

    seen = browser.run(body)
    assert "PB-02" in seen["results"]
    assert seen["landed"].startswith("PB-02")
    # An episode holding markup is found, and shown as text (built with textContent).
    assert any(line.startswith(script) for line in seen["ledger_results"]), seen["ledger_results"]
    assert seen["scripts_run_from_text"] == 0
    assert seen["errors"] == []  # nothing refused by the page's CSP
