"""The router: verdicts from the best rule, thresholds from scarwarden.yaml."""

from __future__ import annotations

import json

import pytest

from scarwarden.config import RecallSettings, parse_config
from scarwarden.errors import ConfigError
from scarwarden.router import ACT, ACT_AND_FLAG, ASK_HUMAN, VERDICT_MEANING, VERDICTS, reason, route

S = RecallSettings(act_threshold=9.0, floor=3.0, act_tag_hits=2)


@pytest.mark.parametrize(("score", "hits", "verdict"), [
    (None, 0, ASK_HUMAN),        # nothing matched at all
    (2.99, 0, ASK_HUMAN),        # below the floor
    (3.0, 0, ACT_AND_FLAG),      # at the floor
    (8.99, 1, ACT_AND_FLAG),     # one tag hit is not enough
    (9.0, 0, ACT),               # at the act threshold
    (6.0, 2, ACT),               # two tag hits: ACT whatever the score
    (1.0, 2, ACT),
])
def test_route(score: float | None, hits: int, verdict: str) -> None:
    assert route(score, hits, S) == verdict


def test_every_verdict_has_a_meaning_and_a_reason() -> None:
    assert set(VERDICT_MEANING) == set(VERDICTS) == {"ACT", "ACT_AND_FLAG", "ASK_HUMAN"}
    assert "do not guess" in VERDICT_MEANING[ASK_HUMAN].lower()
    assert reason(None, 0, S) == "ASK_HUMAN: no rule shares a tag or a word with the task"
    assert reason(6.0, 2, S) == "ACT: the best rule has 2 tag hits (>= act_tag_hits 2)"
    assert reason(9.5, 0, S) == "ACT: the best score 9.5 >= act_threshold 9"
    assert reason(2.0, 0, S) == "ASK_HUMAN: the best score 2 is below floor 3"
    assert reason(4.0, 1, S).startswith("ACT_AND_FLAG: the best score 4 is below act_threshold 9")


def test_defaults_are_the_measured_ones() -> None:
    # bench/recall_quality.py --tuning; docs/recall.md explains the choice.
    assert RecallSettings() == RecallSettings(act_threshold=9.25, floor=2.75, act_tag_hits=2,
                                              limit=5)


@pytest.mark.parametrize(("raw", "message"), [
    ({"act_threshold": "high"}, "recall.act_threshold must be float, got str"),
    ({"floor": [1]}, "recall.floor must be float, got list"),
    ({"act_tag_hits": 1.5}, "recall.act_tag_hits must be int, got float"),
    ({"act_tag_hits": True}, "recall.act_tag_hits must be int, got bool"),
    ({"limit": 0}, "recall.limit must be at least 1"),
    ({"floor": 10.0, "act_threshold": 5.0}, "must not be below recall.floor"),
    ({"floor": -1}, "recall.floor must not be negative"),
    ({"act_treshold": 5}, "unknown setting recall.act_treshold"),
])
def test_bad_thresholds_are_config_errors(raw: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        parse_config({"recall": raw}, environ={})


def test_thresholds_from_scarwarden_yaml_change_the_verdict(cli, demo_repo) -> None:
    task = "Write the release notes for version 2.3"  # PB-11, one tag hit, score ~7.5
    assert json.loads(cli("recall", "--json", task).stdout)["verdict"] == ACT_AND_FLAG
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: 5\n  limit: 1\n")
    data = json.loads(cli("recall", "--json", task).stdout)
    assert data["verdict"] == ACT and [r["id"] for r in data["rules"]] == ["PB-11"]
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  floor: 8\n  act_threshold: 20\n")
    assert json.loads(cli("recall", "--json", task).stdout)["verdict"] == ASK_HUMAN


def test_wrong_type_in_scarwarden_yaml_exits_2_and_names_the_key(cli, demo_repo) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text("recall:\n  act_threshold: high\n")
    result = cli("recall", "Draft a LinkedIn post")
    assert result.exit_code == 2
    assert "recall.act_threshold must be float, got str ('high')" in result.stderr
    assert result.stdout == ""
