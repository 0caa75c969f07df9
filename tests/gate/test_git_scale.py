"""git's own settings for a memory of many files (issue 30): ``init`` and ``hooks
install`` set them where no git config does; a setting the user made is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import git

from scarwarden.git.scale import SETTINGS, apply_scale_settings


def setting(root: Path, key: str) -> str:
    return git(root, "config", "--get", key).stdout.strip()


def test_init_sets_the_scale_settings(git_repo: Path, make_cli: Any) -> None:
    done = make_cli(git_repo)("init", "--no-hooks")
    assert done.exit_code == 0, done.output
    assert [(key, setting(git_repo, key)) for key, _v in SETTINGS] == [
        ("feature.manyFiles", "true"),
        ("core.splitIndex", "true"),
        ("index.recordEndOfIndexEntries", "true"),
    ]
    # git works on with them: a commit through the split index, then a clean status.
    (git_repo / "note.txt").write_text("x\n")
    git(git_repo, "add", "note.txt")
    git(git_repo, "commit", "-q", "--no-verify", "-m", "note")
    assert git(git_repo, "status", "--porcelain").stdout == ""
    assert list((git_repo / ".git").glob("sharedindex.*"))


def test_hooks_install_sets_them_and_keeps_the_users_own(git_repo: Path, make_cli: Any) -> None:
    assert make_cli(git_repo)("init", "--no-hooks").exit_code == 0
    git(git_repo, "config", "--unset", "feature.manyFiles")
    git(git_repo, "config", "core.splitIndex", "false")  # the user's choice
    done = make_cli(git_repo)("hooks", "install")
    assert done.exit_code == 0, done.output
    assert setting(git_repo, "feature.manyFiles") == "true"
    assert setting(git_repo, "core.splitIndex") == "false"
    assert apply_scale_settings(git_repo) == []  # nothing left to set
