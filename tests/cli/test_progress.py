"""Long work shows progress on a terminal and stays quiet in pipes (issue 18)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from scarwarden.cli.commands._progress import progress_bar
from scarwarden.repo import MemoryRepo


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_on_a_terminal_and_nothing_in_a_pipe() -> None:
    tty = Terminal()
    with progress_bar("writing pages", stream=tty) as progress:
        assert progress is not None
        for done in range(1, 11):
            progress(done, 10)
    shown = tty.getvalue()
    assert "writing pages" in shown and "100%" in shown
    pipe = io.StringIO()
    with progress_bar("writing pages", stream=pipe) as progress:
        assert progress is None
    assert pipe.getvalue() == ""


def test_audit_html_reports_every_page_to_the_bar(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    pytest.importorskip("flask")
    from scarwarden.audit.web.static_site import export_html

    calls: list[tuple[int, int]] = []
    result = export_html(
        demo_repo, tmp_path / "site", progress=lambda done, total: calls.append((done, total))
    )
    assert calls[-1] == (result.pages, result.pages)  # ends full, counting every page
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)  # only forwards


def test_audit_html_in_a_pipe_prints_no_bar(cli: Any, tmp_path: Path) -> None:
    pytest.importorskip("flask")
    result = cli("audit", "--html", str(tmp_path / "site"))
    assert result.exit_code == 0
    assert "writing pages" not in result.output and "\r" not in result.output
