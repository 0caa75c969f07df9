"""What a process keeps between recalls of its candidates' stem counts
(recall/term_counts.py) is never stale: after the playbook or the ledger moves a count,
a process that kept the old one recalls exactly what a new process does (issue 30)."""

from __future__ import annotations

import pytest
from helpers import EP, FIXED, recall_json, write_episode, write_playbook

from scarwarden.index import open_index
from scarwarden.recall import engine, term_counts
from scarwarden.recall.term_counts import TermCounts
from scarwarden.repo import MemoryRepo

TASK = "Put the new feature behind a flag before the release"


@pytest.fixture(autouse=True, params=["stem by stem", "every rule stem at once"])
def kept(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> TermCounts:
    """This test's process-wide counts (another test's recalls leave nothing here), read
    as a small playbook's are, and as a large one's are (every rule stem on a new key)."""
    counts = TermCounts()
    monkeypatch.setattr(engine, "TERM_COUNTS", counts)
    monkeypatch.setattr(term_counts, "WHOLE_RULES", 10**9 if request.param == "stem by stem" else 0)
    return counts


def _recalled(repo: MemoryRepo, trace: list[str] | None = None) -> str:
    return recall_json(repo, TASK, trace)


def _as_new_process(repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as patch:
        patch.setattr(engine, "TERM_COUNTS", TermCounts())
        return _recalled(repo)


def _lookups(trace: list[str]) -> int:
    """Statements that read counts: stem by stem, or every rule stem at once."""
    return sum("rule_term_df AS d" in sql for sql in trace)


def _memory(repo: MemoryRepo) -> None:
    write_episode(repo, EP, task="Ship the feature flag release", correction="Flag it first.")
    write_episode(repo, "ep-test000002", task="Release notes for the flag", correction="Say the flag.")
    write_playbook(repo, FIXED)


def test_the_second_recall_reads_no_count_again(memory_repo: MemoryRepo) -> None:
    _memory(memory_repo)
    first: list[str] = []
    again: list[str] = []
    assert _recalled(memory_repo, first) == _recalled(memory_repo, again)
    assert _lookups(first) >= 1 and _lookups(again) == 0


def test_a_rule_that_moves_a_count_is_seen(memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A new rule saying the best rule's words moves their df (the best rule's mass and
    confidence): the kept counts of the old playbook are not used."""
    _memory(memory_repo)
    before = _recalled(memory_repo)
    with open_index(memory_repo) as index:
        stamp = index.meta("rule_df_stamp")
    write_playbook(
        memory_repo,
        [*FIXED, ("PB-05", "Every feature flag", "Each new feature gets its flag before a release.", [])],
    )
    after = _recalled(memory_repo)
    with open_index(memory_repo) as index:
        assert index.meta("rule_df_stamp") not in (None, stamp)
    assert after != before
    assert after == _as_new_process(memory_repo, monkeypatch)


def test_tasks_that_move_a_count_are_seen(memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past tasks saying the rules' words move their ledger weights (tasks seen in the
    ledger count less): the kept counts of the old ledger are not used."""
    _memory(memory_repo)
    before = _recalled(memory_repo)
    with open_index(memory_repo) as index:
        stamp = index.meta("task_df_stamp")
    for k in range(3, 9):
        write_episode(memory_repo, f"ep-test{k:06d}", task="Rotate the production keys every Tuesday quarter")
    after = _recalled(memory_repo)
    with open_index(memory_repo) as index:
        assert index.meta("task_df_stamp") not in (None, stamp)
    assert after != before
    assert after == _as_new_process(memory_repo, monkeypatch)


def test_an_index_without_stamps_keeps_nothing(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    _memory(memory_repo)
    expected = _as_new_process(memory_repo, monkeypatch)
    with open_index(memory_repo) as index:
        index.conn.execute("DELETE FROM meta WHERE key IN ('rule_df_stamp', 'task_df_stamp')")
    first: list[str] = []
    again: list[str] = []
    assert _recalled(memory_repo, first) == _recalled(memory_repo, again) == expected
    assert _lookups(first) == _lookups(again) == 1  # stem by stem: nothing kept, nothing read whole
