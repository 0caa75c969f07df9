"""The gate under the real ``pre-commit`` framework (hook id ``scarwarden-check``).

The framework installs the hook repository with pip into its own virtualenv (from PyPI,
several seconds), so the hook repository (a git repo holding a copy of this checkout's
package files, uncommitted work included) and PRE_COMMIT_HOME are built once per run,
shared by every module that uses them (tests/gate/test_secrets.py too) and by xdist's
workers: the framework locks its store itself, as for two commits at once.
Exit code 1 alone proves nothing here (a setup error also exits 1): every assertion is
on the hook's own message.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, git
from helpers import NEW_ID, add_rule, episode_text, first_episode, write

from scarwarden.repo import MemoryRepo

pytestmark = pytest.mark.slow

PROJECT_FILES = ("setup.cfg", "pyproject.toml", "README.md", ".pre-commit-hooks.yaml")


def _run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of this run that every test process shares: xdist's workers have their
    temporary folders side by side in one (removed with them when the run passes)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def hook_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository with this checkout's package, as a hook repo; (path, sha).

    Built once per run: a second module importing this fixture has a fixture of its own
    (a second session cache), and each xdist worker a session of its own; a new commit
    would give the framework a new ``rev`` to install again (~5 s each)."""
    shared = _run_folder(tmp_path_factory) / "framework-hookrepo"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the other worker waits for the build, then reads it
        done = shared / "sha"
        if not done.exists():
            shutil.rmtree(shared, ignore_errors=True)  # a build that failed half-way
            shared.mkdir()
            done.write_text(_build_hook_repo(shared / "scarwarden"))
        return shared / "scarwarden", done.read_text()


def _build_hook_repo(path: Path) -> str:
    path.mkdir()
    for name in PROJECT_FILES:
        shutil.copy2(ROOT / name, path / name)
    shutil.copytree(
        ROOT / "scarwarden", path / "scarwarden", ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
    )
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "PATH": "/usr/bin:/bin",
        "HOME": str(path.parent),
    }
    for args in (
        ("init", "-q", "-b", "main"),
        ("add", "-A"),
        ("-c", "commit.gpgsign=false", "commit", "-q", "-m", "hook repo"),
    ):
        subprocess.run(["git", *args], cwd=path, check=True, env=env, capture_output=True)
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=path, check=True, env=env, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="session")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The framework's store, one per run like :func:`hook_repo` (it locks itself)."""
    home = _run_folder(tmp_path_factory) / "pre-commit-home"
    home.mkdir(exist_ok=True)
    return home


@pytest.fixture
def framework(pre_commit_home: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    monkeypatch.setenv("PRE_COMMIT_HOME", str(pre_commit_home))
    # try-repo builds its environment in a throw-away store; a shared pip cache at least
    # saves the second build the downloads.
    monkeypatch.setenv("PIP_CACHE_DIR", str(pre_commit_home / "pip-cache"))
    # The framework's virtualenv: its seed wheels unpacked once for the run (not in each
    # test's own HOME), and no "periodic update" of them (a download from PyPI, in the
    # foreground and again in a process left running: ~3 s of CPU a build); nor pip's
    # own version check. The hook environment is built as before, from the same wheels.
    monkeypatch.setenv("VIRTUALENV_OVERRIDE_APP_DATA", str(pre_commit_home / "virtualenv-app-data"))
    monkeypatch.setenv("VIRTUALENV_NO_PERIODIC_UPDATE", "1")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")

    def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", *args], cwd=cwd, capture_output=True, text=True
        )

    return run


def test_try_repo_rejects_an_edit_of_an_existing_episode(
    framework, hook_repo: tuple[Path, str], demo_repo: MemoryRepo
) -> None:
    root = demo_repo.root
    rel = first_episode(demo_repo)
    (root / rel).write_text((root / rel).read_text().replace("task: ", "task: Edited ", 1))
    git(root, "add", rel)
    proc = framework(root, "try-repo", str(hook_repo[0]), "scarwarden-check")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "scarwarden provenance gate" in out and "Failed" in out
    assert f"{rel}: episode {Path(rel).stem} was modified; the ledger is append-only" in out
    assert "scarwarden check: 1 problem in staged memory changes" in out


def test_installed_framework_hook_guards_git_commit_and_ci_range(
    framework, hook_repo: tuple[Path, str], demo_repo: MemoryRepo
) -> None:
    root = demo_repo.root
    path, sha = hook_repo
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n  - id: scarwarden-check\n"
    )
    git(root, "add", ".pre-commit-config.yaml")
    git(root, "commit", "-q", "-m", "use the gate via pre-commit")
    base = git(root, "rev-parse", "HEAD").stdout.strip()
    proc = framework(root, "install")
    assert proc.returncode == 0, proc.stdout + proc.stderr

    new = write(root, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    git(root, "add", new, add_rule(demo_repo, [NEW_ID]))
    proc = git(root, "commit", "-m", "honest episode and rule", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "scarwarden provenance gate" in out and "Passed" in out
    base = git(root, "rev-parse", "HEAD").stdout.strip()

    # A deletion: the framework passes no file names for it, the hook must find it itself.
    gone = first_episode(demo_repo)
    git(root, "rm", "-q", gone)
    proc = git(root, "commit", "-m", "drop an episode", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "scarwarden provenance gate" in out and "Failed" in out
    assert f"{gone}: episode {Path(gone).stem} was deleted; the ledger is append-only" in out
    assert git(root, "rev-parse", "HEAD").stdout.strip() == base
    git(root, "reset", "-q", "--hard")

    git(root, "add", add_rule(demo_repo, ["ep-nosuch0001"]))
    proc = git(root, "commit", "-m", "rule citing nothing", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "scarwarden provenance gate" in out and "Failed" in out
    assert "PB-16 cites ep-nosuch0001, which is not an episode in the tree being committed" in out
    assert git(root, "rev-parse", "HEAD").stdout.strip() == base

    # CI: `pre-commit run --from-ref/--to-ref` hands the range over in PRE_COMMIT_*_REF.
    bad = subprocess.run(
        ["git", "commit", "-q", "--no-verify", "-m", "sneaked in"], cwd=root, capture_output=True, text=True
    )
    assert bad.returncode == 0
    head = git(root, "rev-parse", "HEAD").stdout.strip()
    proc = framework(root, "run", "--from-ref", base, "--to-ref", head, "scarwarden-check")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"[{head[:10]}] memory/playbook.md:" in out and "PB-16 cites ep-nosuch0001" in out


def test_framework_hooks_and_the_merge_driver_together(
    framework, hook_repo: tuple[Path, str], demo_repo: MemoryRepo
) -> None:
    """A repository whose hooks are the framework's: Scarwarden's own commits (made in a
    temporary index) run them, and a merge of two branches that each added a rule goes
    through the merge driver and the framework's pre-merge-commit stage (issue 15)."""
    from conftest import Cli

    root = demo_repo.root
    path, sha = hook_repo
    (root / ".pre-commit-config.yaml").write_text(
        f"repos:\n- repo: {path}\n  rev: {sha}\n  hooks:\n  - id: scarwarden-check\n"
        "    stages: [pre-commit, pre-merge-commit]\n"
    )
    git(root, "add", ".pre-commit-config.yaml")
    git(root, "commit", "-q", "-m", "use the gate via pre-commit")
    proc = framework(root, "install", "--hook-type", "pre-commit", "--hook-type", "pre-merge-commit")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli = Cli(root)
    assert cli("hooks", "install", "--merge-driver").exit_code == 0
    ids = []
    for branch, text in (("one", "Always confirm the invoice owner."), ("two", "Never launch on a Friday.")):
        git(root, "checkout", "-q", "-b", branch, "main")
        added = cli(
            "rule", "add", "--text", text, "--tag", "merge", "--cites", Path(first_episode(demo_repo)).stem
        )
        assert added.exit_code == 0, added.output  # the framework's hook passed it
        ids.append(added.stdout.strip())
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "one")
    proc = git(root, "merge", "--no-ff", "-m", "merge two", "two", check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "scarwarden provenance gate" in out and "Passed" in out
    text = demo_repo.playbook_path.read_text()
    assert "<<<<<<<" not in text and all(rule_id in text for rule_id in ids)
