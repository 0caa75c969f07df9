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


def test_a_crlf_file_gets_a_crlf_section_and_checks_current(demo_repo: MemoryRepo) -> None:
    """A file with CRLF line endings (Windows; git's ``core.autocrlf=true`` checks every
    text file out so) got a section with bare LFs, mixed into it, and once the section
    itself was CRLF ``export --check`` called it stale for ever (exit 1: a pre-commit
    hook that never passes). The section now takes the line ending of the line it
    replaces (of the file's first line when appended), and the rest stays byte for byte."""
    root = demo_repo.root
    agents, cursor = root / "AGENTS.md", root / ".cursor" / "rules" / "scarwarden.mdc"
    agents.write_bytes(b"# Our agents\r\n\r\nBuild with make.\r\n")
    assert _run(root, "export", "agents-md", "cursor").returncode == 0
    raw = agents.read_bytes()
    assert raw.startswith(b"# Our agents\r\n\r\nBuild with make.\r\n\r\n<!-- scarwarden:begin -->\r\n")
    assert raw.endswith(b"<!-- scarwarden:end -->\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    # As a CRLF checkout has them: every file, the section and the whole-file cursor rule.
    for path in (agents, cursor):
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    crlf = {path: path.read_bytes() for path in (agents, cursor)}
    check = _run(root, "export", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert _run(root, "export", "agents-md", "cursor").returncode == 0
    assert {path: path.read_bytes() for path in (agents, cursor)} == crlf
