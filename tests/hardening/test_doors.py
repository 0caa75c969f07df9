"""Issue 16's findings, one test each: the input policy, strict YAML and JSON, times in
range, file modes under the umask, ``demo --keep`` twice, and the CLI's one boundary
(no traceback unless ``--debug``)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import State

from scarwarden.agents.mcp.tools import MemoryTools
from scarwarden.cli.group import main_group
from scarwarden.errors import UsageError, ValidationError
from scarwarden.files.input_policy import problems_in, text_problem
from scarwarden.repo import MemoryRepo
from scarwarden.times import parse_when


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("a\x00b", "NUL character (U+0000) at character 2"),
        ("a\rb", "carriage return (U+000D)"),
        ("\x1b[31mred", "escape character (U+001B) at character 1"),
        ("del\x7f", "control character (U+007F)"),
        ("c1\x85", "control character (U+0085)"),
        ("a\ud800b", "lone surrogate (U+D800)"),
    ],
)
def test_the_policy_refuses_control_characters_and_surrogates(text: str, reason: str) -> None:
    found = text_problem(text)
    assert found is not None and reason in found


@pytest.mark.parametrize("text", ["plain", "tab\there", "two\nlines", "émoji 🎉", "\u2028 line sep", ""])
def test_the_policy_accepts_ordinary_text(text: str) -> None:
    assert text_problem(text) is None


def test_the_policy_walks_nested_values_and_keys() -> None:
    found = list(problems_in({"ok": ["fine", "bad\x00"], "k\x1b": 1}))
    assert found[0][0] == "'ok'[1]" and "NUL" in found[0][1]
    assert found[1][0] == "key 'k\\x1b'" and "escape" in found[1][1]


def _add(cli, *args: str, input: str | bytes | None = None):  # type: ignore[no-untyped-def]
    return cli("episode", "add", *args, input=input)


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ('{"task": "a\\ud800b", "outcome": "o"}', "field 'task': holds a lone surrogate (U+D800)"),
        ('[{"task": "a\\u0000b", "outcome": "o"}, {"task": "x", "outcome": "o"}]', "holds a NUL"),
        ("task: first\ntask: second\noutcome: o\n", ":2: duplicate key 'task' (first on line 1)"),
        ("<<: {task: t}\noutcome: o\n", ":1: merge keys ('<<') are not allowed"),
        ("task: !!str t\noutcome: o\n", ":1: the tag 'tag:yaml.org,2002:str' is refused"),
        ("task: t\noutcome: o\nat: 2026-13-45T00:00:00Z\n", ":3: '2026-13-45T00:00:00Z' is not a real date"),
        ('{"task": "a", "task": "b", "outcome": "o"}', "duplicate key 'task'"),
        ('{"task": "a", "outcome": "o", "x-n": NaN}', "NaN is not a JSON value"),
        ('{"task": "a", "outcome": "o", "x-m": {"k": "\\u0007"}}', "field 'x-m': 'k': holds a control"),
    ],
)
def test_refused_input_names_the_reason_and_writes_nothing(
    demo_repo: MemoryRepo, cli, stdin: str, message: str
) -> None:  # type: ignore[no-untyped-def]
    before = State.of(demo_repo)
    result = _add(cli, "--file", "-", input=stdin)
    assert result.exit_code == 1, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert State.of(demo_repo) == before


@pytest.mark.parametrize("at", ["9999-12-31T23:00:00-05:00", "0001-01-01T00:00:00+01:00"])
def test_times_out_of_range_are_refused_not_overflowed(demo_repo: MemoryRepo, cli, at: str) -> None:  # type: ignore[no-untyped-def]
    before = State.of(demo_repo)
    result = _add(cli, "--task", "t", "--outcome", "o", "--at", at)
    assert result.exit_code == 1
    assert f"field 'at': '{at}' is out of range" in result.stderr
    assert "0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z" in result.stderr
    assert State.of(demo_repo) == before
    with pytest.raises(UsageError, match="out of range"):
        parse_when(at)
    with pytest.raises(UsageError, match="reaches back too far"):
        parse_when("99999999999d")


def test_the_edges_of_the_range_are_stored_with_four_digit_years(demo_repo: MemoryRepo, cli) -> None:  # type: ignore[no-untyped-def]
    result = _add(cli, "--task", "t", "--outcome", "o", "--at", "0001-01-01T00:30:00+00:00", "--json")
    assert result.exit_code == 0, result.stderr
    ep_id = result.stdout.split('"id": "')[1].split('"')[0]
    stored = (demo_repo.root / f"memory/episodes/0001/01/{ep_id}.yaml").read_text()
    assert "at: 0001-01-01T00:30:00Z\n" in stored
    assert cli("check", "--all").exit_code == 0


def test_a_bom_and_crlf_are_read_not_refused(demo_repo: MemoryRepo, cli) -> None:  # type: ignore[no-untyped-def]
    result = _add(cli, "--file", "-", "--json", input=b"\xef\xbb\xbftask: t\r\noutcome: |\r\n  a\r\n  b\r\n")
    assert result.exit_code == 0, result.stderr
    assert '"outcome": "a\\nb\\n"' in result.stdout
    jsonl = b'\xef\xbb\xbf{"task": "a", "outcome": "o"}\r\n{"task": "b", "outcome": "o"}\r\n'
    assert _add(cli, "--file", "-", input=jsonl).exit_code == 0


def test_rule_add_with_empty_text_says_the_text_is_empty(demo_repo: MemoryRepo, cli) -> None:  # type: ignore[no-untyped-def]
    before = State.of(demo_repo)
    result = cli("rule", "add", "--text", "", "--cites", "ep-hkgnqdz88f")
    assert result.exit_code == 1
    assert "a rule needs text: the text given is empty" in result.stderr
    assert "title" not in result.stderr
    nul = cli("rule", "add", "--text", "Lead\x00 with pain", "--cites", "ep-hkgnqdz88f")
    assert nul.exit_code == 1 and "the rule's text holds a NUL character" in nul.stderr
    assert State.of(demo_repo) == before


def test_mcp_record_episode_refuses_id_and_at_and_any_unknown_argument(demo_repo: MemoryRepo) -> None:
    tools = MemoryTools(demo_repo)
    before = State.of(demo_repo)
    for extra in ({"id": "ep-chosen0001"}, {"at": "2020-01-01T00:00:00Z"}, {"colour": "red"}):
        with pytest.raises(UsageError) as caught:
            tools.record_episode({"task": "t", "outcome": "o", **extra})
        assert f"record_episode does not take {next(iter(extra))!r}" in caught.value.render()
        assert "the ledger mints the episode's id and time" in caught.value.render()
    with pytest.raises(ValidationError, match="holds a NUL"):
        tools.record_episode({"task": "t\x00", "outcome": "o"})
    assert State.of(demo_repo) == before


def test_files_are_written_with_the_umask_mode(memory_repo: MemoryRepo) -> None:
    from conftest import Cli

    run = Cli(memory_repo.root)
    old = os.umask(0o022)
    try:
        assert run("episode", "add", "--task", "t", "--outcome", "o").exit_code == 0
        os.umask(0o027)
        assert run("episode", "add", "--task", "u", "--outcome", "o").exit_code == 0
        assert run("export", "agents-md").exit_code == 0
    finally:
        os.umask(old)
    modes = {
        p.name: stat.S_IMODE(p.stat().st_mode)
        for p in (memory_repo.root / "memory").rglob("*")
        if p.is_file()
    }
    assert modes["playbook.md"] == 0o644  # written by init under 022
    episode_modes = sorted(mode for name, mode in modes.items() if name.endswith(".yaml"))
    assert episode_modes == [0o640, 0o644]
    assert stat.S_IMODE((memory_repo.root / "AGENTS.md").stat().st_mode) == 0o640


def test_demo_keep_twice_is_refused_before_the_tour(tmp_path: Path) -> None:
    keep = tmp_path / "k"
    (keep / "demo-memory").mkdir(parents=True)
    (keep / "demo-memory" / "mine.txt").write_text("keep me")
    result = CliRunner().invoke(main_group, ["demo", "--keep", str(keep)])
    assert result.exit_code == 2
    assert result.stdout == ""  # refused before anything was shown
    assert f"{keep / 'demo-memory'} already exists and is not empty" in result.stderr
    assert (keep / "demo-memory" / "mine.txt").read_text() == "keep me"
    assert sorted(p.name for p in (keep / "demo-memory").iterdir()) == ["mine.txt"]


def test_an_unexpected_error_is_one_line_unless_debug(demo_repo: MemoryRepo) -> None:
    # Too few file descriptors (EMFILE): no input of the user's and no file to fix, an
    # OSError no command expects. (A socket or FIFO playbook, the trigger before, is a
    # file the user can fix now: test_special_files.py.)
    import resource

    def few_files() -> None:  # enough to start Python, too few to open the index and run git
        resource.setrlimit(resource.RLIMIT_NOFILE, (8, 8))

    argv = [sys.executable, "-m", "scarwarden", "--repo", str(demo_repo.root), "rule", "list"]
    env = {k: v for k, v in os.environ.items() if k != "SCARWARDEN_DEBUG"}

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*argv[:3], *args, *argv[3:]],
            capture_output=True,
            text=True,
            env={**env, **extra},
            preexec_fn=few_files,
        )

    quiet = run()
    assert quiet.returncode == 1
    assert "Traceback" not in quiet.stderr
    assert quiet.stderr.startswith("error: internal error: OSError: [Errno 24] Too many open files")
    assert "--debug" in quiet.stderr
    loud = run(SCARWARDEN_DEBUG="1")
    assert loud.returncode != 0 and "Traceback (most recent call last)" in loud.stderr
    flag = run("--debug")
    assert "Traceback (most recent call last)" in flag.stderr


def test_debug_shows_the_traceback_of_an_expected_error_too(demo_repo: MemoryRepo) -> None:
    result = CliRunner().invoke(
        main_group, ["--repo", str(demo_repo.root), "--debug", "episode", "add", "--task", "t", "--at", "x"]
    )
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "field 'at': 'x' is not a date-time" in result.stderr


def test_the_web_form_reads_textarea_crlf_as_newlines_and_refuses_non_utf8(memory_repo: MemoryRepo) -> None:
    pytest.importorskip("flask")
    from scarwarden.audit.web.app import create_app

    client = create_app(memory_repo.root, csrf_token="t", allowed_hosts={"localhost"}).test_client()
    headers = {"Origin": "http://localhost", "Content-Type": "application/x-www-form-urlencoded"}
    before = State.of(memory_repo)
    bad = client.post("/answer", data="csrf_token=t&task=Book%FF+travel&answer=x", headers=headers)
    assert bad.status_code == 400 and "The form is not valid UTF-8" in bad.get_data(as_text=True)
    assert State.of(memory_repo) == before
    ok = client.post("/answer", data="csrf_token=t&task=Book+travel&answer=one%0D%0Atwo", headers=headers)
    assert ok.status_code == 303
    (stored,) = (memory_repo.root / "memory" / "episodes").rglob("*.yaml")
    assert "correction: |-\n  one\n  two\n" in stored.read_text()


def test_the_mcp_server_refuses_arguments_a_tool_does_not_declare(demo_repo: MemoryRepo) -> None:
    """Through the SDK's own client over stdio: the SDK drops unknown arguments unless
    the server makes each tool strict (issue 16); the schema says so too."""
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "scarwarden", "--repo", str(demo_repo.root), "mcp"],
        env=dict(os.environ),
        cwd=str(demo_repo.root),
    )

    async def main() -> tuple[Any, Any, Any]:
        async with Client(params, read_timeout_seconds=120) as client:
            tools = await client.list_tools()
            schema = next(t for t in tools.tools if t.name == "record_episode").input_schema
            arguments = {
                "task": "Post the launch",
                "outcome": "ok",
                "id": "ep-chosen0001",
                "at": "2020-01-01T00:00:00Z",
            }
            refused = await client.call_tool("record_episode", arguments)
            unknown = await client.call_tool("recall", {"task": "Post the launch", "colour": "red"})
            return schema, refused, unknown

    before = State.of(demo_repo)
    schema, refused, unknown = anyio.run(main)
    assert schema["additionalProperties"] is False
    for result, name in ((refused, "id"), (unknown, "colour")):
        assert result.is_error
        text = "\n".join(block.text for block in result.content)
        assert f"'{name}' is not an argument of" in text, text
    assert State.of(demo_repo) == before


@pytest.mark.parametrize("field", ["title", "text", "reason"])
def test_the_distillers_model_output_meets_the_same_policy(field: str) -> None:
    """A model's text is input like any other: a NUL or an escape sequence in an
    operation is a shape error, which the distiller sends back for one repair."""
    from scarwarden.distill.ops import parse_operations

    op = {"op": "retire" if field == "reason" else "add", "rule_id": "PB-01", "text": "Lead with it."}
    op.update({"episode_ids": ["ep-hkgnqdz88f"], "reason": "Superseded", field: "bad\x00 or \x1b[2J"})
    with pytest.raises(ValueError, match=rf"operations\[0\]\.{field} holds a NUL character"):
        parse_operations({"operations": [op]})
