"""Bad input to the web UI (text the user did not send) and to the static export (an
output folder whose links lead into the repository)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import git
from helpers import State

from scarwarden.repo import MemoryRepo

pytest.importorskip("flask")

from scarwarden.audit.web.app import create_app  # noqa: E402


def _multipart(fields: dict[str, bytes]) -> bytes:
    parts = [
        b'--zz\r\nContent-Disposition: form-data; name="' + name.encode() + b'"\r\n\r\n' + value + b"\r\n"
        for name, value in fields.items()
    ]
    return b"".join(parts) + b"--zz--\r\n"


def test_a_multipart_form_that_is_not_utf8_records_nothing(memory_repo: MemoryRepo) -> None:
    """Werkzeug decodes a multipart field's bytes with U+FFFD for each bad byte: the
    episode stored 'Book travel\\ufffd', text nobody typed. It is refused as the
    url-encoded form is (tests/hardening/test_doors.py)."""
    client = create_app(memory_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    headers = {"Origin": "http://localhost", "Content-Type": "multipart/form-data; boundary=zz"}
    before = State.of(memory_repo)
    for path in ("/answer", "/task"):
        body = _multipart({"csrf_token": b"t", "task": b"Book travel\xff", "answer": b"Use the \xfe portal"})
        bad = client.post(path, data=body, headers=headers)
        assert bad.status_code == 400, path
        assert "The form is not valid UTF-8" in bad.get_data(as_text=True)
    assert State.of(memory_repo) == before
    body = _multipart({"csrf_token": b"t", "task": "Book travel é".encode(), "answer": b"Use the portal"})
    assert client.post("/answer", data=body, headers=headers).status_code == 303
    (stored,) = (memory_repo.root / "memory" / "episodes").rglob("*.yaml")
    assert "task: Book travel é\n" in stored.read_text(encoding="utf-8")


def test_a_query_that_is_not_utf8_is_refused(memory_repo: MemoryRepo) -> None:
    """Werkzeug keeps an undecodable ``%FF`` in a query as the three characters ``%FF``:
    the task page recalled "Book%FF travel" and put it in the answer form, which then
    recorded that task, text nobody typed (the form body itself was valid UTF-8)."""
    client = create_app(memory_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    for url in ("/task?task=Book%FF+travel", "/ledger?q=caf%E9", "/?tag=a&q=%ED%A0%80"):
        page = client.get(url, headers={"Host": "localhost"})
        assert page.status_code == 400, url
        assert "The address is not valid UTF-8" in page.get_data(as_text=True)
    for url in ("/task?task=Book+travel", "/ledger?q=caf%C3%A9", "/?q=100%25"):
        assert client.get(url, headers={"Host": "localhost"}).status_code == 200, url


@pytest.mark.parametrize(
    "link, target, refused",
    [
        ("index.html", "memory/playbook.md", "refusing to write inside the memory folder (memory/)"),
        ("static/style.css", "memory/playbook.md", "refusing to write inside the memory folder"),
        ("episodes", "memory/episodes", "refusing to write inside the memory folder (memory/)"),
        ("ledger.html", "scarwarden.yaml", "refusing to write over the settings (scarwarden.yaml)"),
    ],
)
def test_the_export_never_writes_through_a_link_in_its_folder(
    cli: Any, demo_repo: MemoryRepo, tmp_path: Path, link: str, target: str, refused: str
) -> None:
    """The folder was checked, not what is in it: index.html linked to the playbook was
    overwritten with the page (exit 1 after, "cannot parse the playbook"), and episode
    pages went into memory/episodes through a linked episodes/ folder. A link to a page
    elsewhere is still written through (tests/audit/test_export_reads.py)."""
    site = tmp_path / "site"
    (site / link).parent.mkdir(parents=True)
    (site / link).symlink_to(demo_repo.root / target)
    before = State.of(demo_repo)
    playbook = (demo_repo.root / "memory/playbook.md").read_bytes()
    result = cli("audit", "--html", str(site))
    assert result.exit_code == 2, result.output
    assert refused in result.stderr and str(site / link) in result.stderr
    assert (demo_repo.root / "memory/playbook.md").read_bytes() == playbook
    assert State.of(demo_repo) == before
    assert git(demo_repo.root, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_a_head_request_calls_no_model(demo_repo: MemoryRepo, fake_llm: Any) -> None:
    # Flask runs the GET for a HEAD and drops the body: a link checker's HEAD of a task
    # page paid for a model answer, and one of /distill for a model's preview.
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    for path in ("/task?task=Draft+a+LinkedIn+post+announcing+our+beta", "/distill"):
        head = client.head(path, headers={"Host": "localhost"})
        assert head.status_code == 200 and head.content_type.startswith("text/html"), path
        assert head.headers["Content-Security-Policy"]
    assert fake_llm.requests == []
    fake_llm.script("Lead with the pain.", "Lead with the pain.")
    client.get("/task?task=Draft+a+LinkedIn+post+announcing+our+beta", headers={"Host": "localhost"})
    assert fake_llm.requests  # the GET does ask: the test can fail


def test_another_site_cannot_spend_model_calls(demo_repo: MemoryRepo, fake_llm: Any) -> None:
    """Any web page the user opened could embed <img src="http://127.0.0.1:5054/task?task=...">
    (or /distill, or a hidden iframe): the browser sends the loopback Host, so the host
    check passes, and each load paid for two model answers the attacker never needed to
    read. A model page fetched by another site as anything but a page to show (an image,
    a frame, a script, a fetch) is now refused with 403 before the model is asked; a link
    followed from elsewhere still opens the page."""
    client = create_app(demo_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    task = "/task?task=Draft+a+LinkedIn+post+announcing+our+beta"
    for path in (task, "/distill"):
        for dest in ("image", "iframe", "script", "empty"):
            headers = {"Host": "localhost", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": dest}
            page = client.get(path, headers=headers)
            assert page.status_code == 403, (path, dest)
            assert "Another site asked for this page" in page.get_data(as_text=True)
    assert fake_llm.requests == []
    fake_llm.script("Lead with the pain.", "Lead with the pain.")
    link = {"Host": "localhost", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "document"}
    assert client.get(task, headers=link).status_code == 200
    assert fake_llm.requests  # a link followed from a chat message still answers


@pytest.mark.parametrize(
    "path",
    ["index.html", "ledger.html", "rules/PB-01.html", "episodes/ep-hkgnqdz88f.html", "static/style.css"],
)
def test_the_export_never_writes_over_a_file_it_did_not_write(
    cli: Any, demo_repo: MemoryRepo, tmp_path: Path, path: str
) -> None:
    """`audit --html docs/` into a folder holding the user's own index.html (or a page,
    or a stylesheet, where the export writes one) wrote over it, exit 0: the user's file
    was gone. It is now refused (exit 2) before any page is written; a folder an earlier
    export wrote is still written over (tests/audit/test_web.py)."""
    site = tmp_path / "docs"
    (site / path).parent.mkdir(parents=True)
    (site / path).write_text("<h1>my own page</h1>\n")
    (site / "notes.txt").write_text("keep me\n")
    result = cli("audit", "--html", str(site))
    assert result.exit_code == 2, result.output
    assert f"{site / path} exists and was not written by 'scarwarden audit --html'" in result.stderr
    assert "Traceback" not in result.output
    assert (site / path).read_text() == "<h1>my own page</h1>\n"
    written = sorted(p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file())
    assert written == sorted([path, "notes.txt"])
    # Moved away, the same folder is exported into, and again over its own pages.
    (site / path).unlink()
    assert cli("audit", "--html", str(site)).exit_code == 0
    assert cli("audit", "--html", str(site)).exit_code == 0
    assert (site / "notes.txt").read_text() == "keep me\n" and (site / path).is_file()
