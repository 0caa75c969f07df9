"""A form sent twice (a double-click, a browser's re-POST, two tabs at once): the
episodes are append-only, so a second identical answer or confirmation from the same
recall must not be recorded again."""

from __future__ import annotations

import re
import threading
import time
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from conftest import git, head

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")
from scarwarden.audit.web.app import create_app  # noqa: E402

TOKEN = "test-csrf-token"
ORIGIN = {"Origin": "http://localhost"}
BERLIN = "Book travel for the Berlin conference"


def _client(repo: MemoryRepo) -> Any:
    app = create_app(repo.root, csrf_token=TOKEN, allowed_hosts={"localhost", "127.0.0.1"})
    return app.test_client()


def _recalled(client: Any, task: str) -> tuple[str, str]:
    """The task page's explicit recall (logged): its receipt, and the page."""
    page = client.post("/task", data={"csrf_token": TOKEN, "task": task}, headers=ORIGIN).get_data(
        as_text=True
    )
    receipt = re.search(r'name="receipt" value="([^"]+)"', page)
    assert receipt, page
    return receipt.group(1), page


def _ledger_commits(repo: MemoryRepo) -> int:
    return int(git(repo.root, "rev-list", "--count", "HEAD").stdout)


def test_an_answer_sent_twice_is_recorded_once(demo_repo: MemoryRepo) -> None:
    """A double-click on the answer form recorded two identical episodes, which can never
    be removed; the second POST now answers 303 to the episode the first recorded,
    writing nothing. A different answer to the same recall is recorded (a correction)."""
    client = _client(demo_repo)
    task = "Book travel for the Berlin conference"
    receipt, _ = _recalled(client, task)
    form = {"csrf_token": TOKEN, "task": task, "answer": "Use the portal", "receipt": receipt}
    first = client.post("/answer", data=form, headers=ORIGIN)
    assert first.status_code == 303
    before, commits = head(demo_repo), _ledger_commits(demo_repo)
    again = client.post("/answer", data={**form, "answer": " Use the portal\r\n"}, headers=ORIGIN)
    assert again.status_code == 303
    assert again.headers["Location"].split("?")[0] == first.headers["Location"].split("?")[0]
    assert head(demo_repo) == before and _ledger_commits(demo_repo) == commits
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    other = client.post("/answer", data={**form, "answer": "Use the portal, under 400 EUR"}, headers=ORIGIN)
    assert other.status_code == 303 and other.headers["Location"] != first.headers["Location"]
    assert head(demo_repo) != before


def test_a_confirmation_sent_twice_is_recorded_once(demo_repo: MemoryRepo) -> None:
    """The ACT_AND_FLAG "Confirm PB-.. applies" button clicked twice: one episode."""
    client = _client(demo_repo)
    task = "Answer the outage ticket"
    receipt, page = _recalled(client, task)
    assert "ACT_AND_FLAG" in page
    rule_id = re.findall(r'name="rule_id" value="([^"]+)"', page)[-1]
    form = {"csrf_token": TOKEN, "task": task, "rule_id": rule_id, "receipt": receipt}
    first = client.post("/confirm", data=form, headers=ORIGIN)
    assert first.status_code == 303
    before = head(demo_repo)
    again = client.post("/confirm", data=form, headers=ORIGIN)
    assert (
        again.status_code == 303
        and again.headers["Location"].split("?")[0] == first.headers["Location"].split("?")[0]
    )
    assert head(demo_repo) == before


def test_two_answers_sent_at_once_to_a_real_server_record_one(demo_repo: MemoryRepo) -> None:
    """Two identical POSTs at the same moment, on two threads of ``scarwarden serve``:
    one episode, both sent to it."""
    pytest.importorskip("waitress")
    requests = pytest.importorskip("requests")
    from test_web_server import serve

    for served in serve(demo_repo):
        token = served.token()
        origin = {"Origin": served.url}
        task = "Book travel for the Berlin conference"
        page = requests.post(
            served.url + "/task", data={"csrf_token": token, "task": task}, headers=origin, timeout=60
        )
        receipt = re.search(r'name="receipt" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        form = {"csrf_token": token, "task": task, "answer": "Use the portal", "receipt": receipt}
        commits = _ledger_commits(demo_repo)
        where = _sent_twice_at_once(served.url, form, origin)
        assert len(set(where)) == 1 and where[0].startswith("303 "), where
        assert _ledger_commits(demo_repo) == commits + 1
        assert "Traceback" not in served.stderr()


def test_a_candidate_confirmed_twice_is_recorded_once(demo_repo: MemoryRepo) -> None:
    """ASK_HUMAN's candidate "Confirm PB-.. applies" clicked twice recorded two identical
    confirmations (its form carried no receipt to tell them apart); it now carries the
    recall's receipt, stored in the episode, and the second click is sent to the first."""
    client = _client(demo_repo)
    task = "Rename the production Kafka topic"
    receipt, page = _recalled(client, task)
    candidates = page.split('id="candidates"')[1].split("</section>")[0]
    assert f'name="receipt" value="{receipt}"' in candidates
    form = {"csrf_token": TOKEN, "task": task, "rule_id": "PB-01", "candidate": "1", "receipt": receipt}
    first = client.post("/confirm", data=form, headers=ORIGIN)
    assert first.status_code == 303, first.get_data(as_text=True)
    ep_id = first.headers["Location"].split("/episodes/")[1].split("?")[0]
    assert receipt in git(demo_repo.root, "show", "HEAD").stdout  # the episode carries it
    before = head(demo_repo)
    again = client.post("/confirm", data=form, headers=ORIGIN)
    assert again.status_code == 303 and ep_id in again.headers["Location"]
    assert head(demo_repo) == before
    other = client.post("/confirm", data={**form, "rule_id": "PB-04"}, headers=ORIGIN)
    assert other.status_code == 303 and ep_id not in other.headers["Location"]


def test_a_distillation_committed_twice_at_once_commits_once(cli: Any, demo_repo: MemoryRepo) -> None:
    """The Undistilled page's commit button sent twice at once (a double-click, two
    tabs) on a real server: the second was refused as the client's fault in the CLI's
    words, 400 'Cannot show this: HEAD moved while distilling ... run 'scarwarden
    distill' again'. One distillation is committed; the other is the page's 409 "Memory
    changed since the preview", nothing committed."""
    pytest.importorskip("waitress")
    requests = pytest.importorskip("requests")
    from test_web_server import serve

    made = cli("episode", "add", "--task", "Reply to the refund ticket", "--outcome", "Refunded",
               "--correction", "Always confirm the refund by email", "--tag", "refund")  # fmt: skip
    assert made.exit_code == 0, made.output
    for served in serve(demo_repo):
        token, origin = served.token(), {"Origin": served.url}
        page = requests.get(served.url + "/distill", timeout=60).text
        form = {"csrf_token": token, "head": head(demo_repo), "preview": "offline"}
        commits = _ledger_commits(demo_repo)
        start = threading.Barrier(2)
        replies: list[tuple[int, str]] = []

        def send() -> None:
            start.wait()
            reply = requests.post(
                served.url + "/distill", data=form, headers=origin, allow_redirects=False, timeout=60
            )
            replies.append((reply.status_code, reply.text))

        threads = [threading.Thread(target=send) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(code for code, _ in replies) == [303, 409], replies
        assert "Memory changed since the preview" in next(text for code, text in replies if code == 409)
        assert _ledger_commits(demo_repo) == commits + 1 and "Preview" in page
        assert "Traceback" not in served.stderr()


def test_a_receipt_of_another_task_is_refused_in_the_pages_words(demo_repo: MemoryRepo) -> None:
    """A form whose receipt is another task's recall (a stale or hand-made form) was
    refused by the provenance gate in the CLI's words, naming a file never written and
    'pass that receipt ... (the same check the pre-commit hook, 'check' and 'verify'
    run)'; the page says whose recall the receipt is and to recall the task again on
    the task page, nothing written."""
    client = _client(demo_repo)
    receipt, _ = _recalled(client, "Answer the outage ticket")
    other, _ = _recalled(client, "Rename the production Kafka topic")
    before = head(demo_repo)
    for path, form in [
        ("/answer", {"task": "Book travel to Berlin", "answer": "Use the portal", "receipt": receipt}),
        ("/confirm", {"task": "Answer the outage ticket", "rule_id": "PB-04", "receipt": other}),
        ("/confirm", {"task": "Rename the production Kafka topic", "rule_id": "PB-01", "candidate": "1",
                      "receipt": receipt}),
    ]:  # fmt: skip
        reply = client.post(path, data={"csrf_token": TOKEN, **form}, headers=ORIGIN)
        text = unescape(reply.get_data(as_text=True))
        assert reply.status_code == 400 and "is the recall of another task" in text, (path, text)
        assert "memory/episodes" not in text and "verify" not in text and "recall the task again" in text
    assert head(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def _forms(page: str, action: str) -> list[dict[str, str]]:
    """The hidden fields of each form of ``page`` posting to ``action``, as sent."""
    out = []
    for form in page.split("<form")[1:]:
        if f'action="{action}"' in form.split(">")[0]:
            body = form.split("</form>")[0]
            fields = re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', body)
            out.append({name: unescape(value) for name, value in fields})
    return out


def test_forms_of_a_task_page_opened_by_its_address_are_recorded_once(demo_repo: MemoryRepo) -> None:
    """A task page opened by its address (``/task?task=...``, the recall log's "again"
    links) logs no recall, so its forms carried no receipt and a double-click there
    recorded two identical episodes, which can never be removed. Each form such a page
    shows now carries an ID the server tells a second sending by: the answer form, the
    ACT_AND_FLAG Confirm button and an ASK_HUMAN candidate's, each sent twice, record one
    episode; a different answer from the same form is recorded."""
    client = _client(demo_repo)
    for task, action, extra in [
        (BERLIN, "/answer", {"answer": "Use the portal"}),
        ("Answer the outage ticket", "/confirm", {}),
        ("Rename the production Kafka topic", "/confirm", {}),
    ]:
        page = client.get("/task", query_string={"task": task}).get_data(as_text=True)
        assert 'name="receipt"' not in page  # a GET logs no recall
        form = {**_forms(page, action)[0], **extra}
        first = client.post(action, data=form, headers=ORIGIN)
        assert first.status_code == 303, first.get_data(as_text=True)
        before, commits = head(demo_repo), _ledger_commits(demo_repo)
        again = client.post(action, data=form, headers=ORIGIN)
        assert again.status_code == 303, (task, again.get_data(as_text=True))
        assert again.headers["Location"].split("?")[0] == first.headers["Location"].split("?")[0], task
        assert head(demo_repo) == before and _ledger_commits(demo_repo) == commits, task
    answered = _forms(client.get("/task", query_string={"task": BERLIN}).get_data(as_text=True), "/answer")[0]
    before = head(demo_repo)
    for answer in ("Use the portal", "Use the portal, under 400 EUR"):  # a second answer: a correction
        reply = client.post("/answer", data={**answered, "answer": answer}, headers=ORIGIN)
        assert reply.status_code == 303 and head(demo_repo) != before
        before = head(demo_repo)


def _waiting_for(lock: Path) -> bool:
    """Whether a process (or a thread) waits for the ``flock`` on ``lock`` (Linux's
    ``/proc/locks`` lists a waiter as ``-> FLOCK``)."""
    inode = f":{lock.stat().st_ino} "
    return any("-> FLOCK" in line and inode in line for line in Path("/proc/locks").read_text().splitlines())


def test_a_commit_by_another_process_during_the_distillation_is_memory_changed(
    cli: Any, demo_repo: MemoryRepo
) -> None:
    """Another process (the CLI) committed after the Undistilled page's checks and before
    its commit: the page answered in the CLI's words, 400 'Cannot show this: HEAD moved
    while distilling; nothing was written' hint "run 'scarwarden distill' again", as if
    the form were wrong. It is the page's 409 'Memory changed since the preview', as the
    same race within the server is; nothing committed."""
    if not Path("/proc/locks").exists():
        pytest.skip("needs Linux's /proc/locks to see the page wait for the write lock")
    from scarwarden.files.atomic import write_lock

    made = cli("episode", "add", "--task", "Reply to the refund ticket", "--outcome", "Refunded",
               "--correction", "Always confirm the refund by email", "--tag", "refund")  # fmt: skip
    assert made.exit_code == 0, made.output
    client = _client(demo_repo)
    assert "Preview" in client.get("/distill").get_data(as_text=True)
    form = {"csrf_token": TOKEN, "head": head(demo_repo), "preview": "offline"}
    replies: list[Any] = []
    with write_lock(demo_repo):  # another process writing: the page's commit waits for it
        post = lambda: replies.append(client.post("/distill", data=form, headers=ORIGIN))  # noqa: E731
        sender = threading.Thread(target=post)
        sender.start()
        for _ in range(600):
            if _waiting_for(demo_repo.state_dir / "write.lock") or not sender.is_alive():
                break
            time.sleep(0.05)
        git(demo_repo.root, "commit", "--allow-empty", "--no-verify", "-qm", "Another process's commit")
        moved = head(demo_repo)
    sender.join(60)
    text = unescape(replies[0].get_data(as_text=True))
    assert replies[0].status_code == 409 and "Memory changed since the preview" in text, text
    assert "scarwarden distill" not in text
    assert head(demo_repo) == moved
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_a_form_of_a_page_opened_by_its_address_sent_twice_at_once_records_one(demo_repo: MemoryRepo) -> None:
    """The answer form of ``/task?task=...`` sent twice at the same moment, on two
    threads of ``scarwarden serve`` (a double-click, two tabs): one episode, both sent
    to it."""
    pytest.importorskip("waitress")
    requests = pytest.importorskip("requests")
    from test_web_server import serve

    for served in serve(demo_repo):
        origin = {"Origin": served.url}
        page = requests.get(served.url + "/task", params={"task": BERLIN}, timeout=60).text
        form = {**_forms(page, "/answer")[0], "answer": "Use the portal"}
        assert "form" in form and "receipt" not in form
        commits = _ledger_commits(demo_repo)
        where = [w.split("?")[0] for w in _sent_twice_at_once(served.url, form, origin)]
        assert len(set(where)) == 1 and where[0].startswith("303 "), where
        assert _ledger_commits(demo_repo) == commits + 1
        assert "Traceback" not in served.stderr()


def _sent_twice_at_once(url: str, form: dict[str, str], origin: dict[str, str]) -> list[str]:
    """``form`` posted to the real server's /answer by two threads at the same moment:
    each reply's status and Location."""
    import requests

    start = threading.Barrier(2)
    where: list[str] = []

    def send() -> None:
        start.wait()
        reply = requests.post(url + "/answer", data=form, headers=origin, allow_redirects=False, timeout=60)
        where.append(f"{reply.status_code} {reply.headers.get('Location', '')}")

    threads = [threading.Thread(target=send) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return where
