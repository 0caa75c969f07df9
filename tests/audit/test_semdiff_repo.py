"""The audit tests' shared history (tests/distilled_repo.py) is what they expect."""

from __future__ import annotations

from conftest import git
from distilled_repo import (
    DISTILL_SUBJECT,
    build_distilled_repo,
)

from scarwarden.files.playbook_edit import load_playbook
from scarwarden.repo import MemoryRepo


def test_history_is_what_the_audit_tests_expect(demo_repo: MemoryRepo) -> None:
    d = build_distilled_repo(demo_repo)
    subjects = git(d.repo.root, "log", "--format=%s").stdout.splitlines()
    assert subjects[0] == DISTILL_SUBJECT
    assert subjects[1].startswith("episodes: import 3")
    book = load_playbook(d.repo)
    retired = book.get("PB-04")
    assert retired is not None and retired.retired and retired.replaced_by == "PB-15"
    assert [r.id for r in book.rules][-1] == "PB-15"
    text = d.repo.playbook_path.read_text()
    assert "## Retired\n\n### PB-04: Route outage reports to the on-call engineer" in text
