"""Each commit's diff kept by its two commit IDs (issue 30): a walk over commits already
walked asks git for no diff; a damaged entry is diffed again; one rewritten whole (its
hash fixed) is trusted as the chain of trust says, and ``SCARWARDEN_LEDGER_CACHE=off``
diffs every commit again and catches what it hid."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import git
from helpers import commit_no_verify, write_episode

from scarwarden.gate.ledger import cache_dir
from scarwarden.gate.walk_diffs import DiffCache
from scarwarden.repo import MemoryRepo


def verify(root: Path, trace: Path, **env: str) -> subprocess.CompletedProcess[str]:
    trace.unlink(missing_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "scarwarden", "verify"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "GIT_TRACE": str(trace), **env},
    )


def diff_trees(trace: Path) -> int:
    return sum(" diff-tree " in line for line in trace.read_text().splitlines() if "trace: built-in" in line)


def test_a_walked_commit_is_not_diffed_again(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    for i in range(3):
        write_episode(memory_repo, f"ep-walkd{i:05d}", task=f"task {i}")
        commit_no_verify(memory_repo.root, f"episode {i}")
    trace = tmp_path / "trace"
    first = verify(memory_repo.root, trace)
    assert first.returncode == 0 and diff_trees(trace) == 1, first.stdout + first.stderr
    where = cache_dir(memory_repo.root)
    assert where is not None and len(list((where / "diffs").iterdir())) >= 4
    again = verify(memory_repo.root, trace)
    assert again.returncode == 0 and diff_trees(trace) == 0 and again.stdout == first.stdout
    # A damaged entry: that commit alone is diffed again.
    head = git(memory_repo.root, "rev-parse", "HEAD").stdout.strip()
    entry = next((where / "diffs").glob(f"{head}-*"))
    good = entry.read_bytes()
    entry.write_bytes(good.replace(b"ep-walkd00002", b"ep-walkd00009"))
    damaged = verify(memory_repo.root, trace)
    assert damaged.returncode == 0 and diff_trees(trace) == 1 and entry.read_bytes() == good
    off = verify(memory_repo.root, trace, SCARWARDEN_LEDGER_CACHE="off")
    assert off.returncode == 0 and diff_trees(trace) == 1


def test_a_rewritten_diff_is_trusted_and_verify_without_the_cache_catches_it(
    memory_repo: MemoryRepo, tmp_path: Path
) -> None:
    write_episode(memory_repo, "ep-walkd00001", task="kept")
    commit_no_verify(memory_repo.root, "an episode")
    trace = tmp_path / "trace"
    assert verify(memory_repo.root, trace).returncode == 0
    rel = git(memory_repo.root, "ls-files", "--", f"{memory_repo.episodes_rel}/*/ep-walkd00001.yaml").stdout
    (memory_repo.root / rel.strip()).unlink()
    commit_no_verify(memory_repo.root, "the episode deleted")
    head, parent = (git(memory_repo.root, "rev-parse", r).stdout.strip() for r in ("HEAD", "HEAD~1"))
    refused = verify(memory_repo.root, trace)
    assert refused.returncode == 1 and "deleted" in refused.stdout
    # The deletion's diff rewritten whole as no change, its hash fixed.
    cache = DiffCache(memory_repo.root)
    cache.save((head, parent), memory_repo.memory_rel, [])
    assert verify(memory_repo.root, trace).returncode == 0  # trusted, as whoever writes .git is
    off = verify(memory_repo.root, trace, SCARWARDEN_LEDGER_CACHE="off")
    assert off.returncode == 1 and "deleted" in off.stdout
    assert json.loads(cache.folder.joinpath(f"{head}-{parent}").read_bytes().partition(b"\n")[2]) == []
