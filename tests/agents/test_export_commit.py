"""``export --commit`` commits Scarwarden's change only: the file as HEAD has it with the
marked section replaced, as ``git add -p`` of that section would. The user's own edits
outside the markers stay in the working tree, uncommitted (and staged, if they were)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import Cli, git, head

from scarwarden.repo import MemoryRepo

EP = "ep-hkgnqdz88f"  # a committed demo episode
DRAFT = b"\nMy draft note, not ready to commit.\n"


def _committed(root: Path, rel: str = "AGENTS.md") -> bytes:
    return git(root, "show", f"HEAD:{rel}").stdout.encode()


def _exported(cli: Cli, root: Path, rel: str = "AGENTS.md") -> bytes:
    """``rel`` exported and committed with a user's line above the section; a new rule
    after it, so the next export changes the section."""
    (root / rel).write_bytes(b"# Our agents\n\nBuild with make.\n")
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0
    return _committed(root, rel)


def test_commit_holds_the_section_not_the_users_unstaged_edits(demo_repo: MemoryRepo, cli: Cli) -> None:
    """``export agents-md --commit`` committed the whole working file, the user's
    unfinished edit outside the markers with it, in Scarwarden's name."""
    root = demo_repo.root
    before = _exported(cli, root)
    agents = root / "AGENTS.md"
    end = b"<!-- scarwarden:end -->"
    edited = agents.read_bytes().replace(end, b"a line typed inside\n" + end)
    agents.write_bytes(edited + DRAFT)
    result = cli("export", "agents-md", "--commit", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"format": "agents-md", "path": "AGENTS.md", "status": "written"}]
    committed, now = _committed(root), agents.read_bytes()
    assert b"Check the invoice owner first." in committed and DRAFT not in committed
    assert b"a line typed inside" not in committed + now  # inside the markers: the export's
    assert now == committed + DRAFT  # the working file holds both
    assert git(root, "status", "--porcelain").stdout == " M AGENTS.md\n"
    added = [line for line in git(root, "diff").stdout.splitlines() if line.startswith("+")]
    assert added == ["+++ b/AGENTS.md", "+", "+My draft note, not ready to commit."]  # unstaged
    assert before.startswith(b"# Our agents\n") and committed.startswith(b"# Our agents\n")


def test_a_staged_edit_stays_staged_and_out_of_the_commit(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    _exported(cli, root)
    agents = root / "AGENTS.md"
    agents.write_bytes(b"# Staged heading\n" + agents.read_bytes())
    git(root, "add", "AGENTS.md")
    agents.write_bytes(agents.read_bytes() + DRAFT)
    assert cli("export", "agents-md", "--commit").exit_code == 0
    committed = _committed(root)
    assert b"Check the invoice owner first." in committed
    assert not committed.startswith(b"# Staged heading") and DRAFT not in committed
    staged = git(root, "show", ":AGENTS.md").stdout.encode()
    assert staged == b"# Staged heading\n" + committed  # still staged, with the new section
    assert agents.read_bytes() == staged + DRAFT
    assert git(root, "status", "--porcelain").stdout == "MM AGENTS.md\n"


def test_a_file_new_to_git_is_committed_whole(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    (root / "AGENTS.md").write_bytes(b"# Mine, never committed\n")
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert _committed(root) == (root / "AGENTS.md").read_bytes()
    assert _committed(root).startswith(b"# Mine, never committed\n")
    assert git(root, "status", "--porcelain").stdout == ""


def test_through_a_symlink_the_file_it_names_gets_the_section_only(demo_repo: MemoryRepo, cli: Cli) -> None:
    root = demo_repo.root
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    git(root, "add", "CLAUDE.md")
    _exported(cli, root)
    (root / "AGENTS.md").write_bytes((root / "AGENTS.md").read_bytes() + DRAFT)
    first = head(root)
    assert cli("export", "claude-md", "--commit").exit_code == 0
    assert git(root, "rev-parse", "HEAD~1").stdout.strip() == first
    assert git(root, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["AGENTS.md"]
    committed = _committed(root)
    assert b"Check the invoice owner first." in committed and DRAFT not in committed
    assert (root / "CLAUDE.md").is_symlink() and (root / "AGENTS.md").read_bytes() == committed + DRAFT


def test_an_executable_file_keeps_its_bit_and_commits_its_section_only(
    demo_repo: MemoryRepo, cli: Cli
) -> None:
    root = demo_repo.root
    (root / "AGENTS.md").write_bytes(b"# Our agents\n")
    (root / "AGENTS.md").chmod(0o755)
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0
    (root / "AGENTS.md").write_bytes((root / "AGENTS.md").read_bytes() + DRAFT)
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert git(root, "ls-tree", "HEAD", "AGENTS.md").stdout.startswith("100755 ")
    committed = _committed(root)
    assert b"Check the invoice owner first." in committed and DRAFT not in committed


def test_a_refused_commit_puts_back_the_file_and_the_staging_as_they_were(
    demo_repo: MemoryRepo, cli: Cli
) -> None:
    root = demo_repo.root
    before = _exported(cli, root)
    agents = root / "AGENTS.md"
    agents.write_bytes(b"# Staged heading\n" + before)
    git(root, "add", "AGENTS.md")
    agents.write_bytes(agents.read_bytes() + DRAFT)
    worktree, index, commit = agents.read_bytes(), git(root, "ls-files", "-s").stdout, head(root)
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n")
    hook.chmod(0o755)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 1 and "refused by policy" in result.stderr
    assert head(root) == commit and agents.read_bytes() == worktree
    assert git(root, "ls-files", "-s").stdout == index
    assert git(root, "status", "--porcelain").stdout == "MM AGENTS.md\n"


def test_a_crlf_checkout_commits_the_section_in_lf(demo_repo: MemoryRepo, cli: Cli) -> None:
    """``core.autocrlf``: HEAD holds LF, the working file CRLF; the commit is HEAD's
    bytes with an LF section, and the working file keeps its CRLF and the user's line."""
    root = demo_repo.root
    git(root, "config", "core.autocrlf", "true")
    (root / "AGENTS.md").write_bytes(b"# Our agents\r\n")
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0
    (root / "AGENTS.md").write_bytes((root / "AGENTS.md").read_bytes() + b"draft\r\n")
    assert cli("export", "agents-md", "--commit").exit_code == 0
    committed, now = _committed(root), (root / "AGENTS.md").read_bytes()
    assert b"\r" not in committed and b"Check the invoice owner first." in committed
    assert now == committed.replace(b"\n", b"\r\n") + b"draft\r\n"
    assert git(root, "diff", "--numstat").stdout == "1\t0\tAGENTS.md\n"


def test_broken_markers_in_head_are_refused_before_writing(demo_repo: MemoryRepo, cli: Cli) -> None:
    """HEAD's AGENTS.md has two begin markers, the working file was fixed but not
    committed: the section cannot go onto HEAD's version, so --commit says so."""
    root = demo_repo.root
    agents = root / "AGENTS.md"
    agents.write_bytes(b"<!-- scarwarden:begin -->\n<!-- scarwarden:begin -->\n<!-- scarwarden:end -->\n")
    git(root, "add", "AGENTS.md")
    git(root, "commit", "-q", "-m", "broken")
    agents.write_bytes(b"# Fixed by hand\n")
    commit = head(root)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: AGENTS.md in HEAD has broken Scarwarden markers"), result.stderr
    assert "commit your own fix of AGENTS.md first" in result.stderr and "Traceback" not in result.stderr
    assert head(root) == commit and agents.read_bytes() == b"# Fixed by hand\n"


def test_an_unresolved_conflict_is_refused_not_marked_resolved(demo_repo: MemoryRepo, cli: Cli) -> None:
    """A conflict git records in its index without a merge under way (``git checkout
    -m``, ``git stash pop``): --commit marked it resolved, the conflict gone from git's
    index with the user's markers still in the file."""
    root = demo_repo.root
    _exported(cli, root)  # AGENTS.md's section is now stale
    git(root, "checkout", "-q", "-b", "other")
    agents = root / "AGENTS.md"
    agents.write_bytes(agents.read_bytes().replace(b"Build with make.", b"Build with ninja."))
    git(root, "commit", "-q", "-am", "ninja")
    git(root, "checkout", "-q", "main")
    agents.write_bytes(agents.read_bytes().replace(b"Build with make.", b"Build with bazel."))
    git(root, "checkout", "-m", "other")
    assert git(root, "status", "--porcelain").stdout == "UU AGENTS.md\n"
    worktree, commit = agents.read_bytes(), head(root)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: AGENTS.md has a merge conflict git has not seen resolved")
    assert "resolve it and 'git add AGENTS.md'" in result.stderr and "Traceback" not in result.stderr
    assert head(root) == commit and agents.read_bytes() == worktree
    assert git(root, "status", "--porcelain").stdout == "UU AGENTS.md\n"


def test_broken_markers_in_the_staged_version_are_refused_before_writing(
    demo_repo: MemoryRepo, cli: Cli
) -> None:
    root = demo_repo.root
    _exported(cli, root)
    agents = root / "AGENTS.md"
    good = agents.read_bytes()
    agents.write_bytes(good.replace(b"<!-- scarwarden:end -->", b""))  # staged without its end
    git(root, "add", "AGENTS.md")
    agents.write_bytes(good + DRAFT)
    index, commit = git(root, "ls-files", "-s").stdout, head(root)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith("error: AGENTS.md as staged has broken Scarwarden markers"), result.stderr
    assert "'git restore --staged AGENTS.md'" in result.stderr
    assert head(root) == commit and git(root, "ls-files", "-s").stdout == index
    assert agents.read_bytes() == good + DRAFT


def test_nothing_to_commit_is_said_so_not_offered_commit(demo_repo: MemoryRepo, cli: Cli) -> None:
    """Text typed inside the markers of a current export: ``export --commit`` puts the
    section back, HEAD already holds it, and it said "Not committed: ... (or use
    --commit)" to a command given --commit."""
    root = demo_repo.root
    (root / "AGENTS.md").write_bytes(b"# Our agents\n")
    assert cli("export", "agents-md", "--commit").exit_code == 0
    committed, commit = (root / "AGENTS.md").read_bytes(), head(root)
    (root / "AGENTS.md").write_bytes(committed.replace(b"## Scarwarden playbook", b"## Typed inside"))
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    assert (
        result.stderr == "Not committed: HEAD already holds this export (the files were put back in line).\n"
    )
    assert head(root) == commit and git(root, "status", "--porcelain").stdout == ""


def test_the_commit_names_only_the_files_it_holds(demo_repo: MemoryRepo, cli: Cli) -> None:
    """CLAUDE.md (``@AGENTS.md``) only put back, AGENTS.md changed: the commit's
    trailers named CLAUDE.md too and it said "Committed 2 file(s)" of a one-file commit."""
    root = demo_repo.root
    assert cli("export", "claude-md", "--import-agents", "--commit").exit_code == 0
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0
    claude = root / "CLAUDE.md"
    claude.write_bytes(claude.read_bytes().replace(b"@AGENTS.md", b"@AGENTS.md typed"))
    result = cli("export", "claude-md", "--commit")
    assert result.exit_code == 0, result.output
    assert git(root, "show", "--name-only", "--format=", "HEAD").stdout.split() == ["AGENTS.md"]
    trailers = git(root, "log", "-1", "--format=%(trailers:key=Scarwarden-Export,valueonly)").stdout
    assert trailers.split("\n")[0] == "agents-md AGENTS.md" and "CLAUDE.md" not in trailers
    assert result.stderr.startswith("Committed 1 file(s) as "), result.stderr
    assert git(root, "status", "--porcelain").stdout == ""


def test_a_refused_commit_leaves_a_file_the_user_deleted_deleted(demo_repo: MemoryRepo, cli: Cli) -> None:
    """The user deleted the tracked AGENTS.md (not staged); a hook refused the export's
    commit, and the roll-back brought the file back from git's index."""
    root = demo_repo.root
    _exported(cli, root)
    (root / "AGENTS.md").unlink()
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'refused by policy' >&2\nexit 1\n")
    hook.chmod(0o755)
    commit = head(root)
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 1 and "refused by policy" in result.stderr
    assert head(root) == commit and not (root / "AGENTS.md").exists()
    assert git(root, "status", "--porcelain").stdout == " D AGENTS.md\n"


@pytest.mark.parametrize("remove", [("rm", "-q", "--cached"), ("rm", "-q")])
def test_a_staged_deletion_stays_staged(demo_repo: MemoryRepo, cli: Cli, remove: tuple[str, ...]) -> None:
    """``git rm --cached AGENTS.md`` (or ``git rm``), then ``export --commit``: the
    commit set git's index entry for the file, the deletion the user staged silently
    undone. The section is committed onto HEAD's version and the deletion stays staged."""
    root = demo_repo.root
    before = _exported(cli, root)
    git(root, *remove, "AGENTS.md")
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    committed = _committed(root)
    assert b"Check the invoice owner first." in committed and committed.startswith(b"# Our agents\n")
    assert git(root, "show", "HEAD~1:AGENTS.md").stdout.encode() == before
    assert git(root, "ls-files", "--", "AGENTS.md").stdout == ""  # still staged for deletion
    assert git(root, "status", "--porcelain").stdout == "D  AGENTS.md\n?? AGENTS.md\n"
    written = (root / "AGENTS.md").read_bytes()
    assert written == (committed if remove[-1] == "--cached" else committed[committed.index(b"<!--") :])


def test_a_staged_deletion_is_not_reported_waiting_for_a_locked_index(
    demo_repo: MemoryRepo, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another git command holds the index while ``export --commit`` lands: the commit
    is made, and git's index already holds what it should of the deleted file (nothing),
    so nothing is said to wait for the next write."""
    from scarwarden.files.write_journal import index_waiting

    root = demo_repo.root
    _exported(cli, root)
    git(root, "rm", "-q", "--cached", "AGENTS.md")
    monkeypatch.setenv("SCARWARDEN_INDEX_LOCK_WAIT", "0")
    (root / ".git" / "index.lock").touch()
    commit = head(root)
    assert cli("export", "agents-md", "--commit").exit_code == 0
    assert git(root, "rev-parse", "HEAD~1").stdout.strip() == commit
    assert index_waiting(demo_repo) is None
    (root / ".git" / "index.lock").unlink()
    assert git(root, "status", "--porcelain").stdout == "D  AGENTS.md\n?? AGENTS.md\n"


def test_a_staged_deletion_of_a_whole_generated_file_stays_staged(demo_repo: MemoryRepo, cli: Cli) -> None:
    """The same for ``cursor``, a file generated whole: the commit holds the new rule
    file, and ``git rm --cached`` of it stays staged."""
    root = demo_repo.root
    rel = ".cursor/rules/scarwarden.mdc"
    assert cli("export", "cursor", "--commit").exit_code == 0
    assert cli("rule", "add", "--text", "Check the invoice owner first.", "--cites", EP).exit_code == 0
    git(root, "rm", "-q", "--cached", rel)
    result = cli("export", "cursor", "--commit")
    assert result.exit_code == 0, result.output
    assert b"Check the invoice owner first." in _committed(root, rel) == (root / rel).read_bytes()
    assert git(root, "status", "--porcelain", "-uall").stdout == f"D  {rel}\n?? {rel}\n"


def test_an_export_written_before_is_committed(demo_repo: MemoryRepo, cli: Cli) -> None:
    """``export agents-md``, a look at the diff, then ``export agents-md --commit``: the
    file was already current, so nothing was committed and nothing said (exit 0, HEAD's
    section left stale). The export's change is committed; the file is not rewritten."""
    root = demo_repo.root
    _exported(cli, root)
    assert cli("export", "agents-md").exit_code == 0
    agents = root / "AGENTS.md"
    written, mtime = agents.read_bytes(), agents.stat().st_mtime_ns
    result = cli("export", "agents-md", "--commit", "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"format": "agents-md", "path": "AGENTS.md", "status": "unchanged"}]
    assert result.stderr.startswith("Committed 1 file(s) as "), result.stderr
    assert _committed(root) == written and b"Check the invoice owner first." in written
    assert git(root, "status", "--porcelain").stdout == ""
    assert agents.stat().st_mtime_ns == mtime


def test_a_staged_mode_change_stays_staged(demo_repo: MemoryRepo, cli: Cli) -> None:
    """``git update-index --chmod=+x AGENTS.md`` (the file on disk not executable):
    ``export --commit`` set git's index entry from the disk, the staged mode change lost;
    then it was refused. The section is committed in HEAD's mode, the mode stays staged."""
    root = demo_repo.root
    _exported(cli, root)
    git(root, "update-index", "--chmod=+x", "AGENTS.md")
    result = cli("export", "agents-md", "--commit")
    assert result.exit_code == 0, result.output
    assert b"Check the invoice owner first." in _committed(root)
    assert git(root, "ls-tree", "HEAD", "AGENTS.md").stdout.startswith("100644 ")
    assert git(root, "ls-files", "-s", "AGENTS.md").stdout.startswith("100755 ")
    assert git(root, "status", "--porcelain").stdout == "MM AGENTS.md\n"  # staged +x, -x on disk
    staged = git(root, "diff", "--cached").stdout
    assert "new mode 100755" in staged and "@@" not in staged
    assert not os.access(root / "AGENTS.md", os.X_OK)
