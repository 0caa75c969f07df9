"""The router: verdicts from the best rule, thresholds from scarwarden.yaml."""

from __future__ import annotations

import json

import pytest

from scarwarden.config import RecallSettings, parse_config
from scarwarden.errors import ConfigError
from scarwarden.recall.router import ACT, ACT_AND_FLAG, ASK_HUMAN, VERDICT_MEANING, VERDICTS, reason, route

S = RecallSettings(act_threshold=0.2, floor=0.1, act_tag_hits=2)


@pytest.mark.parametrize(
    ("confidence", "hits", "evidence", "words", "verdict"),
    [
        (None, 0, 0.0, None, ASK_HUMAN),  # nothing matched at all
        (0.0999, 1, 3.0, (3, 4), ASK_HUMAN),  # below the floor, one tag hit is not enough
        (0.1, 0, 1.0, (2, 5), ACT_AND_FLAG),  # at the floor, one rare word's worth of evidence
        (0.1, 1, 0.5, (2, 5), ASK_HUMAN),  # a tag hit on generic words is not evidence (issue 13)
        (0.5, 0, 0.99, (3, 3), ASK_HUMAN),  # only generic words matched: not even a weak match
        (0.1999, 1, 9.0, (9, 20), ACT_AND_FLAG),  # below act_threshold, whatever the evidence
        (0.2, 0, 2.0, (2, 4), ACT),  # at act_threshold with two words' evidence
        (0.9, 1, 1.99, (2, 2), ACT_AND_FLAG),  # confident but resting on less than two words
        (0.1, 2, 2.0, (2, 6), ACT),  # two tag hits on two specific words, at the floor: ACT
        (0.0999, 2, 2.0, (2, 6), ASK_HUMAN),  # two tag hits below the floor: not a match (issue 13)
        (0.05, 2, 0.5, (2, 6), ASK_HUMAN),  # two generic tags never act (issue 13), nor flag
        (0.0, 2, 0.0, (2, 2), ASK_HUMAN),
        (0.3, 1, 1.0, (1, 4), ASK_HUMAN),  # one word of four, however rare: ask ("production")
        (0.3, 1, 1.0, (1, 2), ACT_AND_FLAG),  # one word of two is half the task: a weak match
        (0.3, 1, 1.0, (1, 1), ACT_AND_FLAG),  # "refund" against the refund rule
    ],
)
def test_route(
    confidence: float | None, hits: int, evidence: float, words: tuple[int, int] | None, verdict: str
) -> None:
    matched, task = words if words else (None, 0)
    assert route(confidence, hits, evidence, S, matched_words=matched, task_words=task) == verdict


def test_act_needs_the_task_to_touch_a_tenth_of_the_rule() -> None:
    # A short task every word of which a long rule happens to contain (issue 13: a
    # banking page on travel booking for "Cancel a booked flight after the meeting moved").
    assert route(0.2203, 0, 2.3764, S, matched_words=4, task_words=5, rule_coverage=0.058) == ACT_AND_FLAG
    assert route(0.2203, 0, 2.3764, S, matched_words=4, task_words=5, rule_coverage=0.1) == ACT
    assert reason(0.2203, 0, 2.3764, S, matched_words=4, task_words=5, rule_coverage=0.058) == (
        "ACT_AND_FLAG: not ACT because the task touches 0.058 of the rule (< 0.1); its confidence "
        "0.2203 >= floor 0.1, evidence 2.3764 >= 1; it matches 4 of the task's 5 word(s)"
    )


def test_every_verdict_has_a_meaning_and_a_reason() -> None:
    assert set(VERDICT_MEANING) == set(VERDICTS) == {"ACT", "ACT_AND_FLAG", "ASK_HUMAN"}
    assert "do not guess" in VERDICT_MEANING[ASK_HUMAN].lower()
    assert reason(None, 0, 0.0, S) == "ASK_HUMAN: no rule shares a tag or a word with the task"
    assert reason(0.15, 2, 2.0, S) == (
        "ACT: the best rule's evidence 2 >= 2 and it has 2 tag hits (>= act_tag_hits 2) and "
        "confidence 0.15 >= floor 0.1"
    )
    assert reason(0.25, 0, 2.5, S) == (
        "ACT: the best rule's evidence 2.5 >= 2 and it has confidence 0.25 >= act_threshold 0.2"
    )
    assert reason(0.05, 1, 1.0, S) == "ASK_HUMAN: the best rule's confidence 0.05 is below floor 0.1"
    assert reason(0.5, 0, 0.75, S) == (
        "ASK_HUMAN: the best rule's evidence 0.75 < 1 (only generic words matched), though its "
        "confidence 0.5 >= floor 0.1"
    )
    assert reason(0.15, 0, 3.0, S, matched_words=3, task_words=5) == (
        "ACT_AND_FLAG: not ACT because its confidence 0.15 < act_threshold 0.2 and 0 tag hit(s) < 2; "
        "its confidence 0.15 >= floor 0.1, evidence 3 >= 1; it matches 3 of the task's 5 word(s)"
    )
    assert reason(0.3, 1, 1.5, S, matched_words=2, task_words=2) == (
        "ACT_AND_FLAG: not ACT because its evidence 1.5 < 2; its confidence 0.3 >= floor 0.1, "
        "evidence 1.5 >= 1; it matches 2 of the task's 2 word(s)"
    )
    assert reason(0.3, 1, 1.0, S, matched_words=1, task_words=4) == (
        "ASK_HUMAN: the best rule matches 1 of the task's 4 words: one word of a longer task, "
        "with nothing else to support it"
    )


def test_defaults_are_the_measured_ones() -> None:
    # bench/recall_quality.py --tuning; docs/recall.md explains the choice.
    assert RecallSettings() == RecallSettings(act_threshold=0.1825, floor=0.13, act_tag_hits=2, limit=5)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"act_threshold": "high"}, "recall.act_threshold must be float, got str"),
        ({"floor": [1]}, "recall.floor must be float, got list"),
        ({"act_tag_hits": 1.5}, "recall.act_tag_hits must be int, got float"),
        ({"act_tag_hits": True}, "recall.act_tag_hits must be int, got bool"),
        ({"limit": 0}, "recall.limit must be at least 1"),
        ({"floor": 0.5, "act_threshold": 0.25}, "must not be below recall.floor"),
        ({"act_threshold": 9.25}, "recall.act_threshold is a confidence between 0 and 1, got 9.25"),
        ({"floor": -1}, "recall.floor must not be negative"),
        ({"act_treshold": 5}, "unknown setting recall.act_treshold"),
    ],
)
def test_bad_thresholds_are_config_errors(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        parse_config({"recall": raw}, environ={})


def test_thresholds_from_scarwarden_yaml_change_the_verdict(cli, demo_repo) -> None:
    # PB-11: one tag hit, "write" and "version" through its episodes: confidence 0.2852
    task = "Write the release notes for version 2.3"
    data = json.loads(cli("recall", "--json", task).stdout)
    assert data["verdict"] == ACT and data["rules"][0]["id"] == "PB-11"
    assert data["rules"][0]["confidence"] == 0.2852
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: 0.3\n  limit: 1\n")
    data = json.loads(cli("recall", "--json", task).stdout)
    assert data["verdict"] == ACT_AND_FLAG and [r["id"] for r in data["rules"]] == ["PB-11"]
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  floor: 0.3\n  act_threshold: 0.5\n")
    data = json.loads(cli("recall", "--json", task).stdout)
    assert data["verdict"] == ASK_HUMAN and data["rules"] == []


def test_a_score_scale_threshold_is_refused_with_a_hint(cli, demo_repo) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: 9.25\n")
    result = cli("recall", "Draft a LinkedIn post")
    assert result.exit_code == 2
    assert "recall.act_threshold is a confidence between 0 and 1, got 9.25" in result.stderr


def test_wrong_type_in_scarwarden_yaml_exits_2_and_names_the_key(cli, demo_repo) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: high\n")
    result = cli("recall", "Draft a LinkedIn post")
    assert result.exit_code == 2
    assert "recall.act_threshold must be float, got str ('high')" in result.stderr
    assert result.stdout == ""
