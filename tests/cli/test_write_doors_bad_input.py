"""Bad input at the doors that write the ledger and the playbook (episode add, episode
import, redact, ask): a clear error, the documented exit code, and nothing written."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import Cli
from helpers import State

from scarwarden.repo import MemoryRepo


def test_a_receipt_nested_too_deeply_is_refused_as_input(demo_repo: MemoryRepo, cli: Cli) -> None:
    before = State.of(demo_repo)
    deep = '{"receipt": ' + "[" * 100_000 + "]" * 100_000 + "}"
    result = cli("episode", "add", "--task", "Deep", "--outcome", "o", "--receipt", deep)
    assert result.exit_code == 1, result.output
    assert "--receipt: not JSON (nested too deeply)" in result.stderr
    assert "internal error" not in result.stderr
    assert State.of(demo_repo) == before


DEEP = "[" * 100_000 + "]" * 100_000


def _conversation(arguments: str) -> list[dict[str, object]]:
    function = {"name": "cancel_reservation", "arguments": arguments}
    call = {"id": "c1", "type": "function", "function": function}
    return [
        {"role": "user", "content": "Refund the order"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Refunded"},
    ]


def test_an_import_nested_too_deeply_is_refused_naming_where(
    demo_repo: MemoryRepo, cli: Cli, tmp_path: Path
) -> None:
    before = State.of(demo_repo)
    lines = tmp_path / "runs.jsonl"
    lines.write_text(json.dumps({"messages": _conversation("{}")}) + "\n" + DEEP + "\n")
    arguments = tmp_path / "chat.json"
    arguments.write_text(json.dumps(_conversation(DEEP)))
    task = {"instruction": "Cancel it", "actions": [], "outputs": []}
    tau = tmp_path / "tau.json"
    run = {"task_id": 1, "trial": 0, "reward": 0.0, "info": {"task": task}}
    traj = _conversation(DEEP)
    traj[2]["name"] = "cancel_reservation"  # tau-bench names the tool that replied
    tau.write_text(json.dumps([{**run, "traj": traj}]))
    for path, fmt, message in (
        (lines, "openai-chat", "runs.jsonl: line 2 is not valid JSON; nothing was written"),
        (arguments, "openai-chat", "tool-call arguments are not valid JSON; nothing was written"),
        (tau, "tau-bench", "a tool call's arguments are not valid JSON (nested too deeply)"),
    ):
        result = cli("episode", "import", "--format", fmt, str(path))
        assert result.exit_code == 1, result.output
        assert message in result.stderr and "nested too deeply" in result.stderr
        assert "internal error" not in result.stderr
        assert State.of(demo_repo) == before


def test_json_lines_of_message_lists_import_one_conversation_a_line(
    demo_repo: MemoryRepo, cli: Cli, tmp_path: Path
) -> None:
    # docs/formats.md: "JSON lines, one conversation a line"; a conversation is a list
    # of messages, so each line starts with '[' as a JSON array does.
    first = [{"role": "user", "content": "Refund order 7"}, {"role": "assistant", "content": "Refunded"}]
    second = [{"role": "user", "content": "Cancel order 9"}, {"role": "assistant", "content": "Cancelled"}]
    runs = tmp_path / "runs.jsonl"
    runs.write_text(json.dumps(first) + "\n" + json.dumps(second) + "\n")
    result = cli("episode", "import", "--format", "openai-chat", str(runs), "--json")
    assert result.exit_code == 0, result.output
    added = json.loads(result.stdout)
    assert added["conversations"] == 2
    assert [ep["task"] for ep in added["episodes"]] == ["Refund order 7", "Cancel order 9"]
    # One line alone is still a JSON array: one conversation of its messages.
    one = tmp_path / "one.json"
    one.write_text(json.dumps([*first, {"role": "user", "content": "Thanks"}]) + "\n")
    again = cli("episode", "import", "--format", "openai-chat", str(one), "--dry-run", "--json")
    assert again.exit_code == 0 and json.loads(again.stdout)["conversations"] == 1


def test_an_at_that_is_no_real_date_says_so_not_that_it_lacks_a_zone(
    demo_repo: MemoryRepo, cli: Cli, tmp_path: Path
) -> None:
    before = State.of(demo_repo)
    quoted = tmp_path / "ep.yaml"
    quoted.write_text("task: t\noutcome: o\nat: '2026-02-30T10:00:00Z'\n")
    flags = ["--task", "t", "--outcome", "o", "--at"]
    for args, shown in (
        ([*flags, "2026-02-30T10:00:00Z"], "'2026-02-30T10:00:00Z'"),
        ([*flags, "2026-13-01T10:00:00+02:00"], "'2026-13-01T10:00:00+02:00'"),
        (["--file", str(quoted)], "'2026-02-30T10:00:00Z'"),
    ):
        result = cli("episode", "add", *args)
        assert result.exit_code == 1, result.output
        assert f"field 'at': {shown} is not a real date or time (" in result.stderr
        assert "time zone" not in result.stderr
        assert State.of(demo_repo) == before


def test_a_yaml_time_or_date_without_a_zone_is_shown_as_written(demo_repo: MemoryRepo, cli: Cli) -> None:
    for at, shown in (("2026-02-01T10:00:00", "2026-02-01T10:00:00"), ("2026-02-01", "2026-02-01")):
        result = cli("episode", "add", "--file", "-", input=f"task: t\noutcome: o\nat: {at}\n")
        assert result.exit_code == 1, result.output
        assert f"field 'at': {shown} is not a date-time with a time zone" in result.stderr
        assert "datetime." not in result.stderr


def test_a_redaction_reason_with_a_control_character_is_refused_naming_reason(
    demo_repo: MemoryRepo, cli: Cli
) -> None:
    ep_id = json.loads(cli("episode", "list", "--json").stdout)[0]["id"]
    before = State.of(demo_repo)
    result = cli("redact", ep_id, "--reason", "leaked\x01key")
    assert result.exit_code == 2, result.output
    assert (
        "--reason holds a control character (U+0001) at character 7; only tab and newline are allowed"
        in result.stderr
    )
    assert "field 'outcome'" not in result.stderr
    assert State.of(demo_repo) == before


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["episode", "add", "--file", "-"], "Invalid value for '--file': stdin is closed"),
        (["episode", "import", "--format", "openai-chat", "-"], "Invalid value for 'FILE': stdin is closed"),
        (["episode", "add", "--task", "t", "--outcome", "o", "--receipt", "-"], "receipt: stdin is closed"),
        (["ask", "Book a table for the team dinner", "--answer", "-"], "--answer: stdin is closed"),
    ],
)
def test_a_closed_stdin_is_a_usage_error(demo_repo: MemoryRepo, args: list[str], said: str) -> None:
    before = State.of(demo_repo)
    proc = subprocess.run(
        [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), *args],
        capture_output=True,
        text=True,
        preexec_fn=lambda: os.close(0),  # `scarwarden ... <&-`: no stdin at all
    )
    assert proc.returncode == 2, proc.stderr
    assert said in proc.stderr and "internal error" not in proc.stderr
    assert State.of(demo_repo) == before


def test_a_bad_key_is_quoted_once(cli: Cli) -> None:
    for text, said in (
        ('{"task": "t", "outcome": "o", "a\\u0001b": 1}', "field 'a\\x01b': the key holds a control"),
        ("task: t\noutcome: o\n1: x\n", "field '1': keys must be strings"),
    ):
        result = cli("episode", "add", "--file", "-", input=text)
        assert result.exit_code == 1, result.output
        assert said in result.stderr and "''" not in result.stderr


def test_a_file_where_a_folder_should_be_is_named_itself(demo_repo: MemoryRepo, cli: Cli) -> None:
    (demo_repo.episodes_dir / "2020").write_text("not a folder\n")
    before = State.of(demo_repo)
    result = cli("episode", "add", "--task", "t", "--outcome", "o", "--at", "2020-05-01T10:00:00Z")
    assert result.exit_code == 2, result.output
    # mkdir names the folder it was making (memory/episodes/2020/05), which is not there.
    assert "memory/episodes/2020: is not a folder: a file is where a folder should be" in result.stderr
    assert State.of(demo_repo) == before


@pytest.mark.parametrize("given", ["", "   ", "1:", "1:  "])
def test_an_empty_import_correction_is_refused_not_dropped(
    demo_repo: MemoryRepo, cli: Cli, tmp_path: Path, given: str
) -> None:
    # As episode add's and ask's: an unset shell variable must not import the run as
    # if no human had corrected it.
    runs = tmp_path / "chat.json"
    runs.write_text(json.dumps(_conversation("{}")))
    before = State.of(demo_repo)
    result = cli("episode", "import", "--format", "openai-chat", str(runs), "--correction", given)
    assert result.exit_code == 2, result.output
    assert f"--correction {given!r} is empty" in result.stderr
    assert State.of(demo_repo) == before


def test_a_bare_repository_or_a_git_folder_is_named_as_such(make_cli: type[Cli], git_repo: Path) -> None:
    bare = git_repo.parent / "bare.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    for where, said in ((bare, "is a bare git repository"), (git_repo / ".git", "is inside a git folder")):
        result = make_cli(where)("episode", "add", "--task", "t", "--outcome", "o")
        assert result.exit_code == 2, result.output
        assert f"{where} {said}" in result.stderr
        assert "git init" not in result.stderr  # it is a repository: init is the wrong advice


def test_redact_pii_reaches_list_items_and_extension_values(demo_repo: MemoryRepo, cli: Cli) -> None:
    (demo_repo.root / "scarwarden.yaml").write_text("privacy:\n  email: refuse\n")
    subprocess.run(["git", "add", "scarwarden.yaml"], cwd=demo_repo.root, check=True)
    subprocess.run(["git", "commit", "-qm", "privacy"], cwd=demo_repo.root, check=True)
    given = {
        "task": "Refund",
        "outcome": "Mailed jane@acme.io",
        "x-meta": {"to": "jane@acme.io", "cc": ["bob@acme.io", 3]},
    }
    result = cli("episode", "add", "--file", "-", "--redact-pii", "--json", input=json.dumps(given))
    assert result.exit_code == 0, result.output
    stored = json.loads(result.stdout)[0]
    assert stored["outcome"] == "Mailed [email]"
    assert stored["x-meta"] == {"to": "[email]", "cc": ["[email]", 3]}


def test_a_blank_rule_title_is_no_title_as_an_empty_one_is(cli: Cli) -> None:
    ep_id = json.loads(cli("episode", "list", "--json").stdout)[0]["id"]
    titles = []
    # Two texts (one rule may not say what another says), one first sentence: one title.
    for title, text in (("", "Keep the logo whole."), ("   ", "Keep the logo whole. Always.")):
        rule = ["--text", text, "--cites", ep_id, "--title", title]
        result = cli("rule", "add", *rule, "--json")
        assert result.exit_code == 0, result.output
        titles.append(json.loads(result.stdout)["title"])
    assert titles == ["Keep the logo whole", "Keep the logo whole"]


def test_a_receipt_file_that_is_not_there_is_named(demo_repo: MemoryRepo, cli: Cli, tmp_path: Path) -> None:
    before = State.of(demo_repo)
    for given, said in ((tmp_path / "receipt.json", "no such file"), (tmp_path, "not a regular file")):
        result = cli("episode", "add", "--task", "t", "--outcome", "o", "--receipt", str(given))
        assert result.exit_code == 2, result.output
        assert f"--receipt {given}: {said}" in result.stderr
        assert "not JSON" not in result.stderr
        assert State.of(demo_repo) == before


def test_an_attachment_that_is_a_fifo_is_refused_not_waited_on(demo_repo: MemoryRepo, cli: Cli) -> None:
    # Opening a FIFO for reading waits for a writer: 'episode add --attach' and
    # 'audit-image' on one hung for ever.
    fifo = demo_repo.root / "card.png"
    os.mkfifo(fifo)
    before = State.of(demo_repo)
    for argv in (
        ("episode", "add", "--task", "LinkedIn card", "--outcome", "o", "--attach", str(fifo)),
        ("audit-image", str(fifo), "--task", "Launch banner"),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "scarwarden", "-C", str(demo_repo.root), *argv],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert result.returncode == 1, result.stderr
        assert f"{fifo} is not a regular file (a FIFO, socket or device), not an image file" in result.stderr
        assert "Traceback" not in result.stderr
    assert State.of(demo_repo) == before
