"""The task and the human's answer read from stdin ('-'): there is one stdin."""

from __future__ import annotations

from conftest import Cli
from helpers import State

from scarwarden.repo import MemoryRepo


def test_task_and_answer_cannot_both_read_stdin(cli: Cli, demo_repo: MemoryRepo) -> None:
    """`ask - --answer -` read all of stdin as the answer, then said "the task is
    empty" (hint: describe the task in words) of a task that was given as '-'."""
    before = State.of(demo_repo)
    result = cli("ask", "-", "--answer", "-", input="Use the travel portal\n")
    assert result.exit_code == 2, result.output
    assert "the task and --answer both read stdin" in result.stderr
    assert "the task is empty" not in result.stderr
    assert State.of(demo_repo) == before
