"""A filter value the page cannot read is said on the page, never silently dropped or
turned into a filter that matches something else."""

from __future__ import annotations

import re

import pytest

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")

from scarwarden.audit.web.app import create_app  # noqa: E402

HOST = {"Host": "localhost"}
ASK_TASK = "Book the team offsite venue in Lisbon"
OTHER_TASK = "Draft a LinkedIn post about our beta"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


def test_a_verdict_the_log_does_not_know_is_said_and_case_does_not_matter(demo_repo: MemoryRepo) -> None:
    """``/log?verdict=ask_human`` (what ``scarwarden log --verdict ask_human`` accepts)
    and ``/log?verdict=BOGUS`` both showed every verdict without a word."""
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    for task in (ASK_TASK, OTHER_TASK):
        form = {"csrf_token": "t", "task": task, "memory": "on"}
        posted = client.post("/task", data=form, headers={**HOST, "Origin": "http://localhost"})
        assert posted.status_code == 200
    asked = _text(client.get("/log?verdict=ASK_HUMAN", headers=HOST).get_data(as_text=True))
    assert ASK_TASK in asked and OTHER_TASK not in asked
    lower = _text(client.get("/log?verdict=ask_human", headers=HOST).get_data(as_text=True))
    assert lower == asked
    bogus = _text(client.get("/log?verdict=BOGUS", headers=HOST).get_data(as_text=True))
    assert "unknown verdict 'BOGUS' (use ACT, ACT_AND_FLAG or ASK_HUMAN)" in bogus, bogus


@pytest.mark.parametrize("month", ["2026-13", "2026-00", "not-a-month", "2026-1"])
def test_a_month_the_ledger_cannot_read_is_said(demo_repo: MemoryRepo, month: str) -> None:
    """``/ledger?month=2026-13`` showed "0 matches" and ``?month=not-a-month`` every
    episode, both without a word; now the page says it cannot read the month."""
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    page = _text(client.get(f"/ledger?month={month}", headers=HOST).get_data(as_text=True))
    assert f"cannot read '{month}' as a month (use YYYY-MM, e.g. 2026-11)" in page, page
    good = _text(client.get("/ledger?month=2026-11", headers=HOST).get_data(as_text=True))
    assert "as a month" not in good and "6 matches" in good
