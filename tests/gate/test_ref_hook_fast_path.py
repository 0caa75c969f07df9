"""The reference-transaction hook's shell fast path (issue 30): a branch move whose new
commits touch no memory file is let through by git alone, without starting Python; a
move that touches the memory, or a memory_dir set in scarwarden.yaml, takes the gate."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conftest import git

from scarwarden.gate.hooks import render_hook
from scarwarden.repo import MemoryRepo

GONE = "/nonexistent/python"  # the gate cannot start: any run of it fails loudly


def hook(repo: MemoryRepo, tmp_path: Path) -> Path:
    path = tmp_path / "reference-transaction"
    path.write_text(render_hook(GONE, "reference-transaction"))
    path.chmod(0o755)
    return path


def commit(repo: MemoryRepo, rel: str, text: str) -> tuple[str, str]:
    old = git(repo.root, "rev-parse", "HEAD").stdout.strip()
    (repo.root / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / rel).write_text(text)
    git(repo.root, "add", rel)
    tree = git(repo.root, "write-tree").stdout.strip()
    new = git(repo.root, "commit-tree", tree, "-p", old, "-m", f"add {rel}").stdout.strip()
    return old, new


def run(path: Path, root: Path, lines: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SCARWARDEN_SKIP"}
    env["PATH"] = "/usr/bin:/bin"  # no scarwarden on it
    return subprocess.run(
        [str(path), "prepared"], cwd=root, input=lines, capture_output=True, text=True, env=env
    )


def test_a_move_without_memory_files_never_starts_python(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    path = hook(demo_repo, tmp_path)
    old, new = commit(demo_repo, "src/app.py", "print('hi')\n")
    done = run(path, demo_repo.root, f"{old} {new} refs/heads/main\n{old} {new} HEAD\n")
    assert done.returncode == 0 and done.stderr == ""
    # The same move touching the memory starts the gate (which cannot start here).
    git(demo_repo.root, "reset", "-q")
    _old, touched = commit(demo_repo, "memory/notes.md", "a note\n")
    done = run(path, demo_repo.root, f"{old} {touched} refs/heads/main\n")
    assert done.returncode == 1 and "cannot run the provenance gate" in done.stderr
    # Two refs in one transaction: one of them touching the memory is enough.
    done = run(path, demo_repo.root, f"{old} {new} refs/heads/a\n{old} {touched} refs/heads/b\n")
    assert done.returncode == 1 and "cannot run the provenance gate" in done.stderr


def test_a_configured_memory_folder_always_takes_the_gate(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    path = hook(demo_repo, tmp_path)
    old, new = commit(demo_repo, "src/app.py", "print('hi')\n")
    (demo_repo.root / "scarwarden.yaml").write_text("memory_dir: memory\n")
    done = run(path, demo_repo.root, f"{old} {new} refs/heads/main\n")
    assert done.returncode == 1 and "cannot run the provenance gate" in done.stderr


def test_a_zero_value_always_takes_the_gate(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    path = hook(demo_repo, tmp_path)
    _old, new = commit(demo_repo, "src/app.py", "print('hi')\n")
    zero = "0" * 40
    done = run(path, demo_repo.root, f"{zero} {new} refs/heads/main\n")
    assert done.returncode == 1 and "cannot run the provenance gate" in done.stderr
