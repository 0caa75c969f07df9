"""``sync`` merges the playbook through the merge driver whatever became of the
interpreter that registered it: a driver git cannot run is not a conflict."""

from __future__ import annotations

from pathlib import Path

from conftest import Cli, git
from test_sync import clone, remote_with

from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo


def add_rule(repo: MemoryRepo, text: str) -> str:
    result = Cli(repo.root)("rule", "add", "--text", text, "--tag", "sync", "--cites", "ep-wmjgdnc59j")
    assert result.exit_code == 0, result.output
    return pb.parse(repo.playbook_path.read_text()).rules[-1].id


def test_a_driver_whose_interpreter_is_gone_is_registered_again(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    ours = add_rule(b, "Rule taught to the second clone.")
    # registered by a virtualenv since deleted (or a Python since upgraded)
    gone = "/gone/venv/bin/python -m scarwarden merge-playbook %O %A %B %P"
    git(b.root, "config", "merge.scarwarden.driver", gone)
    theirs = add_rule(a, "Rule taught to the first clone.")
    assert Cli(a.root)("sync").exit_code == 0

    result = Cli(b.root)("sync", "--json")

    assert result.exit_code == 0, result.output
    merged = {rule.id for rule in pb.parse(b.playbook_path.read_text()).rules}
    assert {ours, theirs} <= merged
    assert "/gone/" not in git(b.root, "config", "merge.scarwarden.driver").stdout
