"""An answer the ledger refuses (a credential, personal data ``privacy:`` refuses, a
control character, an empty one) is shown again in its form with the refusal above it,
so the text the human typed is not lost; a refused credential is never sent back in
clear."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from conftest import git, head
from helpers import EMAIL

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")

from test_web_privacy import ORIGIN, TOKEN, _privacy, _receipt  # noqa: E402

BERLIN = "Book travel for the Berlin conference"
GITHUB_TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
#: A credential no single line holds: the answer is not shown again at all.
PEM = "\n".join(
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "MIIEpAIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB",
        "aNnmFXmhPbyVnEE6NYQ8Fu0LDOa/tpfaz0dvqNtYnb7dshjJ0jPgKHVZHW+4Yc7q",
        "-----END RSA PRIVATE KEY-----",
    ]
)


def _client(repo: MemoryRepo) -> Any:
    return _privacy(repo, email="refuse")


def _shown_again(reply: Any, status: int = 400) -> tuple[str, dict[str, str], str]:
    """The refused answer's page: its text, its form's fields, the answer in the form."""
    page = reply.get_data(as_text=True)
    assert reply.status_code == status, page
    form = page.split('action="/answer"')[1].split("</form>")[0]
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    answer = re.search(r'<textarea[^>]*name="answer"[^>]*>(.*?)</textarea>', form, re.S)
    assert answer, form
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())
    return text, fields, unescape(answer.group(1).removeprefix("\n"))  # a browser drops one newline


@pytest.mark.parametrize(
    ("typed", "kept", "said"),
    [
        ("Use the <b>portal</b>\x1b[31m, under 400 EUR", "Use the <b>portal</b>[31m, under 400 EUR",
         "an escape character"),
        (f"Use the portal and send the tickets to {EMAIL}", "Use the portal and send the tickets to [email]",
         "personal data"),
        (f"Use the portal\nLog in with {GITHUB_TOKEN}\nKeep it under 400 EUR",
         "Use the portal\n[a line holding a secret was taken out here]\nKeep it under 400 EUR", "secret"),
        ("   ", "   ", "the answer is empty"),
        (PEM, "", "Your answer is not shown again: it holds a secret"),
    ],
)  # fmt: skip
def test_a_refused_answer_is_shown_again_in_its_form(
    demo_repo: MemoryRepo, typed: str, kept: str, said: str
) -> None:
    """A refused answer sent the human to an error page and what they typed was lost;
    it is now a 400 showing the refusal above the same form (its token, task and
    receipt) holding their text, escaped, less only what is refused and never shown
    again (a credential's line, personal data ``privacy:`` refuses as a typed
    placeholder, a control character), saying so; nothing written. Sent again as
    shown, it is recorded."""
    client = _client(demo_repo)
    receipt = _receipt(client, BERLIN)
    before = head(demo_repo)
    form = {"csrf_token": TOKEN, "task": BERLIN, "answer": typed, "receipt": receipt}
    text, fields, answer = _shown_again(client.post("/answer", data=form, headers=ORIGIN))
    assert said in text and "nothing was written" in text.lower(), text
    assert answer == kept
    assert fields == {"csrf_token": TOKEN, "task": BERLIN, "receipt": receipt}
    raw = client.post("/answer", data=form, headers=ORIGIN).get_data(as_text=True)
    for never in (GITHUB_TOKEN, EMAIL, "MIIEpAIBAAKCAQEA", "<b>", "\x1b"):  # in clear, or unescaped
        assert never not in raw
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    if kept.strip():
        again = client.post("/answer", data={**fields, "answer": answer}, headers=ORIGIN)
        assert again.status_code == 303, again.get_data(as_text=True)


def test_an_answer_from_a_page_older_than_the_server_is_shown_again(demo_repo: MemoryRepo) -> None:
    """An answer typed on a page shown before the server restarted (its token is the old
    process's) was refused 403 'Cross-site request refused' and the text was lost. Sent
    from this server's own address (its Origin or Referer), it is now the form again with
    this server's token and the text, nothing written; sent again, it is recorded. From
    another site, or naming no origin, it is refused as before, the text not echoed."""
    client = _client(demo_repo)
    receipt = _receipt(client, BERLIN)
    before = head(demo_repo)
    form = {"csrf_token": "the-old-servers-token", "task": BERLIN, "answer": "Use the <b>portal</b>"}
    form["receipt"] = receipt
    for headers in (ORIGIN, {"Referer": "http://localhost/task"}):
        reply = client.post("/answer", data=form, headers=headers)
        page = reply.get_data(as_text=True)
        assert reply.status_code == 403 and "<b>portal" not in page, page
        text, fields, answer = _shown_again(reply, status=403)
        assert "the server restarted" in text and "nothing was written" in text.lower(), text
        assert answer == form["answer"]
        assert fields == {"csrf_token": TOKEN, "task": BERLIN, "receipt": receipt}
    for headers in ({"Origin": "http://evil.example"}, {"Origin": "null"}, {}):
        reply = client.post("/answer", data=form, headers=headers)
        page = reply.get_data(as_text=True)
        assert reply.status_code == 403 and "Cross-site request refused" in page, headers
        assert "portal" not in page and TOKEN not in page.split("<main>")[1], headers
    assert head(demo_repo) == before
    again = client.post("/answer", data={**fields, "answer": answer}, headers=ORIGIN)
    assert again.status_code == 303, again.get_data(as_text=True)


def test_an_answer_held_up_by_gits_index_lock_is_shown_again(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second answer while git's index is still locked after an earlier write (which
    must be finished first, and needs the lock) was the 503 "Git's index is locked" error
    page, the text typed lost; it is the same 503 above the answer form holding the text,
    nothing written; sent again once the lock is gone, it is recorded."""
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")  # the lock stays: no use waiting for it
    client = _client(demo_repo)
    receipt = _receipt(client, BERLIN)
    lock = demo_repo.root / ".git" / "index.lock"
    lock.write_text("")
    form = {"csrf_token": TOKEN, "task": BERLIN, "receipt": receipt}
    first = client.post("/answer", data={**form, "answer": "Use the portal"}, headers=ORIGIN)
    assert first.status_code == 303
    before = head(demo_repo)
    reply = client.post("/answer", data={**form, "answer": "Ask finance <first>"}, headers=ORIGIN)
    text, fields, answer = _shown_again(reply, status=503)
    assert "Git's index is locked" in text and "nothing was written" in text, text
    assert answer == "Ask finance <first>" and fields == form
    assert head(demo_repo) == before
    lock.unlink()
    again = client.post("/answer", data={**fields, "answer": answer}, headers=ORIGIN)
    assert again.status_code == 303 and head(demo_repo) != before


def test_an_answer_whose_receipt_the_page_cannot_use_is_shown_again(demo_repo: MemoryRepo) -> None:
    """An answer whose form's receipt no longer resolves (the index deleted since the
    page was shown, a stale form) was a 400 error page, the text typed lost; it is the
    same 400 above the answer form holding the text, without that receipt (a task page
    opened by its address sends none either), nothing written; sent again, it is
    recorded, once."""
    client = _client(demo_repo)
    before = head(demo_repo)
    form = {"csrf_token": TOKEN, "task": BERLIN, "answer": "Use the portal", "receipt": "a" * 16}
    text, fields, answer = _shown_again(client.post("/answer", data=form, headers=ORIGIN))
    assert "no recall with receipt aaaaaaaaaaaaaaaa" in text and "task page" in text, text
    assert answer == "Use the portal" and "receipt" not in fields and fields.get("form")
    assert head(demo_repo) == before
    again = client.post("/answer", data={**fields, "answer": answer}, headers=ORIGIN)
    assert again.status_code == 303, again.get_data(as_text=True)
    twice = client.post("/answer", data={**fields, "answer": answer}, headers=ORIGIN)
    assert twice.headers["Location"].split("?")[0] == again.headers["Location"].split("?")[0]


def test_a_refused_answers_problems_keep_their_hints(demo_repo: MemoryRepo) -> None:
    """The page of a refused answer says each problem's hint where no note above the
    form covers it (an answer over the episode's cap, personal data in the task), and
    still holds all the text typed."""
    client = _client(demo_repo)
    long = "Use the portal. " * 4500
    for task, answer, hint in [
        (BERLIN, long, "keep episodes short"),
        (f"Book travel for {EMAIL}", "Use the portal", "give it without the personal data"),
    ]:
        form = {"csrf_token": TOKEN, "task": task, "answer": answer}
        text, _fields, kept = _shown_again(client.post("/answer", data=form, headers=ORIGIN))
        assert hint in text and kept == answer, text[:2000]
