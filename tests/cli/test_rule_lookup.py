"""Finding a rule as a newcomer types it (issue 28, point 4): minted IDs in any case, a
near miss, an episode ID, a title; the same through MCP's get_rule; and docs/audit.md's
git diff set-up naming minted rules in hunk headers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, git

from scarwarden.errors import UsageError
from scarwarden.repo import MemoryRepo

TITLE = "Open with the reader's pain point"
#: One sentence a line in git's view of the playbook: the last one is far from the title.
LONG = "Open with the reader's pain point. Name it. Show it. Then the fix. Then proof. Hashtags end it."


@pytest.fixture
def minted(memory_repo: MemoryRepo, make_cli: Any) -> tuple[Any, str, str]:
    """A new repository's playbook: two minted rules (no PB-NN ever)."""
    cli = make_cli(memory_repo.root)
    episode = cli("episode", "add", "--task", "Draft a LinkedIn post", "--correction", "Lead with the pain")
    ep = episode.stdout.strip()
    ids = []
    for title, text in ((TITLE, LONG), ("Hashtags last", "Hashtags go last.")):
        added = cli("rule", "add", "--title", title, "--text", text, "--cites", ep, "--json")
        assert added.exit_code == 0, added.output
        ids.append(re.search(r"PB-[0-9a-z]{8}", added.stdout).group(0))  # type: ignore[union-attr]
    return cli, ids[0], ep


def test_a_minted_id_is_found_in_any_case_and_a_near_miss_is_named(minted: tuple[Any, str, str]) -> None:
    cli, rule_id, _ = minted
    shown = cli("rule", "show", rule_id.upper().replace("PB-", "pb-"))
    assert shown.exit_code == 0, shown.output
    assert f"{rule_id}: {TITLE}" in shown.stdout
    typo = cli("rule", "show", rule_id[:-1])  # one character short
    assert typo.exit_code == 2
    assert f"error: no rule {rule_id[:-1]} in the playbook" in typo.stderr  # as typed, not shouted
    assert f"did you mean {rule_id}?" in typo.stderr
    listed = re.search(r"the playbook's rules: (.*)", typo.stderr).group(1)  # type: ignore[union-attr]
    assert listed.split(", ") == sorted(listed.split(", "))


def test_an_episode_id_points_to_episode_show(minted: tuple[Any, str, str]) -> None:
    cli, _, ep = minted
    result = cli("rule", "show", ep.upper())
    assert result.exit_code == 2
    assert f"error: {ep} is an episode ID, not a rule ID" in result.stderr
    assert f"scarwarden episode show {ep}" in result.stderr


def test_a_rule_is_found_by_its_title(minted: tuple[Any, str, str]) -> None:
    cli, rule_id, _ = minted
    shown = cli("rule", "show", TITLE.upper())
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(f"{rule_id}: {TITLE}")
    near = cli("rule", "show", "Open with the readers pains")
    assert near.exit_code == 2
    assert f"did you mean {rule_id} ({TITLE})?" in near.stderr


def test_mcp_get_rule_finds_the_same_way(minted: tuple[Any, str, str], memory_repo: MemoryRepo) -> None:
    pytest.importorskip("mcp")
    from scarwarden.agents.mcp.tools import MemoryTools

    _, rule_id, ep = minted
    tools = MemoryTools(memory_repo)
    assert tools.get_rule(rule_id.upper())["rule"]["id"] == rule_id
    assert tools.get_rule(TITLE.lower())["rule"]["id"] == rule_id
    with pytest.raises(UsageError) as info:
        tools.get_rule(ep)
    assert "is an episode ID" in info.value.message and "get_episode" in (info.value.hint or "")
    with pytest.raises(UsageError) as info:
        tools.get_rule(rule_id[:-1])
    assert info.value.message == f"no rule {rule_id[:-1]} in the playbook"
    assert f"did you mean {rule_id}?" in (info.value.hint or "")


def test_the_documented_xfuncname_names_minted_rules_in_hunk_headers(
    minted: tuple[Any, str, str], memory_repo: MemoryRepo
) -> None:
    """docs/audit.md's set-up, run as written: a hunk inside a minted rule is headed by it."""
    cli, rule_id, _ = minted
    root = memory_repo.root
    doc = (ROOT / "docs" / "audit.md").read_text()
    pattern = re.search(r"git config diff\.scarwarden\.xfuncname '([^']+)'", doc).group(1)  # type: ignore[union-attr]
    (root / ".gitattributes").write_text("memory/playbook.md diff=scarwarden\n")
    git(root, "config", "diff.scarwarden.textconv", f"{_scarwarden()} diff --textconv")
    git(root, "config", "diff.scarwarden.xfuncname", pattern)
    playbook = memory_repo.playbook_path
    text = playbook.read_text()
    playbook.write_text(text.replace("Hashtags end it.", "No hashtags at all.", 1))
    diff = git(root, "diff", "--", "memory/playbook.md").stdout
    headers = [line for line in diff.splitlines() if line.startswith("@@")]
    assert headers and all(h.endswith(f"@@ {rule_id}: {TITLE}") for h in headers), diff


def _scarwarden() -> str:
    import shutil
    import sys

    found = shutil.which("scarwarden")
    return found or f"{sys.executable} -m scarwarden"


def test_rule_ids_are_readable_in_the_lookup_for_every_spelling() -> None:
    from scarwarden.files.rule_lookup import spelled

    assert spelled("pb-WGFEF8B") == "PB-wgfef8b"  # 7 characters: not an ID, still lower case
    assert spelled("pb-3") == "PB-03" and spelled("PB-7K2M9Q4X") == "PB-7k2m9q4x"
    assert spelled(" Open  with ") == "Open with"
    assert Path  # noqa: B018


def test_a_minted_id_cut_to_digits_is_still_guessed_and_a_number_never_is() -> None:
    """A minted ID whose random part is digits but for its last character, typed one
    short, looks like a numbered ID (PB-5295392): it is still a typo of the minted one.
    A numbered ID is never guessed (PB-15 for PB-14 would be a wrong rule)."""
    from scarwarden.errors import UsageError
    from scarwarden.files.rule_lookup import find_rule

    rules = [
        ("PB-5295392p", "Open with the reader"),
        ("PB-ftd2apq4", "Close with a question"),
        ("PB-15", "Cite"),
    ]

    def hint(typed: str) -> str:
        with pytest.raises(UsageError) as caught:
            find_rule(typed, rules, episode_hint="", list_hint="")
        return caught.value.hint or ""

    assert "did you mean PB-5295392p?" in hint("PB-5295392")
    assert "did you mean" not in hint("PB-14")


def test_rule_list_with_a_tag_no_rule_has_says_so(cli: Any) -> None:
    none = cli("rule", "list", "--tag", "nonexistent")
    assert none.exit_code == 0 and none.stdout == ""
    assert "no active rule has the tag 'nonexistent' (--retired includes retired rules)" in none.stderr
    assert "no rules yet" not in none.stderr
    retired = cli("rule", "list", "--tag", "nonexistent", "--retired")
    assert "no rule has the tag 'nonexistent'" in retired.stderr
    assert cli("rule", "list", "--tag", "LinkedIn", "--json").stdout.count('"id"') >= 1
    empty = cli("rule", "list", "--tag", " ")
    assert empty.exit_code == 2 and "--tag is empty" in empty.stderr


@pytest.mark.parametrize("typed", ["", "  "])
def test_an_empty_rule_id_is_a_usage_error(cli: Any, typed: str) -> None:
    shown = cli("rule", "show", typed)
    assert shown.exit_code == 2 and "the rule ID is empty" in shown.stderr, shown.output
    assert "no rule  in the playbook" not in shown.output


def test_an_empty_rule_id_is_refused_by_the_lookup_for_every_door() -> None:
    from scarwarden.files.rule_lookup import find_rule

    with pytest.raises(UsageError, match="the rule ID is empty"):
        find_rule(" ", [("PB-01", "A rule")], episode_hint="{id}", list_hint="list them")


@pytest.mark.parametrize("typed", ["PB-\x1b]0;pwned\x07x", "pb-\x9b2Jx", "PB\x1b]0;t\x07"])
def test_a_control_character_in_a_typed_id_is_shown_escaped(cli: Any, typed: str) -> None:
    shown = cli("rule", "show", typed)
    assert shown.exit_code == 2, shown.output
    assert "no rule " in shown.stderr
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", shown.stderr), repr(shown.stderr)


def test_a_control_character_is_escaped_when_the_playbook_has_no_rules() -> None:
    from scarwarden.files.rule_lookup import find_rule

    with pytest.raises(UsageError) as raised:
        find_rule("PB-\x1b[2Jx", [], episode_hint="{id}", list_hint="list them")
    assert "\x1b" not in raised.value.render() and "\\x1b" in raised.value.render()
