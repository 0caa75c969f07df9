"""What ``sync`` refuses, and what it retries: a remote with another project's history is
refused before anything changes (a rebase would rewrite every local commit onto it); a
push the remote refuses for good is reported as git said it, once, not retried; a push
raced by another clone is retried; when nothing was pushed, the branch is as it was."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import Cli, git, head
from test_sync import add, clone, episodes_at, remote_with

from scarwarden.repo import MemoryRepo


def snapshot(root: Path) -> tuple[str, ...]:
    """HEAD, the branch, the work tree, the reflog and the local config."""
    return (
        head(root),
        git(root, "symbolic-ref", "HEAD").stdout,
        git(root, "status", "--porcelain", "--untracked-files=all").stdout,
        git(root, "reflog", "--format=%H %gs").stdout,
        git(root, "config", "--local", "--list").stdout,
    )


def hook(repo: Path, name: str, body: str) -> None:
    path = repo / ("hooks" if repo.suffix == ".git" else ".git/hooks") / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)


def test_sync_refuses_a_remote_with_unrelated_history(memory_repo: MemoryRepo, tmp_path: Path) -> None:
    add(memory_repo, 1, "a")
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    (other / "README").write_text("another project\n")
    git(other, "add", "README")
    git(other, "commit", "-qm", "root of another project")
    remote = tmp_path / "other.git"
    git(tmp_path, "clone", "-q", "--bare", str(other), str(remote))
    git(memory_repo.root, "remote", "add", "origin", str(remote))
    theirs, before = head(remote), snapshot(memory_repo.root)

    result = Cli(memory_repo.root)("sync")

    assert result.exit_code == 2, result.output
    assert "origin/main shares no history with main" in result.stderr
    assert "nothing was changed here, nothing pushed" in result.stderr
    assert "hint: check its URL (git remote get-url origin)" in result.stderr
    assert "Traceback" not in result.stderr
    assert snapshot(memory_repo.root) == before  # no rebase, not even in the reflog
    assert head(remote) == theirs


#: How each kind of remote refuses a push for good (``refusing_remote``).
REFUSALS = {
    "checked out": "exit 0",
    "hook": "echo 'main is protected' >&2; exit 1",
    # a hook's words are not git's status: these must not pass for another clone's push
    "hook quoting git": "echo 'error: failed to update ref: main is frozen' >&2; exit 1",
    "stale lock": "exit 0",
}


def refusing_remote(demo_repo: MemoryRepo, tmp_path: Path, kind: str) -> Path:
    """A remote ahead of the clone that will sync, which refuses every push for good: a
    non-bare repository with the branch checked out, a pre-receive hook that declines
    (in its own words, or in git's), or a ref locked by a git killed long ago. Each push
    it receives adds a line to ``pushes`` beside it."""
    if kind == "checked out":
        upstream = demo_repo.root
        add(demo_repo, 1, "upstream")
    else:
        upstream = remote_with(demo_repo, tmp_path)
        ahead = clone(upstream, tmp_path / "ahead")
        add(ahead, 1, "ahead")
        git(ahead.root, "push", "-q", "origin", "main")
    hook(upstream, "pre-receive", f"echo push >> {tmp_path / 'pushes'}\n{REFUSALS[kind]}\n")
    if kind == "stale lock":
        (upstream / "refs" / "heads" / "main.lock").touch()
    return upstream


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("checked out", "[remote rejected] HEAD -> main (branch is currently checked out)"),
        ("hook", "[remote rejected] HEAD -> main (pre-receive hook declined)"),
        ("hook quoting git", "[remote rejected] HEAD -> main (pre-receive hook declined)"),
        ("stale lock", "[remote rejected] HEAD -> main (failed to update ref)"),
    ],
)
def test_a_push_the_remote_refuses_is_reported_once_and_undone(
    demo_repo: MemoryRepo, tmp_path: Path, kind: str, said: str
) -> None:
    agent = clone(demo_repo.root, tmp_path / "agent")
    upstream = refusing_remote(demo_repo, tmp_path, kind)
    git(agent.root, "remote", "set-url", "origin", str(upstream))
    add(agent, 2, "agent")
    before, theirs = head(agent), head(upstream)

    result = Cli(agent.root)("sync")

    assert result.exit_code == 1, result.output
    error, hint = result.stderr.strip().splitlines()  # git's own lines: one, quoted
    assert error == f"error: the push to origin was refused: {said}; nothing pushed, main is as it was"
    assert hint.startswith("hint: refused for a reason of its own")
    assert (tmp_path / "pushes").read_text() == "push\n"  # tried once: no retry, no backoff
    reflog = git(agent.root, "reflog", "--format=%gs").stdout
    assert "rebase (start)" in reflog  # the round did rebase onto the remote...
    assert head(agent) == before  # ...and the branch is back where it was
    assert not git(agent.root, "status", "--porcelain").stdout
    assert head(upstream) == theirs


def racing_clone(demo_repo: MemoryRepo, tmp_path: Path, races: int) -> tuple[MemoryRepo, Path, MemoryRepo]:
    """An agent whose next ``races`` pushes are each beaten by another clone: its
    pre-push hook (run once git has read the remote's refs) has the other clone push."""
    remote = remote_with(demo_repo, tmp_path)
    agent, other = clone(remote, tmp_path / "agent"), clone(remote, tmp_path / "other")
    add(agent, 2, "agent")
    count = tmp_path / "races"
    hook(
        agent.root,
        "pre-push",
        f'[ "$(wc -l < {count} 2>/dev/null || echo 0)" -ge {races} ] && exit 0\n'
        f"echo race >> {count}\n"
        f'git -C {other.root} commit -q --allow-empty -m "other: pushed first"\n'
        f"git -C {other.root} push -q origin HEAD:refs/heads/main\n",
    )
    return agent, remote, other


def test_a_push_raced_by_another_clone_is_retried(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    agent, remote, other = racing_clone(demo_repo, tmp_path, races=1)
    mine = episodes_at(agent.root)

    result = Cli(agent.root)("sync", "--json")

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert (data["attempts"], data["integrated"], data["pushed"]) == (2, "rebase", True)
    assert git(remote, "merge-base", "--is-ancestor", head(other), "main", check=False).returncode == 0
    assert episodes_at(remote, "main") == mine


@pytest.mark.parametrize(("retries", "said"), [("1", "after 2 attempts"), ("0", "after 1 attempt")])
def test_a_remote_that_keeps_moving_leaves_the_branch_as_it_was(
    demo_repo: MemoryRepo, tmp_path: Path, retries: str, said: str
) -> None:
    # --retries 0 said "gave up after 1 attempts".
    agent, remote, other = racing_clone(demo_repo, tmp_path, races=5)
    before = head(agent)

    result = Cli(agent.root)("sync", "--retries", retries)

    assert result.exit_code == 1, result.output
    assert head(agent) == before  # the second round had rebased onto the other's push
    assert f"origin kept moving: gave up {said}; nothing pushed, main is as it was" in result.stderr
    assert head(remote) == head(other)


def test_a_push_raced_at_the_server_is_retried(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """The other clone's push lands while ours is on its way (in our push's pre-receive
    hook): the server cannot update the ref it saw ("[remote rejected] (failed to update
    ref)"), and the ref has moved: another round, not a refusal."""
    remote = remote_with(demo_repo, tmp_path)
    agent, other = clone(remote, tmp_path / "agent"), clone(remote, tmp_path / "other")
    add(agent, 2, "agent")
    raced = tmp_path / "raced"
    quarantine = (
        "-u GIT_DIR -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES"
    )
    hook(
        remote,
        "pre-receive",
        f"[ -e {raced} ] && exit 0\ntouch {raced}\n"
        f'env {quarantine} git -C {other.root} commit -q --allow-empty -m "other: pushed first"\n'
        f"env {quarantine} git -C {other.root} push -q origin HEAD:refs/heads/main\n",
    )
    mine = episodes_at(agent.root)

    result = Cli(agent.root)("sync", "--json")

    assert result.exit_code == 0, result.output
    assert raced.exists()
    data = json.loads(result.stdout)
    assert (data["attempts"], data["integrated"], data["pushed"]) == (2, "rebase", True)
    assert git(remote, "merge-base", "--is-ancestor", head(other), "main", check=False).returncode == 0
    assert episodes_at(remote, "main") == mine


@pytest.mark.parametrize("operation", ["rebase", "cherry-pick"])
def test_sync_during_a_stopped_operation_names_it(
    memory_repo: MemoryRepo, tmp_path: Path, operation: str
) -> None:
    # A rebase stopped on a conflict leaves HEAD detached: sync said "HEAD is not on a
    # branch, git switch <branch> first", which would walk away from the rebase.
    root = memory_repo.root
    git(root, "remote", "add", "origin", str(tmp_path / "remote.git"))
    git(root, "checkout", "-q", "-b", "topic")
    (root / "notes.txt").write_text("topic\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-qm", "topic notes")
    git(root, "checkout", "-q", "main")
    (root / "notes.txt").write_text("main\n")
    git(root, "add", "notes.txt")
    git(root, "commit", "-qm", "main notes")
    if operation == "rebase":
        git(root, "checkout", "-q", "topic")
        assert git(root, "rebase", "main", check=False).returncode != 0
    else:
        assert git(root, "cherry-pick", "topic", check=False).returncode != 0
    before = head(root), git(root, "status", "--porcelain").stdout, git(root, "reflog").stdout

    result = Cli(root)("sync")

    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: a {operation} is in progress",
        f"hint: finish it or abort it (git {operation} --abort) first",
    ]
    assert (head(root), git(root, "status", "--porcelain").stdout, git(root, "reflog").stdout) == before


def test_a_rebase_and_merge_git_cannot_commit_are_not_called_a_conflict(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    # commit.gpgsign=true with no working gpg: both the rebase and the merge fail to
    # write a commit. sync said "the changes conflict" and told the user to resolve
    # conflicts there were none of.
    upstream = remote_with(demo_repo, tmp_path)
    agent, ahead = clone(upstream, tmp_path / "agent"), clone(upstream, tmp_path / "ahead")
    add(ahead, 1, "ahead")
    git(ahead.root, "push", "-q", "origin", "main")
    add(agent, 1, "agent")
    git(agent.root, "config", "commit.gpgsign", "true")
    git(agent.root, "config", "gpg.program", str(tmp_path / "no-gpg"))
    before, theirs = snapshot(agent.root), head(upstream)

    result = Cli(agent.root)("sync")

    assert result.exit_code == 1, result.output
    assert "conflict" not in result.stderr
    assert "cannot integrate origin/main: git could not rebase or merge" in result.stderr
    assert "gpg failed to sign the data" in result.stderr
    assert "hint: fix what git said" in result.stderr
    assert snapshot(agent.root)[:3] == before[:3]
    assert head(upstream) == theirs


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("{tmp}/nothing-here", "does not appear to be a git repository"),
        ("{tmp}", "does not appear to be a git repository"),
        ("ssh://nosuchhost.invalid/memory.git", "ssh: Could not resolve hostname nosuchhost.invalid"),
    ],
)
def test_a_remote_that_cannot_be_read_says_why_and_what_to_check(
    memory_repo: MemoryRepo, tmp_path: Path, url: str, said: str
) -> None:
    # It said "git ls-remote origin failed: Could not read from remote repository." with
    # no hint: ssh's own reason (the host) was dropped, and nothing said what to check.
    root = memory_repo.root
    add(memory_repo, 1, "a")
    git(root, "remote", "add", "origin", url.format(tmp=tmp_path))
    before = snapshot(root)

    result = Cli(root)("sync", "--retries", "0")

    assert result.exit_code == 1, result.output
    error, hint = result.stderr.strip().splitlines()
    assert error.startswith("error: cannot read the remote origin: ") and said in error
    assert "nothing was changed here, nothing pushed" in error
    assert hint == "hint: check its URL (git remote get-url origin) and that it is reachable, then sync again"
    assert snapshot(root) == before


def test_a_push_our_own_pre_push_gate_refuses_says_what_the_gate_found(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    # The gate's pre-push hook refused a commit that edits an episode; sync said only
    # "the push to origin was refused: error: failed to push some refs to '...'".
    from scarwarden.gate.hooks import install

    upstream = remote_with(demo_repo, tmp_path)
    agent = clone(upstream, tmp_path / "agent")
    install(agent.root)
    episode = next((agent.root / "memory" / "episodes").rglob("*.yaml"))
    episode.write_text(episode.read_text() + "outcome: changed later\n")
    env = {**os.environ, "SCARWARDEN_SKIP": "1"}
    git(agent.root, "commit", "-qam", "edit an episode", "--no-verify", env=env)
    before, theirs = snapshot(agent.root), head(upstream)

    result = Cli(agent.root)("sync")

    assert result.exit_code == 1, result.output
    assert "the push to origin was refused; nothing pushed, main is as it was" in result.stderr
    assert f"episode {episode.stem} was modified; the ledger is append-only" in result.stderr
    assert "failed to push some refs" not in result.stderr
    assert snapshot(agent.root) == before
    assert head(upstream) == theirs


def test_a_fast_forward_our_gate_refuses_leaves_the_tree_as_it_was(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """Another clone, without the hooks, pushed a commit that edits an episode; here the
    gate's reference-transaction hook refuses to move the branch onto it. git's
    fast-forward had already written the edited episode into the work tree and the index
    (staged), so every later sync refused 'uncommitted changes'."""
    b = _gated_clone_behind_an_edited_episode(demo_repo, tmp_path)
    before = snapshot(b.root)

    result = Cli(b.root)("sync")

    assert result.exit_code == 1
    assert "cannot fast-forward main to origin/main (nothing was changed here" in result.stderr
    assert "the ledger is append-only" in result.stderr and "Traceback" not in result.stderr
    assert git(b.root, "status", "--porcelain").stdout == ""
    assert snapshot(b.root)[:3] == before[:3]  # HEAD, branch, work tree


def test_a_rebase_and_merge_our_gate_refuses_say_so_without_gits_advice(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """As above with a local commit: the rebase and the merge both stop at the gate and
    are undone, but sync quoted git's 'Not committing merge; use 'git commit' to complete
    the merge.', advice for a merge that is no longer there."""
    b = _gated_clone_behind_an_edited_episode(demo_repo, tmp_path)
    add(b, 1, "b")
    before = snapshot(b.root)[:3]

    result = Cli(b.root)("sync")

    assert result.exit_code == 1
    assert "the ledger is append-only" in result.stderr and "nothing was changed here" in result.stderr
    assert "git commit" not in result.stderr, result.stderr
    assert snapshot(b.root)[:3] == before


def test_a_push_url_that_cannot_be_reached_is_named_in_the_hint(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """The remote is read through its URL and pushed through its push URL: with the push
    URL wrong, the hint listed hooks, protected branches and access rights, never the
    URL the push went to."""
    remote = remote_with(demo_repo, tmp_path)
    b = clone(remote, tmp_path / "b")
    git(b.root, "remote", "set-url", "--push", "origin", str(tmp_path / "moved.git"))
    add(b, 1, "b")
    before = snapshot(b.root)

    result = Cli(b.root)("sync")

    assert result.exit_code == 1
    assert "moved.git" in result.stderr and "does not appear to be a git repository" in result.stderr
    assert "git remote get-url --push origin" in result.stderr.partition("hint:")[2]
    assert snapshot(b.root) == before


def _gated_clone_behind_an_edited_episode(demo_repo: MemoryRepo, tmp_path: Path) -> MemoryRepo:
    """A clone with the hooks installed, whose remote holds a commit another clone
    (without them) pushed, editing an episode."""
    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    assert Cli(b.root)("hooks", "install").exit_code == 0
    episode = sorted(a.episodes_dir.rglob("*.yaml"))[0]
    episode.write_text(episode.read_text().replace("task:", "task: edited,", 1))
    git(a.root, "commit", "-qam", "edit an episode")
    git(a.root, "push", "-q", "origin", "main")
    return b
