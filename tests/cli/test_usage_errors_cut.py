"""click's own usage errors printed the user's value whole: ``scarwarden export
<60,000 characters>`` printed "Invalid value for '[FORMAT]...': '<60,000 characters>' is
not one of ..." (a bad choice, a bad number, an unknown option with a huge name, huge
extra arguments, a huge path that does not exist). Every usage error now quotes a long
value by its start and its length, as Scarwarden's own errors do, still naming the
option and what is allowed; exit 2, every line at most 1,000 characters."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import Cli

from scarwarden.repo import MemoryRepo

BIG = "x" * 60_000


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["export", BIG], ["'[FORMAT]...'", "is not one of 'agents-md'", "(60,000 characters)"]),
        (["log", "--verdict", BIG], ["'--verdict'", "is not one of", "(60,000 characters)"]),
        (["episode", "add", "--task", "t", "--source", BIG], ["'--source'", "is not one of", "60,000"]),
        (["recall", "--limit", BIG, "task"], ["'--limit'", "is not a valid integer", "60,000"]),
        (["recall", f"--limit={BIG}", "task"], ["'--limit'", "is not a valid integer", "60,000"]),
        (["recall", "--" + BIG, "task"], ["No such option", "'--xxxxxxxxxxxxxxxxxx...' (60,002 characters)"]),
        (["check", BIG, "y" * 70_000], ["extra arguments", "60,000 characters", "70,000 characters"]),
        (["audit-image", "/nowhere/" + BIG], ["'FILE'", "does not exist", "(60,009 characters)"]),
        (["diff", "--textconv", BIG], ["'--textconv'", "does not exist", "60,000"]),
        ([BIG], ["No such command", "60,000"]),
        (["--" + BIG], ["No such option", "60,002"]),
    ],
)
def test_a_usage_error_quotes_a_huge_value_by_its_start(
    cli: Cli, demo_repo: MemoryRepo, args: list[str], says: list[str]
) -> None:
    result = cli(*args)
    assert result.exit_code == 2, result.output[-300:]
    assert "Traceback" not in result.output
    assert len(result.stderr) < 2_000, result.stderr[:300]
    assert all(len(line) <= 1_000 for line in result.stderr.splitlines())
    for words in says:
        assert words in result.stderr, result.stderr


def test_many_short_extra_arguments_are_cut_too(cli: Cli, demo_repo: MemoryRepo) -> None:
    result = cli("check", *["word"] * 20_000)
    assert result.exit_code == 2
    assert "unexpected extra arguments" in result.stderr
    assert all(len(line) <= 1_000 for line in result.stderr.splitlines())
    assert "characters, cut)" in result.stderr


def test_the_installed_command_cuts_a_bad_choice(demo_repo: MemoryRepo) -> None:
    # Through a real process and the recall door, which hands a bad value to click.
    done = subprocess.run(
        [sys.executable, "-m", "scarwarden", "recall", "--limit", BIG, "task"],
        cwd=demo_repo.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    quoted = "'xxxxxxxxxxxxxxxxxxxx...' (60,000 characters)"
    assert f"Invalid value for '--limit' / '-n': {quoted} is not a valid integer" in done.stderr
    assert len(done.stderr) < 1_000


@pytest.mark.parametrize(
    ("args", "shown"),
    [
        (["check", "a\x07\rb", "c"], "('a\\x07\\rb' c)"),
        (["check", "a\nError: all is well", "c"], "('a\\nError: all is well' c)"),
        (["check", "\x1b]0;pwned\x07"], "('\\x1b]0;pwned\\x07')"),
    ],
)
def test_extra_arguments_are_printed_with_their_control_characters_escaped(
    cli: Cli, demo_repo: MemoryRepo, args: list[str], shown: str
) -> None:
    """click printed unexpected extra arguments raw: a bell, a carriage return (which
    rewrites the line on a terminal), an escape sequence or a line of their own."""
    result = cli(*args)
    assert result.exit_code == 2
    assert shown in result.stderr, result.stderr
    assert not any(char in result.stderr for char in "\x07\r\x1b")
    assert len(result.stderr.splitlines()) == 4


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["recall", "x", "-C", "/tmp"],
            "-C is scarwarden's own option: it goes before the command (scarwarden -C PATH recall ...).",
        ),
        (["episode", "list", "--repo=/tmp"], "(scarwarden --repo PATH episode list ...)."),
        (["recall", "--debug", "x"], "(scarwarden --debug recall ...)."),
    ],
)
def test_the_groups_option_after_a_command_says_where_it_goes(
    cli: Cli, demo_repo: MemoryRepo, args: list[str], says: str
) -> None:
    """``recall x -C path`` said only "No such option '-C'", as if scarwarden had none."""
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert says in result.stderr
    assert result.stdout == ""
