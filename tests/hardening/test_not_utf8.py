"""Text that is not valid UTF-8 (a byte such as 0xFF, or a JSON "\\ud800" escape that
parses to a lone surrogate) is refused at the door it came in by, with one line naming
it, and nothing is written: the command line (exit 2), a task, answer or draft read
from stdin or a file (exit 2), and the files an import reads (exit 1, as their other
refusals). Before, each of these crashed with a UnicodeEncodeError or
UnicodeDecodeError wherever the text was first written."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

import anyio
import pytest
from conftest import git
from helpers import State

from scarwarden.api import Memory
from scarwarden.errors import ExitCode, UsageError
from scarwarden.files.input_policy import text_problem
from scarwarden.repo import MemoryRepo

#: A byte that is not UTF-8, as Python hands it over in argv (surrogateescape).
BYTE_FF = "\udcff"
NOT_UTF8 = "is not valid UTF-8 (the byte 0xFF at character 1); nothing was done"


@pytest.mark.parametrize(
    "args",
    [
        ("rule", "show", BYTE_FF),
        ("recall", BYTE_FF),
        ("recall", "--json", BYTE_FF),
        ("ask", BYTE_FF),
        ("answer", BYTE_FF),
        ("episode", "show", BYTE_FF),
        ("episode", "list", "--tag", BYTE_FF),
        ("episode", "list", "--agent", BYTE_FF),
        ("episode", "add", "--task", BYTE_FF, "--outcome", "o"),
        ("feedback", BYTE_FF, "--outcome", "x"),
        ("audit-image", "ok.png", "--task", BYTE_FF),
        ("distill", "--branch", BYTE_FF),
    ],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error(
    cli, demo_repo: MemoryRepo, args: tuple[str, ...]
) -> None:
    before = State.of(demo_repo)
    branches = git(demo_repo.root, "branch", "--list").stdout
    result = cli(*args)
    assert result.exit_code == ExitCode.USAGE, result.output
    number = 2 + args.index(BYTE_FF) + 1  # after --repo PATH
    assert result.stderr.splitlines()[0] == f"error: argument {number} ('\\xff') {NOT_UTF8}"
    assert "internal error" not in result.stderr and result.stdout == ""
    assert State.of(demo_repo) == before
    assert git(demo_repo.root, "branch", "--list").stdout == branches


def test_the_installed_command_refuses_the_raw_byte(demo_repo: MemoryRepo) -> None:
    result = subprocess.run(
        [b"scarwarden", b"-C", os.fsencode(demo_repo.root), b"recall", b"Draft a post \xff"],
        capture_output=True,
    )
    assert result.returncode == ExitCode.USAGE
    assert b"is not valid UTF-8 (the byte 0xFF at character 14" in result.stderr
    assert b"Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (("recall", "-"), b"\xff", "the task read from stdin is not valid UTF-8 (the byte 0xFF at byte 1)"),
        (
            ("recall", "--json", "-"),
            b"ok \xfe",
            "the task read from stdin is not valid UTF-8 (the byte 0xFE at byte 4)",
        ),
        (("ask", "-"), b"\xff", "the task read from stdin is not valid UTF-8"),
        (("ask", "Book the trip", "--answer", "-"), b"a\xff", "--answer read from stdin is not valid UTF-8"),
        (
            ("review-draft", "--task", "x", "-"),
            b"hi\xff",
            "the draft read from stdin is not valid UTF-8 (the byte 0xFF at byte 3)",
        ),
        (
            ("episode", "add", "--task", "t", "--outcome", "o", "--receipt", "-"),
            b'{"receipt": "\xff"}',
            "the receipt read from stdin is not valid UTF-8 (the byte 0xFF at byte 14)",
        ),
    ],
)
def test_stdin_that_is_not_utf8_is_a_usage_error(
    cli, demo_repo: MemoryRepo, args: tuple[str, ...], stdin: bytes, message: str
) -> None:
    before = State.of(demo_repo)
    result = cli(*args, input=stdin)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert result.stderr.startswith(f"error: {message}"), result.stderr
    assert State.of(demo_repo) == before


def test_a_draft_file_that_is_not_utf8_is_named(cli, demo_repo: MemoryRepo, tmp_path) -> None:
    draft = tmp_path / "d.txt"
    draft.write_bytes(b"hi\xff")
    result = cli("review-draft", "--task", "x", str(draft))
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"error: the draft {draft} is not valid UTF-8 (the byte 0xFF at byte 3)" in result.stderr


def test_a_receipt_file_that_is_not_utf8_is_named(cli, demo_repo: MemoryRepo, tmp_path) -> None:
    receipt = tmp_path / "r.json"
    receipt.write_bytes(b'{"receipt": "\xff"}')
    before = State.of(demo_repo)
    result = cli("episode", "add", "--task", "t", "--outcome", "o", "--receipt", str(receipt))
    assert result.exit_code == ExitCode.USAGE, result.output
    assert f"error: the receipt {receipt} is not valid UTF-8 (the byte 0xFF at byte 14)" in result.stderr
    assert State.of(demo_repo) == before


def test_distill_refuses_a_working_playbook_that_is_not_utf8(cli, demo_repo: MemoryRepo) -> None:
    with demo_repo.playbook_path.open("ab") as out:
        out.write(b"\xff\n")
    before = State.of(demo_repo)
    result = cli("distill", "--no-commit")
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert "error: memory/playbook.md is not valid UTF-8 (the byte 0xFF at byte" in result.stderr
    assert "internal error" not in result.stderr
    assert State.of(demo_repo) == before


def test_log_import_refuses_a_lone_surrogate_and_a_byte(cli, demo_repo: MemoryRepo, tmp_path) -> None:
    assert cli("recall", "Draft a LinkedIn post").exit_code == 0
    line = json.loads(cli("log", "--export").stdout)
    assert cli("log", "--import", "-", input=json.dumps(line) + "\n").exit_code == 0  # the baseline
    count = len(json.loads(cli("log", "--json").stdout))
    surrogate = json.dumps({**line, "task": "Draft \ud800"})  # json.dumps writes the escape
    result = cli("log", "--import", "-", input=surrogate + "\n")
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert "<stdin>:1: 'task': holds a lone surrogate (U+D800) at character 7" in result.stderr
    byte = json.dumps(line).encode().replace(b"Draft", b"Dr\xffaft")
    result = cli("log", "--import", "-", input=byte + b"\n")
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert "<stdin>:1: not valid UTF-8 (byte " in result.stderr  # was read as U+FFFD and stored
    assert len(json.loads(cli("log", "--json").stdout)) == count


def test_episode_import_refuses_a_lone_surrogate(cli, demo_repo: MemoryRepo, tmp_path) -> None:
    chat = tmp_path / "chat.json"
    chat.write_text('[{"role": "user", "content": "\\ud800"}]')
    before = State.of(demo_repo)
    result = cli("episode", "import", "--format", "openai-chat", str(chat))
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert (
        "error: chat.json: item 1: 'content' holds a lone surrogate (U+D800) at character 1" in result.stderr
    )
    lines = (
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "a\\udc00"}]}\n'
    )
    result = cli("episode", "import", "--format", "openai-chat", "-", input=lines)
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert "<stdin>: line 1: 'messages'[1].'content' holds a lone surrogate (U+DC00)" in result.stderr
    assert State.of(demo_repo) == before


def test_the_policy_calls_an_escaped_byte_not_utf8() -> None:
    assert text_problem("a\udcffb") == "is not valid UTF-8 (the byte 0xFF at character 2, read as U+DCFF)"
    found = text_problem("a\ud800")
    assert found is not None and found.startswith("holds a lone surrogate (U+D800) at character 2")


def test_the_python_api_refuses_a_lone_surrogate_in_a_task(demo_repo: MemoryRepo) -> None:
    with pytest.raises(UsageError, match=r"the task holds a lone surrogate \(U\+D800\) at character 6"):
        Memory(demo_repo).recall("Draft\ud800")


def test_mcp_tools_answer_a_lone_surrogate_with_an_error(demo_repo: MemoryRepo) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from scarwarden.agents.mcp.server import build_server

    calls: list[tuple[str, dict[str, Any], str]] = [
        ("recall", {"task": "\ud800"}, "'task'"),
        ("get_rule", {"rule_id": "PB-\ud800"}, "'rule_id'"),
        ("get_episode", {"episode_id": "\ud800"}, "'episode_id'"),
        ("record_episode", {"task": "t", "outcome": "o", "tags": ["a\udcff"]}, "'tags'[0]"),
        ("verify_citations", {"task": "x", "answer": "\ud800"}, "'answer'"),
    ]

    async def main() -> list[Any]:
        # In process: the SDK's stdio transport cannot parse the escape at all (below).
        async with Client(build_server(demo_repo)) as client:
            return [await client.call_tool(name, args) for name, args, _ in calls]

    before = State.of(demo_repo)
    results = anyio.run(main)
    for (name, _, arg), result in zip(calls, results, strict=True):
        assert result.is_error, (name, result)
        text = "\n".join(block.text for block in result.content)
        assert text.startswith(f"{name}: argument {arg} "), text
        assert "lone surrogate" in text or "not valid UTF-8" in text
    assert State.of(demo_repo) == before
