"""A gate's verdict survives a reader that closed the pipe: ``scarwarden check --all |
head -c1`` in a CI step (pipefail) exited 0 on a failing memory, as a listing's closed
pipe does (``BrokenPipeError`` at the boundary), so the job passed; ``verify`` alike."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import git
from helpers import write

from scarwarden.repo import MemoryRepo


def _run_with_the_reader_gone(root: object, *args: str) -> subprocess.CompletedProcess[bytes]:
    read, write_end = os.pipe()
    os.close(read)  # the reader is gone before the first line: every write is refused
    try:
        return subprocess.run(
            [sys.executable, "-m", "scarwarden", *args],
            cwd=root,
            stdout=write_end,
            stderr=subprocess.PIPE,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args", [["check", "--all"], ["check", "--all", "--json"], ["verify"], ["verify", "--json"]]
)
def test_a_failing_verdict_exits_1_when_the_reader_closes_the_pipe(
    demo_repo: MemoryRepo, args: list[str]
) -> None:
    root = demo_repo.root
    book = (root / demo_repo.playbook_rel).read_text()
    write(root, demo_repo.playbook_rel, book.replace("ep-1jwckg9x17", "ep-1jwckg9x17, ep-doesnotexist", 1))
    git(root, "add", demo_repo.playbook_rel)
    git(root, "commit", "-q", "--no-verify", "-m", "cite an episode that does not exist")
    done = _run_with_the_reader_gone(root, *args)
    assert done.returncode == 1, done.stderr
    assert b"Traceback" not in done.stderr


@pytest.mark.parametrize("args", [["check", "--all"], ["verify"]])
def test_a_passing_verdict_on_a_closed_pipe_exits_0(demo_repo: MemoryRepo, args: list[str]) -> None:
    done = _run_with_the_reader_gone(demo_repo.root, *args)
    assert done.returncode == 0, done.stderr
    assert b"Traceback" not in done.stderr
