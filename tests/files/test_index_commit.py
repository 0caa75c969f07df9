"""Writes commit through a temporary index, never git's real one (issue 15): what the
user staged stays staged, the commit hooks still judge the tree, and a killed write is
finished or undone by the next one."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import Cli, git, head

from scarwarden.errors import GitError
from scarwarden.files import write_journal
from scarwarden.files.atomic import atomic_write
from scarwarden.files.playbook_edit import add_rule
from scarwarden.files.record import add_episodes
from scarwarden.files.write_journal import Planned
from scarwarden.repo import MemoryRepo


def _hook(repo: MemoryRepo, name: str, body: str) -> None:
    path = repo.root / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _episode(task: str) -> dict[str, str]:
    return {"task": task, "outcome": "sent", "correction": f"Check {task} first"}


def test_the_users_staged_changes_stay_staged_and_out_of_the_commit(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    (root / "notes.txt").write_text("my draft\n")
    (root / "README.extra").write_text("staged, not committed\n")
    git(root, "add", "notes.txt", "README.extra")
    staged_before = git(root, "diff", "--cached", "--name-only").stdout

    (ep,) = add_episodes(demo_repo, [_episode("the invoice")])
    rule = add_rule(demo_repo, text="Check the invoice owner first.", tags=["invoice"], cites=[ep.id])

    log = git(root, "log", "-2", "--name-only", "--format=%s").stdout
    assert "notes.txt" not in log and "README.extra" not in log
    assert ep.relpath(demo_repo.episodes_rel) in log and demo_repo.playbook_rel in log
    assert rule.id in git(root, "show", "HEAD:" + demo_repo.playbook_rel).stdout
    # Exactly the user's files are still staged; ours are in the index as committed.
    assert git(root, "diff", "--cached", "--name-only").stdout == staged_before
    assert git(root, "status", "--porcelain").stdout.splitlines() == ["A  README.extra", "A  notes.txt"]
    assert not any(p.name.startswith("scarwarden-") for p in (root / ".git").iterdir())
    assert not (demo_repo.state_dir / write_journal.JOURNAL).exists()


def test_the_pre_commit_and_commit_msg_hooks_judge_the_temporary_index(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    seen = root.parent / "seen.txt"
    _hook(demo_repo, "pre-commit", f'git diff --cached --name-only > "{seen}"\n')
    _hook(demo_repo, "commit-msg", 'printf "\\nReviewed-by: hook\\n" >> "$1"\n')
    (root / "mine.txt").write_text("staged by the user\n")
    git(root, "add", "mine.txt")
    (ep,) = add_episodes(demo_repo, [_episode("the hooks")])
    # The hook saw the tree being committed (our file alone), not the user's index.
    assert seen.read_text().split() == [ep.relpath(demo_repo.episodes_rel)]
    assert "Reviewed-by: hook" in git(root, "log", "-1", "--format=%B").stdout


def test_a_refusing_pre_commit_hook_still_refuses_and_nothing_is_left(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    _hook(demo_repo, "pre-commit", "echo 'refused by policy' >&2\nexit 1\n")
    before = head(demo_repo)
    with pytest.raises(GitError) as info:
        add_episodes(demo_repo, [_episode("refused")])
    assert "refused by policy" in info.value.message
    assert head(demo_repo) == before
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == ""
    assert not any(p.name.startswith("scarwarden-") for p in (root / ".git").iterdir())


def test_head_moving_meanwhile_is_a_compare_and_swap_failure_not_a_lost_commit(
    demo_repo: MemoryRepo,
) -> None:
    root = demo_repo.root
    # A hook that commits: HEAD moves after our commit was built on the old one.
    _hook(
        demo_repo, "pre-commit", "unset GIT_INDEX_FILE\ngit commit -q --allow-empty --no-verify -m sneaky\n"
    )
    with pytest.raises(GitError) as info:
        add_episodes(demo_repo, [_episode("raced")])
    assert "HEAD moved" in info.value.message
    assert git(root, "log", "-1", "--format=%s").stdout.strip() == "sneaky"  # not overwritten
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_a_write_killed_before_its_commit_is_undone_by_the_next(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    killed = "memory/episodes/2031/01/ep-kil1ed0000.yaml"
    data = b"id: ep-kil1ed0000\n"
    playbook = demo_repo.playbook_path.read_bytes()
    # What a run killed after writing its files leaves: the journal, the files.
    write_journal.begin(demo_repo, [Planned(killed, data), Planned(demo_repo.playbook_rel, b"half")])
    atomic_write(root / killed, data)
    atomic_write(demo_repo.playbook_path, b"half")
    result = cli("episode", "add", "--task", "After the kill", "--correction", "Nothing is left")
    assert result.exit_code == 0, result.output
    assert not (root / killed).exists() and not (root / "memory/episodes/2031").exists()
    assert demo_repo.playbook_path.read_bytes() == playbook
    assert git(root, "status", "--porcelain", "--untracked-files=all").stdout == ""


def test_a_commit_that_landed_before_the_kill_is_finished_by_the_next(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")  # the lock stays: no use waiting for it
    root = demo_repo.root
    lock = root / ".git" / "index.lock"
    lock.write_text("")  # the real index is busy: the commit lands, its index entry waits
    (ep,) = add_episodes(demo_repo, [_episode("landed")])
    assert (demo_repo.state_dir / write_journal.JOURNAL).exists()
    lock.unlink()
    (root / "mine.txt").write_text("staged meanwhile\n")
    git(root, "add", "mine.txt")
    assert write_journal.recover(demo_repo) == "rolled forward"
    assert git(root, "status", "--porcelain").stdout.splitlines() == ["A  mine.txt"]
    assert ep.relpath(demo_repo.episodes_rel) in git(root, "ls-files").stdout
    assert not (demo_repo.state_dir / write_journal.JOURNAL).exists()


def test_the_recovery_of_a_killed_write_removes_its_staging_list(
    demo_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")  # the lock stays: no use waiting for it
    # Killed while its staging shell ran (the kill bench's distill --offline): the next
    # run recovers and may commit nothing, so the recovery itself must tidy the file.
    root = demo_repo.root
    lock = root / ".git" / "index.lock"
    lock.write_text("")  # the commit lands, its index entry waits: the journal stays
    add_episodes(demo_repo, [_episode("killed mid-staging")])
    lock.unlink()
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    listing = root / ".git" / f"scarwarden-list-{dead}-xyz"
    listing.write_bytes(b"100644 0000000000000000000000000000000000000000\tx\0")
    assert write_journal.recover(demo_repo) == "rolled forward"
    assert not listing.exists()


def test_a_dead_runs_temporary_files_are_removed_at_once(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    month = root / "memory" / "episodes" / "2031" / "02"
    month.mkdir(parents=True)
    leftovers = [
        month / f".ep-dead000000.yaml.{dead}-abc123.tmp",
        root / ".git" / f"scarwarden-index-{dead}-xyz",
        root / ".git" / f"scarwarden-index-{dead}-xyz.lock",
        root / ".git" / f"scarwarden-list-{dead}-xyz",  # a staging shell's entries
    ]
    alive = month / f".ep-live000000.yaml.{os.getpid()}-abc123.tmp"
    for path in [*leftovers, alive]:
        path.write_text("half")
    add_episodes(demo_repo, [{**_episode("cleanup"), "at": "2031-02-03T10:00:00Z"}])
    assert [p for p in leftovers if p.exists()] == []
    assert alive.exists()  # a live process's write is not ours to remove


def test_a_batch_removes_its_own_files_old_temporaries_whoever_holds_their_pid(
    demo_repo: MemoryRepo,
) -> None:
    # One listing of the folder for the whole batch: the rule each file's write applied
    # to its own name (a temporary older than STALE_TEMP_SECONDS belongs to a dead run
    # whose PID was reused) still holds for every file of the batch, and only for them.
    month = demo_repo.root / "memory" / "episodes" / "2031" / "03"
    month.mkdir(parents=True)
    live = os.getpid()
    old_of_batch = month / f".ep-batch00002.yaml.{live}-abc123.tmp"
    fresh_of_batch = month / f".ep-batch00001.yaml.{live}-def456.tmp"
    old_of_another = month / f".ep-other00000.yaml.{live}-abc123.tmp"
    for path in (old_of_batch, fresh_of_batch, old_of_another):
        path.write_text("half")
    for path in (old_of_batch, old_of_another):
        os.utime(path, (path.stat().st_mtime - 3600,) * 2)
    at = "2031-03-03T10:00:00Z"
    add_episodes(
        demo_repo,
        [{**_episode(f"batch {i}"), "id": f"ep-batch0000{i}", "at": at} for i in (1, 2)],
    )
    assert not old_of_batch.exists()
    assert fresh_of_batch.exists()  # a write in flight
    assert old_of_another.exists()  # not a file of this batch


def test_staging_during_the_commit_is_kept_not_overwritten_by_the_swap(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    # Nothing staged at the start: the private index starts as the real one. A hook
    # stages a file in the real index meanwhile: the swap must not drop it.
    (root / "late.txt").write_text("staged while the commit was being made\n")
    _hook(demo_repo, "pre-commit", "unset GIT_INDEX_FILE\ngit add late.txt\n")
    (ep,) = add_episodes(demo_repo, [_episode("the swap")])
    assert git(root, "status", "--porcelain").stdout.splitlines() == ["A  late.txt"]
    assert "late.txt" not in git(root, "show", "--name-only", "--format=", "HEAD").stdout
    assert ep.relpath(demo_repo.episodes_rel) in git(root, "ls-files").stdout
