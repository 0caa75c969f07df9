"""``export --output``: where it may write, and what it keeps.

``export cursor --output notes.md`` (or ``claude-skill``, the other format that writes a
whole file) replaced an existing file that held no export, the user's text lost (outside
the repository, beyond git's reach): refused now (exit 2), the file kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scarwarden", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("fmt", ["cursor", "claude-skill"])
@pytest.mark.parametrize("inside", [True, False])
def test_a_whole_file_export_does_not_replace_a_file_that_is_no_export(
    demo_repo: MemoryRepo, tmp_path: Path, fmt: str, inside: bool
) -> None:
    root = demo_repo.root
    target = root / "notes.md" if inside else tmp_path / "outside" / "notes.md"
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(b"my own notes\n")
    before = git(root, "status", "--porcelain").stdout
    for args in ((), ("--check",)):
        result = _run(root, "export", fmt, "--output", str(target), *args)
        assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
        assert "is not a Scarwarden export" in result.stderr and "Traceback" not in result.stderr
        assert "hint: " in result.stderr
    assert target.read_bytes() == b"my own notes\n"
    assert git(root, "status", "--porcelain").stdout == before


def test_a_whole_file_export_still_refreshes_its_own_file(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    target = tmp_path / "scarwarden.mdc"
    first = _run(demo_repo.root, "export", "cursor", "--output", str(target))
    assert first.returncode == 0, first.stderr
    written = target.read_bytes()
    target.write_bytes(written.replace(b"<!-- scarwarden:end -->", b"stale\n<!-- scarwarden:end -->"))
    again = _run(demo_repo.root, "export", "cursor", "--output", str(target))
    assert again.returncode == 0, again.stderr
    assert target.read_bytes() == written
