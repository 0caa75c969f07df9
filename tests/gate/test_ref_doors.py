"""A gate on every door (issue 15): git runs no pre-commit hook for revert, rebase,
cherry-pick, am or a fast-forward merge; the reference-transaction hook refuses the
branch move, and pre-push the push, of commits that fail the gate."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import Cli, git, head
from helpers import bypass_env

from scarwarden.repo import MemoryRepo


@pytest.fixture
def repo(demo_repo: MemoryRepo, cli: Cli) -> MemoryRepo:
    assert cli("hooks", "install").exit_code == 0
    for name in ("reference-transaction", "pre-push"):
        assert (demo_repo.root / ".git/hooks" / name).exists()
    return demo_repo


def record(cli: Cli) -> str:
    added = cli("episode", "add", "--task", "Door test", "--correction", "Say the timezone", "--tag", "door")
    assert added.exit_code == 0, added.output
    return added.stdout.strip()


def rule_citing(cli: Cli, ep_id: str) -> str:
    added = cli("rule", "add", "--text", "Always say the timezone.", "--tag", "door", "--cites", ep_id)
    assert added.exit_code == 0, added.output
    return added.stdout.strip()


def refused(proc, *needles: str) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "scarwarden: refused to move refs/heads/" in out, out
    for needle in needles:
        assert needle in out, out


def test_an_honest_commit_still_lands(repo, cli) -> None:
    before = head(repo)
    ep = record(cli)
    rule_citing(cli, ep)
    assert git(repo.root, "rev-list", "--count", f"{before}..HEAD").stdout.strip() == "2"


def test_revert_of_an_episode_is_refused(repo, cli) -> None:
    ep = record(cli)
    before = head(repo)
    proc = git(repo.root, "revert", "--no-edit", "HEAD", check=False)
    refused(proc, f"episode {ep} was deleted")
    assert head(repo) == before


def test_the_refusal_says_the_branch_did_not_move_and_how_to_fix_it(repo, cli) -> None:
    ep = record(cli)
    before = head(repo)
    proc = git(repo.root, "revert", "--no-edit", "HEAD", check=False)
    refused(proc, f"episode {ep} was deleted")
    out = proc.stderr
    # Not verify's "rewrite the history" (nothing landed), but what fits a refused move.
    assert "rebase -i" not in out and "a later fix does not take it out" not in out
    assert f"refs/heads/main did not move (it is still at {before[:10]})" in out
    assert "never landed" in out and "keep the episode as it was" in out
    assert "SCARWARDEN_SKIP=1" in out
    assert head(repo) == before


def test_rebase_dropping_the_cited_episode_is_refused(repo, cli) -> None:
    git(repo.root, "checkout", "-q", "-b", "feature")
    ep = record(cli)
    rule = rule_citing(cli, ep)
    tip = head(repo)
    proc = git(repo.root, "rebase", "--onto", "HEAD~2", "HEAD~1", "feature", check=False)
    refused(proc, f"{rule} cites {ep}")
    git(repo.root, "rebase", "--abort", check=False)
    assert git(repo.root, "rev-parse", "feature").stdout.strip() == tip


def test_cherry_pick_and_am_of_a_rule_without_its_episode_are_refused(repo, cli, tmp_path: Path) -> None:
    git(repo.root, "checkout", "-q", "-b", "feature")
    ep = record(cli)
    rule = rule_citing(cli, ep)
    git(repo.root, "checkout", "-q", "main")
    before = head(repo)
    proc = git(repo.root, "cherry-pick", "feature", check=False)
    refused(proc, f"{rule} cites {ep}")
    git(repo.root, "cherry-pick", "--abort", check=False)
    assert head(repo) == before
    patch = tmp_path / "rule.patch"
    patch.write_text(git(repo.root, "format-patch", "-1", "feature", "--stdout").stdout)
    proc = git(repo.root, "am", str(patch), check=False)
    refused(proc, f"{rule} cites {ep}")
    git(repo.root, "am", "--abort", check=False)
    assert head(repo) == before


def test_fast_forward_merge_is_refused_and_skip_is_the_bypass(repo, cli) -> None:
    git(repo.root, "checkout", "-q", "-b", "feature")
    ep = record(cli)
    # A bad commit made with both bypasses: the episode edited in place.
    path = next((repo.root / "memory/episodes").rglob(f"{ep}.yaml"))
    path.write_text(path.read_text().replace("Door test", "Door test, edited"))
    git(repo.root, "commit", "-qam", "edit", "--no-verify", env=bypass_env())
    git(repo.root, "checkout", "-q", "main")
    before = head(repo)
    proc = git(repo.root, "merge", "--ff-only", "feature", check=False)
    refused(proc, f"episode {ep} was modified")
    assert head(repo) == before
    ok = git(repo.root, "merge", "--ff-only", "feature", env=bypass_env(), check=False)
    assert ok.returncode == 0 and head(repo) != before
    verified = Cli(repo.root)("verify")
    assert verified.exit_code == 1 and f"episode {ep} was modified" in verified.stdout


def test_pre_push_refuses_the_pushed_range(repo, cli, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(repo.root, "remote", "add", "origin", str(remote))
    git(repo.root, "push", "-q", "origin", "main")
    ep = record(cli)
    path = next((repo.root / "memory/episodes").rglob(f"{ep}.yaml"))
    path.write_text(path.read_text().replace("Door test", "Door test, edited"))
    git(repo.root, "commit", "-qam", "edit", "--no-verify", env=bypass_env())
    proc = git(repo.root, "push", "origin", "main", check=False)
    assert proc.returncode != 0
    assert "scarwarden: refused to push refs/heads/main" in proc.stderr
    assert f"episode {ep} was modified" in proc.stderr
    remote_tip = git(remote, "rev-parse", "main").stdout.strip()
    assert remote_tip != head(repo)
    # A new branch pushed whole is walked whole.
    proc = git(repo.root, "push", "origin", "main:other", check=False)
    assert proc.returncode != 0 and "refused to push" in proc.stderr


def test_moving_back_and_other_refs_are_not_checked(repo, cli) -> None:
    ep = record(cli)
    rule_citing(cli, ep)
    # reset to before: nothing new lands; a tag is no branch.
    assert git(repo.root, "reset", "-q", "--hard", "HEAD~2", check=False).returncode == 0
    assert git(repo.root, "tag", "t1", "HEAD").returncode == 0


def test_verify_reads_objects_as_stored_not_as_replaced(demo_repo, cli) -> None:
    # A commit that edits an episode, hidden behind 'git replace' by an honest one.
    honest_base = head(demo_repo)
    ep = record(cli)
    path = next((demo_repo.root / "memory/episodes").rglob(f"{ep}.yaml"))
    path.write_text(path.read_text().replace("Door test", "Door test, edited"))
    git(demo_repo.root, "commit", "-qam", "edit", "--no-verify", env=bypass_env())
    bad = head(demo_repo)
    tree = git(demo_repo.root, "rev-parse", "HEAD~1^{tree}").stdout.strip()
    cover = git(demo_repo.root, "commit-tree", tree, "-p", "HEAD~1", "-m", "edit").stdout.strip()
    git(demo_repo.root, "replace", bad, cover)
    assert (
        "Door test, edited"
        not in git(demo_repo.root, "show", f"HEAD:{path.relative_to(demo_repo.root)}").stdout
    )
    result = Cli(demo_repo.root)("verify")
    assert result.exit_code == 1, result.output
    assert f"[{bad[:10]}]" in result.stdout and f"episode {ep} was modified" in result.stdout
    assert f"git replace stands in for object {bad[:10]}" in result.stdout
    assert honest_base != bad


def test_verify_on_a_shallow_clone_is_unverifiable(demo_repo, cli, tmp_path: Path) -> None:
    record(cli)
    record(cli)
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{demo_repo.root}", str(clone))
    result = Cli(clone)("verify")
    assert result.exit_code == 6
    assert "the history is shallow: 1 commit visible from HEAD" in result.stderr
    assert "git fetch --unshallow" in result.stderr


def test_verify_all_refs_walks_every_branch_and_tag(demo_repo, cli) -> None:
    git(demo_repo.root, "checkout", "-q", "-b", "side")
    ep = record(cli)
    path = next((demo_repo.root / "memory/episodes").rglob(f"{ep}.yaml"))
    path.write_text(path.read_text().replace("Door test", "Door test, edited"))
    git(demo_repo.root, "commit", "-qam", "edit", "--no-verify", env=bypass_env())
    git(demo_repo.root, "checkout", "-q", "main")
    git(demo_repo.root, "tag", "v1")
    assert Cli(demo_repo.root)("verify").exit_code == 0  # main alone is honest
    result = Cli(demo_repo.root)("verify", "--all-refs")
    assert result.exit_code == 1
    assert result.stdout.count(f"episode {ep} was modified") == 1
    assert "every branch and tag" in result.stdout
