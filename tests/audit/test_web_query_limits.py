"""What a query parameter may hold on the web pages: a search or filter value at most
1,000 characters, a task at most recall's 20,000; a longer one is a 400 page naming
the parameter and the limit, never a page echoing it in every link, never a truncated
search."""

from __future__ import annotations

import re

import pytest
from helpers import State

from scarwarden.index import open_index
from scarwarden.recall.log import read_log
from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")

from scarwarden.audit.web.app import MAX_QUERY_CHARS, create_app  # noqa: E402
from scarwarden.recall.engine import MAX_TASK_CHARS  # noqa: E402

HOST = {"Host": "localhost"}


def _logged(repo: MemoryRepo) -> int:
    with open_index(repo) as index:
        return len(read_log(index, limit=1000))


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


@pytest.mark.parametrize(
    "path, name",
    [
        ("/", "q"),
        ("/", "tag"),
        ("/ledger", "q"),
        ("/ledger", "tag"),
        ("/ledger", "agent"),
        ("/ledger", "month"),
        ("/log", "q"),
        ("/log", "since"),
        ("/log", "until"),
        ("/distill", "committed"),
    ],
)
def test_a_search_value_over_the_limit_is_refused_with_the_limit(
    demo_repo: MemoryRepo, path: str, name: str
) -> None:
    """``/ledger?q=<100 kB>`` was a 200 of 8.6 MB (the query repeated in every filter
    link); ``/?tag=``, ``/log?since=`` echoed it too. Now a 400 saying which parameter,
    its length and the limit, in a page of ordinary size."""
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    reply = client.get(f"{path}?{name}={'a' * 100_000}", headers=HOST)
    assert reply.status_code == 400, (path, name, reply.status_code, len(reply.data))
    assert len(reply.data) < 20_000
    text = _text(reply.get_data(as_text=True))
    assert f"'{name}' is 100,000 characters" in text and f"at most {MAX_QUERY_CHARS:,}" in text, text
    assert "nothing was searched" in text
    # At the limit, the page is served as before.
    ok = client.get(f"{path}?{name}={'a' * MAX_QUERY_CHARS}", headers=HOST)
    assert ok.status_code == 200, (path, name)


def test_a_task_is_bounded_by_recalls_limit_and_never_cut(demo_repo: MemoryRepo) -> None:
    """The task page cut a task to its first 2,000 characters without a word: it
    recalled, logged and offered to record an answer for a task nobody typed. A task is
    now recall's (up to 20,000 characters, whole); a longer one is a 400, by GET and by
    the form's POST, with nothing logged."""
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    long_task = "Book the team offsite venue in Lisbon " + "x" * 3000 + " END-OF-TASK"
    page = client.get("/task", query_string={"task": long_task}, headers=HOST)
    assert page.status_code == 200
    assert "END-OF-TASK" in page.get_data(as_text=True)
    before, logged = State.of(demo_repo), _logged(demo_repo)
    too_long = "a" * (MAX_TASK_CHARS + 1)
    for mode in ("both", "off"):
        reply = client.get("/task", query_string={"task": too_long, "memory": mode}, headers=HOST)
        assert reply.status_code == 400, mode
        text = _text(reply.get_data(as_text=True))
        assert f"'task' is {MAX_TASK_CHARS + 1:,} characters" in text and "at most 20,000" in text, text
        form = {"csrf_token": "t", "task": too_long, "memory": mode}
        posted = client.post("/task", data=form, headers={**HOST, "Origin": "http://localhost"})
        assert posted.status_code == 400, mode
        assert "20,000" in _text(posted.get_data(as_text=True))
        assert "a" * 3000 not in posted.get_data(as_text=True)
    assert State.of(demo_repo) == before
    assert _logged(demo_repo) == logged
