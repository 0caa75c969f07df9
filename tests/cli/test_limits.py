"""``--limit/-n N``: one spelling and one range on every command; a limit past every item,
even past SQLite's 64-bit integers, means all of them (it was an OverflowError)."""

from __future__ import annotations

import json

import pytest

from scarwarden.repo import MemoryRepo

PAST_SQLITE = str(2**63)  # 9223372036854775808
HUGE = "99999999999999999999"
TASK = "Post our discount code on Twitter"
COMMANDS = [("episode", "list"), ("recall", TASK), ("answer", TASK), ("log",)]


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("spelling", ["--limit", "-n"])
def test_every_limit_is_at_least_one_and_has_no_top(cli, command: tuple[str, ...], spelling: str) -> None:
    for value in (PAST_SQLITE, HUGE):
        result = cli(*command, spelling, value, "--json")
        assert result.exit_code == 0, result.output
        json.loads(result.stdout)
    for value in ("0", "-1"):
        refused = cli(*command, spelling, value)
        assert refused.exit_code == 2 and "is not in the range x>=1" in refused.output


def test_a_huge_limit_is_every_rule_and_every_episode(cli) -> None:
    def rules(*limit: str) -> list[str]:
        return [r["id"] for r in json.loads(cli("recall", TASK, "--json", *limit).stdout)["rules"]]

    assert rules("--limit", HUGE) == rules("--limit", "1000")
    listed = json.loads(cli("episode", "list", "--json").stdout)
    assert json.loads(cli("episode", "list", "--json", "--limit", PAST_SQLITE).stdout) == listed
    answered = json.loads(cli("answer", TASK, "--json", "--limit", HUGE).stdout)
    assert [r["id"] for r in answered["rules"]] == rules()


def test_the_python_api_and_the_index_take_a_huge_limit_too(demo_repo: MemoryRepo) -> None:
    import scarwarden
    from scarwarden.index import open_index

    memory = scarwarden.open_memory(demo_repo.root)
    assert [r.id for r in memory.recall(TASK, limit=10**20).rules] == [
        r.id for r in memory.recall(TASK, limit=1000).rules
    ]
    with open_index(demo_repo) as index:
        assert len(index.list_episodes(limit=10**20, offset=10**20)) == 0
        assert len(index.list_episodes(limit=10**20)) == index.episode_count()
