"""An index that cannot be written (an immutable file, a full disk, a read-only file
system) is no corrupt index: a refresh that fails so says what SQLite said, and no
rebuild is claimed before one has happened."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scarwarden", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def _chattr(flag: str, path: Path) -> bool:
    if shutil.which("chattr") is None:
        return False
    return subprocess.run(["chattr", flag, str(path)], capture_output=True).returncode == 0


def test_an_immutable_index_is_not_called_corrupt_nor_rebuilt(demo_repo: MemoryRepo) -> None:
    """Before: 'the index at ... was corrupt; rebuilt it from the files', then the
    rebuild failed ('operation not permitted'): two lines, the first false twice."""
    root = demo_repo.root
    assert _run(root, "index").returncode == 0
    added = _run(root, "episode", "add", "--task", "Write the launch email", "--correction", "One link")
    assert added.returncode == 0, added.stderr
    if not _chattr("+i", demo_repo.index_path):
        pytest.skip("chattr +i needs root and a file system that supports it")
    try:
        before = demo_repo.index_path.read_bytes()
        result = _run(root, "recall", "Write the launch email", "--no-log")
        after = demo_repo.index_path.read_bytes()
    finally:
        _chattr("-i", demo_repo.index_path)
    assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
    assert "corrupt" not in result.stderr and "rebuilt" not in result.stderr, result.stderr
    assert result.stderr.startswith("error: .scarwarden/index.db: operation not permitted"), result.stderr
    assert after == before
    fresh = _run(root, "recall", "Write the launch email", "--no-log")
    assert fresh.returncode == 0 and fresh.stderr == "", fresh.stderr


@pytest.mark.parametrize("table", ["episodes", "rules", "rule_terms", "episode_rules", "episodes_fts"])
def test_an_index_missing_a_table_is_rebuilt(cli, demo_repo: MemoryRepo, table: str) -> None:
    """An index whose schema version is right but which lacks a table (dropped by hand,
    or a damaged file) made every read an internal error ('OperationalError: no such
    table: episodes', 'this is a bug'), until 'index --rebuild': it is rebuilt now."""
    assert cli("index").exit_code == 0
    fresh = cli("recall", "--json", "--no-log", "Post our discount code on Twitter").stdout
    with sqlite3.connect(demo_repo.index_path) as conn:
        conn.execute(f"DROP TABLE {table}")
    for args in (
        ("episode", "list", "--json"),
        ("recall", "--json", "--no-log", "Post our discount code on Twitter"),
    ):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    assert "internal error" not in result.output and json.loads(result.stdout) == json.loads(fresh)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="sqlite3 errors carry their code from Python 3.11")
def test_an_index_another_program_holds_locked_is_said_not_rebuilt(
    demo_repo: MemoryRepo, cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another program's lock past the wait (an sqlite3 shell's open transaction) was read
    as corruption: "the index was corrupt; rebuilt it from the files", and a rebuild under
    the other's lock. Now exit 2 naming the lock, the file untouched."""
    from scarwarden.index import open_index, schema

    with open_index(demo_repo):
        pass
    before = demo_repo.index_path.stat()
    monkeypatch.setattr(schema, "BUSY_MS", 200)  # SQLite's own wait, shortened: not a mock
    other = sqlite3.connect(demo_repo.index_path, isolation_level=None)
    try:
        other.execute("BEGIN EXCLUSIVE")
        result = cli("recall", "Draft a LinkedIn post announcing our beta")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "index.db is locked by another program (waited 0.2 s)" in result.stderr
    assert "corrupt" not in result.output and "rebuilt" not in result.output
    after = demo_repo.index_path.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_size,
    )
    assert cli("recall", "Draft a LinkedIn post announcing our beta").exit_code == 0
