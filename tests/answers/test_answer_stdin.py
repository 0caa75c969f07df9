"""The task and the human's answer read from stdin ('-'): there is one stdin."""

from __future__ import annotations

from conftest import Cli
from helpers import State

from scarwarden.index import open_index
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


def test_an_answer_read_from_stdin_drops_a_byte_order_mark(cli: Cli, demo_repo: MemoryRepo) -> None:
    """A file saved with a UTF-8 byte order mark and piped in as --answer stored U+FEFF
    at the start of the correction: an invisible character in memory. A byte order mark
    is not text (docs/formats.md, "Text"): the answer is stored without it."""
    task = "Book travel for the Berlin conference"
    result = cli("ask", task, "--answer", "-", input="\ufeffUse the portal\n")
    assert result.exit_code == 0, result.output
    with open_index(demo_repo) as index:
        episode = index.get_episode(result.stdout.strip())
    assert episode is not None and episode.data["correction"] == "Use the portal"
