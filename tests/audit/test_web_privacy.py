"""The web UI's answer and confirm forms under ``privacy:`` (docs/privacy.md): personal
data the settings ``warn`` about is recorded, and the episode page the form leads to says
so (it said only "Recorded and committed"); personal data they ``refuse`` answers 400 in
words, nothing written."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from conftest import git, head
from helpers import CARD, EMAIL, set_privacy

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")
from scarwarden.audit.web.app import create_app  # noqa: E402

TOKEN = "test-csrf-token"
ORIGIN = {"Origin": "http://localhost"}
BERLIN = "Book travel for the Berlin conference"
DINNER = "Book a table for the team dinner"


def _privacy(repo: MemoryRepo, **kinds: str) -> Any:
    """A test client of the UI on ``repo``, with ``privacy:`` set to ``kinds`` (committed)."""
    set_privacy(repo, **kinds)
    app = create_app(repo.root, csrf_token=TOKEN, allowed_hosts={"localhost", "127.0.0.1"})
    return app.test_client()


def _receipt(client: Any, task: str) -> str:
    page = client.post("/task", data={"csrf_token": TOKEN, "task": task}, headers=ORIGIN).get_data(
        as_text=True
    )
    found = re.search(r'name="receipt" value="([^"]+)"', page)
    assert found, page
    return found.group(1)


def _landed(client: Any, reply: Any) -> str:
    """The page a form's 303 leads to, as text."""
    assert reply.status_code == 303, reply.get_data(as_text=True)[:500]
    page = client.get(reply.headers["Location"]).get_data(as_text=True)
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())


def test_the_page_an_answer_leads_to_says_the_privacy_warnings(demo_repo: MemoryRepo) -> None:
    client = _privacy(demo_repo, email="warn", card="warn")
    form = {"csrf_token": TOKEN, "task": BERLIN, "answer": f"Send the tickets to {EMAIL}"}
    form["receipt"] = _receipt(client, BERLIN)
    reply = client.post("/answer", data=form, headers=ORIGIN)
    page = _landed(client, reply)
    assert "Recorded and committed as" in page
    assert "Warning: field 'correction' holds personal data: an email address (privacy.email: warn)" in page
    ep_id = reply.headers["Location"].split("/episodes/")[1].split("?")[0]
    assert f"scarwarden redact {ep_id} --fields correction" in page
    # Sent twice (a double-click): the second is sent to the same episode, warned the same.
    again = _landed(client, client.post("/answer", data=form, headers=ORIGIN))
    assert "an email address (privacy.email: warn)" in again
    # The episode's page reached by a plain link says nothing of a recording.
    plain = client.get(f"/episodes/{ep_id}").get_data(as_text=True)
    assert "privacy.email: warn" not in plain


def test_the_page_a_candidate_confirmation_leads_to_says_the_privacy_warnings(demo_repo: MemoryRepo) -> None:
    client = _privacy(demo_repo, card="warn")
    task = f"{DINNER}, paid with card {CARD}"
    form = {"csrf_token": TOKEN, "task": task, "rule_id": "PB-06", "candidate": "1"}
    form["receipt"] = _receipt(client, task)
    page = _landed(client, client.post("/confirm", data=form, headers=ORIGIN))
    assert "Warning: field 'task' holds personal data: a payment card number (privacy.card: warn)" in page


def test_an_answer_privacy_refuses_is_refused_in_words_and_writes_nothing(demo_repo: MemoryRepo) -> None:
    client = _privacy(demo_repo, email="refuse")
    before = head(demo_repo)
    form = {"csrf_token": TOKEN, "task": BERLIN, "answer": f"Send the tickets to {EMAIL}"}
    form["receipt"] = _receipt(client, BERLIN)
    reply = client.post("/answer", data=form, headers=ORIGIN)
    text = unescape(reply.get_data(as_text=True))
    assert reply.status_code == 400
    assert "refused, it holds personal data; nothing was written" in text
    assert "your answer: holds personal data: an email address (privacy.email: refuse)" in text
    assert EMAIL not in text
    assert "--redact-pii" not in text  # the page has no such option
    assert head(demo_repo) == before and git(demo_repo.root, "status", "--porcelain").stdout == ""
