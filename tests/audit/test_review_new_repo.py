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
