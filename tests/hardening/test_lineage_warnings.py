"""When the lineage counts cannot be read, ``distill`` and ``review`` warn and go on
(exit 0), naming the file as the CLI's errors do (its path in the repository, what is
wrong, the fix): never git's or Python's "[Errno 17] File exists: '/abs/path'"."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scarwarden.repo import MemoryRepo


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["scarwarden", "-C", str(root), *args], capture_output=True, text=True, timeout=60)


def _break(root: Path, cause: str) -> str:
    """The index made unusable, as a user could: what the warning must name."""
    state = root / ".scarwarden"
    if cause == "unreadable index":
        (state / "index.db").chmod(0)
        if os.geteuid() == 0 or os.access(state / "index.db", os.R_OK):
            pytest.skip("chmod 000 does not stop root from reading the index")
        return ".scarwarden/index.db: permission denied"
    if cause == "a folder where the index should be":
        (state / "index.db").unlink()
        (state / "index.db").mkdir()
        return ".scarwarden/index.db: is a folder, where a file should be; hint: "
    shutil.rmtree(state)
    state.write_text("not a folder\n")
    return ".scarwarden: is in the way: it exists, and is not a folder; hint: move it away"


@pytest.mark.parametrize(
    "cause", ["unreadable index", "a folder where the index should be", "a file where .scarwarden should be"]
)
@pytest.mark.parametrize(
    "args", [("distill", "--offline", "--dry-run"), ("review",)], ids=["distill", "review"]
)
def test_an_unusable_index_is_a_one_line_warning_naming_it(
    demo_repo: MemoryRepo, cause: str, args: tuple[str, ...]
) -> None:
    root = demo_repo.root
    assert _run(root, "index").returncode == 0
    named = _break(root, cause)

    result = _run(root, *args)

    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "lineage counts unavailable" in line]
    assert len(warnings) == 1, result.stderr
    assert f"lineage counts unavailable ({named}" in warnings[0]
    assert "Errno" not in result.stderr and str(root) not in result.stderr
    assert "Traceback" not in result.stderr and "error:" not in result.stderr
