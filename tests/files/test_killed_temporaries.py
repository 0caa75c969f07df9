"""Temporary files a killed run leaves in the git directory are removed by the next
write (issue 27: 65 were left after 90 kills). The leftovers are made by a real
process killed with SIGKILL, through the functions that make them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import Cli, git

from scarwarden.repo import MemoryRepo

CHILD = """
import os, signal, sys
from pathlib import Path
from scarwarden.git.temps import INDEX_PREFIX, MESSAGE_PREFIX, temp_name
gitdir = Path(sys.argv[1])
temp_name(gitdir, INDEX_PREFIX)
temp_name(gitdir, MESSAGE_PREFIX)
cache = gitdir / "scarwarden" / "ledger"
cache.mkdir(parents=True, exist_ok=True)
(cache / f"{'a' * 40}.json.tmp-{os.getpid()}").write_bytes(b"half a cache file")
(cache / f"cited.json.tmp-{os.getpid()}").write_bytes(b"half")
os.kill(os.getpid(), signal.SIGKILL)
"""


def leftovers(gitdir: Path) -> list[str]:
    found = list(gitdir.glob("scarwarden-*")) + list((gitdir / "scarwarden" / "ledger").glob("*.tmp-*"))
    return sorted(p.name for p in found)


def test_the_next_write_removes_what_killed_runs_left(cli: Cli, demo_repo: MemoryRepo) -> None:
    gitdir = Path(git(demo_repo.root, "rev-parse", "--absolute-git-dir").stdout.strip())
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", CHILD, str(gitdir)])
        assert proc.returncode == -9
    assert len(leftovers(gitdir)) == 12
    out = cli("episode", "add", "--task", "After the kills", "--action", "Wrote it")
    assert out.exit_code == 0, out.output
    assert leftovers(gitdir) == []
