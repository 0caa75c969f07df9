"""scarwarden/git/folder.py answers where the work tree is, and whether HEAD still names a
commit, as git does, or not at all: each layout below is asked of both, with real git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from conftest import git

from scarwarden.git import folder
from scarwarden.git.repository import git_path, head, toplevel


def _git_toplevel(path: Path) -> str | None:
    proc = subprocess.run(["git", "-C", str(path), "rev-parse", "--show-toplevel"], capture_output=True)
    return os.fsdecode(proc.stdout.rstrip(b"\n")) if proc.returncode == 0 else None


def _repo(path: Path, *, commit: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if commit:
        (path / "f.txt").write_text("x\n")
        git(path, "add", "f.txt")
        git(path, "commit", "-qm", "one")
    return path


def _agrees(path: Path) -> str | None:
    """folder's answer, checked against git's: the same, or None (git is asked)."""
    ours = folder.toplevel(str(path))
    assert ours is None or ours == _git_toplevel(path), path
    assert (str(toplevel(path)) if toplevel(path) is not None else None) == _git_toplevel(path)
    return ours


def test_a_plain_repository_its_subfolders_and_a_link_to_it(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    (root / "a" / "b").mkdir(parents=True)
    (tmp_path / "link").symlink_to(root / "a")
    for path in (root, root / "a" / "b", tmp_path / "link"):
        assert _agrees(path) == str(root.resolve())  # answered without git
    assert _agrees(_repo(tmp_path / "empty", commit=False)) == str((tmp_path / "empty").resolve())


def test_a_repository_inside_another_is_its_own(tmp_path: Path) -> None:
    outer = _repo(tmp_path / "outer")
    inner = _repo(outer / "inner")
    assert _agrees(inner) == str(inner.resolve())
    assert _agrees(outer) == str(outer.resolve())


def test_what_git_must_judge_is_left_to_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path / "repo")
    plain = tmp_path / "plain"
    plain.mkdir()
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    (bare / "sub").mkdir()
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
    skipped = _repo(tmp_path / "skipped")
    (skipped / "child" / ".git").mkdir(parents=True)  # a .git folder git does not count
    moved = _repo(tmp_path / "moved")
    git(moved, "config", "core.worktree", str(plain))
    extended = _repo(tmp_path / "extended")
    git(extended, "config", "extensions.noop", "true")
    git(extended, "config", "core.repositoryformatversion", "1")
    included = _repo(tmp_path / "included")
    git(included, "config", "include.path", str(tmp_path / "nothing"))
    layouts = [
        plain,  # no repository on the way up (this one's temporary folder has none)
        bare,
        bare / "sub",  # inside a bare repository
        root / ".git",
        root / ".git" / "refs",
        tmp_path / "wt",  # a worktree: .git is a file
        skipped / "child",
        moved,
        extended,
        included,
        tmp_path / "missing",
    ]
    for path in layouts:
        assert _agrees(path) is None, path
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert _agrees(root / ".." / "repo") is None
    monkeypatch.delenv("GIT_CEILING_DIRECTORIES")
    commit = git(root, "rev-parse", "HEAD").stdout.strip()
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_COUNT", "GIT_TEST_ANYTHING"):
        monkeypatch.setenv(name, str(root / ".git") if name == "GIT_DIR" else "1")
        assert folder.toplevel(str(root)) is None, name
        assert not folder.head_is(str(root), commit), name
        monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_SSL_CAINFO", "/etc/ssl/certs/x.crt")  # moves nothing
    assert folder.toplevel(str(root)) == str(root.resolve())


def test_a_hook_s_environment_moves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git runs every hook with ``GIT_PREFIX`` set (it writes it, never reads it) and a
    commit's hooks with ``GIT_INDEX_FILE``: the answers stay the files' (a pre-commit
    hook started two git processes more than it needed)."""
    root = _repo(tmp_path / "repo")
    commit = git(root, "rev-parse", "HEAD").stdout.strip()
    monkeypatch.setenv("GIT_PREFIX", "")
    monkeypatch.setenv("GIT_INDEX_FILE", ".git/index")
    assert _agrees(root) == str(root.resolve())
    assert folder.head_is(str(root), commit)


def _git_index_path(path: Path) -> Path:
    return Path(os.fsdecode(git(path, "rev-parse", "--git-path", "index").stdout.strip()))


def test_the_index_s_path_is_git_s(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _repo(tmp_path / "repo")
    (root / "sub").mkdir()
    git(root, "worktree", "add", "-q", str(tmp_path / "wt"))
    for value in (None, ".git/index", "elsewhere/idx", str(tmp_path / "abs.idx"), ""):
        if value is None:
            monkeypatch.delenv("GIT_INDEX_FILE", raising=False)
        else:
            monkeypatch.setenv("GIT_INDEX_FILE", value)
        for where in (root, root / "sub", tmp_path / "wt"):  # the last two: git is asked
            assert git_path(where, "index") == _git_index_path(where), (value, where)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another owner needs root")
def test_another_owner_is_left_to_git(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    os.chown(root, 65534, 65534)
    assert _agrees(root) is None


def test_head_is_read_from_the_ref_files_and_checked_by_value(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    first = git(root, "rev-parse", "HEAD").stdout.strip()
    assert folder.head_is(str(root), first)  # loose ref
    assert not folder.head_is(str(root), "0" * 40)
    assert head(root, known=first) == first
    git(root, "pack-refs", "--all")
    assert not (root / ".git" / "refs" / "heads" / "main").exists()
    assert folder.head_is(str(root), first)  # packed ref
    git(root, "commit", "-q", "--allow-empty", "-m", "two")
    second = git(root, "rev-parse", "HEAD").stdout.strip()
    assert not folder.head_is(str(root), first)
    assert head(root, known=first) == second  # git asked: HEAD moved
    git(root, "checkout", "-q", "--detach", first)
    assert folder.head_is(str(root), first)  # detached
    git(root, "checkout", "-q", "main")
    git(root, "tag", "-a", "-m", "t", "v1")
    tag = git(root, "rev-parse", "v1").stdout.strip()
    (root / ".git" / "refs" / "heads" / "odd").write_text(tag + "\n")  # a branch naming a tag object
    git(root, "symbolic-ref", "HEAD", "refs/heads/odd")
    assert tag != second and not folder.head_is(str(root), second)  # the ref holds the tag's ID
    assert head(root, known=second) == second  # git peels it: HEAD^{commit}
    git(root, "symbolic-ref", "HEAD", "refs/heads/unborn")
    assert not folder.head_is(str(root), second) and head(root, known=second) is None


def test_a_recall_on_a_current_index_starts_no_git(demo_repo) -> None:  # type: ignore[no-untyped-def]
    """The point of it all: no git process and no subprocess module in a cold recall."""
    import sys
    import time

    an_hour_ago = time.time() - 3600  # a playbook saved this second is read again (racy)
    os.utime(demo_repo.playbook_path, (an_hour_ago, an_hour_ago))
    code = (
        "import sys\nfrom scarwarden.cli import main\n"
        "try:\n    main(['recall', '--no-log', 'Draft a LinkedIn post'])\nexcept SystemExit:\n    pass\n"
        "print('SUBPROCESS', 'subprocess' in sys.modules, file=sys.stderr)\n"
    )
    first = subprocess.run([sys.executable, "-c", code], cwd=demo_repo.root, capture_output=True, text=True)
    assert "PB-01" in first.stdout, first.stderr  # this one built the index (with git)
    again = subprocess.run([sys.executable, "-c", code], cwd=demo_repo.root, capture_output=True, text=True)
    assert "PB-01" in again.stdout and "SUBPROCESS False" in again.stderr, again.stderr


def test_a_config_git_cannot_read_is_left_to_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bad line in the repository's config, or in the global one, makes git refuse to
    run: the folders are not read past it."""
    root = _repo(tmp_path / "repo")
    assert folder.toplevel(str(root)) == str(root.resolve())
    config = root / ".git" / "config"
    good = config.read_text()
    for bad in ("| Provenance gate | passed |\n", '[alias]\n\tlg = "log\n', "[core] bare = false\n"):
        config.write_text(good + bad)
        assert _agrees(root) is None, bad
    config.write_text(good)
    global_config = Path(os.environ["GIT_CONFIG_GLOBAL"])
    global_config.write_text(global_config.read_text() + "not a config line\n")
    assert _agrees(root) is None
