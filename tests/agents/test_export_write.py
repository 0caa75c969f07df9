"""Writing several exported files is all or nothing: a file that cannot be written
leaves every other one as it was (``export all``, with and without ``--commit``)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import git, head

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scarwarden", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def _state(root: Path) -> tuple[str, str, str]:
    """HEAD, git's index and the status: what a refused export leaves as it was."""
    return head(root), git(root, "ls-files", "-s").stdout, git(root, "status", "--porcelain").stdout


@contextmanager
def _unwritable(folder: Path) -> Iterator[None]:
    """``folder`` made a place no file can be created in, for root too (immutable, where
    the file system has the attribute; else read-only, which stops other users)."""
    folder.mkdir(parents=True, exist_ok=True)
    immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
    if not immutable:
        folder.chmod(0o555)
    try:
        try:
            (folder / "probe").write_text("")
        except OSError:
            pass
        else:
            pytest.skip("no way to make a folder unwritable here (root without chattr)")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)


@pytest.mark.parametrize("commit", [False, True])
def test_a_file_that_cannot_be_written_leaves_the_others_as_they_were(
    demo_repo: MemoryRepo, commit: bool
) -> None:
    """'export all' with the last file's folder unwritable (an immutable or read-only
    SKILL.md folder) stopped half-way: AGENTS.md, CLAUDE.md, the cursor and copilot files
    written, and the error named the one file alone. Every file is now put back (a file
    that was there: its bytes and mode; one that was not: removed, with the folders made
    for it), and the error says nothing was changed; with --commit, nothing committed."""
    root = demo_repo.root
    agents = root / "AGENTS.md"
    agents.write_bytes(b"# Our agents\n\nBuild with make.\n")
    agents.chmod(0o600)
    status, commit_before = git(root, "status", "--porcelain", "-uall").stdout, head(root)
    index = git(root, "ls-files", "-s").stdout
    with _unwritable(root / ".claude" / "skills" / "scarwarden"):
        result = _run(root, "export", "all", *(["--commit"] if commit else []))
    assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
    assert ".claude/skills/scarwarden" in result.stderr and "Traceback" not in result.stderr
    assert "nothing was changed" in result.stderr, result.stderr
    assert agents.read_bytes() == b"# Our agents\n\nBuild with make.\n"
    assert agents.stat().st_mode & 0o777 == 0o600
    for gone in ("CLAUDE.md", "GEMINI.md", ".cursor", ".github"):
        assert not os.path.lexists(root / gone), gone
    assert git(root, "status", "--porcelain", "-uall").stdout == status
    assert head(root) == commit_before and git(root, "ls-files", "-s").stdout == index


@pytest.mark.parametrize("registered", [False, True])
def test_commit_refuses_a_file_inside_another_repository(demo_repo: MemoryRepo, registered: bool) -> None:
    """A git repository of its own at .github (untracked, or a submodule): 'export
    copilot --commit' committed .github/copilot-instructions.md into the outer repository,
    where 'git add' skips it (the file is the inner repository's). Refused (exit 2),
    naming the inner repository, nothing written or committed; a plain export writes it."""
    root = demo_repo.root
    inner = root / ".github"
    inner.mkdir()
    git(inner, "init", "-q", "-b", "main")
    git(inner, "commit", "-q", "--allow-empty", "-m", "inner")
    if registered:  # as 'git submodule add' records it: a gitlink in the outer index
        sha = head(inner)
        git(root, "update-index", "--add", "--cacheinfo", f"160000,{sha},.github")
        git(root, "commit", "-q", "-m", "submodule")
    status, commit, index = (
        git(root, "status", "--porcelain").stdout,
        head(root),
        git(root, "ls-files", "-s").stdout,
    )
    for formats in (["copilot"], ["all"]):
        result = _run(root, "export", *formats, "--commit")
        assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
        assert "another git repository (.github)" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        assert not (inner / "copilot-instructions.md").exists() and not (root / "AGENTS.md").exists()
        assert head(root) == commit and git(root, "ls-files", "-s").stdout == index
        assert git(root, "status", "--porcelain").stdout == status
    assert _run(root, "export", "copilot").returncode == 0
    assert (inner / "copilot-instructions.md").is_file()


@pytest.mark.parametrize("staged", [False, True])
def test_commit_refuses_a_link_in_head_replaced_by_a_file(demo_repo: MemoryRepo, staged: bool) -> None:
    """AGENTS.md a symlink in HEAD (its text in docs/agents.md), replaced on disk by a file
    of the user's: --commit took it for a new file and committed the type change with the
    user's text. The link's replacement is the user's change to commit: refused (exit 1)
    naming it, nothing written or committed (a staged replacement stays staged)."""
    root = demo_repo.root
    (root / "docs").mkdir()
    (root / "docs" / "agents.md").write_bytes(b"# Shared agents\n")
    (root / "AGENTS.md").symlink_to("docs/agents.md")
    git(root, "add", "AGENTS.md", "docs/agents.md")
    git(root, "commit", "-q", "-m", "agents via a link")
    (root / "AGENTS.md").unlink()
    (root / "AGENTS.md").write_bytes(b"# My own agents, not ready\n")
    if staged:
        git(root, "add", "AGENTS.md")
    before = _state(root)
    result = _run(root, "export", "agents-md", "--commit")
    assert result.returncode == ExitCode.CHECK_FAILED, result.stdout + result.stderr
    assert result.stderr.startswith("error: AGENTS.md is a symbolic link in HEAD and a file here")
    assert "Traceback" not in result.stderr
    assert (root / "AGENTS.md").read_bytes() == b"# My own agents, not ready\n"
    assert (root / "docs" / "agents.md").read_bytes() == b"# Shared agents\n"
    assert _state(root) == before


def test_commit_names_a_section_a_fence_hides_in_head_as_the_working_file_s(demo_repo: MemoryRepo) -> None:
    """HEAD's AGENTS.md has its section inside a code block (the working file fixed, not
    committed): --commit called it 'broken Scarwarden markers', where the same file on
    disk is refused naming the code block. It now says what the working file's refusal says."""
    root = demo_repo.root
    agents = root / "AGENTS.md"
    agents.write_text("# Ours\n\n```md\nan example never closed\n")
    assert _run(root, "export", "agents-md").returncode == 0
    damaged = agents.read_text() + "```\n"
    agents.write_text(damaged)
    git(root, "add", "AGENTS.md")
    git(root, "commit", "-q", "-m", "a section in a code block")
    agents.write_text(damaged.replace("never closed\n", "never closed\n```\n", 1).removesuffix("```\n"))
    fixed = agents.read_bytes()
    added = _run(root, "rule", "add", "--text", "Check the invoice owner first.", "--cites", "ep-hkgnqdz88f")
    assert added.returncode == 0, added.stderr
    before = _state(root)
    result = _run(root, "export", "agents-md", "--commit")
    assert result.returncode == ExitCode.CHECK_FAILED, result.stdout + result.stderr
    assert result.stderr.startswith(
        "error: AGENTS.md in HEAD: the Scarwarden section is inside the code block of line 3 (closed at"
    ), result.stderr
    assert "broken" not in result.stderr and "commit your own fix of AGENTS.md first" in result.stderr
    assert agents.read_bytes() == fixed and _state(root) == before


def test_a_whole_generated_file_saved_with_a_bom_keeps_it_and_checks_current(demo_repo: MemoryRepo) -> None:
    """The cursor rule and the Claude skill (whole generated files) re-saved by an editor
    that writes a UTF-8 BOM: the next export dropped the mark, and until then 'export
    --check' called them stale (exit 1). The mark is now kept, as a section file keeps it."""
    root = demo_repo.root
    files = [root / ".cursor/rules/scarwarden.mdc", root / ".claude/skills/scarwarden/SKILL.md"]
    assert _run(root, "export", "cursor", "claude-skill").returncode == 0
    for path in files:
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    saved = [path.read_bytes() for path in files]
    check = _run(root, "export", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert _run(root, "export", "cursor", "claude-skill").returncode == 0
    assert [path.read_bytes() for path in files] == saved
    added = _run(root, "rule", "add", "--text", "Check the invoice owner first.", "--cites", "ep-hkgnqdz88f")
    assert added.returncode == 0, added.stderr
    assert _run(root, "export", "cursor", "claude-skill").returncode == 0
    for path in files:
        raw = path.read_bytes()
        assert raw.startswith(b"\xef\xbb\xbf---\n") and b"Check the invoice owner first." in raw
    assert _run(root, "export", "--check").returncode == 0


@pytest.mark.parametrize("held", ["file", "link", "staged deletion"])
def test_commit_refuses_a_folder_on_the_way_that_head_holds_as_a_file(
    demo_repo: MemoryRepo, held: str
) -> None:
    """HEAD holds .github as a file (or a symbolic link), the user deleted it: 'export
    copilot --commit' failed on git's raw 'git update-index --add failed: ... appears as
    both a file and as a directory'. The file's removal is the user's change to commit:
    refused (exit 1) naming it, nothing written or committed."""
    root = demo_repo.root
    if held == "link":
        (root / ".github").symlink_to("elsewhere")
    else:
        (root / ".github").write_text("not a folder\n")
    git(root, "add", ".github")
    git(root, "commit", "-q", "-m", ".github")
    if held == "staged deletion":
        git(root, "rm", "-q", "--cached", ".github")
    (root / ".github").unlink()
    before = _state(root)
    result = _run(root, "export", "copilot", "--commit")
    assert result.returncode == ExitCode.CHECK_FAILED, result.stdout + result.stderr
    kind = "symbolic link" if held == "link" else "file"
    assert result.stderr.startswith(f"error: .github is a {kind} in HEAD and a folder here"), result.stderr
    assert "Traceback" not in result.stderr and "update-index" not in result.stderr
    assert not os.path.lexists(root / ".github") and _state(root) == before


def test_commit_refuses_a_file_where_head_holds_a_folder(demo_repo: MemoryRepo) -> None:
    """GEMINI.md a folder in HEAD, replaced on disk by a file of the user's: 'export
    gemini-md --commit' failed on git's raw 'git update-index --add failed: ... appears as
    both a file and as a directory'. Refused (exit 1) naming the folder, nothing changed."""
    root = demo_repo.root
    (root / "GEMINI.md").mkdir()
    (root / "GEMINI.md" / "notes.md").write_text("notes\n")
    git(root, "add", "GEMINI.md")
    git(root, "commit", "-q", "-m", "a folder")
    (root / "GEMINI.md" / "notes.md").unlink()
    (root / "GEMINI.md").rmdir()
    (root / "GEMINI.md").write_text("# Mine\n")
    before = _state(root)
    result = _run(root, "export", "gemini-md", "--commit")
    assert result.returncode == ExitCode.CHECK_FAILED, result.stdout + result.stderr
    assert result.stderr.startswith("error: GEMINI.md is a folder in HEAD and a file here"), result.stderr
    assert "Traceback" not in result.stderr and "update-index" not in result.stderr
    assert (root / "GEMINI.md").read_text() == "# Mine\n" and _state(root) == before


def test_a_staged_link_over_a_file_stays_staged_as_it_was(demo_repo: MemoryRepo) -> None:
    """AGENTS.md a file in HEAD, a symbolic link staged over it (the user's change), a
    file on disk again: --commit spliced the section into the link's target, leaving a
    staged link to 'other.md\\n\\n<!-- scarwarden:begin -->...' (a path no one wrote). The
    staged link now stays staged as it was; the commit holds HEAD's file with the section."""
    root = demo_repo.root
    agents = root / "AGENTS.md"
    agents.write_text("# Ours\n")
    git(root, "add", "AGENTS.md")
    git(root, "commit", "-q", "-m", "agents")
    agents.unlink()
    agents.symlink_to("other.md")
    git(root, "add", "AGENTS.md")
    staged = git(root, "ls-files", "-s", "AGENTS.md").stdout
    assert staged.startswith("120000 ")
    agents.unlink()
    agents.write_text("# Ours, edited\n")
    result = _run(root, "export", "agents-md", "--commit")
    assert result.returncode == 0, result.stdout + result.stderr
    assert git(root, "ls-files", "-s", "AGENTS.md").stdout == staged
    committed = git(root, "show", "HEAD:AGENTS.md").stdout
    assert committed.startswith("# Ours\n\n<!-- scarwarden:begin -->\n")
    assert git(root, "ls-tree", "HEAD", "AGENTS.md").stdout.startswith("100644 ")


@pytest.mark.parametrize("folder", [":notes", ":!notes"])
def test_commit_through_a_link_into_a_folder_named_like_pathspec_magic(
    demo_repo: MemoryRepo, folder: str
) -> None:
    """AGENTS.md a link to a file in a folder whose name starts with ':' (git's pathspec
    magic): ':notes/agents.md' was looked up in HEAD as 'notes/agents.md', not found, and
    the user's whole file committed, their uncommitted edit with it; ':!notes' failed on
    git's raw 'pathspec magic not supported'. The paths are now given to git literally."""
    root = demo_repo.root
    (root / folder).mkdir()
    (root / folder / "agents.md").write_text("# Ours\n")
    (root / "AGENTS.md").symlink_to(f"{folder}/agents.md")
    git(root, "add", "AGENTS.md", f"./{folder}")
    git(root, "commit", "-q", "-m", "agents")
    (root / folder / "agents.md").write_text("# Ours\n\nMy draft, not ready.\n")
    result = _run(root, "export", "agents-md", "--commit")
    assert result.returncode == 0, result.stdout + result.stderr
    committed = git(root, "show", f"HEAD:{folder}/agents.md").stdout
    assert committed.startswith("# Ours\n\n<!-- scarwarden:begin -->\n"), committed
    assert "My draft" not in committed and "My draft" in (root / folder / "agents.md").read_text()
