"""``scarwarden export`` onto odd targets: what is there already is refused clearly or
kept, and ``--check`` agrees with what ``export`` writes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import git

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # A process with a timeout: a read that waits fails the test instead of stopping the suite.
    command = [sys.executable, "-m", "scarwarden", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_a_fifo_where_the_export_goes_is_refused_not_waited_on(demo_repo: MemoryRepo) -> None:
    """A FIFO at AGENTS.md hung ``export`` and ``export --check`` for ever (the read of
    the file to splice waited for a writer)."""
    root = demo_repo.root
    os.mkfifo(root / "AGENTS.md")
    before = git(root, "status", "--porcelain").stdout
    for args in (("export", "agents-md"), ("export", "agents-md", "--check")):
        result = _run(root, *args)
        assert result.returncode == ExitCode.USAGE, result.stderr
        assert result.stderr.startswith("error: AGENTS.md: is not a regular file"), result.stderr
        assert "Traceback" not in result.stderr
    assert git(root, "status", "--porcelain").stdout == before


def test_a_crlf_file_gets_a_crlf_section_and_checks_current(demo_repo: MemoryRepo) -> None:
    """A file with CRLF line endings (Windows; git's ``core.autocrlf=true`` checks every
    text file out so) got a section with bare LFs, mixed into it, and once the section
    itself was CRLF ``export --check`` called it stale for ever (exit 1: a pre-commit
    hook that never passes). The section now takes the line ending of the line it
    replaces (of the file's first line when appended), and the rest stays byte for byte."""
    root = demo_repo.root
    agents, cursor = root / "AGENTS.md", root / ".cursor" / "rules" / "scarwarden.mdc"
    agents.write_bytes(b"# Our agents\r\n\r\nBuild with make.\r\n")
    assert _run(root, "export", "agents-md", "cursor").returncode == 0
    raw = agents.read_bytes()
    assert raw.startswith(b"# Our agents\r\n\r\nBuild with make.\r\n\r\n<!-- scarwarden:begin -->\r\n")
    assert raw.endswith(b"<!-- scarwarden:end -->\r\n") and b"\n" not in raw.replace(b"\r\n", b"")
    # As a CRLF checkout has them: every file, the section and the whole-file cursor rule.
    for path in (agents, cursor):
        path.write_bytes(path.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    crlf = {path: path.read_bytes() for path in (agents, cursor)}
    check = _run(root, "export", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
    assert _run(root, "export", "agents-md", "cursor").returncode == 0
    assert {path: path.read_bytes() for path in (agents, cursor)} == crlf


def test_a_symlink_is_written_through_and_kept(demo_repo: MemoryRepo) -> None:
    """A symlink where the export goes (CLAUDE.md -> AGENTS.md, as many repositories
    keep them) was replaced by a file: the link lost, the file it named left stale."""
    root = demo_repo.root
    (root / "docs").mkdir()
    (root / "docs" / "agents.md").write_bytes(b"# Agents\n")
    (root / "AGENTS.md").symlink_to("docs/agents.md")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    result = _run(root, "export", "agents-md", "--commit")
    assert result.returncode == 0, result.stderr
    assert (root / "AGENTS.md").is_symlink() and (root / "CLAUDE.md").is_symlink()
    written = (root / "docs" / "agents.md").read_bytes()
    assert written.startswith(b"# Agents\n\n<!-- scarwarden:begin -->\n")
    assert git(root, "show", "HEAD:docs/agents.md").stdout.encode() == written
    check = _run(root, "export", "--check")  # CLAUDE.md is that file too: checked once
    assert check.returncode == 0, check.stdout + check.stderr
    # Two formats onto one file would each overwrite the other's section.
    both = _run(root, "export", "all")
    assert both.returncode == ExitCode.USAGE
    assert "AGENTS.md and CLAUDE.md are the same file (docs/agents.md)" in both.stderr
    assert (root / "docs" / "agents.md").read_bytes() == written
    assert (root / "CLAUDE.md").is_symlink()


def test_a_symlink_out_of_the_repository_or_into_its_memory_is_refused(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    root = demo_repo.root
    outside = tmp_path / "outside.md"
    outside.write_bytes(b"Not the repository's\n")
    playbook = demo_repo.playbook_path.read_bytes()
    for target, says in (
        (outside, "AGENTS.md is a symbolic link out of the repository"),
        (Path("memory/playbook.md"), "AGENTS.md links to memory/playbook.md: refusing to write inside"),
    ):
        (root / "AGENTS.md").unlink(missing_ok=True)
        (root / "AGENTS.md").symlink_to(target)
        result = _run(root, "export", "agents-md")
        assert result.returncode == ExitCode.USAGE, result.stderr
        assert says in result.stderr, result.stderr
        assert (root / "AGENTS.md").is_symlink()
    assert outside.read_bytes() == b"Not the repository's\n"
    assert demo_repo.playbook_path.read_bytes() == playbook


def test_a_symlink_loop_is_named(demo_repo: MemoryRepo) -> None:
    (demo_repo.root / "AGENTS.md").symlink_to("AGENTS.md")
    result = _run(demo_repo.root, "export", "agents-md")
    assert result.returncode == ExitCode.USAGE
    assert result.stderr.startswith("error: AGENTS.md: too many levels of symbolic links"), result.stderr


def test_an_output_onto_a_symlink_loop_is_named_not_an_internal_error(demo_repo: MemoryRepo) -> None:
    """``--output`` onto a symlink loop was 'internal error: RuntimeError: Symlink loop
    from ...' (pathlib's resolve, in the check of what the output may not overwrite)."""
    (demo_repo.root / "loop.md").symlink_to("loop.md")
    for args in (
        ("export", "agents-md", "--output", "loop.md"),
        ("export", "--check", "agents-md", "-o", "loop.md"),
    ):
        result = _run(demo_repo.root, *args)
        assert result.returncode == ExitCode.USAGE, result.stderr
        assert result.stderr.startswith("error: loop.md: too many levels of symbolic links"), result.stderr


CONFLICT_ACROSS = (
    b"Top\n<<<<<<< HEAD\nMine\n=======\nTheirs\n<!-- scarwarden:begin -->\nB\n>>>>>>> other\n"
    b"<!-- scarwarden:end -->\nBottom\n"
)


def test_a_merge_conflict_across_a_marker_is_refused(demo_repo: MemoryRepo) -> None:
    """A conflict that began outside the section and ended inside it was spliced: the
    section replaced its '>>>>>>>' line, leaving '<<<<<<< HEAD ... =======' open, a
    conflict half taken away. A conflict wholly inside the section is the section's
    (regenerated, as ever), one wholly outside is the user's (kept)."""
    path = demo_repo.root / "AGENTS.md"
    path.write_bytes(CONFLICT_ACROSS)
    result = _run(demo_repo.root, "export", "agents-md")
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("error: AGENTS.md: a merge conflict crosses the Scarwarden markers")
    assert "AGENTS.md:6: '<!-- scarwarden:begin -->' is inside the conflict of line 2" in result.stderr
    assert path.read_bytes() == CONFLICT_ACROSS
    inside = (
        b"<!-- scarwarden:begin -->\n<<<<<<< HEAD\nA\n=======\nB\n>>>>>>> other\n<!-- scarwarden:end -->\n"
    )
    outside = b"<<<<<<< HEAD\nMine\n=======\nTheirs\n>>>>>>> other\n"
    path.write_bytes(outside + inside)
    assert _run(demo_repo.root, "export", "agents-md").returncode == 0
    written = path.read_bytes()
    assert written.startswith(outside + b"<!-- scarwarden:begin -->\n") and b"\nA\n" not in written


def test_commit_does_not_force_an_ignored_file_into_git(demo_repo: MemoryRepo) -> None:
    """``export --commit`` committed AGENTS.md although .gitignore names it ('git add'
    refuses an ignored file without -f): the user's choice to keep it out of git undone."""
    root = demo_repo.root
    (root / ".gitignore").write_text("AGENTS.md\n")
    git(root, "add", ".gitignore")
    git(root, "commit", "-q", "-m", "ignore AGENTS.md")
    head = git(root, "rev-parse", "HEAD").stdout
    result = _run(root, "export", "agents-md", "copilot", "--commit")
    assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
    assert result.stderr.startswith("error: AGENTS.md is ignored by git: --commit would force it in"), (
        result.stderr
    )
    assert git(root, "rev-parse", "HEAD").stdout == head
    assert git(root, "status", "--porcelain").stdout == ""  # nothing written either
    assert _run(root, "export", "agents-md").returncode == 0  # written, as asked, not committed
    assert git(root, "ls-files", "AGENTS.md").stdout == ""


def test_a_rule_holding_a_marker_line_does_not_break_the_section(demo_repo: MemoryRepo) -> None:
    """A rule whose text held '<!-- scarwarden:end -->' on a line of its own was
    exported as it was: the file then had two end markers, and every later export and
    'export --check' refused it ('the Scarwarden markers are broken') until the playbook
    changed. The marker line of a rule is written escaped, as Markdown shows it."""
    root = demo_repo.root
    text = "Never paste\n<!-- scarwarden:end -->\ninto a post"
    added = _run(root, "rule", "add", "--title", "Markers", "--text", text, "--cites", "ep-wmjgdnc59j")
    assert added.returncode == 0, added.stderr
    assert _run(root, "export", "agents-md").returncode == 0
    written = (root / "AGENTS.md").read_text()
    assert written.count("\n<!-- scarwarden:end -->") == 1 and "\\<!-- scarwarden:end -->" in written
    again = _run(root, "export", "agents-md", "--json")
    assert again.returncode == 0, again.stderr
    check = _run(root, "export", "--check")
    assert check.returncode == 0, check.stdout + check.stderr


def test_an_output_path_ending_in_a_slash_is_a_folder_not_a_file_name(demo_repo: MemoryRepo) -> None:
    # 'export -o docs/' wrote a file named 'docs' (and 'review -o out/' one named 'out').
    root = demo_repo.root
    before = git(root, "status", "--porcelain").stdout
    for args in (("export", "agents-md", "--output", "docs/"), ("review", "--output", "out/")):
        result = _run(root, *args)
        assert result.returncode == ExitCode.USAGE, result.stderr
        assert f"'{args[-1]}' ends with '/', a folder: give the path of the file to write" in result.stderr
    assert not (root / "docs").exists() and not (root / "out").exists()
    assert git(root, "status", "--porcelain").stdout == before


def test_a_byte_order_mark_before_the_section_is_kept(demo_repo: MemoryRepo) -> None:
    """An exported AGENTS.md (the section its first line) saved by an editor that writes a
    UTF-8 byte order mark: the begin marker after it was not seen, so every export
    refused 'the Scarwarden markers are broken' naming the end marker alone, and
    'export --check' (no format) passed, the file not counted as exported."""
    root = demo_repo.root
    agents = root / "AGENTS.md"
    assert _run(root, "export", "agents-md").returncode == 0
    bom = "\ufeff".encode()
    agents.write_bytes(bom + agents.read_bytes() + b"\nOurs.\n")
    added = _run(root, "rule", "add", "--text", "Check the invoice owner first.", "--cites", "ep-wmjgdnc59j")
    assert added.returncode == 0, added.stderr
    stale = _run(root, "export", "--check")
    assert stale.returncode == ExitCode.CHECK_FAILED and "stale    AGENTS.md" in stale.stdout, stale.stderr
    result = _run(root, "export", "agents-md")
    assert result.returncode == 0, result.stderr
    written = agents.read_bytes()
    assert written.startswith(bom + b"<!-- scarwarden:begin -->\n") and written.endswith(b"\nOurs.\n")
    assert written.count(b"<!-- scarwarden:begin -->") == 1 and b"Check the invoice owner first." in written
    assert _run(root, "export", "--check").returncode == 0


def test_a_linked_folder_is_followed_as_a_linked_file_is(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """A folder on the way that is a symlink (.cursor -> a folder elsewhere) was not
    looked at: one out of the repository had the export written there (a link to a
    file there is refused), and with one inside it 'export --commit' failed on git's
    'git update-index --add failed: ... is beyond a symbolic link'."""
    root = demo_repo.root
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".cursor").symlink_to(elsewhere)
    refused = _run(root, "export", "cursor")
    assert refused.returncode == ExitCode.USAGE, refused.stdout + refused.stderr
    assert ".cursor/rules/scarwarden.mdc is in a folder linked out of the repository" in refused.stderr
    assert list(elsewhere.iterdir()) == []
    (root / "docs" / "github").mkdir(parents=True)
    (root / ".github").symlink_to("docs/github")
    result = _run(root, "export", "copilot", "--commit")
    assert result.returncode == 0, result.stdout + result.stderr
    written = (root / "docs" / "github" / "copilot-instructions.md").read_bytes()
    assert b"<!-- scarwarden:begin -->" in written and (root / ".github").is_symlink()
    assert git(root, "show", "HEAD:docs/github/copilot-instructions.md").stdout.encode() == written
    check = _run(root, "export", "copilot", "--check")
    assert check.returncode == 0, check.stdout + check.stderr
