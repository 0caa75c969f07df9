"""``rules_applied`` takes the spellings citations take (``pb-01``, ``PB-3``, a minted ID
in capitals) and stores the canonical ID; a stored file must hold it already (issue 18)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest
from conftest import git

from scarwarden.files.episodes import parse_episode_bytes
from scarwarden.repo import MemoryRepo

MINTED = "PB-7k2m9q4x"


def stored_rules(repo: MemoryRepo, ep_id: str) -> list[str]:
    [path] = list(repo.episodes_dir.rglob(f"{ep_id}.yaml"))
    ep = parse_episode_bytes(path.read_bytes(), path=path.relative_to(repo.root).as_posix())
    return list(ep.get("rules_applied") or [])


def test_file_and_stdin_spellings_are_stored_canonical(cli: Any, demo_repo: MemoryRepo) -> None:
    episode = (
        # source: import: PB-7k2m9q4x and PB-123 are no rules of the demo memory (an unknown
        # rule is refused unless the episode was imported, issue 27).
        "task: Draft a LinkedIn post\naction: Led with the pain\nsource: import\n"
        f"rules_applied: [pb-01, PB-3, pb-03, {MINTED.upper()}, pb-123]\n"
    )
    result = cli("episode", "add", "--file", "-", "--json", input=episode)
    assert result.exit_code == 0, result.output
    [ep_id] = [e["id"] for e in json.loads(result.stdout)]
    # One entry per rule: "PB-3" and "pb-03" are the same rule applied once.
    assert stored_rules(demo_repo, ep_id) == ["PB-01", "PB-03", MINTED, "PB-123"]
    assert (
        "rules_applied: [PB-01, PB-03, PB-7k2m9q4x, PB-123]"
        in git(demo_repo.root, "show", "HEAD", "--format=").stdout
    )


def test_the_option_takes_them_too(cli: Any, demo_repo: MemoryRepo) -> None:
    result = cli(
        "episode", "add", "--task", "t", "--action", "a", "--rule-applied", "pb-2", "--rule-applied", "PB-02",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert stored_rules(demo_repo, json.loads(result.stdout)["id"]) == ["PB-02"]


def test_what_is_no_rule_id_is_refused_and_nothing_written(cli: Any, demo_repo: MemoryRepo) -> None:
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    result = cli("episode", "add", "--file", "-", input="task: t\naction: a\nrules_applied: [pb-1, PB-x]\n")
    assert result.exit_code == 1
    assert "'PB-x' is not a rule ID" in result.stderr and "'pb-1'" not in result.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_the_gate_judges_what_is_written(cli: Any, demo_repo: MemoryRepo) -> None:
    """A file committed by hand must hold canonical IDs: the gate reads, never repairs;
    its hint gives the spelling to write."""
    path = demo_repo.episodes_dir / "2026" / "11" / "ep-aaaaaaaaa1.yaml"
    path.write_text(
        "id: ep-aaaaaaaaa1\nat: 2026-11-02T10:00:00Z\ntask: t\naction: a\nrules_applied: [pb-1]\n"
    )
    git(demo_repo.root, "add", str(path))
    result = cli("check")
    assert result.exit_code == 1
    assert "'pb-1' is not a rule ID" in result.output and "write it as PB-01" in result.output


def test_mcp_record_episode_normalises(demo_repo: MemoryRepo) -> None:
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "scarwarden", "--repo", str(demo_repo.root), "mcp"],
        env=dict(os.environ),
        cwd=str(demo_repo.root),
    )

    async def main() -> Any:
        async with Client(params, read_timeout_seconds=120) as client:
            return await client.call_tool(
                "record_episode", {"task": "t", "action": "a", "rules_applied": "pb-1, PB-3"}
            )

    result = anyio.run(main)
    assert not result.is_error, result.content
    assert stored_rules(demo_repo, result.structured_content["id"]) == ["PB-01", "PB-03"]


def test_a_rule_not_in_the_playbook_is_refused_unless_imported(cli: Any, demo_repo: MemoryRepo) -> None:
    """Refused (issue 27: was a warning nobody saw through MCP); an imported episode
    (source: import) may name another memory's rules, with a warning."""
    before = git(demo_repo.root, "rev-parse", "HEAD").stdout
    result = cli("episode", "add", "--file", "-", input="task: t\naction: a\nrules_applied: [pb-1, pb-99]\n")
    assert result.exit_code == 1, result.output
    assert "field 'rules_applied': PB-99 is not a rule in memory/playbook.md" in result.stderr
    assert "PB-01 is not" not in result.stderr
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == before
    imported = "task: t\naction: a\nsource: import\nrules_applied: [pb-1, pb-99]\n"
    result = cli("episode", "add", "--file", "-", input=imported)
    assert result.exit_code == 0, result.output
    assert "warning:" in result.stderr and "PB-99 is not a rule in memory/playbook.md" in result.stderr
    quiet = cli("episode", "add", "--file", "-", input="task: t\naction: a\nrules_applied: [PB-14]\n")
    assert quiet.exit_code == 0 and "warning" not in quiet.stderr  # retired or not, PB-14 is there
