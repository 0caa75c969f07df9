"""`scarwarden answer` against a real local chat-completions server (tests/fakellm.py)."""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
from fakellm import FakeLLM
from helpers import first_with_verdict

from scarwarden.answers.citations import format_citation
from scarwarden.files.playbook_edit import load_playbook
from scarwarden.repo import MemoryRepo

LINKEDIN = "Draft a LinkedIn post announcing our beta"
DISCOUNT = "Post our discount code on Twitter"
#: Tasks the demo memory knows nothing about; the first that recalls ASK_HUMAN is used.
NOTHING_CANDIDATES = (
    "Order new chairs for the office",
    "Book a table for the team dinner",
    "Renew the office lease",
)


@pytest.fixture
def nothing(demo_repo: MemoryRepo) -> str:
    return first_with_verdict(demo_repo, NOTHING_CANDIDATES, "ASK_HUMAN")


def rule(repo: MemoryRepo, rule_id: str) -> Any:
    found = load_playbook(repo).get(rule_id)
    assert found is not None, rule_id
    return found


def cite(repo: MemoryRepo, rule_id: str) -> str:
    r = rule(repo, rule_id)
    return format_citation(r.id, r.episode_ids)


def sent_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"])


def test_demo_episode_ids_are_the_stable_ones(demo_repo: MemoryRepo) -> None:
    assert rule(demo_repo, "PB-01").episode_ids == ("ep-hkgnqdz88f", "ep-vd4adns6h9", "ep-72r3dswafq")
    assert rule(demo_repo, "PB-02").episode_ids == ("ep-wmjgdnc59j", "ep-56m702j8dv", "ep-dqq3bkemex")


def test_memory_answer_cites_pb01_and_verifies(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    text = (
        "Still copy-pasting reports at midnight? Our beta fixes that. "
        f"{cite(demo_repo, 'PB-01')}\n\n#beta #launch"
    )
    fake_llm.script(text)
    result = cli("answer", LINKEDIN, "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] in ("ACT", "ACT_AND_FLAG")
    assert data["answer"] == text
    assert data["verification"]["ok"] is True
    assert [c["rule_id"] for c in data["verification"]["verified"]] == ["PB-01"]
    assert data["verification"]["verified"][0]["episode_ids"] == list(rule(demo_repo, "PB-01").episode_ids)
    assert data["rules"][0]["id"] == "PB-01"
    assert data["model"] == "qwen3.7-plus"
    assert data["usage"]["calls"] == 1 and data["usage"]["total_tokens"] == 120
    # What the model received: the rule, its episodes, the citation rule, the fenced task.
    [request] = fake_llm.requests
    body = request["body"]
    assert body["model"] == "qwen3.7-plus"
    sent = sent_text(body)
    assert rule(demo_repo, "PB-01").text in sent
    assert cite(demo_repo, "PB-01") in sent
    assert "learnt in" in body["messages"][0]["content"]
    assert f"```task\n{LINKEDIN}\n```" in sent
    # Text output: the answer, then the verification under it.
    fake_llm.script(text)
    out = cli("answer", LINKEDIN)
    assert out.exit_code == 0
    assert text in out.stdout
    assert "Citations: 1 of 1 citation(s) verified (PB-01)" in out.stdout
    assert f"ok       {cite(demo_repo, 'PB-01')}" in out.stdout


def test_refusal_cites_the_prohibiting_rule(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    text = (
        "I won't post the discount code on Twitter: public codes end up on coupon sites "
        f"{cite(demo_repo, 'PB-02')}. Instead, announce the sale publicly and send the "
        "code to the email list."
    )
    fake_llm.script(text)
    result = cli("answer", DISCOUNT, "--strict", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["verdict"] == "ACT"
    assert data["verification"]["ok"] is True
    assert data["verification"]["cited_rule_ids"] == ["PB-02"]
    sent = sent_text(fake_llm.requests[0]["body"])
    assert rule(demo_repo, "PB-02").text in sent
    assert "refuse" in fake_llm.requests[0]["body"]["messages"][0]["content"]


@pytest.mark.parametrize("kind", ["rule-not-recalled", "episode-not-in-rule"])
def test_invented_citations_are_flagged_and_fail_strict(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM, kind: str
) -> None:
    if kind == "rule-not-recalled":
        # PB-06 (GDPR) is a real rule, but nothing about LinkedIn posts recalls it.
        bad = cite(demo_repo, "PB-06")
        expect = "PB-06: not recalled for this task"
    else:
        # A real episode, but one that taught PB-02, not PB-01.
        bad = "[PB-01, learnt in ep-hkgnqdz88f, ep-wmjgdnc59j]"
        expect = "PB-01 ep-wmjgdnc59j: ep-wmjgdnc59j is not among PB-01's citations"
    text = f"Lead with the pain {bad}."
    fake_llm.script(text, text)
    loose = cli("answer", LINKEDIN)
    assert loose.exit_code == 0
    assert "INVENTED" in loose.stdout and expect in loose.stdout
    strict = cli("answer", LINKEDIN, "--strict")
    assert strict.exit_code == 1
    assert "invented citations (--strict)" in strict.stderr
    assert expect in strict.stderr


def test_no_memory_sends_no_rules(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fake_llm.script("Exciting news! Our beta is live. #beta #launch #startup")
    result = cli("answer", DISCOUNT, "--no-memory", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["mode"] == "no-memory" and data["verdict"] is None
    assert data["rules"] == [] and data["verification"] is None
    assert data["answer"].startswith("Exciting news!")
    [request] = fake_llm.requests
    body = request["body"]
    assert body["model"] == "qwen3.7-plus"  # the same model as with memory
    sent = sent_text(body)
    assert DISCOUNT in sent
    assert "PB-" not in sent and "ep-" not in sent and "learnt in" not in sent
    for r in load_playbook(demo_repo).rules:
        assert r.text not in sent and r.title not in sent


def test_compare_side_by_side_and_one_after_other(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    with_memory = f"Never post the code publicly {cite(demo_repo, 'PB-02')}; email it instead."
    without = "Sure! Here is your tweet: SAVE20 for 20% off everything!"

    def reply(body: dict[str, Any]) -> str:
        return with_memory if "PB-02" in sent_text(body) else without

    fake_llm.default = reply
    wide = cli("answer", DISCOUNT, "--compare", env={"COLUMNS": "160"})
    assert wide.exit_code == 0, wide.output
    lines = wide.stdout.splitlines()
    header = next(line for line in lines if "WITH MEMORY" in line)
    assert "| WITHOUT MEMORY" in header
    col = header.index("|")
    # Verification sits in the left (memory) column; the amnesia answer in the right one.
    assert any(line.startswith("Citations: 1 of 1") and line[col:].startswith("|") for line in lines)
    assert any(line[col + 2 :].startswith("Sure! Here is your tweet") for line in lines if len(line) > col)
    assert all(len(line) <= 160 for line in lines)
    narrow = cli("answer", DISCOUNT, "--compare", env={"COLUMNS": "80"})
    out = narrow.stdout
    assert (
        out.index("== WITH MEMORY")
        < out.index("Never post the code publicly")
        < out.index("Citations: 1 of 1")
        < out.index("== WITHOUT MEMORY")
        < out.index("Sure!")
    )
    js = cli("answer", DISCOUNT, "--compare", "--json")
    data = json.loads(js.stdout)
    assert data["mode"] == "compare"
    assert data["answer"] == with_memory and data["verification"]["ok"]
    assert data["no_memory"]["answer"] == without
    assert data["no_memory"]["model"] == data["model"] == "qwen3.7-plus"
    # Each run made exactly one request with rules and one without.
    with_rules = [b for b in fake_llm.bodies() if "PB-02" in sent_text(b)]
    assert len(with_rules) == 3 and len(fake_llm.requests) == 6


def test_no_key_prints_the_brief_as_the_result(cli: Any, demo_repo: MemoryRepo) -> None:
    # The brief is the normal reduced result without a key: exit 0, a note on stderr.
    result = cli("answer", LINKEDIN)
    assert result.exit_code == 0
    out = result.stdout
    assert "Verdict: ACT" in out
    assert "PB-01: Lead LinkedIn posts with the reader's pain" in out
    assert f"Cite as: {cite(demo_repo, 'PB-01')}" in out
    assert "Matched: tags" in out
    assert result.stderr.startswith("note: no model is configured, so this is the rule-grounded brief")
    assert "error:" not in result.stderr
    for var in ("SCARWARDEN_API_KEY", "DASHSCOPE_API_KEY", "SCARWARDEN_BASE_URL"):
        assert var in result.stderr
    js = cli("answer", LINKEDIN, "--json")
    assert js.exit_code == 0
    data = json.loads(js.stdout)
    assert data["answer"] is None and data["model_configured"] is False
    assert cite(demo_repo, "PB-01") in data["brief"]
    assert data["rules"][0]["id"] == "PB-01"


def test_no_key_compare_explains_the_no_memory_side(cli: Any, demo_repo: MemoryRepo) -> None:
    result = cli("answer", DISCOUNT, "--compare", env={"COLUMNS": "150"})
    assert result.exit_code == 0
    out = result.stdout
    assert "WITH MEMORY (no model)" in out and "WITHOUT MEMORY (no model)" in out
    assert "PB-02: Never share discount codes" in out
    assert "only the bare task" in out and "No rules" in out


def test_no_key_without_memory_has_nothing_to_show_and_exits_4(cli: Any) -> None:
    result = cli("answer", LINKEDIN, "--no-memory")
    assert result.exit_code == 4
    assert "error: no model is configured, so there is no answer without memory" in result.stderr


def test_ask_human_records_the_answer_without_calling_a_model(
    cli: Any, nothing: str, fake_llm: FakeLLM
) -> None:
    result = cli("answer", nothing, "--answer", "Book the rooftop; budget 300 EUR; ask Sam")
    assert result.exit_code == 0, result.output
    assert fake_llm.requests == []
    assert "No relevant memory" in result.stdout and "Do not guess" in result.stdout
    ep_id = result.stdout.split("as episode ")[1].split(";")[0]
    shown = cli("episode", "show", ep_id, "--json")
    data = json.loads(shown.stdout)
    assert data["task"] == nothing and data["source"] == "human-answer"
    assert data["correction"] == "Book the rooftop; budget 300 EUR; ask Sam"
    js = cli("answer", nothing, "--answer", "Ask Sam", "--json")
    payload = json.loads(js.stdout)
    assert payload["verdict"] == "ASK_HUMAN" and payload["answer"] is None
    assert payload["human_answer"] == "Ask Sam" and payload["recorded_episode"].startswith("ep-")


def test_ask_human_without_terminal_or_answer_exits_1(cli: Any, nothing: str) -> None:
    result = cli("answer", nothing)
    assert result.exit_code == 1
    assert "no terminal to ask on" in result.stderr
    assert f'scarwarden answer "{nothing}" --answer "..."' in result.stderr


def test_bad_key_exits_5_without_leaking_it(cli: Any, fake_llm: FakeLLM) -> None:
    fake_llm.script((401, {"error": {"message": "Incorrect API key provided: sk-test-not-a-real-key"}}))
    result = cli("answer", LINKEDIN)
    assert result.exit_code == 5
    assert "bad key" in result.stderr
    assert "sk-test-not-a-real-key" not in result.stdout + result.stderr


def test_unreachable_server_exits_3(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("SCARWARDEN_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("SCARWARDEN_API_KEY", "sk-test")
    monkeypatch.setenv("SCARWARDEN_MAX_RETRIES", "0")
    result = cli("answer", LINKEDIN)
    assert result.exit_code == 3
    assert "did not answer" in result.stderr


def test_usage_errors(cli: Any) -> None:
    assert cli("answer", LINKEDIN, "--no-memory", "--compare").exit_code == 2
    assert cli("answer", LINKEDIN, "--no-memory", "--qc").exit_code == 2
    assert cli("answer", "   ").exit_code == 2


def test_ask_human_prompts_on_a_terminal(demo_repo: MemoryRepo, nothing: str) -> None:
    """The real command, with a pseudo-terminal as stdin: the question, then the prompt."""
    import os
    import subprocess

    master, slave = os.openpty()
    try:
        proc = subprocess.Popen(
            ["scarwarden", "-C", str(demo_repo.root), "answer", nothing],
            stdin=slave,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        os.write(master, b"Ask facilities; max 150 EUR a chair\n")
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 0, err
    assert "Do not guess. Ask a human" in out
    assert "Your answer (it becomes a new episode)" in err
    ep_id = out.split("as episode ")[1].split(";")[0]
    shown = subprocess.run(
        ["scarwarden", "-C", str(demo_repo.root), "episode", "show", ep_id, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(shown.stdout)["correction"] == "Ask facilities; max 150 EUR a chair"


def test_compare_on_ask_human_does_not_prompt(cli: Any, nothing: str, fake_llm: FakeLLM) -> None:
    fake_llm.script("Sure, order ten ergonomic chairs from the cheapest shop.")
    result = cli("answer", nothing, "--compare", env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert out.index("Do not guess") < out.index("== WITHOUT MEMORY") < out.index("Sure, order")
    [request] = fake_llm.requests  # only the no-memory side called the model
    assert "PB-" not in sent_text(request["body"])


def test_ask_human_answer_from_stdin_and_empty(cli: Any, nothing: str) -> None:
    result = cli("answer", nothing, "--answer", "-", "--json", input="Check with Sam\n")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["human_answer"] == "Check with Sam"
    empty = cli("answer", nothing, "--answer", "  ")
    assert empty.exit_code == 2 and "--answer is empty" in empty.stderr


def test_rate_limit_then_success_and_malformed_reply(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        (429, {"error": {"message": "slow down"}}, {"Retry-After": "0"}),
        f"Lead with the pain {cite(demo_repo, 'PB-01')}",
    )
    result = cli("answer", LINKEDIN, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["verification"]["ok"]
    assert len(fake_llm.requests) == 2
    fake_llm.script({"not": "a completion"})
    bad = cli("answer", LINKEDIN)
    assert bad.exit_code == 5
    assert "without a chat completion" in bad.stderr


def test_json_keys_are_stable(cli: Any, nothing: str, fake_llm: FakeLLM) -> None:
    fake_llm.script("An answer.")
    memory = json.loads(cli("answer", LINKEDIN, "--json").stdout)
    asked = json.loads(cli("answer", nothing, "--answer", "x", "--json").stdout)
    assert set(memory) == set(asked)
    assert asked["question"] and memory["question"] is None


def _recall_log_tasks(repo: MemoryRepo) -> list[str]:
    from scarwarden.index import open_index
    from scarwarden.recall.log import read_log

    with open_index(repo) as index:
        return [entry.task for entry in read_log(index, limit=None)]


def test_answer_or_brief_recalls_once_when_the_model_fails(demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    from scarwarden.answers.answer import answer_or_brief
    from scarwarden.llm.client import client_from_config
    from scarwarden.repo import open_repo

    fake_llm.script((401, {"error": {"message": "Incorrect API key provided"}}))
    # Re-read the config: the fixture's was loaded before fake_llm set the endpoint.
    client = client_from_config(open_repo(demo_repo.root).config)
    assert client is not None
    before = _recall_log_tasks(demo_repo)
    result, failure = answer_or_brief(demo_repo, LINKEDIN, client=client, compare=True)
    assert failure is not None and "bad key" in failure
    assert result.brief is not None and "PB-01" in result.brief  # the fallback still has memory
    assert result.recall is not None and result.recall.verdict != "ASK_HUMAN"
    assert len(fake_llm.requests) == 1
    assert _recall_log_tasks(demo_repo) == [LINKEDIN] + before  # one request, one log line


def test_answer_or_brief_with_a_working_model_recalls_once(demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    from fakellm import completion

    from scarwarden.answers.answer import answer_or_brief
    from scarwarden.llm.client import client_from_config
    from scarwarden.repo import open_repo

    fake_llm.script(completion(f"Lead with the pain {cite(demo_repo, 'PB-01')}."))
    before = _recall_log_tasks(demo_repo)
    result, failure = answer_or_brief(
        demo_repo, LINKEDIN, client=client_from_config(open_repo(demo_repo.root).config)
    )
    assert failure is None and result.memory is not None and result.memory.answer
    assert _recall_log_tasks(demo_repo) == [LINKEDIN] + before


def test_a_model_answer_cannot_drive_the_terminal(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    """A model's text is printed as text: its escape sequences (a window title set, the
    screen cleared, a line overwritten by a carriage return) are shown, not run."""
    said = (
        f"Lead with the pain \x1b]0;pwned\x07\x1b[2J{cite(demo_repo, 'PB-01')}"
        "\r\nHashtags\tat the end\rhidden"
    )
    fake_llm.script(said)
    out = cli("answer", LINKEDIN)
    assert out.exit_code == 0, out.output
    assert "\x1b" not in out.stdout and "\x07" not in out.stdout and "\r" not in out.stdout
    assert "Lead with the pain \\x1b]0;pwned\\x07\\x1b[2J" in out.stdout
    assert "\nHashtags\tat the end\\x0dhidden" in out.stdout  # CRLF a line end, a lone CR shown
    fake_llm.script(said)
    data = json.loads(cli("answer", LINKEDIN, "--json").stdout)
    assert data["answer"] == said  # the JSON carries the text as it came


@pytest.mark.parametrize(
    "forged",
    [
        "[PB\u201106, learnt in ep-zzzzzzzzzz]",  # a non-breaking hyphen
        "\u3010PB-06, learnt in ep-zzzzzzzzzz\u3011",  # the lenticular brackets Qwen writes
        "\uff3bPB-06, learnt in ep-zzzzzzzzzz\uff3d",  # fullwidth brackets
        "[\u200bPB-06, learnt in ep-zzzzzzzzzz]",  # a zero-width space
        "[\u0420\u0412-06, learnt in ep-zzzzzzzzzz]",  # Cyrillic ER and VE for P and B
    ],
)
def test_a_citation_in_lookalike_characters_is_verified_too(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM, forged: str
) -> None:
    """A citation a reader takes for one, written with a lookalike character, was not
    seen as a citation at all ('no citations in the answer'), so an invented one passed
    --strict (exit 0). It is read as the reader reads it, and verified."""
    text = f"Lead with the pain {forged}."
    fake_llm.default = text
    strict = cli("answer", LINKEDIN, "--strict")
    assert strict.exit_code == 1, strict.output
    assert "PB-06: not recalled for this task" in strict.stderr
