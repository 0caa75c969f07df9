"""What leaves the machine for a model is screened as the ledger screens episodes
(docs/privacy.md, "What is sent to a model"): a credential in a task, a rule or any
other text of a request reached the model server as it was; now it is sent as
``[redacted <kind>]``, and the door says so. Against a real local server (tests/fakellm.py)."""

from __future__ import annotations

import json
import logging
import string
from typing import Any

import pytest
from conftest import git
from fake_secrets import ALNUM, draw, fake_secrets, more_secrets
from fakellm import FakeLLM, completion
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scarwarden.config import ModelSettings, PrivacySettings
from scarwarden.llm.client import ChatClient, client_from_config
from scarwarden.repo import MemoryRepo, open_repo

TOKEN = "gh" + "p_" + draw(ALNUM, 36)
LAUNCH = f"Write a LinkedIn post about the launch, token {TOKEN}"
PLACEHOLDER = "[redacted github-token]"


def sent(llm: FakeLLM) -> str:
    """Every request body the server received, as one text."""
    return "\n".join(json.dumps(r["body"]) for r in llm.requests)


def state(repo: MemoryRepo) -> tuple[str, str]:
    return git(repo.root, "rev-parse", "HEAD").stdout, git(repo.root, "status", "--porcelain").stdout


def client(llm: FakeLLM, **privacy: str) -> ChatClient:
    settings = ModelSettings(base_url=llm.url, max_retries=0, timeout=5.0)
    return ChatClient(settings, "sk-test-not-a-real-key", privacy=PrivacySettings(**privacy))


def test_answer_sends_the_task_with_its_credential_replaced(
    cli: Any, demo_repo: MemoryRepo, fake_llm
) -> None:
    before = state(demo_repo)
    fake_llm.script(f"Launch day! (The token you gave was {PLACEHOLDER}: rotate it.)")
    result = cli("answer", LAUNCH, "--no-memory")
    assert result.exit_code == 0, result.output
    assert len(fake_llm.requests) == 1
    assert TOKEN not in sent(fake_llm) and PLACEHOLDER in sent(fake_llm)
    assert "Write a LinkedIn post about the launch, token" in sent(fake_llm)  # the task itself goes
    assert PLACEHOLDER in result.stdout  # the model's echo of the placeholder breaks nothing
    assert "github-token" in result.stderr and TOKEN not in result.stderr  # (stdout echoes the task)
    assert state(demo_repo) == before


def test_answer_with_memory_and_json(cli: Any, demo_repo: MemoryRepo, fake_llm) -> None:
    before = state(demo_repo)
    fake_llm.default = completion(f"Our beta is live. {PLACEHOLDER}")
    result = cli("answer", LAUNCH, "--compare", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert fake_llm.requests and TOKEN not in sent(fake_llm)
    assert data["no_memory"]["answer"] == f"Our beta is live. {PLACEHOLDER}"
    assert "github-token" in result.stderr
    assert state(demo_repo)[1] == before[1]


def test_the_python_api_reports_what_it_replaced(llm: FakeLLM) -> None:
    """Text parts are screened, an image (a data URL) is sent as it is."""
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + draw(ALNUM, 200)}}
    llm.script(completion("ok"))
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": [{"type": "text", "text": LAUNCH}, image]},
    ]
    response = client(llm).complete(messages, model="m")
    body = llm.requests[0]["body"]
    assert TOKEN not in sent(llm)
    assert body["messages"][1]["content"][0]["text"].endswith(f"token {PLACEHOLDER}")
    assert body["messages"][1]["content"][1] == image
    assert body["messages"][0] == messages[0]
    assert response.redacted == ("github-token",) and response.personal == ()
    assert messages[1]["content"][0]["text"] == LAUNCH  # the caller's messages are not changed


@pytest.mark.parametrize("kind", sorted(fake_secrets()))
def test_no_kind_of_credential_reaches_the_server(llm: FakeLLM, kind: str) -> None:
    text = fake_secrets()[kind]
    llm.script(completion("ok"))
    ask = [{"role": "user", "content": f"Summarise this:\n{text}\nThanks."}]
    response = client(llm).complete(ask, model="m")
    body = sent(llm)
    from scarwarden.files.secret_scan import scan_text

    assert not scan_text(llm.requests[0]["body"]["messages"][0]["content"])
    assert "Summarise this:" in body and "Thanks." in body
    assert response.redacted


def test_evasions_and_multi_line_keys_leave_nothing(llm: FakeLLM) -> None:
    zero_width = "\u200b".join(TOKEN[i : i + 4] for i in range(0, len(TOKEN), 4))
    pem = fake_secrets()["private-key"]
    text = f"First line.\nuse {zero_width} here\n{pem}\nLast line."
    llm.script(completion("ok"))
    client(llm).complete([{"role": "user", "content": text}], model="m")
    content = llm.requests[0]["body"]["messages"][0]["content"]
    body_line = pem.split("\n")[1]
    assert TOKEN[4:12] not in content and body_line[10:30] not in content
    assert content.startswith("First line.\n") and content.endswith("\nLast line.")


def test_allowed_values_are_sent(llm: FakeLLM, demo_repo: MemoryRepo) -> None:
    """``secrets.allow`` and the inline marker, as the ledger honours them."""
    from scarwarden.files.secret_scan import scan_text

    [found] = scan_text(LAUNCH)
    (demo_repo.root / "scarwarden.yaml").write_text(
        f"model:\n  base_url: {llm.url}\nsecrets:\n  allow: ['{found.fingerprint}']\n", encoding="utf-8"
    )
    llm.script(completion("ok"), completion("ok"))
    allowing = client_from_config(open_repo(demo_repo.root).config, {"SCARWARDEN_API_KEY": "sk-test-x"})
    assert allowing is not None
    assert allowing.complete([{"role": "user", "content": LAUNCH}], model="m").redacted == ()
    other = "gh" + "p_" + draw(ALNUM, 36)
    marked = f"a revoked sample {other} (scarwarden:allow-secret)\nand {TOKEN}"
    response = client(llm).complete([{"role": "user", "content": marked}], model="m")
    assert TOKEN in llm.requests[0]["body"]["messages"][0]["content"]
    assert other in sent(llm) and TOKEN not in json.dumps(llm.requests[1]["body"])
    assert response.redacted == ("github-token",)


def test_personal_data_follows_privacy(llm: FakeLLM, caplog: pytest.LogCaptureFixture) -> None:
    """``refuse``: sent as ``[email]``, as ``--redact-pii`` writes it; ``warn``: sent, said."""
    task = "Reply to jane@acme.io about card 4111 1111 1111 1111"
    llm.script(completion("ok"), completion("ok"))
    ask = [{"role": "user", "content": task}]
    refused = client(llm, email="refuse", card="refuse").complete(ask, model="m")
    assert llm.requests[0]["body"]["messages"][0]["content"] == "Reply to [email] about card [card]"
    assert refused.redacted == ("email", "card") or refused.redacted == ("card", "email")
    with caplog.at_level(logging.WARNING, logger="scarwarden"):
        warned = client(llm, email="warn", card="off").complete(ask, model="m")
    assert llm.requests[1]["body"]["messages"][0]["content"] == task
    assert warned.personal == ("email",) and warned.redacted == ()
    assert "email address" in caplog.text and "privacy.email: warn" in caplog.text


def test_a_hand_written_rule_is_screened_too(cli: Any, demo_repo: MemoryRepo, fake_llm) -> None:
    """A rule typed into playbook.md is no screened episode, and goes into the prompt."""
    path = demo_repo.playbook_path
    text = path.read_text(encoding="utf-8")
    secret = "sk" + "_live_" + draw(string.ascii_letters + string.digits, 24)
    assert "Use one emoji at most" in text
    with_key = text.replace("Use one emoji", f"Pay the ads with key {secret}. Use one emoji")
    path.write_text(with_key, encoding="utf-8")
    fake_llm.default = completion("A post.")
    result = cli("answer", "Draft a LinkedIn post announcing our beta")
    assert result.exit_code == 0, result.output
    assert fake_llm.requests and secret not in sent(fake_llm) and "[redacted stripe-key]" in sent(fake_llm)


def test_the_python_api_distill_sends_no_credential(demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    """An episode committed past the gate (``--no-verify``) still holds its token; the
    model distilling it gets the placeholder (``Memory.distill``, the Python API)."""
    from fakellm import reply_json
    from helpers import commit_no_verify, write_episode

    import scarwarden

    write_episode(demo_repo, "ep-leak0token", action=f"pushed the launch with token {TOKEN}")
    commit_no_verify(demo_repo.root, "an episode past the gate")
    before = state(demo_repo)
    fake_llm.default = reply_json({"operations": []})
    scarwarden.open_memory(demo_repo.root).distill(offline=False, dry_run=True)
    assert fake_llm.requests and "pushed the launch with token" in sent(fake_llm)
    assert TOKEN not in sent(fake_llm) and PLACEHOLDER in sent(fake_llm)
    assert state(demo_repo) == before


def test_the_web_task_page_sends_no_credential(demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    pytest.importorskip("flask")
    from urllib.parse import quote

    from scarwarden.audit.web.app import create_app

    before = state(demo_repo)
    fake_llm.default = completion(f"A post. {PLACEHOLDER}")
    page = create_app(demo_repo.root, csrf_token="t" * 32).test_client().get(f"/task?task={quote(LAUNCH)}")
    assert page.status_code == 200
    assert fake_llm.requests and TOKEN not in sent(fake_llm) and PLACEHOLDER in sent(fake_llm)
    assert state(demo_repo) == before


def test_a_command_line_password_keeps_the_command(llm: FakeLLM) -> None:
    """Only the password goes: the placeholder was read as a password again, and the
    whole line was sent as ``[redacted cli-password]``."""
    llm.script(completion("ok"))
    client(llm).complete(
        [{"role": "user", "content": f"Why does {more_secrets()['curl-user']} fail?"}], model="m"
    )
    content = llm.requests[0]["body"]["messages"][0]["content"]
    assert content == "Why does curl -u deploy:[redacted cli-password] https://ci.acme.dev/api/json fail?"


_PIECES = sorted({**fake_secrets(), **more_secrets()}.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(
        st.one_of(st.sampled_from(_PIECES), st.text(max_size=30), st.sampled_from(["\n", "é", "\u200b"])),
        max_size=12,
    )
)
def test_what_is_sent_holds_no_credential(words: list[str]) -> None:
    """Whatever text surrounds them, credentials never survive the screen, and a text
    the ledger finds nothing in is sent unchanged."""
    from scarwarden.files.secret_scan import scan_text
    from scarwarden.llm.screen import screen_text

    text = " ".join(words)
    out, kinds = screen_text(text, (), ())
    assert not scan_text(out, by_line=True)
    assert (out == text) == (not kinds)


def test_answer_json_says_what_the_screen_replaced(cli: Any, demo_repo: MemoryRepo, fake_llm) -> None:
    """``screened`` in answer --json: the kinds replaced (``redacted``) and the personal
    data ``privacy: warn`` sent (``personal``), for each side; never a value. Only
    stderr said so before."""
    fake_llm.default = completion("Our beta is live.")
    data = json.loads(cli("answer", LAUNCH, "--compare", "--json").stdout)
    assert data["screened"] == {"redacted": ["github-token"], "personal": []}
    assert data["no_memory"]["screened"] == {"redacted": ["github-token"], "personal": []}
    card = cli("answer", "Write a LinkedIn post; pay with card 4111 1111 1111 1111", "--no-memory", "--json")
    assert json.loads(card.stdout)["screened"] == {"redacted": [], "personal": ["card"]}
    clean = cli("answer", "Write a LinkedIn post about the launch", "--no-memory", "--json")
    assert json.loads(clean.stdout)["screened"] == {"redacted": [], "personal": []}


def test_answer_json_without_a_model_sent_nothing_to_screen(cli: Any, demo_repo: MemoryRepo) -> None:
    data = json.loads(cli("answer", LAUNCH, "--json").stdout)
    assert data["model_configured"] is False and data["screened"] is None


def test_review_draft_json_says_what_the_screen_replaced(cli: Any, demo_repo: MemoryRepo, fake_llm) -> None:
    from fakellm import reply_json

    fake_llm.default = reply_json({"verdict": "pass", "violations": []})
    draft = f"Our beta is live! Deploy with {TOKEN}\n"
    task = "Draft a LinkedIn post announcing our beta"
    result = cli("review-draft", "--task", task, "-", "--json", input=draft)
    data = json.loads(result.stdout)
    assert fake_llm.requests and TOKEN not in sent(fake_llm)
    assert data["screened"] == {"redacted": ["github-token"], "personal": []}
