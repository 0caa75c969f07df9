"""``rule add --cites`` an episode that is committed but whose file was deleted or
broken in the working tree said "ep-... is not in the ledger (committed or staged)":
untrue (``git log`` shows it committed), and its hint sent the user to record the
episode again. The refusal now says the file in the working tree is missing or not a
valid episode, names it, and says how to restore it; nothing is written."""

from __future__ import annotations

import pytest
from conftest import Cli, git

from scarwarden.repo import MemoryRepo


def _state(repo: MemoryRepo) -> tuple[str, bytes]:
    return git(repo.root, "rev-parse", "HEAD").stdout, repo.playbook_path.read_bytes()


@pytest.mark.parametrize("damage", ["deleted", "broken"])
def test_a_cited_episode_missing_from_the_working_tree_is_named(
    memory_repo: MemoryRepo, make_cli, damage: str
) -> None:
    cli: Cli = make_cli(memory_repo.root)
    ep = cli("episode", "add", "--task", "Draft the post", "--correction", "Lead with pain").stdout.strip()
    [file] = memory_repo.root.glob(f"memory/episodes/**/{ep}.yaml")
    path = file.relative_to(memory_repo.root).as_posix()
    if damage == "deleted":
        file.unlink()
    else:
        file.write_text(file.read_text() + "junk: [\n")
    before = _state(memory_repo)
    result = cli("rule", "add", "--text", "Lead with the pain.", "--cites", ep)
    assert result.exit_code == 1, result.output
    said = f"{path} is missing from the working tree or is not a valid episode"
    assert said in result.stderr, result.stderr
    assert "not in the ledger" not in result.stderr
    assert f"git restore -- {path}" in result.stderr
    assert _state(memory_repo) == before


def test_an_episode_never_recorded_is_still_not_in_the_ledger(memory_repo: MemoryRepo, make_cli) -> None:
    cli = make_cli(memory_repo.root)
    result = cli("rule", "add", "--text", "Lead with pain.", "--cites", "ep-0000000000")
    assert result.exit_code == 1
    assert "ep-0000000000 is not in the ledger (committed or staged)" in result.stderr
