"""``episode import`` of a big file: memory grows with the largest conversation and the
IDs the commit names, not with every conversation held whole (measured in a real
child process: its peak resident set, ``ru_maxrss`` from ``wait4``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scarwarden.repo import MemoryRepo

#: Tiny conversations in the big file: a fixed count, so the bounds do not depend on
#: the machine's speed.
COUNT = 50_000
#: The peak resident set allowed, in KiB. Before the fix (every conversation's input,
#: its validated episode and its rendered text held together) an import of COUNT took
#: 196 to 201 MB, its dry run 86 MB; after it, 136 MB (the rest is the commit's own
#: batch: the write journal, the commit's index entries, the gate reading every added
#: episode) and 35 MB.
BOUND_KIB = 165 * 1024
DRY_RUN_BOUND_KIB = 60 * 1024


def tiny_runs(path: Path, count: int, *, last: str | None = None) -> Path:
    with path.open("w") as out:
        for n in range(count):
            run = [{"role": "user", "content": f"task {n}"}, {"role": "assistant", "content": f"done {n}"}]
            out.write(json.dumps(run) + "\n")
        if last is not None:
            out.write(last + "\n")
    return path


def peak_of(repo: MemoryRepo, *args: str) -> tuple[int, int, str]:
    """Exit code, peak RSS (KiB) and stderr of ``scarwarden episode import ARGS``."""
    argv = [sys.executable, "-m", "scarwarden", "-C", str(repo.root), "episode", "import", *args]
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, usage.ru_maxrss, err


def commits(repo: MemoryRepo) -> int:
    argv = ["git", "rev-list", "--count", "HEAD"]
    return int(subprocess.run(argv, cwd=repo.root, capture_output=True, text=True).stdout)


@pytest.mark.slow
def test_a_big_import_does_not_hold_every_conversation(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    runs = tiny_runs(tmp_path / "runs.jsonl", COUNT)
    before = commits(memory_repo)
    code, peak, err = peak_of(memory_repo, "--format", "openai-chat", str(runs))
    assert code == 0, err
    assert f"Committed {COUNT} episode(s) from {COUNT} conversation(s)" in err
    assert commits(memory_repo) == before + 1
    assert peak < BOUND_KIB, f"peak RSS {peak // 1024} MB"


@pytest.mark.slow
def test_a_dry_run_of_a_big_file_in_bounded_memory(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    runs = tiny_runs(tmp_path / "runs.jsonl", COUNT)
    before = commits(memory_repo)
    code, peak, err = peak_of(memory_repo, "--format", "openai-chat", str(runs), "--dry-run")
    assert code == 0, err
    assert f"Would add {COUNT} episode(s) from {COUNT} conversation(s)" in err
    assert commits(memory_repo) == before
    assert not list((memory_repo.root / memory_repo.episodes_rel).rglob("*.yaml"))
    assert peak < DRY_RUN_BOUND_KIB, f"peak RSS {peak // 1024} MB"
