"""``export mcp-config`` writes nothing: ``--output``, ``--commit`` and
``--import-agents/--inline`` with it are refused (exit 2), as ``--bare-command`` without
it is, instead of silently ignored (exit 0 with no file written and no commit)."""

from __future__ import annotations

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo


def _state(repo: MemoryRepo) -> tuple[str, str]:
    return git(repo.root, "rev-parse", "HEAD").stdout, git(repo.root, "status", "--porcelain").stdout


@pytest.mark.parametrize(
    ("given", "named"),
    [
        (["--output", "mcp.toml"], "--output goes"),
        (["--commit"], "--commit goes"),
        (["--import-agents"], "--import-agents/--inline goes"),
        (["--inline", "--commit"], "--import-agents/--inline and --commit go"),
    ],
)
def test_write_options_with_mcp_config_are_refused(
    cli: Cli, demo_repo: MemoryRepo, given: list[str], named: str
) -> None:
    before = _state(demo_repo)
    result = cli("export", "mcp-config", *given)
    assert result.exit_code == 2, result.output
    assert f"{named} with the formats that write files" in result.stderr, result.stderr
    assert result.stdout == ""
    assert not (demo_repo.root / "mcp.toml").exists()
    assert _state(demo_repo) == before
    assert cli("export", "mcp-config", "--bare-command").exit_code == 0  # its own option stays
