"""The reference-transaction hook's shell fast path (issue 30): a branch move whose new
commits touch no memory file is let through by git alone, without starting Python; a
move that touches the memory, or a memory_dir set in scarwarden.yaml, takes the gate."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
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


def test_a_door_commit_lands_without_python_and_its_mark_vouches_for_no_other_move(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``episode add`` (a write door) gated the commit it makes on its parent: neither
    its pre-commit hook (told which index the door checked) nor, through its mark, the
    reference-transaction hook starts Python (here they cannot); the mark is removed
    once landed and covers no other commit, nor the same commit on another parent."""
    from scarwarden.api import Memory
    from scarwarden.git.index_commit import DOOR_MARKS

    root = demo_repo.root
    for name in ("pre-commit", "reference-transaction"):  # neither can start the gate
        path = root / ".git" / "hooks" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render_hook(GONE, name))
        path.chmod(0o755)
    before = git(root, "rev-parse", "HEAD").stdout.strip()
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no scarwarden on it either
    recorded = Memory(demo_repo).record("Write the webinar invite", outcome="Sent", agent="writer")
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    assert git(root, "rev-parse", "HEAD~1").stdout.strip() == before and head != before
    assert recorded.id in git(root, "show", "--stat", "HEAD").stdout
    marks = root / ".git" / DOOR_MARKS
    assert not list(marks.iterdir())  # removed once landed
    # A mark naming one move: another commit on that parent, or that commit on another
    # parent, still takes the gate (which cannot start here).
    old, other = commit(demo_repo, "memory/notes.md", "a note\n")
    (marks / head).write_text(f"{old}\n")
    done = run(path, root, f"{old} {other} refs/heads/main\n")
    assert done.returncode == 1 and "cannot run the provenance gate" in done.stderr
    (marks / other).write_text(f"{before}\n")
    done = run(path, root, f"{old} {other} refs/heads/main\n")
    assert done.returncode == 1 and "cannot run the provenance gate" in done.stderr
    (marks / other).write_text(f"{old}\n")
    assert run(path, root, f"{old} {other} refs/heads/main\n{old} {other} HEAD\n").returncode == 0
    # Naming another index than the one being committed skips nothing.
    git(root, "reset", "-q", "--hard", head)
    (root / "memory" / "notes.md").write_text("another note\n")
    git(root, "add", "memory/notes.md")
    env = {
        **os.environ,
        "SCARWARDEN_DOOR_CHECKED": str(root / ".git" / "other-index"),
        "PATH": "/usr/bin:/bin",
    }
    env.pop("SCARWARDEN_SKIP", None)
    done = subprocess.run(["git", "commit", "-qm", "x"], cwd=root, capture_output=True, text=True, env=env)
    assert done.returncode != 0 and "cannot run the provenance gate" in done.stderr


def test_the_memory_tree_is_compared_commit_by_commit(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """The fast path compares each new commit's memory tree with each of its parents':
    a change undone by a later commit, a merge bringing one in, the folder removed, or a
    commit with no parent all take the gate; a folder absent on both sides does not."""
    path = hook(demo_repo, tmp_path)
    root = demo_repo.root
    start, _ = commit(demo_repo, "src/app.py", "print('hi')\n")

    def gated(old: str, new: str) -> bool:
        done = run(path, root, f"{old} {new} refs/heads/main\n")
        assert done.returncode in (0, 1), done.stderr
        return done.returncode == 1 and "cannot run the provenance gate" in done.stderr

    def on(parent: str, rel: str, text: str | None, *more: str) -> str:
        git(root, "read-tree", parent)
        if text is None:
            git(root, "rm", "-q", "-r", "--cached", rel)
        else:
            (tmp_path / "blob").write_text(text)
            blob = git(root, "hash-object", "-w", str(tmp_path / "blob")).stdout.strip()
            git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
        tree = git(root, "write-tree").stdout.strip()
        parents = [arg for p in (parent, *more) for arg in ("-p", p)]
        return git(root, "commit-tree", tree, *parents, "-m", rel).stdout.strip()

    code = on(start, "src/other.py", "x = 1\n")
    assert not gated(start, code)
    added = on(code, "memory/notes.md", "a note\n")
    undone = on(added, "memory/notes.md", None)
    assert (
        git(root, "rev-parse", f"{undone}:memory").stdout == git(root, "rev-parse", f"{start}:memory").stdout
    )
    assert gated(start, undone)  # the tree at the end is the same; a commit between is not
    side = on(start, "memory/side.md", "side\n")
    merge = on(code, "memory/side.md", "side\n", side)
    assert gated(code, merge)
    assert gated(start, on(start, "memory", None))  # the folder removed
    tree = git(root, "rev-parse", f"{code}^{{tree}}").stdout.strip()
    orphan = git(root, "commit-tree", tree, "-m", "a root commit").stdout.strip()
    assert gated(start, on(code, "src/x.py", "y\n", orphan))  # an unrelated history merged
    # No memory folder on either side: nothing for the gate.
    bare = on(on(start, "memory", None), "src/z.py", "z\n")
    assert not gated(git(root, "rev-parse", f"{bare}^").stdout.strip(), bare)
    git(root, "read-tree", "HEAD")
