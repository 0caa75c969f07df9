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
