"""An argument holding a NUL character (an in-process caller's argv: ``main([...])``, a
test; a real command line cannot carry one) reached the file system as a path and
printed "internal error: ValueError: embedded null byte" (``export --output``, ``audit
--html``, ``review --output``, ``audit-image``, ``diff --textconv``), and ``-C`` with
one raised the ValueError out of the command. Now a usage error (exit 2) naming the
argument, nothing written; a NUL in text is the text check's to name (its field)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner
from conftest import git

from scarwarden.cli.group import main_group
from scarwarden.repo import MemoryRepo


@pytest.mark.parametrize(
    "args",
    [
        ["export", "agents-md", "--output", "a\x00b"],
        ["audit", "--html", "a\x00b"],
        ["review", "--output", "a\x00b"],
        ["audit-image", "a\x00b"],
        ["diff", "--textconv", "a\x00b"],
        ["-C", "a\x00b", "recall", "x"],
    ],
)
def test_a_nul_in_an_argument_is_a_usage_error(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(demo_repo.root)
    before = git(demo_repo.root, "status", "--porcelain").stdout
    result = CliRunner().invoke(main_group, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code == 2, result.output
    assert "holds a NUL character (U+0000)" in result.stderr, result.stderr
    assert "internal error" not in result.stderr
    assert git(demo_repo.root, "status", "--porcelain").stdout == before


def test_a_nul_in_text_is_refused_where_the_text_is_checked(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text is not a path: a NUL in a number or an episode's field is refused by the
    check that reads it (the field named, as through every other door), not up front."""
    monkeypatch.chdir(demo_repo.root)
    limit = CliRunner().invoke(main_group, ["recall", "--limit", "3\x00", "x"])
    assert limit.exit_code == 2 and "'3\\x00' is not a valid integer" in limit.stderr, limit.stderr
    agent = CliRunner().invoke(main_group, ["episode", "add", "--task", "t", "--agent", "bot\x00"])
    assert agent.exit_code == 1 and "field 'agent'" in agent.stderr and "NUL" in agent.stderr, agent.stderr
