"""What a process keeps between recalls of its candidates' task-free facts
(recall/rule_facts.py: rows, stems, tags' stems, counts) is never stale and never
shared: after the playbook or the ledger moves, a process that kept the old facts
recalls exactly what a new process does (issue 30)."""

from __future__ import annotations

import pytest
from helpers import EP, FIXED, recall_json, write_episode, write_playbook

from scarwarden.index import open_index
from scarwarden.recall import engine, rule_facts, score
from scarwarden.recall.engine import recall
from scarwarden.recall.rule_facts import RuleFacts
from scarwarden.recall.term_counts import TermCounts
from scarwarden.repo import MemoryRepo

TASK = "Put the new feature behind a flag before the release"


@pytest.fixture(autouse=True)
def kept(monkeypatch: pytest.MonkeyPatch) -> RuleFacts:
    """This test's process-wide facts and counts (another test's recalls leave nothing)."""
    facts = RuleFacts()
    monkeypatch.setattr(score, "RULE_FACTS", facts)
    monkeypatch.setattr(engine, "TERM_COUNTS", TermCounts())
    return facts


def _recalled(repo: MemoryRepo, trace: list[str] | None = None) -> str:
    return recall_json(repo, TASK, trace)


def _as_new_process(repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(score, "RULE_FACTS", RuleFacts())
        patch.setattr(engine, "TERM_COUNTS", TermCounts())
        return _recalled(repo)


def _rule_reads(trace: list[str]) -> int:
    """Statements that read the candidates' rows or their stems."""
    return sum("FROM rules WHERE id IN" in sql or "FROM rule_terms" in sql for sql in trace)


def _memory(repo: MemoryRepo) -> None:
    write_episode(repo, EP, task="Ship the feature flag release", correction="Flag it first.")
    write_episode(repo, "ep-test000002", task="Release notes for the flag", correction="Say the flag.")
    write_playbook(repo, FIXED)


def test_the_second_recall_reads_no_rule_again(memory_repo: MemoryRepo) -> None:
    _memory(memory_repo)
    first: list[str] = []
    again: list[str] = []
    assert _recalled(memory_repo, first) == _recalled(memory_repo, again)
    assert _rule_reads(first) == 2 and _rule_reads(again) == 0


def test_a_rule_edited_under_its_id_is_seen(memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The best rule's text changes, its ID does not: its kept words are not used."""
    _memory(memory_repo)
    before = _recalled(memory_repo)
    rules = [
        (FIXED[0][0], FIXED[0][1], "Ship each new feature behind its flag, released later.", FIXED[0][3])
    ]
    write_playbook(memory_repo, [*rules, *FIXED[1:]])
    after = _recalled(memory_repo)
    assert after != before
    assert after == _as_new_process(memory_repo, monkeypatch)


def test_tasks_that_move_a_count_are_seen(memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past tasks saying the rules' words move their ledger weights: the facts kept
    under the old ledger are not used."""
    _memory(memory_repo)
    before = _recalled(memory_repo)
    for k in range(3, 9):
        write_episode(memory_repo, f"ep-test{k:06d}", task="Rotate the production keys every Tuesday quarter")
    after = _recalled(memory_repo)
    assert after != before
    assert after == _as_new_process(memory_repo, monkeypatch)


def test_a_recalled_rule_changed_by_its_caller_changes_no_later_recall(memory_repo: MemoryRepo) -> None:
    _memory(memory_repo)
    expected = _recalled(memory_repo)
    with open_index(memory_repo) as index:
        for rule in recall(index, TASK, limit=10).rules:
            rule.stem_df.clear()
            rule.tags.append("changed")
    assert _recalled(memory_repo) == expected


@pytest.mark.parametrize("stamps", [True, False])
def test_a_large_playbook_or_an_index_without_stamps_keeps_nothing(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch, stamps: bool
) -> None:
    _memory(memory_repo)
    expected = _as_new_process(memory_repo, monkeypatch)
    if stamps:
        monkeypatch.setattr(rule_facts, "KEEP_RULES", len(FIXED) - 1)
    else:
        with open_index(memory_repo) as index:
            index.conn.execute("DELETE FROM meta WHERE key IN ('rule_df_stamp', 'task_df_stamp')")
    first: list[str] = []
    again: list[str] = []
    assert _recalled(memory_repo, first) == _recalled(memory_repo, again) == expected
    assert _rule_reads(first) == _rule_reads(again) == 2
