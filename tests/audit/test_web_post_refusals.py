"""The UI's forms posted with what its pages never send, through a real ``scarwarden
serve`` process and real HTTP: each refusal is a 4xx page naming what is wrong and
how to fix it, never git's words in a 500, and nothing is written."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from conftest import git
from helpers import State
from test_web_server import Served, _message, serve, served  # noqa: F401 - the fixture

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")
pytest.importorskip("waitress")
requests = pytest.importorskip("requests")

from scarwarden.audit.web.app import MAX_QUERY_CHARS  # noqa: E402
from scarwarden.recall.engine import MAX_TASK_CHARS  # noqa: E402


def _post(server: Served, path: str, form: dict[str, str] | bytes, **headers: str) -> requests.Response:
    headers = {"Origin": server.url, **headers}
    return requests.post(server.url + path, data=form, headers=headers, allow_redirects=False, timeout=60)


def _head(server: Served) -> str:
    page = requests.get(server.url + "/distill", timeout=60).text
    return re.search(r'name="head" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]


def test_a_field_over_its_limit_is_refused_naming_the_limit(
    served: Served,  # noqa: F811 - the fixture imported above
    demo_repo: MemoryRepo,
) -> None:
    """POST /answer recorded a task of 25,000 characters (and /confirm confirmed one)
    that recall, the task page and ``ask`` refuse over 20,000; /confirm echoed a
    100,000-character rule ID into its page. Every field is now bounded as the task
    page's query is: a task by recall's limit, a rule ID, commit or preview by the
    query's; a 400 names the field, its length and the limit; nothing is written."""
    token = served.token()
    before = State.of(demo_repo)
    task = "Book the offsite " + "a" * MAX_TASK_CHARS
    long_id = "PB-" + "x" * 100_000
    for path, form in [
        ("/answer", {"task": task, "answer": "Use the portal"}),
        ("/confirm", {"task": task, "rule_id": "PB-01"}),
        ("/confirm", {"task": task, "rule_id": "PB-01", "candidate": "1"}),
        ("/confirm", {"task": "Book the offsite", "rule_id": long_id}),
        ("/confirm", {"task": "Book the offsite", "rule_id": long_id, "candidate": "1"}),
        ("/distill", {"head": "f" * 100_000, "preview": "offline"}),
        ("/distill", {"head": "f" * 40, "preview": "x" * 100_000}),
        ("/task", {"task": "Book the offsite", "memory": "x" * 100_000}),
    ]:
        reply = _post(served, path, {"csrf_token": token, **form})
        text = _message(reply.text)
        assert reply.status_code == 400, (path, list(form), reply.status_code, text[:300])
        assert len(reply.content) < 20_000, (path, list(form))
        name, value = next((k, v) for k, v in form.items() if len(v) > MAX_QUERY_CHARS)
        limit = MAX_TASK_CHARS if name == "task" else MAX_QUERY_CHARS
        assert f"The form's {name!r} is {len(value):,} characters" in text, (path, text)
        assert f"at most {limit:,}" in text and "nothing was written" in text, (path, text)
    assert State.of(demo_repo) == before
    # At the limit the answer is recorded.
    form = {"csrf_token": token, "task": "a" * MAX_TASK_CHARS, "answer": "Use the portal"}
    assert _post(served, "/answer", form).status_code == 303
    assert "Traceback" not in served.stderr()


def test_too_many_fields_is_not_said_to_be_too_large(
    served: Served,  # noqa: F811 - the fixture imported above
    demo_repo: MemoryRepo,
) -> None:
    """A multipart form of 1,500 small fields (90 KB) was refused as "larger than 256
    KiB", which it was not: Werkzeug refuses more than 1,000 parts. The 413 says so."""
    token = served.token()
    before = State.of(demo_repo)
    parts = [b'--zz\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n' + token.encode() + b"\r\n"]
    parts += [b'--zz\r\nContent-Disposition: form-data; name="x%d"\r\n\r\n1\r\n' % i for i in range(1500)]
    body = b"".join(parts) + b"--zz--\r\n"
    assert len(body) < 256 * 1024
    reply = _post(served, "/answer", body, **{"Content-Type": "multipart/form-data; boundary=zz"})
    text = _message(reply.text)
    assert reply.status_code == 413, text
    assert "larger than 256 KiB" not in text and "more than 1,000 fields" in text, text
    assert "nothing was written" in text
    assert State.of(demo_repo) == before
    assert "Traceback" not in served.stderr()


def test_a_confirmation_refused_says_why(
    served: Served,  # noqa: F811 - the fixture imported above
    demo_repo: MemoryRepo,
) -> None:
    """POST /confirm refused a task holding a NUL, or a receipt that is not one, with the
    heading of the refusal only ("human answer: invalid episode input; nothing was
    written", "receipt: invalid receipt"): not which field, not what was wrong in it.
    The answer form says both; the confirm form now does too."""
    token = served.token()
    before = State.of(demo_repo)
    nul = _post(served, "/confirm", {"csrf_token": token, "task": "Book\x00 it", "rule_id": "PB-01"})
    assert nul.status_code == 400
    assert "field 'task': holds a NUL character (U+0000)" in _message(nul.text), _message(nul.text)
    linkedin = "Draft a LinkedIn post about our beta"  # recall returns PB-01: only the receipt is wrong
    form = {"csrf_token": token, "task": linkedin, "rule_id": "PB-01", "receipt": "[1]"}
    receipt = _post(served, "/confirm", form)
    assert receipt.status_code == 400
    assert "a receipt must be a mapping, got list" in _message(receipt.text), _message(receipt.text)
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    bad = _post(served, "/confirm", f"csrf_token={token}&task=Book%FF&rule_id=PB-01".encode(), **headers)
    assert bad.status_code == 400 and "Cannot record this" in bad.text and "Cannot commit" not in bad.text
    assert State.of(demo_repo) == before
    assert "Traceback" not in served.stderr()


@pytest.fixture
def no_index_lock_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """Before the server starts (it inherits the environment): git's index stays locked
    for the whole test, so the writes need not wait ~2 s each for it."""
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")


@pytest.mark.usefixtures("no_index_lock_wait")
def test_a_write_while_gits_index_is_still_locked_is_a_503(
    served: Served,  # noqa: F811 - the fixture imported above
    demo_repo: MemoryRepo,
) -> None:
    """The first write with .git/index.lock present commits (tests/audit/
    test_web_index_lock.py); the next one must first finish the held-up write, which
    needs the lock, and was a 500 "Cannot show this" in git's words ("git update-index
    --add failed: fatal: Unable to create ...index.lock"). It is now a 503 saying git's
    index is locked, how to free it, and that nothing was written."""
    token = served.token()
    lock = demo_repo.root / ".git" / "index.lock"
    lock.write_text("")
    first = {"csrf_token": token, "task": "Book the team offsite venue", "answer": "Use the portal"}
    assert _post(served, "/answer", first).status_code == 303
    before = State.of(demo_repo)
    for path, form in [
        ("/answer", {"task": "Plan the weekly review", "answer": "Use the deck"}),
        ("/confirm", {"task": "Draft a LinkedIn post about our beta", "rule_id": "PB-01"}),
        ("/distill", {"head": git(demo_repo.root, "rev-parse", "HEAD").stdout.strip(), "preview": "offline"}),
    ]:
        reply = _post(served, path, {"csrf_token": token, **form})
        text = _message(reply.text)
        assert reply.status_code == 503, (path, reply.status_code, text[:300])
        assert "Git's index is locked" in text and f"rm {lock}" in text, text
        assert "nothing was written" in text and "update-index" not in text, text
    assert State.of(demo_repo) == before
    lock.unlink()
    again = {"csrf_token": token, "task": "Plan the weekly review", "answer": "Ask"}
    assert _post(served, "/answer", again).status_code == 303
    assert "Traceback" not in served.stderr()


def test_a_distillation_over_edits_of_the_playbook_says_what_to_do_here(
    served: Served,  # noqa: F811 - the fixture imported above
    demo_repo: MemoryRepo,
) -> None:
    """Committing a distillation over uncommitted edits of the playbook was a 400 "Cannot
    show this" with the CLI's way out ("use --branch NAME ... or --no-commit"), options
    the page has not got. It is a 409 saying to commit or discard the edits, then look
    at the preview again; the edits are kept."""
    token = served.token()
    form = {"csrf_token": token, "task": "Plan the weekly review", "answer": "Use the deck"}
    assert _post(served, "/answer", form).status_code == 303
    playbook = demo_repo.root / "memory" / "playbook.md"
    edited = playbook.read_text(encoding="utf-8") + "\n"
    playbook.write_text(edited, encoding="utf-8")
    before = State.of(demo_repo)
    reply = _post(served, "/distill", {"csrf_token": token, "head": _head(served), "preview": "offline"})
    text = _message(reply.text)
    assert reply.status_code == 409, (reply.status_code, text[:300])
    assert "memory/playbook.md has uncommitted changes" in text, text
    assert "--branch" not in text and "commit or discard them" in text, text
    assert "open the Undistilled page again" in text
    assert State.of(demo_repo) == before and playbook.read_text(encoding="utf-8") == edited
    assert "Traceback" not in served.stderr()


@pytest.fixture
def read_only(demo_repo: MemoryRepo) -> Iterator[Served]:
    """``scarwarden serve --read-only`` on the demo memory."""
    yield from serve(demo_repo, "--read-only")


def test_a_read_only_task_form_checks_its_body(read_only: Served, demo_repo: MemoryRepo) -> None:
    """A read-only server answers the task form's POST by showing the page (nothing is
    logged), and read nothing of the body first: ``task=Book%FF+travel`` was shown and
    recalled as the task "Book%FF travel", text nobody typed, and a JSON body showed an
    empty task page. The body is checked as on a server that writes: 400 not UTF-8, 415
    not a form; a form without a token still shows the page."""
    before = State.of(demo_repo)
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    for body in (b"task=Book%FF+travel", b"task=Book+travel\xff"):
        reply = _post(read_only, "/task", body, **form)
        assert reply.status_code == 400, (body, reply.status_code)
        assert "The form is not valid UTF-8" in _message(reply.text) and "%FF" not in reply.text
    reply = _post(read_only, "/task", b'{"task": "Book travel"}', **{"Content-Type": "application/json"})
    assert reply.status_code == 415, reply.status_code
    shown = _post(read_only, "/task", {"task": "Book the team offsite"})
    assert shown.status_code == 200 and "Book the team offsite" in shown.text
    assert State.of(demo_repo) == before
    assert "Traceback" not in read_only.stderr()


def test_a_read_only_server_refuses_a_confirmation_in_its_words(read_only: Served) -> None:
    """POST /confirm on a read-only server said "nothing can be committed ... or run
    'scarwarden distill'", the distillation's words: a confirmation records a human's
    answer, which 'scarwarden distill' does not do."""
    reply = _post(read_only, "/confirm", {"csrf_token": "x", "task": "Book it", "rule_id": "PB-01"})
    text = _message(reply.text)
    assert reply.status_code == 403, reply.status_code
    assert "nothing can be recorded" in text and "scarwarden distill" not in text, text
    assert "without --read-only to record answers" in text, text


def test_a_multipart_body_that_cannot_be_read_is_said_so(served: Served) -> None:  # noqa: F811
    """A multipart body without its boundary, or cut short, was answered 403 "This form
    did not come from this server's own page": Werkzeug reads it as no fields, so no
    token. It is a 400 saying the form could not be read."""
    token = served.token().encode()
    part = b'--zz\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n' + token + b"\r\n"
    for ctype, body in [
        ("multipart/form-data", part + b"--zz--\r\n"),
        ("multipart/form-data; boundary=zz", part + b'--zz\r\nContent-Disposition: form-data; name="task"'),
        ("multipart/form-data; boundary=zz", b"not multipart at all"),
    ]:
        for path in ("/answer", "/task", "/confirm", "/distill"):
            reply = _post(served, path, body, **{"Content-Type": ctype})
            text = _message(reply.text)
            assert reply.status_code == 400, (ctype, path, reply.status_code, text[:300])
            assert "The form could not be read" in text and "nothing was written" in text, text
    assert "Traceback" not in served.stderr()


def test_a_field_sent_twice_is_refused_naming_it(
    served: Served,  # noqa: F811 - the fixture imported above
    demo_repo: MemoryRepo,
) -> None:
    """A form holding a field twice (a hand-made form, a script's mistake) was read by
    its first value alone: POST /answer with two tasks and two answers committed the
    first of each and dropped the other answer without a word. Which one was meant
    cannot be known: it is a 400 naming the field, and nothing is written."""
    token = served.token()
    before = State.of(demo_repo)
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    for path, form in [
        (
            "/answer",
            [("task", "Book travel to Rome"), ("answer", "Use the portal"), ("answer", "Ask finance")],
        ),
        (
            "/answer",
            [("task", "Book travel to Rome"), ("task", "Plan the review"), ("answer", "Use the deck")],
        ),
        (
            "/confirm",
            [("task", "Book a table for the team dinner"), ("rule_id", "PB-06"), ("rule_id", "PB-01")],
        ),
        ("/distill", [("head", head), ("head", "0" * 40), ("preview", "offline")]),
        ("/task", [("task", "Book travel to Rome"), ("memory", "on"), ("memory", "off")]),
    ]:
        reply = _post(served, path, [("csrf_token", token), *form])  # type: ignore[arg-type]
        text = _message(reply.text)
        name = next(k for k, _ in form if sum(1 for n, _ in form if n == k) > 1)
        assert reply.status_code == 400, (path, name, reply.status_code, text[:300])
        assert f"The form holds {name!r} 2 times" in text and "nothing was written" in text, (path, text)
    twice = _post(
        served, "/answer", [("csrf_token", token), ("csrf_token", token), ("task", "x"), ("answer", "y")]
    )  # type: ignore[arg-type]
    assert twice.status_code == 400 and "'csrf_token' 2 times" in _message(twice.text)
    assert State.of(demo_repo) == before
    assert "Traceback" not in served.stderr()


def test_a_write_refused_by_the_servers_own_settings_is_the_servers_fault(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server started with a bad setting (here ``SCARWARDEN_INDEX_LOCK_WAIT=soon``)
    refused the answer form's write with a 400 "Cannot show this", a status that tells
    the person at the form their request was wrong. The setting is the server's: a 500
    naming it and how to fix it, nothing written."""
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "soon")
    before = State.of(demo_repo)
    with contextmanager(serve)(demo_repo) as server:
        reply = _post(
            server,
            "/answer",
            {"csrf_token": server.token(), "task": "Book the offsite", "answer": "Use the portal"},
        )
    text = _message(reply.text)
    assert reply.status_code == 500, (reply.status_code, text[:300])
    assert "SCARWARDEN_INDEX_LOCK_WAIT must be a number of seconds" in text
    assert "nothing was written" in text
    assert State.of(demo_repo) == before
