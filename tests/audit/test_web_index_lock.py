"""A write through the web pages while git's index is locked: the commit lands (through a
private index, by design) but git's real index still holds the files as they were. The
CLI says so on stderr; the page after the POST says so to its user."""

from __future__ import annotations

import re

import pytest
from conftest import git

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")

from scarwarden.audit.web.app import create_app  # noqa: E402

FORM_HEADERS = {"Host": "localhost", "Origin": "http://localhost"}


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


def _says_index_locked(page: str, root: object, lock: object) -> None:
    text = _text(page)
    head = git(root, "rev-parse", "HEAD").stdout.strip()  # type: ignore[arg-type]
    assert f"committed {head[:10]}" in text, text
    assert "git's index is locked" in text and f"rm {lock}" in text, text


ANSWER = {"task": "Book the team offsite venue in Lisbon", "answer": "Use the travel portal"}


def _post(client: object, root: object, path: str) -> str:
    """POST one of the writes; the commit lands and git's index is left behind; the
    page the redirect leads to."""
    if path == "/distill":
        preview = client.get("/distill", headers=FORM_HEADERS).get_data(as_text=True)  # type: ignore[attr-defined]
        head = re.search(r'name="head" value="([^"]+)"', preview).group(1)  # type: ignore[union-attr]
        form = {"head": head, "preview": "offline"}
    elif path == "/confirm":
        form = {"task": "Draft a LinkedIn post about our beta", "rule_id": "PB-01"}
    else:
        form = ANSWER
    before = git(root, "rev-parse", "HEAD").stdout  # type: ignore[arg-type]
    reply = client.post(path, data={"csrf_token": "t", **form}, headers=FORM_HEADERS)  # type: ignore[attr-defined]
    assert reply.status_code == 303, (path, reply.get_data(as_text=True))
    assert git(root, "rev-parse", "HEAD").stdout != before  # type: ignore[arg-type]
    page = client.get(reply.headers["Location"], headers=FORM_HEADERS)  # type: ignore[attr-defined]
    return str(page.get_data(as_text=True))


@pytest.mark.parametrize("path", ["/answer", "/confirm", "/distill"])
def test_a_write_while_gits_index_is_locked_says_so_on_the_next_page(
    demo_repo: MemoryRepo, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """POST /answer and /confirm with .git/index.lock present showed "Recorded and
    committed" and nothing else, while `git status` showed the new episode
    staged-deleted plus untracked; the warning went only to the server's stderr. After
    POST /distill the page was a 500 in git's words ("git update-index --add failed"):
    the preview could not finish the held-up write, and nothing said the commit had
    landed. The page that follows now says it: the commit, that git's index is locked,
    and the rm command. What is written is unchanged."""
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")  # the lock stays: no use waiting for it
    root = demo_repo.root
    client = create_app(root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    if path == "/distill":  # an episode to distil
        client.post("/answer", data={"csrf_token": "t", **ANSWER}, headers=FORM_HEADERS)
    lock = root / ".git" / "index.lock"
    lock.write_text("")
    page = _post(client, root, path)
    if path == "/distill":  # its preview must first finish the write the lock held up
        assert "the preview waits until it is free" in _text(page)
    else:
        assert "Recorded and committed" in page
    _says_index_locked(page, root, lock)
    status = git(root, "status", "--porcelain").stdout
    assert status != "", status  # git's index holds the files as they were

    # The lock gone, the next write sets git's index; its page says nothing more.
    lock.unlink()
    again = {"csrf_token": "t", **ANSWER, "answer": "Ask finance"}
    reply = client.post("/answer", data=again, headers=FORM_HEADERS)
    page = client.get(reply.headers["Location"], headers=FORM_HEADERS).get_data(as_text=True)
    assert "Recorded and committed" in page and "index is locked" not in page
    assert git(root, "status", "--porcelain").stdout == ""


def test_a_lock_released_before_the_next_write_is_said_as_such(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lock gone but no write since: git's index still holds the files as they
    were; the page says so without telling the user to remove a lock that is gone."""
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")  # the lock stays: no use waiting for it
    root = demo_repo.root
    client = create_app(root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    lock = root / ".git" / "index.lock"
    lock.write_text("")
    reply = client.post("/answer", data={"csrf_token": "t", **ANSWER}, headers=FORM_HEADERS)
    lock.unlink()
    text = _text(client.get(reply.headers["Location"], headers=FORM_HEADERS).get_data(as_text=True))
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    assert f"committed {head[:10]}, but git's index was locked and still holds" in text, text
    assert "rm " not in text
