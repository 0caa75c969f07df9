"""The reviewer (QC) loop and `review-draft`, against the real local chat-completions server."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from fakellm import FakeLLM, reply_json

from scarwarden.answers.citations import format_citation
from scarwarden.answers.qc import parse_review
from scarwarden.files.playbook_edit import load_playbook
from scarwarden.repo import MemoryRepo

DISCOUNT = "Post our discount code on Twitter"
BAD = "Big sale! Use code SAVE20 for 20% off, today only! #sale"
RETAKE = {
    "verdict": "retake",
    "violations": [{"rule_id": "PB-02", "reason": "the discount code is in a public tweet"}],
}
PASS = {"verdict": "pass"}


def good(repo: MemoryRepo) -> str:
    pb02 = load_playbook(repo).get("PB-02")
    assert pb02 is not None
    return (
        f"Our sale is on: subscribers get their code by email {format_citation(pb02.id, pb02.episode_ids)}."
    )


def is_review(body: dict[str, Any]) -> bool:
    return "strict reviewer" in body["messages"][0]["content"]


def test_retake_then_pass(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fixed = good(demo_repo)
    fake_llm.script(BAD, reply_json(RETAKE), fixed, reply_json(PASS))
    result = cli("answer", DISCOUNT, "--qc", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["answer"] == fixed  # the retaken draft, not the first one
    assert data["verification"]["ok"] and data["verification"]["cited_rule_ids"] == ["PB-02"]
    qc = data["qc"]
    assert qc["verdict"] == "pass" and qc["retakes"] == 1 and qc["max_retakes"] == 2
    assert [h["verdict"] for h in qc["history"]] == ["retake", "pass"]
    assert qc["history"][0]["draft"] == BAD
    assert qc["history"][0]["violations"] == RETAKE["violations"]
    bodies = fake_llm.bodies()
    assert [is_review(b) for b in bodies] == [False, True, False, True]
    # The reviewer got the rules and the draft, fenced, and was asked for JSON.
    review = "\n".join(m["content"] for m in bodies[1]["messages"])
    assert f"```draft\n{BAD}\n```" in review
    assert load_playbook(demo_repo).get("PB-02").text in review  # type: ignore[union-attr]
    assert bodies[1]["response_format"] == {"type": "json_object"}
    # The regeneration carried the rejected draft and the reviewer's feedback.
    retake = bodies[2]["messages"]
    assert retake[-2] == {"role": "assistant", "content": BAD}
    assert "PB-02: the discount code is in a public tweet" in retake[-1]["content"]
    assert retake[:2] == bodies[0]["messages"]
    assert data["usage"]["calls"] == 4


def test_retake_until_the_limit(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fake_llm.script(BAD, reply_json(RETAKE), BAD + " v2", reply_json(RETAKE), BAD + " v3", reply_json(RETAKE))
    result = cli("answer", DISCOUNT, "--qc")
    assert result.exit_code == 1
    assert len(fake_llm.requests) == 6  # 1 + 2 retakes, each reviewed
    out = result.stdout
    assert BAD + " v3" in out  # the last draft is shown
    assert "still violates PB-02 after 2 retake(s)" in out
    assert "draft: retake" in out and "retake 1: retake" in out and "retake 2: retake" in out
    assert "the discount code is in a public tweet" in out
    assert "still violates PB-02" in result.stderr


def test_max_retakes_option_and_config(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fake_llm.script(BAD, reply_json(RETAKE))
    result = cli("answer", DISCOUNT, "--qc", "--max-retakes", "0", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["qc"]["verdict"] == "retake-limit"
    assert len(fake_llm.requests) == 2
    (demo_repo.root / "scarwarden.yaml").write_text("answer:\n  qc_max_retakes: 1\n")
    fake_llm.script(BAD, reply_json(RETAKE), BAD, reply_json(RETAKE))
    again = cli("answer", DISCOUNT, "--qc", "--json")
    assert json.loads(again.stdout)["qc"]["max_retakes"] == 1
    assert len(fake_llm.requests) == 6


@pytest.mark.parametrize("command", [("answer", DISCOUNT, "--qc"), ("review-draft", "--task", DISCOUNT, "-")])
def test_max_retakes_is_bounded(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM, command: tuple) -> None:
    """Unbounded, a reviewer that never passes kept the loop calling the model for ever."""
    for value in ("11", "99999999999999999999999"):
        result = cli(*command, "--max-retakes", value, input=BAD)
        assert result.exit_code == 2, result.output
        assert f"Invalid value for '--max-retakes': {value} is not in the range 0<=x<=10." in result.stderr
    (demo_repo.root / "scarwarden.yaml").write_text("answer:\n  qc_max_retakes: 11\n")
    result = cli(*command, input=BAD)
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == "error: answer.qc_max_retakes must be at most 10, got 11"
    assert fake_llm.requests == []  # no model was called


def test_ten_retakes_is_the_limit(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fake_llm.script(BAD, *[reply_json(RETAKE), BAD] * 10, reply_json(RETAKE))
    result = cli("answer", DISCOUNT, "--qc", "--max-retakes", "10", "--json")
    assert result.exit_code == 1, result.output
    qc = json.loads(result.stdout)["qc"]
    assert qc["verdict"] == "retake-limit" and qc["retakes"] == 10 and qc["max_retakes"] == 10
    assert len(fake_llm.requests) == 22


@pytest.mark.parametrize("value", [11, -1, True])
def test_the_loop_refuses_a_retake_limit_out_of_bounds(fake_llm: FakeLLM, value: int) -> None:
    """The library's own check, for a caller that is not the CLI or the settings."""
    from scarwarden.answers.qc import run_qc
    from scarwarden.errors import UsageError

    with pytest.raises(UsageError, match=rf"max_retakes must be from 0 to 10, got {value!r}"):
        run_qc(None, model="m", task=DISCOUNT, rules=[], messages=[], draft=BAD, max_retakes=value)  # type: ignore[arg-type]
    assert fake_llm.requests == []


def test_reviewer_naming_an_unrecalled_rule_is_not_trusted(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM
) -> None:
    invented = {
        "verdict": "retake",
        "violations": [
            {"rule_id": "PB-99", "reason": "made up"},
            {"rule_id": "PB-06", "reason": "GDPR, not recalled here"},
        ],
    }
    fake_llm.script(good(demo_repo), reply_json(invented))
    result = cli("answer", DISCOUNT, "--qc", "--json")
    assert result.exit_code == 0, result.output
    qc = json.loads(result.stdout)["qc"]
    assert qc["verdict"] == "pass" and qc["retakes"] == 0
    assert [v["rule_id"] for v in qc["history"][0]["untrusted"]] == ["PB-99", "PB-06"]
    assert len(fake_llm.requests) == 2  # no regeneration on untrusted violations
    fake_llm.script(good(demo_repo), reply_json(invented))
    text = cli("answer", DISCOUNT, "--qc")
    assert "(ignored) PB-99 was not recalled for this task" in text.stdout


def test_invalid_reviewer_json_is_repaired_once(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fake_llm.script(good(demo_repo), "Looks fine to me!", reply_json(PASS))
    result = cli("answer", DISCOUNT, "--qc", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["qc"]["verdict"] == "pass"
    repair = fake_llm.requests[2]["body"]["messages"][-1]["content"]
    assert "not valid JSON" in repair


def test_invalid_reviewer_json_twice_fails_clearly(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM
) -> None:
    fake_llm.script(
        good(demo_repo), reply_json({"verdict": "maybe"}), reply_json({"verdict": "retake", "violations": []})
    )
    result = cli("answer", DISCOUNT, "--qc", "--record")
    assert result.exit_code == 5
    # Said as a sentence: it read "the model's the reviewer's verdict", and the repair
    # request "Reply again with only the the reviewer's verdict".
    assert "error: the model's review verdict was not the JSON asked for" in result.stderr
    assert "at least one violation" in result.stderr
    assert "Recorded" not in result.output
    repair = fake_llm.requests[2]["body"]["messages"][-1]["content"]
    assert "Reply again with only the review verdict as one JSON object" in repair


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "expected a JSON object"),
        ({"verdict": "ok"}, '"verdict" must be "pass" or "retake"'),
        ({"verdict": "retake"}, "at least one violation"),
        ({"verdict": "pass", "violations": [{"rule_id": "PB-02", "reason": "x"}]}, "must not list"),
        ({"verdict": "retake", "violations": [{"rule_id": "PB-02"}]}, 'has no "reason"'),
        ({"verdict": "retake", "violations": "PB-02"}, "must be a list"),
        # Printed on the terminal and sent to the rewrite: it went through as it was.
        (
            {"verdict": "retake", "violations": [{"rule_id": "PB-02", "reason": "x\x1b[2J"}]},
            'violation 1: "reason" holds an escape character (U+001B) at character 2',
        ),
    ],
)
def test_parse_review_rejects(data: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_review(data, ["PB-02"])


def test_parse_review_splits_trusted_and_untrusted() -> None:
    review = parse_review(
        {
            "verdict": "retake",
            "violations": [
                {"rule_id": "pb-02", "reason": " public code "},
                {"rule_id": "PB-07", "reason": "x"},
            ],
        },
        ["PB-02"],
    )
    assert [(v.rule_id, v.reason) for v in review.violations] == [("PB-02", "public code")]
    assert [v.rule_id for v in review.untrusted] == ["PB-07"]
    assert not review.passed


# -- review-draft --------------------------------------------------------------------


def test_review_draft_sends_a_breaking_draft_back(
    cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM, tmp_path: Any
) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text(BAD)
    fake_llm.script(reply_json(RETAKE))
    result = cli("review-draft", "--task", DISCOUNT, str(draft))
    assert result.exit_code == 1
    assert "Reviewer: retake: the draft violates PB-02" in result.stdout
    assert "PB-02: the discount code is in a public tweet" in result.stdout
    assert "Citations: no citations in the answer" in result.stdout
    [request] = fake_llm.requests
    assert is_review(request["body"]) and BAD in request["body"]["messages"][1]["content"]


def test_review_draft_pass_from_stdin_json(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM) -> None:
    fake_llm.script(reply_json(PASS))
    result = cli("review-draft", "--task", DISCOUNT, "-", "--json", input=good(demo_repo))
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["qc"]["verdict"] == "pass" and data["final"] == good(demo_repo)
    assert data["verification"]["ok"] and data["verdict"] == "ACT"


def test_review_draft_rewrite(cli: Any, demo_repo: MemoryRepo, fake_llm: FakeLLM, tmp_path: Any) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text(BAD)
    fake_llm.script(reply_json(RETAKE), good(demo_repo), reply_json(PASS))
    result = cli("review-draft", "--task", DISCOUNT, str(draft), "--rewrite", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["draft"] == BAD and data["final"] == good(demo_repo)
    assert data["qc"]["retakes"] == 1
    # The regeneration had the memory request, so it saw the rules.
    assert "PB-02" in fake_llm.requests[1]["body"]["messages"][1]["content"]


def test_review_draft_without_model_still_checks_citations(
    cli: Any, demo_repo: MemoryRepo, tmp_path: Any
) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text("Post it [PB-02, learnt in ep-hkgnqdz88f].")
    result = cli("review-draft", "--task", DISCOUNT, str(draft), "--json")
    assert result.exit_code == 4
    data = json.loads(result.stdout)
    assert data["qc"] is None and data["brief"]
    invented = data["verification"]["invented"]
    assert invented[0]["episode_id"] == "ep-hkgnqdz88f"
    assert "no model is configured" in result.stderr


def test_review_draft_strict_without_model_fails_on_the_invented_citation(
    cli: Any, demo_repo: MemoryRepo, tmp_path: Any
) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text("Post it [PB-02, learnt in ep-hkgnqdz88f].")
    strict = cli("review-draft", "--task", DISCOUNT, str(draft), "--strict")
    # The check that ran and failed (1) outranks the one that could not run (4).
    assert strict.exit_code == 1
    assert "INVENTED PB-02 ep-hkgnqdz88f" in strict.stdout
    assert "invented citations (--strict)" in strict.stderr
    lenient = cli("review-draft", "--task", DISCOUNT, str(draft))
    assert lenient.exit_code == 4
    assert "no reviewer judged the draft" in lenient.stderr


def test_review_draft_with_nothing_recalled(cli: Any, fake_llm: FakeLLM, tmp_path: Any) -> None:
    draft = tmp_path / "draft.txt"
    draft.write_text("Ten chairs, please.")
    result = cli("review-draft", "--task", "Order new chairs for the office", str(draft))
    if "Verdict: ASK_HUMAN" not in result.stdout:
        pytest.skip("recall now matches this task")
    assert result.exit_code == 0
    assert "nothing to review against" in result.stdout
    assert fake_llm.requests == []
    empty = tmp_path / "empty.txt"
    empty.write_text("  \n")
    assert cli("review-draft", "--task", DISCOUNT, str(empty)).exit_code == 2
