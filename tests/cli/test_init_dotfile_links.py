"""``init`` and a ``.gitignore`` or ``.gitattributes`` that is a symbolic link (to a
shared file): git (2.32 on) does not read such a file, so a line written through the
link would not take effect, and writing a file over it would lose the link. Init
refuses (exit 2, nothing written) when it would have to add its line to one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Cli, git

HOW = {"link in the repository": "shared/ignore", "link outside": "{outside}", "dangling link": "missing"}


def _snapshot(root: Path, *, status: bool = True) -> tuple[str, str, list[str]]:
    files = sorted(p.relative_to(root).as_posix() for p in root.iterdir() if p.name != ".git")
    porcelain = git(root, "status", "--porcelain").stdout if status else ""
    return git(root, "rev-parse", "HEAD").stdout, porcelain, files


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes"])
@pytest.mark.parametrize("how", sorted(HOW))
def test_a_linked_dotfile_is_refused_and_kept(
    git_repo: Path, make_cli: type[Cli], name: str, how: str
) -> None:
    outside = git_repo.parent / "dotfiles-shared"
    outside.write_bytes(b"node_modules/\n")
    (git_repo / "shared").mkdir()
    (git_repo / "shared/ignore").write_bytes(b"node_modules/\n")
    target = HOW[how].format(outside=outside)
    (git_repo / name).symlink_to(target)
    git(git_repo, "add", "-A")
    git(git_repo, "commit", "-q", "-m", "shared dotfile")
    before = _snapshot(git_repo)
    result = make_cli(git_repo)("init", "--no-hooks")
    assert result.exit_code == 2, result.output
    assert f"{name} is a symbolic link (to {target})" in result.stderr
    assert "git does not read" in result.stderr and "nothing was written" in result.stderr
    assert "cp --remove-destination" in result.stderr and "Traceback" not in result.output
    assert os.readlink(git_repo / name) == target  # still the link
    assert (git_repo / "shared/ignore").read_bytes() == outside.read_bytes() == b"node_modules/\n"
    assert _snapshot(git_repo) == before  # no memory, no commit


def test_a_linked_dotfile_that_has_the_line_is_left_alone(git_repo: Path, make_cli: type[Cli]) -> None:
    (git_repo / "shared-ignore").write_bytes(b"node_modules/\n.scarwarden/\n")
    (git_repo / ".gitignore").symlink_to("shared-ignore")
    result = make_cli(git_repo)("init", "--no-hooks", "--json")
    assert result.exit_code == 0, result.output
    assert os.readlink(git_repo / ".gitignore") == "shared-ignore"
    assert (git_repo / "shared-ignore").read_bytes() == b"node_modules/\n.scarwarden/\n"


@pytest.mark.parametrize("name", [".gitignore", ".gitattributes"])
def test_a_fifo_dotfile_is_refused_not_waited_on(git_repo: Path, name: str) -> None:
    import subprocess
    import sys

    os.mkfifo(git_repo / name)
    before = _snapshot(git_repo, status=False)  # git status would wait on the FIFO too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = [sys.executable, "-m", "scarwarden", "init", "--no-hooks"]
    result = subprocess.run(run, cwd=git_repo, capture_output=True, text=True, env=env, timeout=20)
    assert result.returncode == 2, result.stderr
    assert f"{name}: is not a regular file: a socket, FIFO or device" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr
    assert _snapshot(git_repo, status=False) == before


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_a_linked_memory_folder_is_refused_before_anything_is_written(
    git_repo: Path, make_cli: type[Cli], where: str
) -> None:
    target = git_repo.parent / "elsewhere" if where == "outside" else git_repo / "data"
    target.mkdir()
    (git_repo / "memory").symlink_to(target)
    before = _snapshot(git_repo)
    result = make_cli(git_repo)("init", "--no-hooks")
    assert result.exit_code == 2, result.output
    assert f"memory in {git_repo} is a symbolic link (to {target})" in result.stderr, result.stderr
    assert list(target.iterdir()) == []  # nothing written through the link, even for a moment
    assert _snapshot(git_repo) == before
