"""A tag is a short label, at most 64 characters: a longer one (``rule add --tag`` with
50,000 characters was committed into the playbook) is refused at every door (the
``--tag`` flags: exit 2; an episode file, the Python API, the function tools: invalid
input) with nothing written. What is stored already still reads: an episode committed
before the bound can never be edited, and a playbook that stopped parsing would stop
recall; the gate, which judges stored files, checks a tag's form, not its length."""

from __future__ import annotations

import json

import pytest
from conftest import Cli, git

from scarwarden.agents.functions import MemoryFunctions
from scarwarden.api import Memory
from scarwarden.errors import ValidationError
from scarwarden.repo import MemoryRepo

CITED = "ep-hkgnqdz88f"  # an episode of the demo ledger
LONG = "a" * 65
LIMIT = "is 65 characters; the limit is 64"


def _state(repo: MemoryRepo) -> tuple[str, str, bytes]:
    status = git(repo.root, "status", "--porcelain", "--untracked-files=all").stdout
    return git(repo.root, "rev-parse", "HEAD").stdout, status, repo.playbook_path.read_bytes()


@pytest.mark.parametrize(
    "args",
    [
        ["episode", "add", "--task", "t", "--outcome", "o", "--tag", LONG],
        ["episode", "add", "--task", "t", "--outcome", "o", "--tag", f"ok,{LONG.upper()}"],
        ["rule", "add", "--text", "Test twice.", "--cites", CITED, "--tag", LONG],
        ["rule", "add", "--text", "Test twice.", "--cites", CITED, "--tag", "b" * 50_000],
    ],
)
def test_a_long_tag_flag_is_refused_and_nothing_written(
    cli: Cli, demo_repo: MemoryRepo, args: list[str]
) -> None:
    before = _state(demo_repo)
    result = cli(*args)
    assert result.exit_code == 2, result.output[-300:]
    assert "characters; the limit is 64" in result.stderr and "nothing was written" in result.stderr
    assert len(result.stderr) < 1000, "the message quotes the tag's start, not all of it"
    assert _state(demo_repo) == before


def test_the_bound_itself_is_a_tag(cli: Cli, demo_repo: MemoryRepo) -> None:
    result = cli("rule", "add", "--text", "Test twice.", "--cites", CITED, "--tag", "a" * 64)
    assert result.exit_code == 0, result.output
    result = cli("episode", "add", "--task", "t", "--outcome", "o", "--tag", "b" * 64)
    assert result.exit_code == 0, result.output
    assert cli("check", "--all").exit_code == 0


def test_an_episode_file_with_a_long_tag_is_refused(cli: Cli, demo_repo: MemoryRepo) -> None:
    before = _state(demo_repo)
    item = json.dumps({"task": "t", "outcome": "o", "tags": ["ok", "c" * 50_000 + " d"]})
    result = cli("episode", "add", "--file", "-", input=item)
    assert result.exit_code == 1, result.output[-300:]
    assert "field 'tags': tag 'cccc" in result.stderr
    assert "is 50,002 characters; the limit is 64" in result.stderr
    assert len(result.stderr) < 1000
    assert _state(demo_repo) == before


def test_the_python_api_and_the_function_tools_refuse_a_long_tag(demo_repo: MemoryRepo) -> None:
    before = _state(demo_repo)
    memory = Memory(demo_repo)
    with pytest.raises(ValidationError, match=LIMIT):
        memory.record("t", outcome="o", tags=[LONG])
    call = {"task": "t", "outcome": "o", "tags": f"ok,{LONG}"}
    answer = MemoryFunctions(memory).call("record_episode", call)
    assert LIMIT in answer["error"], answer
    assert _state(demo_repo) == before


def test_a_long_tag_stored_before_the_bound_still_reads(cli: Cli, demo_repo: MemoryRepo) -> None:
    """An episode or a rule with a 65-character tag, committed before the bound: the
    index keeps the episode, the playbook parses, recall and the gate go on."""
    episode = next((demo_repo.root / "memory/episodes").glob("*/*/*.yaml"))
    episode_id = episode.stem
    episode.write_text(episode.read_text().replace("tags: [", f"tags: [{LONG}, ", 1))
    playbook = demo_repo.playbook_path.read_text()
    demo_repo.playbook_path.write_text(playbook.replace("- Tags: linkedin,", f"- Tags: {LONG}, linkedin,", 1))
    git(demo_repo.root, "commit", "-qam", "long tags, as an older version allowed", "--no-verify")
    assert cli("index", "--rebuild").exit_code == 0
    shown = cli("episode", "show", episode_id)
    assert shown.exit_code == 0 and LONG in shown.stdout, shown.output
    rule = cli("rule", "show", "PB-01")
    assert rule.exit_code == 0 and LONG in rule.stdout, rule.output
    assert cli("recall", "--no-log", "Draft a LinkedIn post").exit_code == 0
    result = cli("check", "--all")
    assert result.exit_code == 0, result.output


RULE_ADD = ["rule", "add", "--text", "Test twice.", "--cites", CITED]


@pytest.mark.parametrize("command", [RULE_ADD, ["episode", "add"]])
def test_more_than_32_tags_are_refused(cli: Cli, demo_repo: MemoryRepo, command: list[str]) -> None:
    # 40,000 tags took rule add 29 s and put 300 KB into the playbook (recall then
    # took 11 s to index it): a rule or an episode has a few labels, not a word list.
    before = _state(demo_repo)
    fields = ["--task", "t", "--outcome", "o"] if command[0] == "episode" else []
    many = ",".join(f"t{i}" for i in range(33))
    result = cli(*command, *fields, "--tag", many)
    assert result.exit_code == 2, result.output[-300:]
    assert "--tag: 33 tags; the limit is 32: nothing was written" in result.stderr
    assert _state(demo_repo) == before
    assert cli(*command, *fields, "--tag", many.rpartition(",")[0]).exit_code == 0
