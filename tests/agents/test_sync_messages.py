"""What ``sync`` says on a conflict (issue 28, point 8): it undid the merge, so git's
advice to fix the conflicts and commit is not repeated; the conflicting files are named."""

from __future__ import annotations

from dataclasses import replace

from conftest import Cli, git
from test_sync import clone, remote_with

from scarwarden.files import playbook as pb


def test_a_conflict_names_the_files_without_gits_advice_to_commit(demo_repo, tmp_path) -> None:
    remote = remote_with(demo_repo, tmp_path)
    a, b = clone(remote, tmp_path / "a"), clone(remote, tmp_path / "b")
    for repo, words in ((a, "Ours says this."), (b, "Theirs says that.")):
        book = pb.parse(repo.playbook_path.read_text())
        rule = book.get("PB-02")
        repo.playbook_path.write_text(pb.render(book.with_rule(replace(rule, text=words))))
        git(repo.root, "commit", "-qam", "reword PB-02")
    assert Cli(a.root)("sync").exit_code == 0
    result = Cli(b.root)("sync")
    assert result.exit_code == 1
    assert "nothing was changed here, nothing pushed" in result.stderr
    assert "CONFLICT" in result.stderr and "memory/playbook.md" in result.stderr
    for advice in ("Automatic merge failed", "fix conflicts", "commit the result", "rebase --continue"):
        assert advice not in result.stderr, result.stderr
    assert "hint: merge by hand (git merge origin/main)" in result.stderr
