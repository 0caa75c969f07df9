"""``export --commit`` puts its section onto the AGENTS.md HEAD holds when it reads it; a
commit another process makes before ours is built must not be undone by ours."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, head

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo

EP = "ep-hkgnqdz88f"  # a committed demo episode
OTHER = b"# Our agents\n\nBuild with ninja, not make.\n"

#: git's fsmonitor hook, run by the ``git ls-files -s -- AGENTS.md`` export makes after
#: reading HEAD's files and before building its commit: once (the armed flag removed),
#: it commits another version of AGENTS.md, as another process committing then would.
HOOK = """#!/bin/sh
case "$(tr '\\0' ' ' < /proc/$PPID/cmdline)" in
  *"ls-files -s -z -- AGENTS.md"*) ;;
  *) exit 1 ;;
esac
rm "$ARMED" 2>/dev/null || exit 1
export GIT_INDEX_FILE="$ARMED.index"
git read-tree HEAD
blob=$(git hash-object -w "$OTHER")
git update-index --cacheinfo "100644,$blob,AGENTS.md"
commit=$(git commit-tree -p HEAD -m "another process: ninja" "$(git write-tree)")
git update-ref HEAD "$commit"
exit 1
"""


def _run(root: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scarwarden", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="the hook reads /proc")
def test_a_commit_made_meanwhile_is_not_undone(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """Another process committed a change to AGENTS.md between the export's read of
    HEAD's AGENTS.md and its commit: the export committed its section onto the version
    it had read, on top of the other commit, silently undoing it. It is now refused
    (HEAD moved), nothing committed, the file put back."""
    import os

    root = demo_repo.root
    (root / "AGENTS.md").write_bytes(b"# Our agents\n\nBuild with make.\n")
    assert _run(root, "export", "agents-md", "--commit").returncode == 0
    added = _run(root, "rule", "add", "--text", "Check the invoice owner first.", "--cites", EP)
    assert added.returncode == 0, added.stderr
    (tmp_path / "other.md").write_bytes(OTHER)
    (tmp_path / "fsmonitor").write_text(HOOK)
    (tmp_path / "fsmonitor").chmod(0o755)
    git(root, "config", "core.fsmonitor", str(tmp_path / "fsmonitor"))
    armed = tmp_path / "armed"
    armed.touch()
    worktree, commit = (root / "AGENTS.md").read_bytes(), head(root)
    env = {**os.environ, "ARMED": str(armed), "OTHER": str(tmp_path / "other.md")}
    result = _run(root, "export", "agents-md", "--commit", env=env)
    assert not armed.exists(), "the hook did not run in the window"
    other = head(root)
    assert git(root, "rev-parse", "HEAD~1").stdout.strip() == commit
    assert git(root, "log", "-1", "--format=%s").stdout == "another process: ninja\n"  # not undone
    assert result.returncode == ExitCode.CHECK_FAILED, result.stdout + result.stderr
    assert result.stderr.startswith("error: HEAD moved while the export was being made"), result.stderr
    assert "run the command again" in result.stderr and "Traceback" not in result.stderr
    assert head(root) == other and (root / "AGENTS.md").read_bytes() == worktree
    assert git(root, "show", "HEAD:AGENTS.md").stdout.encode() == OTHER
    again = _run(root, "export", "agents-md", "--commit")  # run again: onto the other's version
    assert again.returncode == 0, again.stderr
    committed = git(root, "show", "HEAD:AGENTS.md").stdout
    assert committed.startswith(OTHER.decode()) and "Check the invoice owner first." in committed
