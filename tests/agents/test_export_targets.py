"""``scarwarden export`` onto odd targets: what is there already is refused clearly or
kept, and ``--check`` agrees with what ``export`` writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import git

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A process with a timeout: a read that waits fails the test instead of stopping the suite.
    command = [sys.executable, "-m", "scarwarden", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_a_fifo_where_the_export_goes_is_refused_not_waited_on(demo_repo: MemoryRepo) -> None:
    """A FIFO at AGENTS.md hung ``export`` and ``export --check`` for ever (the read of
    the file to splice waited for a writer)."""
    root = demo_repo.root
    os.mkfifo(root / "AGENTS.md")
    before = git(root, "status", "--porcelain").stdout
    for args in (("export", "agents-md"), ("export", "agents-md", "--check")):
        result = _run(root, *args)
        assert result.returncode == ExitCode.USAGE, result.stderr
        assert result.stderr.startswith("error: AGENTS.md: is not a regular file"), result.stderr
        assert "Traceback" not in result.stderr
    assert git(root, "status", "--porcelain").stdout == before
