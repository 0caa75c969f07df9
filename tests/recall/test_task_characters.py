"""A task recall takes is one the recall log can export and another clone can import.

Before, recall took a task holding ESC, BEL or NUL and logged it; ``log --export`` wrote
it and another clone's ``log --import``, which refuses control characters, refused the
whole file. Now recall refuses such a task at every door (exit 2, nothing logged), and
the import takes exactly the tasks recall takes (:func:`check_task` is the one check).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import Cli, git
from helpers import State
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scarwarden.api import Memory
from scarwarden.errors import ExitCode, UsageError, ValidationError
from scarwarden.index import open_index
from scarwarden.recall.engine import check_task
from scarwarden.recall.log import read_log
from scarwarden.recall.log_share import import_lines
from scarwarden.repo import MemoryRepo

ESC = "the task holds an escape character (U+001B) at character 6; only tab and newline are allowed"


def _logged(repo: MemoryRepo) -> list[str]:
    with open_index(repo) as index:
        return [entry.task for entry in read_log(index, limit=None)]


@pytest.mark.parametrize(
    ("task", "message"),
    [
        ("Draft\x1b]0;pwned\x07 a post", ESC),
        ("Draft a post\x07", "holds a control character (U+0007) at character 13"),
        ("Draft\x00 a post", "holds a NUL character (U+0000) at character 6"),
        ("Draft a post\r\nfor Monday", "holds a carriage return (U+000D) at character 13"),
        ("Draft \x9b2J a post", "holds a control character (U+009B) at character 7"),
    ],
)
def test_recall_refuses_a_task_with_control_characters_through_stdin(
    cli: Cli, demo_repo: MemoryRepo, task: str, message: str
) -> None:
    before = State.of(demo_repo), _logged(demo_repo)
    result = cli("recall", "-", input=task.encode())
    assert result.exit_code == ExitCode.USAGE, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("error: the task holds ") and message in first, result.stderr
    assert "Traceback" not in result.output
    assert (State.of(demo_repo), _logged(demo_repo)) == before


def test_the_installed_command_refuses_an_escape_in_its_argument(demo_repo: MemoryRepo) -> None:
    result = subprocess.run(
        ["scarwarden", "-C", str(demo_repo.root), "recall", "Draft\x1b[2J a post"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == ExitCode.USAGE
    assert result.stderr.splitlines()[0] == f"error: {ESC}"
    assert "Traceback" not in result.stderr and _logged(demo_repo) == []


def test_the_python_api_and_the_mcp_tool_refuse_it_too(demo_repo: MemoryRepo) -> None:
    pytest.importorskip("mcp")
    from mcp import Client

    from scarwarden.agents.mcp.server import build_server

    with pytest.raises(UsageError, match=r"holds an escape character \(U\+001B\) at character 6"):
        Memory(demo_repo).recall("Draft\x1b a post")

    async def main() -> Any:
        async with Client(build_server(demo_repo)) as client:
            return await client.call_tool("recall", {"task": "Draft\x1b a post"})

    result = anyio.run(main)
    assert result.is_error
    assert "holds an escape character (U+001B) at character 6" in result.content[0].text
    assert _logged(demo_repo) == []


def test_what_recall_logs_another_clone_imports(
    cli: Cli, demo_repo: MemoryRepo, make_cli: type[Cli], tmp_path: Path
) -> None:
    task = "Draft a LinkedIn post\tannouncing our beta\nfor Monday"  # tab and newline are text
    assert cli("recall", "-", input=f"  {task}\n".encode()).exit_code == 0
    exported = tmp_path / "recalls.jsonl"
    exported.write_text(cli("log", "--export").stdout)
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q")
    assert make_cli(other)("init").exit_code == 0
    result = make_cli(other)("log", "--import", str(exported), "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"added": 1, "skipped": 0}
    assert json.loads(make_cli(other)("log", "--json").stdout)[0]["task"] == task


def test_import_refuses_a_task_recall_would_refuse(cli: Cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    assert cli("recall", "Book travel").exit_code == 0
    good = json.loads(cli("log", "--export").stdout)
    del good["detail"]["receipt"]  # a line without a receipt: only the task is in question
    lines = [
        {**good, "at": "2026-11-20T10:00:00Z", "task": "x" * 20_001},
        {**good, "at": "2026-11-20T10:00:01Z", "task": " Book travel"},
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = _logged(demo_repo)
    result = cli("log", "--import", str(bad))
    assert result.exit_code == ExitCode.CHECK_FAILED, result.output
    assert f"{bad}: 2 bad line(s); nothing was imported" in result.stderr
    assert f"{bad}:1: field 'task': the task is 20,001 characters; the limit is 20,000" in result.stderr
    assert f"{bad}:2: field 'task': the task has blanks around it; recall logs it stripped" in result.stderr
    assert _logged(demo_repo) == before


#: Text near the edges: every C0 and C1 control, DEL, tab, newline, spaces, letters.
_TEXT = st.text(alphabet=st.sampled_from([*map(chr, range(0x00, 0xA1)), "é", "漢", "\u2028"]), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=_TEXT)
def test_import_accepts_exactly_the_tasks_recall_accepts(demo_repo: MemoryRepo, words: str) -> None:
    task = f"Book {words} travel"
    try:
        accepted = check_task(task) == task
    except UsageError:
        accepted = False
    line = {
        "at": "2026-11-20T10:00:00Z",
        "task": task,
        "verdict": "ASK_HUMAN",
        "rule_ids": [],
        "scores": [],
        "playbook_commit": None,
        "detail": {},
    }
    with open_index(demo_repo) as index:
        try:
            import_lines(index, [json.dumps(line)])
            imported = True
        except ValidationError:
            imported = False
    assert imported == accepted, repr(task)
