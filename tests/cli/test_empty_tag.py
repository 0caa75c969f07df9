"""``--tag ""`` (an unset shell variable) is refused, not read as "no tag": nothing written."""

from __future__ import annotations

import json

from conftest import Cli, git

from scarwarden.repo import MemoryRepo


def _state(repo: MemoryRepo) -> tuple[str, str, bytes]:
    status = git(repo.root, "status", "--porcelain").stdout
    return git(repo.root, "rev-parse", "HEAD").stdout, status, repo.playbook_path.read_bytes()


def test_an_empty_tag_is_refused_by_episode_add_and_rule_add(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = _state(demo_repo)
    episode_id = git(demo_repo.root, "ls-files", "memory/episodes").stdout.split()[0].rsplit("/", 1)[1][:-5]
    for args in (
        ["episode", "add", "--task", "Draft the post", "--correction", "Lead with the pain", "--tag", ""],
        ["episode", "add", "--task", "Draft the post", "--tag", "launch", "--tag", " , "],
        ["rule", "add", "--text", "Lead with the pain.", "--cites", episode_id, "--tag", ""],
    ):
        result = cli(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "names no tag: nothing was written" in result.stderr, result.stderr
        assert _state(demo_repo) == before  # no episode, no rule, no commit
    kept = cli(
        "episode",
        "add",
        "--task",
        "Draft the post",
        "--correction",
        "Pain first",
        "--tag",
        "launch,,social",
        "--json",
    )
    assert kept.exit_code == 0, kept.output  # an empty item between commas stays tolerated
    assert json.loads(kept.stdout)["tags"] == ["launch", "social"]
