"""A batch of any size is written: the paths and index entries go to git on stdin or in
chunks, never all on one command line. A batch of ~18k episodes passed them as arguments
and failed with "internal error: OSError: [Errno 7] Argument list too long".

Writing 18k episodes takes minutes, so the commands run here with a lower stack limit:
Linux lets a command line (environment included) hold a quarter of it, and no less than
128 KiB, which a batch of a few thousand episodes' paths passes."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git

from scarwarden.repo import MemoryRepo

STACK = 512 * 1024  # the command line's limit is then 128 KiB
EPISODES = 3300  # ~135 KiB of paths alone, ~370 KiB as --cacheinfo arguments


def _small_stack() -> None:
    resource.setrlimit(resource.RLIMIT_STACK, (STACK, resource.getrlimit(resource.RLIMIT_STACK)[1]))


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, preexec_fn=_small_stack
    )


def test_the_limit_is_lowered_as_the_tests_assume(tmp_path: Path) -> None:
    proc = _run("-c", "import os; print(os.sysconf('SC_ARG_MAX'))", cwd=tmp_path)
    assert int(proc.stdout) == STACK // 4 < EPISODES * len("memory/episodes/2026/01/ep-0123456789.yaml")


@pytest.mark.parametrize("how", ["commit", "no-commit"])
def test_a_batch_longer_than_a_command_line_is_written(
    demo_repo: MemoryRepo, tmp_path: Path, how: str
) -> None:
    root = demo_repo.root
    # The user's staged file: the real index is not swapped for ours, our entries are set.
    (root / "mine.txt").write_text("staged by the user\n")
    git(root, "add", "mine.txt")
    batch = tmp_path / "batch.jsonl"
    lines = (
        json.dumps({"task": f"task {i}", "outcome": "done", "correction": f"check {i}"})
        for i in range(EPISODES)
    )
    batch.write_text("\n".join(lines) + "\n")
    before = git(root, "rev-parse", "HEAD").stdout

    flags = ["--no-commit"] if how == "no-commit" else []
    proc = _run("-m", "scarwarden", "episode", "add", "--file", str(batch), *flags, cwd=root)

    assert proc.returncode == 0, proc.stderr
    assert "internal error" not in proc.stderr
    status = git(root, "status", "--porcelain").stdout.splitlines()
    new = [line for line in status if line.startswith("A  memory/episodes/")]
    if how == "commit":
        assert git(root, "rev-list", "--count", f"{before.strip()}..HEAD").stdout.strip() == "1"
        assert git(root, "show", "--name-only", "--format=", "HEAD").stdout.count(".yaml") == EPISODES
        assert status == ["A  mine.txt"]  # ours are in the index as committed
    else:
        assert git(root, "rev-parse", "HEAD").stdout == before
        assert len(new) == EPISODES and "A  mine.txt" in status
    assert not any(p.name.startswith("scarwarden-") for p in (root / ".git").iterdir())


def test_a_killed_big_batch_is_finished_by_the_next_run(demo_repo: MemoryRepo) -> None:
    """The journal's roll-forward looks the batch's paths up and sets their entries."""
    root = demo_repo.root
    script = f"""
import sys
from scarwarden.files import write_journal
from scarwarden.files.write_journal import Planned
from scarwarden.git import index_commit
from scarwarden.git.temps import drop
from scarwarden.repo import open_repo
repo = open_repo({str(root)!r})
paths = [f"memory/episodes/2031/01/ep-big{{i:07d}}.yaml" for i in range({EPISODES})]
planned = [Planned(path, b"id: %d\\n" % i) for i, path in enumerate(paths)]
record = write_journal.begin(repo, planned, new=True)
for item in planned:
    (repo.root / item.path).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / item.path).write_bytes(item.data)
prepared = index_commit.prepare_commit(repo.root, "episodes: big\\n", [p.path for p in planned])
record["commit"] = prepared.sha
record["entries"] = [[e.mode, e.blob, e.path] for e in prepared.entries]
write_journal._save(repo, record)
drop(prepared.index)
import subprocess
subprocess.run(["git", "update-ref", "HEAD", prepared.sha], check=True)  # landed, index not set
print(write_journal.recover(repo))
"""
    proc = _run("-c", script, cwd=root)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "rolled forward"
    assert git(root, "status", "--porcelain").stdout == ""
