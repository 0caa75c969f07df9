"""``review`` on a brand-new repository (issue 28, point 2): the memory's first commit is
the repository's first commit too, so the range starts before any commit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from conftest import git


@pytest.mark.parametrize("demo", [True, False])
def test_review_right_after_init_passes_the_gate(tmp_path: Path, make_cli: Any, demo: bool) -> None:
    root = tmp_path / "new"
    root.mkdir()
    git(root, "init", "-q", "-b", "master")
    cli = make_cli(root)
    assert cli("init", *(["--demo"] if demo else []), "--no-hooks").exit_code == 0
    # A plain init's empty playbook is written by the first commit too (issue 28).
    result = cli("review")
    assert result.exit_code == 0, result.output
    assert "| Provenance gate | ✅ passed |" in result.stdout
    assert "no such commit" not in result.output and "4b825dc642cb" not in result.output
    assert cli("check", "--all").exit_code == 0 and cli("verify").exit_code == 0


def test_review_against_a_branch_that_is_not_there_names_those_that_are(
    tmp_path: Path, make_cli: Any
) -> None:
    root = tmp_path / "new"
    root.mkdir()
    git(root, "init", "-q", "-b", "master")
    cli = make_cli(root)
    cli("init", "--demo", "--no-hooks")
    git(root, "branch", "topic")
    result = cli("review", "--base", "main")
    assert result.exit_code == 2
    assert "error: unknown revision 'main'" in result.stderr
    assert "hint: the branches here: master, topic;" in result.stderr


def test_review_and_diff_in_a_shallow_clone_do_not_call_its_edge_the_first_commit(
    tmp_path: Path, make_cli: Any
) -> None:
    """actions/checkout fetches one commit by default: the last distill's parent is not
    in the clone, and the shallow edge was taken for the first commit, so `review`
    reported every rule and episode of the memory as added (base "nothing (before ...,
    the first commit)") and gated them all, and `diff` showed the whole playbook as new."""
    root = tmp_path / "origin"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    cli = make_cli(root)
    assert cli("init", "--demo", "--no-hooks").exit_code == 0
    added = cli("episode", "add", "--task", "Draft the launch post", "--correction", "Lead with the pain")
    assert added.exit_code == 0
    assert cli("distill", "--offline").exit_code == 0, "a distill commit to review"
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", root.as_uri(), str(clone))
    shallow = make_cli(clone)
    for args in (["review"], ["review", "--json"], ["diff"], ["diff", "--json"]):
        result = shallow(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "shallow clone" in result.stderr and "fetch-depth: 0" in result.stderr, result.stderr
        assert "added" not in result.stdout and result.stdout == ""
    # With the history there, the same commands report the one distillation.
    git(clone, "fetch", "-q", "--unshallow")
    result = shallow("diff")
    assert result.exit_code == 0, result.output
    assert "^ (before distill commit" in result.stdout and "the first commit" not in result.stdout


def test_review_of_a_shallow_pull_request_checkout_does_not_compare_with_the_base_tip(
    tmp_path: Path, make_cli: Any
) -> None:
    """A depth-1 checkout of the branch and a depth-1 fetch of main have no merge base:
    `review --base origin/main` compared main's tip with the branch instead and said
    the branch removed the rules main had gained since ("| Rules | 3 removed |")."""
    root = tmp_path / "origin"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    cli = make_cli(root)
    assert cli("init", "--demo", "--no-hooks").exit_code == 0
    git(root, "checkout", "-q", "-b", "topic")
    assert cli("episode", "add", "--task", "Topic task", "--correction", "Lead with the pain").exit_code == 0
    git(root, "checkout", "-q", "main")
    assert cli("episode", "add", "--task", "Main task", "--correction", "Be brief").exit_code == 0
    assert cli("distill", "--offline").exit_code == 0
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", "--branch", "topic", root.as_uri(), str(clone))
    git(clone, "fetch", "-q", "--depth", "1", "origin", "main:refs/remotes/origin/main")
    shallow = make_cli(clone)
    for args in (["review", "--base", "origin/main"], ["review", "--base", "origin/main", "--json"]):
        result = shallow(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "shallow clone" in result.stderr and "fetch-depth: 0" in result.stderr, result.stderr
        assert result.stdout == ""
    git(clone, "fetch", "-q", "--unshallow", "origin")
    result = shallow("review", "--base", "origin/main")
    assert result.exit_code == 0, result.output
    assert "| Rules | none |" in result.stdout and "| Episodes added to the ledger | 1 |" in result.stdout
