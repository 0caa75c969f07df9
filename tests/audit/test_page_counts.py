"""The playbook page counts the episodes its rules were learnt from (issue 28, point 7):
not every episode in the ledger."""

from __future__ import annotations

import pytest

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")


def test_learnt_from_counts_the_cited_episodes(memory_repo: MemoryRepo, make_cli) -> None:
    from scarwarden.audit.web.app import create_app

    cli = make_cli(memory_repo.root)
    added = cli("episode", "add", "--task", "Draft a post", "--correction", "Lead with the pain")
    first = added.stdout.strip()
    cli("episode", "add", "--task", "Book a hotel", "--outcome", "Booked")
    assert cli("rule", "add", "--text", "Lead with the pain.", "--cites", first).exit_code == 0
    app = create_app(memory_repo.root, csrf_token="t", allowed_hosts={"localhost"})
    page = app.test_client().get("/", headers={"Host": "localhost"}).get_data(as_text=True)
    text = " ".join(page.split())
    assert "1 active rule, learnt from 1 episode (2 in the ledger)." in text
