"""``scarwarden recall --limit <a 60,000-digit number> TASK`` printed a Python traceback
(exit 1: "ValueError: Exceeds the limit (4300 digits) for integer string conversion"):
the click-free recall door read the number with ``int()``. A number that long is now
handed to click, which says it is no valid integer (exit 2), quoting it by its start."""

from __future__ import annotations

import subprocess
import sys

import pytest

from scarwarden.repo import MemoryRepo

HUGE = "9" * 60_000


@pytest.mark.parametrize("limit", [["--limit", HUGE], [f"--limit={HUGE}"], ["-n", HUGE], [f"-n{HUGE}"]])
def test_a_huge_limit_is_a_usage_error_not_a_traceback(demo_repo: MemoryRepo, limit: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scarwarden", "recall", *limit, "Draft a post"],
        cwd=demo_repo.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr[-500:]
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert "'99999999999999999999...' (60,000 characters) is not a valid integer" in done.stderr


def test_a_long_but_readable_limit_still_recalls(demo_repo: MemoryRepo) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "scarwarden", "recall", "--limit", "9" * 40, "--json", "Draft a post"],
        cwd=demo_repo.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("{")
