"""Every door checks what the gate checks (issue 27): branch moves git reports with a
zero old value, new branches at the reference-transaction and pre-push doors, the
playbook screened by the ref hooks, ``check --from-ref`` and ``check --all``.

Real git, the real hooks (``scarwarden hooks install``), a real bare remote.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Cli, git, head
from fake_secrets import fake_secrets
from helpers import add_rule, bypass_env, commit_no_verify, first_episode

from scarwarden.gate.check import check_all, check_range
from scarwarden.repo import MemoryRepo

TOKEN = fake_secrets()["github-token"]


@pytest.fixture
def repo(demo_repo: MemoryRepo, cli: Cli) -> MemoryRepo:
    assert cli("hooks", "install").exit_code == 0
    return demo_repo


def _edited_episode(repo: MemoryRepo) -> str:
    path = repo.root / first_episode(repo)
    path.write_text(path.read_text().replace("task:", "task: (edited)", 1))
    return "was modified; the ledger is append-only"


def _missing_citation(repo: MemoryRepo) -> str:
    add_rule(repo, ["ep-nosuch0001"], title="Cite an episode that is nowhere")
    return "ep-nosuch0001"


def _detached_bad_commit(repo: MemoryRepo, make_bad: Callable[[MemoryRepo], str]) -> tuple[str, str, str]:
    """(main's tip, a commit on no branch that fails the gate, what the refusal says)."""
    root = repo.root
    main = head(root)
    git(root, "checkout", "-q", "--detach")
    needle = make_bad(repo)
    bad = commit_no_verify(root, "past the hooks")
    git(root, "checkout", "-q", "--detach", main, env=bypass_env())
    return main, bad, needle


def _update_ref(root: Path, bad: str) -> object:
    return git(root, "update-ref", "refs/heads/main", bad, check=False)


def _update_ref_stdin(root: Path, bad: str) -> object:
    return subprocess.run(
        ["git", "update-ref", "--stdin"],
        cwd=root,
        input=f"update refs/heads/main {bad}\n",
        capture_output=True,
        text=True,
    )


def _branch_f(root: Path, bad: str) -> object:
    return git(root, "branch", "-f", "main", bad, check=False)


def _checkout_b(root: Path, bad: str) -> object:
    return git(root, "checkout", "-q", "-B", "main", bad, check=False)


def _switch_c(root: Path, bad: str) -> object:
    return git(root, "switch", "-q", "-C", "main", bad, check=False)


def _branch_m(root: Path, bad: str) -> object:
    git(root, "branch", "other", bad, env=bypass_env())
    return git(root, "branch", "-M", "other", "main", check=False)


MOVES = {
    "update-ref": _update_ref,
    "update-ref --stdin": _update_ref_stdin,
    "branch -f": _branch_f,
    "checkout -B": _checkout_b,
    "switch -C": _switch_c,
    "branch -M": _branch_m,
}
BAD = {"edited episode": _edited_episode, "missing citation": _missing_citation}


@pytest.mark.parametrize("bad_kind", BAD)
@pytest.mark.parametrize("move", MOVES)
def test_a_move_git_reports_with_a_zero_old_value_is_checked(
    repo: MemoryRepo, move: str, bad_kind: str
) -> None:
    root = repo.root
    main, bad, needle = _detached_bad_commit(repo, BAD[bad_kind])
    proc = MOVES[move](root, bad)
    out = proc.stdout + proc.stderr  # type: ignore[attr-defined]
    assert proc.returncode != 0, out  # type: ignore[attr-defined]
    assert "scarwarden: refused to move refs/heads/main" in out and needle in out, out
    assert git(root, "rev-parse", "refs/heads/main").stdout.strip() == main


def test_a_branch_created_at_a_commit_on_no_branch_is_checked(repo: MemoryRepo) -> None:
    root = repo.root
    _main, bad, _needle = _detached_bad_commit(repo, _edited_episode)
    proc = git(root, "update-ref", "refs/heads/fresh", bad, check=False)
    assert proc.returncode != 0 and "refused to move refs/heads/fresh" in proc.stderr
    assert git(root, "rev-parse", "-q", "--verify", "refs/heads/fresh", check=False).returncode != 0
    # A branch at a commit a branch holds already adds nothing: not refused.
    assert git(root, "branch", "fine", "main", check=False).returncode == 0


def _secret_episode(repo: MemoryRepo) -> str:
    path = repo.root / repo.episodes_rel / "2026/11/ep-door0sec01.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "id: ep-door0sec01\nat: 2026-11-20T10:00:00Z\ntask: Deploy\n"
        f"action: 'pushed with {TOKEN}'\noutcome: It worked\nsource: outcome\n"
    )
    return "github-token"


def _secret_rule(repo: MemoryRepo) -> str:
    add_rule(repo, [first_episode(repo).rsplit("/", 1)[-1][:-5]], title=f"Push with {TOKEN}")
    return "github-token"


def test_pre_push_of_a_new_branch_screens_its_episodes(repo: MemoryRepo, tmp_path: Path) -> None:
    root = repo.root
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "origin", str(remote))
    git(root, "push", "-q", "origin", "main")
    git(root, "checkout", "-q", "-b", "new-branch")
    _secret_episode(repo)
    commit_no_verify(root, "a secret past the hooks")
    proc = git(root, "push", "origin", "new-branch", check=False)
    assert proc.returncode != 0 and "refused to push refs/heads/new-branch" in proc.stderr, proc.stderr
    assert "github-token" in proc.stderr and TOKEN not in proc.stderr + proc.stdout
    assert git(remote, "rev-parse", "-q", "--verify", "new-branch", check=False).returncode != 0


@pytest.mark.parametrize("make_bad", [_secret_episode, _secret_rule], ids=["episode", "playbook"])
def test_a_secret_past_the_commit_hook_is_refused_by_every_other_door(
    repo: MemoryRepo, make_bad: Callable[[MemoryRepo], str]
) -> None:
    root = repo.root
    main = head(root)
    git(root, "checkout", "-q", "-b", "side")
    kind = make_bad(repo)
    bad = commit_no_verify(root, "a secret past the hooks")
    # CI on the range, and the tree as a whole.
    for report in (check_range(repo, main, bad), check_all(repo)):
        assert "secret-found" in [p.code for p in report.problems], report.problems
        assert any(kind in p.message for p in report.problems)
    # A fast-forward of main onto it: the reference-transaction hook.
    git(root, "checkout", "-q", "main", env=bypass_env())
    proc = git(root, "merge", "-q", "--ff-only", "side", check=False)
    assert proc.returncode != 0 and kind in proc.stderr and TOKEN not in proc.stderr
    assert head(root) == main


def test_a_secret_redacted_later_does_not_refuse_a_new_branch_for_ever(
    repo: MemoryRepo, cli: Cli, tmp_path: Path
) -> None:
    root = repo.root
    _secret_episode(repo)
    commit_no_verify(root, "a secret past the hooks")
    remote = tmp_path / "fresh.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(root, "remote", "add", "fresh", str(remote))
    proc = git(root, "push", "fresh", "main", check=False)
    assert proc.returncode != 0 and "github-token" in proc.stderr, proc.stderr
    # Taken back by a redaction (and purged by hand): the history may go out.
    assert cli("redact", "ep-door0sec01", "--reason", "rotated the token").exit_code == 0
    proc = git(root, "push", "fresh", "main", check=False)
    assert proc.returncode == 0, proc.stderr
