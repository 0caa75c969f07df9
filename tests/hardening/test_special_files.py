"""A socket, FIFO or device where Scarwarden expects a file (the playbook,
``scarwarden.yaml``, the index) is the user's to fix: one line naming the path, exit 2,
nothing changed. Before, a socket was "internal error: OSError: [Errno 6]" and "this is a
bug", and a FIFO hung the command for ever (opening one for reading waits for a writer).

The commands run as processes with a timeout, so a hang fails the test instead of
stopping the suite.
"""

from __future__ import annotations

import errno
import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import git

from scarwarden.api import FileAccessError, Memory
from scarwarden.distill import earned
from scarwarden.errors import ExitCode
from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo

NOT_A_FILE = "is not a regular file: a socket, FIFO or device is where a file should be"


@contextmanager
def _special(path: Path, kind: str) -> Iterator[None]:
    """``path`` replaced by a FIFO or a listening unix socket while the block runs."""
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
        yield
        return
    cwd = os.getcwd()
    os.chdir(path.parent)  # a socket's address is short: bound relative to its folder
    try:
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(path.name)
            os.chdir(cwd)
            yield
    finally:
        os.chdir(cwd)


def _state(root: Path) -> tuple[str, str, str]:
    refs = git(root, "for-each-ref").stdout  # distill --branch makes a branch, not a commit on HEAD
    return git(root, "rev-parse", "HEAD").stdout, git(root, "status", "--porcelain").stdout, refs


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["scarwarden", "-C", str(root), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("kind", ["socket", "fifo"])
@pytest.mark.parametrize(
    ("place", "args", "hint"),
    [
        ("memory/playbook.md", ("rule", "list"), "hint: move it away (ls -l memory/playbook.md)"),
        ("memory/playbook.md", ("recall", "Draft a LinkedIn post"), "hint: move it away"),
        (
            "memory/playbook.md",
            ("rule", "add", "--title", "T", "--text", "X", "--cites", "ep-x"),
            "hint: move",
        ),
        # distill said "lineage counts unavailable ([Errno 6] ...)" and went on (exit 0; with
        # --branch it made the branch; committing, it called the FIFO an uncommitted edit);
        # review said the same and exit 0; export said there was no playbook.
        ("memory/playbook.md", ("distill", "--offline", "--dry-run"), "hint: move it away"),
        ("memory/playbook.md", ("distill", "--offline"), "hint: move it away"),
        ("memory/playbook.md", ("distill", "--offline", "--no-commit"), "hint: move it away"),
        ("memory/playbook.md", ("distill", "--offline", "--branch", "distill/x"), "hint: move it away"),
        ("memory/playbook.md", ("review",), "hint: move it away"),
        ("memory/playbook.md", ("export", "agents-md"), "hint: move it away"),
        ("scarwarden.yaml", ("rule", "list"), "hint: move it away (ls -l scarwarden.yaml)"),
        (".scarwarden/index.db", ("recall", "Draft a post"), "hint: the index is a cache of the files"),
    ],
)
def test_a_special_file_where_a_file_should_be_is_one_line(
    demo_repo: MemoryRepo, kind: str, place: str, args: tuple[str, ...], hint: str
) -> None:
    root = demo_repo.root
    assert _run(root, "index").returncode == 0  # the index exists: it is read, not rebuilt
    with _special(root / place, kind):
        before = _state(root)
        result = _run(root, *args)
        assert result.returncode == ExitCode.USAGE, result.stderr
        first, second = result.stderr.splitlines()[:2]
        assert first == f"error: {place}: {NOT_A_FILE}"
        assert second.startswith(hint) and "Traceback" not in result.stderr
        assert "Errno" not in result.stderr and "lineage counts unavailable" not in result.stderr
        assert _state(root) == before


def test_the_python_api_raises_a_file_access_error(demo_repo: MemoryRepo) -> None:
    with _special(demo_repo.playbook_path, "socket"):
        with pytest.raises(FileAccessError, match=f"memory/playbook.md: {NOT_A_FILE}"):
            Memory(demo_repo).recall("Draft a LinkedIn post")
        with pytest.raises(FileAccessError, match=f"memory/playbook.md: {NOT_A_FILE}"):
            Memory(demo_repo).distill(offline=True, dry_run=True)


def test_the_struggling_rules_raise_a_special_playbook(demo_repo: MemoryRepo) -> None:
    """The distiller's best effort (no index, no rule proposed for revision) is not for
    a FIFO where the playbook should be: that is raised, for the boundary to name."""
    book = pb.parse(demo_repo.playbook_path.read_text(encoding="utf-8"))
    with _special(demo_repo.playbook_path, "fifo"):
        with pytest.raises(OSError) as raised:
            earned.struggling_rules(demo_repo, book)
    assert raised.value.errno == errno.ENXIO


@pytest.mark.parametrize("kind", ["socket", "fifo"])
def test_a_special_file_among_the_episodes_is_named_once_and_skipped(
    demo_repo: MemoryRepo, kind: str
) -> None:
    """An episode name on a FIFO or socket is no episode (git adds neither): the refresh
    skips it with one warning naming it, where it said nothing, and reads the rest."""
    _run(demo_repo.root, "index")
    month = demo_repo.episodes_dir / "2026" / "11"
    odd = month / "ep-special001.yaml"
    with _special(odd, kind):
        result = _run(demo_repo.root, "index")
        assert result.returncode == 0, result.stderr
        assert "34 episodes" in result.stdout
        said = "scarwarden: skipped memory/episodes/2026/11/ep-special001.yaml: not a regular file"
        assert result.stderr.count(said) == 1
        listed = _run(demo_repo.root, "episode", "list", "--json")
        assert listed.returncode == 0 and "ep-special001" not in listed.stdout
