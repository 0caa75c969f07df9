"""The web door through a real ``scarwarden serve`` process and real HTTP: what a
request the UI did not expect gets back, and what happens when the memory changes
under the server. Every answer is a page saying what is wrong, never a traceback, and
the server goes on serving."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from helpers import State

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")
pytest.importorskip("waitress")
requests = pytest.importorskip("requests")


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[str]

    def token(self) -> str:
        page = requests.get(f"{self.url}/task?task=Book+the+offsite", timeout=30).text
        return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]

    def stderr(self) -> str:
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=30)
        return err


@pytest.fixture
def served(demo_repo: MemoryRepo) -> Iterator[Served]:
    yield from serve(demo_repo)


def serve(repo: MemoryRepo, *flags: str) -> Iterator[Served]:
    """``scarwarden serve FLAGS`` on ``repo``, on a free port, stopped after."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "scarwarden", "-C", str(repo.root), "serve", *flags, "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert port, line
        yield Served(f"http://127.0.0.1:{port.group(1)}", proc)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=30)


def _message(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


def test_a_post_that_is_not_a_form_is_refused_as_such(served: Served, demo_repo: MemoryRepo) -> None:
    """A JSON (or text, or type-less) body posted to a form's address was answered 403
    "Cross-site request refused ... did not come from this server's own page": the token
    was not found because the body is not a form, and a script's author was sent hunting
    for a CSRF problem. It is a 415 saying a form is expected; nothing is written."""
    before = State.of(demo_repo)
    token = served.token()
    origin = {"Origin": served.url}
    for path in ("/answer", "/task", "/confirm", "/distill"):
        for ctype, body in [
            ("application/json", f'{{"csrf_token": "{token}", "task": "x", "answer": "y"}}'),
            ("text/plain", f"csrf_token={token}&task=x&answer=y"),
        ]:
            reply = requests.post(
                served.url + path, data=body.encode(), headers={**origin, "Content-Type": ctype}, timeout=30
            )
            assert reply.status_code == 415, (path, ctype, reply.status_code)
            text = _message(reply.text)
            assert f"not {ctype}" in text and "application/x-www-form-urlencoded" in text, text
            assert "nothing was written" in text
    assert State.of(demo_repo) == before
    # The form itself still works, and a cross-site form is still refused as before.
    form = {"csrf_token": token, "task": "Book the offsite", "memory": "both"}
    assert requests.post(served.url + "/task", data=form, headers=origin, timeout=30).status_code == 200
    evil = {"Origin": "http://evil.example"}
    assert requests.post(served.url + "/task", data=form, headers=evil, timeout=30).status_code == 403
    assert "Traceback" not in served.stderr()


def test_a_memory_deleted_while_serving_is_said_and_nothing_is_written(
    served: Served, demo_repo: MemoryRepo
) -> None:
    """The repository's .git moved away under a running server: every page said git's
    own words ("git ls-files -s failed: fatal: not a git repository") as a 500, and
    /distill that the repository had "no commits yet" (a 400). The memory folder deleted:
    the ledger showed "0 episodes" and the answer form recreated memory/episodes/ and
    committed into a repository with no memory, which the CLI refuses. Both are now a
    503 saying what is gone; the server serves again once it is back."""
    root = demo_repo.root
    token = served.token()
    (root / ".git").rename(root.parent / "moved.git")
    for path in ("/", "/ledger", "/distill", "/log", "/task?task=Book+the+offsite"):
        reply = requests.get(served.url + path, timeout=30)
        assert reply.status_code == 503, (path, reply.status_code)
        assert f"{root} is no longer a git repository" in _message(reply.text), path
    (root.parent / "moved.git").rename(root / ".git")
    assert requests.get(served.url + "/", timeout=30).status_code == 200

    before = State.of(demo_repo)
    (root / "memory").rename(root.parent / "moved-memory")
    for path in ("/", "/ledger", "/rules/PB-01"):
        reply = requests.get(served.url + path, timeout=30)
        assert reply.status_code == 503, (path, reply.status_code)
        assert f"{root} no longer holds a Scarwarden memory" in _message(reply.text), path
    form = {"csrf_token": token, "task": "Book the offsite", "answer": "Use the portal"}
    answer = requests.post(served.url + "/answer", data=form, headers={"Origin": served.url}, timeout=30)
    assert answer.status_code == 503
    assert not (root / "memory").exists()
    (root.parent / "moved-memory").rename(root / "memory")
    assert State.of(demo_repo) == before
    assert requests.get(served.url + "/ledger", timeout=30).status_code == 200
    assert "Traceback" not in served.stderr()


def test_an_address_whose_path_is_not_utf8_is_refused(served: Served) -> None:
    """Werkzeug decodes a path's %FF as U+FFFD: /episodes/%FF answered "There is no
    episode \ufffd in the ledger", a name nobody typed, where the same escape in the query
    is refused as not UTF-8 (tests/audit/test_web_bad_input.py). The path is too."""
    import http.client

    port = int(served.url.rsplit(":", 1)[1])
    for path in ("/episodes/%FF", "/rules/PB-%E9", "/media/%ED%A0%80.png", "/images/%C3.png"):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("GET", path)
        reply = conn.getresponse()
        text = _message(reply.read().decode("utf-8"))
        conn.close()
        assert reply.status == 400, (path, reply.status)
        assert "The address is not valid UTF-8 (a %FF-style escape in its path)" in text, path
        assert "\ufffd" not in text
    for path in ("/episodes/%C3%A9", "/rules/PB-01"):
        assert requests.get(served.url + path, timeout=30).status_code in (200, 404), path
    assert "Traceback" not in served.stderr()


def test_a_body_too_large_says_the_limit(served: Served, demo_repo: MemoryRepo) -> None:
    """A 50 MB answer was refused with Werkzeug's "The data value transmitted exceeds the
    capacity limit.": no limit, and no word of what was kept. The 413 page now names the
    limit and says nothing was written, for a sized body and a chunked one alike."""
    before = State.of(demo_repo)
    token = served.token()
    headers = {"Origin": served.url, "Content-Type": "application/x-www-form-urlencoded"}
    head = f"csrf_token={token}&task=Book+the+offsite&answer=".encode()
    big = head + b"a" * (50 * 1024 * 1024)

    def chunks() -> Iterator[bytes]:
        yield head
        for _ in range(50):
            yield b"a" * (1024 * 1024)

    for body in (big, chunks()):
        reply = requests.post(served.url + "/answer", data=body, headers=headers, timeout=60)
        assert reply.status_code == 413
        text = _message(reply.text)
        assert "The request body is larger than 256 KiB, the most this server accepts" in text, text
        assert "nothing was written" in text
    assert State.of(demo_repo) == before
    assert requests.get(served.url + "/", timeout=30).status_code == 200
    assert "Traceback" not in served.stderr()


def test_a_request_without_a_host_header_is_told_so(served: Served) -> None:
    """HTTP/1.0 without a Host header (an old client, a hand-written probe) was refused
    as "This server does not answer to the host 'waitress.invalid:5054'", a host the
    client never named (waitress's placeholder). It now says the Host header is missing."""
    import socket

    port = int(served.url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(b"GET / HTTP/1.0\r\n\r\n")
        reply = b""
        while chunk := conn.recv(65536):
            reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.0 400"), head
    text = _message(body.decode("utf-8"))
    assert "The request has no Host header" in text and "waitress.invalid" not in text, text
    assert requests.get(served.url + "/", timeout=30).status_code == 200
    assert "Traceback" not in served.stderr()
