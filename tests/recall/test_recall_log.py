"""The recall log: appended on every recall, filtered by `scarwarden log`, never fatal."""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3

import pytest
from conftest import git

from scarwarden.errors import UsageError
from scarwarden.index import open_index
from scarwarden.index.packed import inflate
from scarwarden.recall import log as recall_log
from scarwarden.recall.engine import recall, recall_task
from scarwarden.recall.log import parse_when, read_log
from scarwarden.repo import MemoryRepo


def test_each_recall_is_logged_with_verdict_rules_scores_and_commit(demo_repo: MemoryRepo) -> None:
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    first = recall_task(demo_repo, "Draft a LinkedIn post announcing our beta")
    second = recall_task(demo_repo, "Book travel for the Berlin conference")
    recall_task(demo_repo, "Post our discount code on Twitter", log=False)
    with open_index(demo_repo) as index:
        entries = read_log(index)
    assert [e.id for e in entries] == [second.log_id, first.log_id]  # newest first
    berlin, linkedin = entries
    assert (berlin.verdict, berlin.rule_ids, berlin.scores) == ("ASK_HUMAN", [], [])
    assert linkedin.task == "Draft a LinkedIn post announcing our beta"
    assert linkedin.rule_ids == [r.id for r in first.rules]
    assert linkedin.scores == [r.score for r in first.rules]
    assert linkedin.playbook_commit == head
    assert linkedin.detail["best_tag_hits"] == 3
    assert dt.datetime.strptime(linkedin.at, "%Y-%m-%dT%H:%M:%SZ")


def test_filters_answer_why_did_the_agent_do_x_last_tuesday(demo_repo: MemoryRepo) -> None:
    with open_index(demo_repo) as index:
        for at, task in (
            ("2026-11-24T09:15:00Z", "Escalate the churn risk complaint"),
            ("2026-11-24T16:40:00Z", "Post our discount code on Twitter"),
            ("2026-11-25T08:00:00Z", "Escalate the churn risk complaint"),
        ):
            recall_log.append(index, recall(index, task), now=at)
        tuesday = read_log(
            index, since=parse_when("2026-11-24"), until=parse_when("2026-11-24", end=True), task_grep="CHURN"
        )
        asked = read_log(index, verdict="act")
        one = read_log(index, limit=1)
    assert [(e.at, e.task) for e in tuesday] == [
        ("2026-11-24T09:15:00Z", "Escalate the churn risk complaint")
    ]
    assert tuesday[0].rule_ids[0] == "PB-10"
    assert {e.task for e in asked} == {
        "Post our discount code on Twitter",
        "Escalate the churn risk complaint",
    }
    assert [e.at for e in one] == ["2026-11-25T08:00:00Z"]


def test_the_log_survives_an_index_rebuild(demo_repo: MemoryRepo) -> None:
    recall_task(demo_repo, "Draft a LinkedIn post announcing our beta")
    with open_index(demo_repo, rebuild_now=True) as index:
        assert index.stats.mode == "rebuild"
        entries = read_log(index)
    assert [e.task for e in entries] == ["Draft a LinkedIn post announcing our beta"]


def test_a_read_only_database_loses_the_line_not_the_recall(
    demo_repo: MemoryRepo, caplog: pytest.LogCaptureFixture
) -> None:
    with open_index(demo_repo) as index:
        result = recall(index, "Post our discount code on Twitter")
        index.conn.close()
        index.conn = sqlite3.connect(f"file:{demo_repo.index_path}?mode=ro", uri=True, isolation_level=None)
        # as index.schema.connect does: the episodes' doc column is computed by it (schema 18)
        index.conn.create_function("scarwarden_doc", 3, inflate, deterministic=True)
        with caplog.at_level(logging.WARNING, logger="scarwarden"):
            assert recall_log.append(index, result) is None
            again = recall(index, "Post our discount code on Twitter")  # still works
    assert "not logged" in caplog.text and "readonly" in caplog.text
    assert again.to_json() == result.to_json()


def test_a_locked_database_waits_briefly_then_gives_up(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(recall_log, "BUSY_MS", 50)
    with open_index(demo_repo) as index:
        result = recall(index, "Post our discount code on Twitter")
        blocker = sqlite3.connect(str(demo_repo.index_path), isolation_level=None)
        blocker.execute("BEGIN EXCLUSIVE")
        try:
            with caplog.at_level(logging.WARNING, logger="scarwarden"):
                assert recall_log.append(index, result) is None
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert recall_log.append(index, result) is not None  # free again: logged
    assert "locked" in caplog.text


def test_parse_when() -> None:
    now = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc)
    assert parse_when("2026-11-24") == "2026-11-24T00:00:00Z"
    assert parse_when("2026-11-24", end=True) == "2026-11-24T23:59:59Z"
    assert parse_when("2026-11-24T09:30") == "2026-11-24T09:30:00Z"
    assert parse_when("2026-11-24T09:30:00+02:00") == "2026-11-24T07:30:00Z"
    assert parse_when("2026-11-24T09:30:00Z") == "2026-11-24T09:30:00Z"
    assert parse_when("7d", now=now) == "2026-11-23T12:00:00Z"
    assert parse_when("90m", now=now) == "2026-11-30T10:30:00Z"
    with pytest.raises(UsageError, match="last tuesday"):
        parse_when("last tuesday")


def test_log_command(cli) -> None:
    cli("recall", "Draft a LinkedIn post announcing our beta")
    cli("recall", "Book travel for the Berlin conference")
    cli("recall", "--no-log", "Post our discount code on Twitter")
    result = cli("log")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "ASK_HUMAN" in lines[0] and "Book travel for the Berlin conference" in lines[0]
    assert "PB-01 (" in lines[3] and "playbook: " in lines[3]
    assert "discount" not in result.stdout
    data = json.loads(cli("log", "--json", "--verdict", "ACT").stdout)
    assert [e["task"] for e in data] == ["Draft a LinkedIn post announcing our beta"]
    assert list(data[0]) == ["id", "at", "task", "verdict", "rule_ids", "scores", "playbook_commit", "detail"]
    assert json.loads(cli("log", "--json", "--task-grep", "nothing like it").stdout) == []
    bad = cli("log", "--since", "last tuesday")
    assert bad.exit_code == 2 and "cannot read 'last tuesday'" in bad.stderr


@pytest.mark.parametrize(
    "damage",
    [
        {"rule_ids": "5"},
        {"scores": "5"},
        {"scores": "[null]"},
        {"scores": '["x"]'},
        {"detail": "5"},
        {"rule_ids": '{"PB-01": 1}'},
    ],
)
def test_a_damaged_row_of_the_log_does_not_take_the_whole_log_down(
    cli, demo_repo: MemoryRepo, damage
) -> None:
    """A row whose columns hold JSON of the wrong shape (a number for a list...) made
    every form of ``log`` an internal error (TypeError: 'int' object is not iterable),
    so one damaged line in the middle hid all the others. Invalid JSON was already read
    as empty: now the wrong shape is too, and the other recalls are shown."""
    for task in (
        "Draft a LinkedIn post announcing our beta",
        "Post our discount code on Twitter",
        "Book travel",
    ):
        recall_task(demo_repo, task)
    column, value = next(iter(damage.items()))
    with sqlite3.connect(demo_repo.index_path) as conn:
        conn.execute(f"UPDATE recall_log SET {column} = ? WHERE task LIKE 'Post%'", (value,))
    for args in (("log",), ("log", "--json"), ("log", "--export"), ("log", "--task-grep", "o")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
        assert "Draft a LinkedIn post" in result.stdout and "Book travel" in result.stdout
        assert "Post our discount code" in result.stdout
