"""The task and the human's answer read from stdin ('-'): there is one stdin."""

from __future__ import annotations

import json

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


def test_answer_reads_a_dash_task_from_stdin(cli: Cli, demo_repo: MemoryRepo) -> None:
    """`answer - --answer "..."` recorded an episode whose task was "-" (recall, ask and
    review-draft read '-' from stdin; answer took it as the task's words): junk in the
    ledger. The task is now read from stdin, as ask reads it; with --answer - too, it
    is refused as ask refuses it."""
    task = "Book travel for the Berlin conference"
    result = cli("answer", "-", "--answer", "Use the portal", input=task + "\n")
    assert result.exit_code == 0, result.output
    ep_id = result.stdout.split("episode ")[-1].split(";")[0]
    with open_index(demo_repo) as index:
        episode = index.get_episode(ep_id)
    assert episode is not None and episode.task == task
    before = State.of(demo_repo)
    both = cli("answer", "-", "--answer", "-", input="Use the portal\n")
    assert both.exit_code == 2, both.output
    assert "the task and --answer both read stdin" in both.stderr
    assert State.of(demo_repo) == before


def test_a_task_read_from_stdin_drops_a_byte_order_mark(cli: Cli, demo_repo: MemoryRepo) -> None:
    """`ask -`, `answer -` and `recall -` kept U+FEFF at the start of a task piped from a
    file saved with a byte order mark: recorded in the episode's task, an invisible
    character in memory, and recalled as a different task. It is dropped, as --answer -
    drops it (docs/formats.md, "Text")."""
    task = "Book travel for the Berlin conference"
    recalled = cli("recall", "--json", "-", input="\ufeff" + task + "\n")
    assert recalled.exit_code == 0, recalled.output
    assert json.loads(recalled.stdout)["task"] == task
    for args in (("ask", "-", "--answer", "Use the portal"), ("answer", "-", "--answer", "Use the portal")):
        result = cli(*args, "--json", input="\ufeff" + task + "\n")
        assert result.exit_code == 0, (args, result.output)
        data = json.loads(result.stdout)
        ep_id = data["episode"]["id"] if args[0] == "ask" else data["recorded_episode"]
        with open_index(demo_repo) as index:
            episode = index.get_episode(ep_id)
        assert episode is not None and episode.task == task, args


def test_a_receipt_read_from_stdin_or_a_file_drops_a_byte_order_mark(
    cli: Cli, demo_repo: MemoryRepo, tmp_path
) -> None:
    """`episode add --receipt -` (or a file) saved with a byte order mark was refused
    "--receipt: not JSON (Unexpected UTF-8 BOM (decode using utf-8-sig) ...)"."""
    task = "Post our discount code on Twitter"
    receipt = cli("recall", "--json", task).stdout
    text = "\ufeff" + json.dumps(json.loads(receipt)["receipt"])
    (tmp_path / "receipt.json").write_text(text, encoding="utf-8")
    for value, stdin in (("-", text), (str(tmp_path / "receipt.json"), None)):
        result = cli("episode", "add", "--task", task, "--action", "Kept", "--receipt", value, input=stdin)
        assert result.exit_code == 0, (value, result.output)


def test_a_task_read_from_stdin_is_answered_without_its_newline(cli: Cli, demo_repo: MemoryRepo) -> None:
    """`echo TASK | answer -` kept the newline echo ends it with: --json said "task":
    "...conference\n", the question quoted it across two lines, and the hint without a
    terminal printed 'scarwarden answer "Plan the offsite<newline>" --answer "..."', a
    command that records another task. The task is stripped, as recall and ask strip it."""
    task = "Book travel for the Berlin conference"
    result = cli("answer", "--json", "-", input=task + "\n")
    assert result.exit_code == 1, result.output  # ASK_HUMAN, no terminal, no --answer
    assert f'pass the human\'s answer: scarwarden answer "{task}" --answer "..."' in result.stderr
    recorded = cli("answer", "--json", "-", "--answer", "Use the portal", input=task + "\n")
    assert recorded.exit_code == 0, recorded.output
    data = json.loads(recorded.stdout)
    assert data["task"] == task and "\n" not in data["question"]


def test_ask_help_says_a_dash_task_reads_stdin(cli: Cli) -> None:
    """`ask -` reads the task from stdin (as recall does, whose help says so); ask's
    help did not say it."""
    text = " ".join(cli("ask", "--help").stdout.split())
    assert "TASK may be several words, or '-' to read it from stdin" in text
