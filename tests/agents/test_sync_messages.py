"""What ``sync`` says on a conflict (issue 28, point 8): it undid the merge, so git's
advice to fix the conflicts and commit is not repeated; the conflicting files are named."""

from __future__ import annotations

from conftest import Cli
from test_sync import conflicting_clones


def test_a_conflict_names_the_files_without_gits_advice_to_commit(demo_repo, tmp_path) -> None:
    _, b = conflicting_clones(demo_repo, tmp_path)
    result = Cli(b.root)("sync")
    assert result.exit_code == 1
    assert "nothing was changed here, nothing pushed" in result.stderr
    assert "CONFLICT" in result.stderr and "memory/playbook.md" in result.stderr
    for advice in ("Automatic merge failed", "fix conflicts", "commit the result", "rebase --continue"):
        assert advice not in result.stderr, result.stderr
    assert "hint: merge by hand (git merge origin/main)" in result.stderr


def test_the_wait_between_rounds_stops_doubling_at_ten_seconds() -> None:
    """Doubling from 0.2 s without a bound, the 12th wait was about 7 minutes and from the
    36th time.sleep raised OverflowError (--retries allows 100): a busy remote hung sync
    or ended it with a traceback."""
    from scarwarden.agents.sync import MAX_WAIT, wait

    assert MAX_WAIT == 10.0
    for attempt in range(1, 101):
        base = min(10.0, 0.2 * 2 ** (attempt - 1))
        assert base * 0.5 <= wait(attempt, 0.2) <= base * 1.5
    assert max(wait(100, 0.2) for _ in range(200)) <= 15.0


def test_a_fast_forward_an_untracked_file_blocks_says_which_and_how(demo_repo, tmp_path) -> None:
    """The remote added NOTES.md; here an untracked NOTES.md of the user's is in its way.
    Sync said only 'cannot fast-forward main to origin/main', no reason and no hint."""
    from conftest import git, head
    from test_sync import clone, remote_with

    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    (a.root / "NOTES.md").write_text("theirs\n")
    git(a.root, "add", "NOTES.md")
    git(a.root, "commit", "-qm", "notes")
    assert Cli(a.root)("sync").exit_code == 0
    (b.root / "NOTES.md").write_text("mine, not committed\n")
    before = head(b.root)

    result = Cli(b.root)("sync")

    assert result.exit_code == 1
    assert "cannot fast-forward main to origin/main" in result.stderr
    assert "NOTES.md" in result.stderr and "would be overwritten" in result.stderr
    assert "nothing was changed here, nothing pushed" in result.stderr
    assert "hint: " in result.stderr and "Traceback" not in result.stderr
    assert head(b.root) == before and (b.root / "NOTES.md").read_text() == "mine, not committed\n"


def test_a_rebase_an_untracked_file_blocks_is_named_without_a_stray_fatal(demo_repo, tmp_path) -> None:
    """Both sides committed, and the remote adds X.md where an untracked X.md of the user's
    is: the rebase and the merge stop before starting. Sync quoted 'fatal: There is no
    merge to abort (MERGE_HEAD missing)' (its own clean-up's words) and hinted at gpg,
    hooks and index.lock, never at the file in the way."""
    from conftest import git, head
    from test_sync import add, clone, remote_with

    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    (a.root / "X.md").write_text("theirs\n")
    git(a.root, "add", "X.md")
    git(a.root, "commit", "-qm", "x")
    assert Cli(a.root)("sync").exit_code == 0
    add(b, 1, "b")
    (b.root / "X.md").write_text("mine, not committed\n")
    before = head(b.root)

    result = Cli(b.root)("sync")

    assert result.exit_code == 1
    assert "X.md" in result.stderr and "would be overwritten" in result.stderr
    assert "no merge to abort" not in result.stderr and "fatal:" not in result.stderr
    assert "untracked file in the way" in result.stderr.partition("hint:")[2]
    assert head(b.root) == before and (b.root / "X.md").read_text() == "mine, not committed\n"
