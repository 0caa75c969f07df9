"""``export --output``: where it may write, and what it keeps.

``export cursor --output notes.md`` (or ``claude-skill``, the other format that writes a
whole file) replaced an existing file that held no export, the user's text lost (outside
the repository, beyond git's reach). A path outside the repository is written, as
documented; ``--commit`` with it is refused before anything is written, and the hint
printed after writing one no longer suggests ``--commit``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, head

from scarwarden.errors import ExitCode
from scarwarden.repo import MemoryRepo


def _run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "scarwarden", "-C", str(root), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("fmt", ["cursor", "claude-skill"])
@pytest.mark.parametrize("inside", [True, False])
def test_a_whole_file_export_does_not_replace_a_file_that_is_no_export(
    demo_repo: MemoryRepo, tmp_path: Path, fmt: str, inside: bool
) -> None:
    root = demo_repo.root
    target = root / "notes.md" if inside else tmp_path / "outside" / "notes.md"
    target.parent.mkdir(exist_ok=True)
    target.write_bytes(b"my own notes\n")
    before = git(root, "status", "--porcelain").stdout
    for args in ((), ("--check",)):
        result = _run(root, "export", fmt, "--output", str(target), *args)
        assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
        assert "is not a Scarwarden export" in result.stderr and "Traceback" not in result.stderr
        assert "hint: " in result.stderr
    assert target.read_bytes() == b"my own notes\n"
    assert git(root, "status", "--porcelain").stdout == before


def test_a_whole_file_export_still_refreshes_its_own_file(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    target = tmp_path / "scarwarden.mdc"
    first = _run(demo_repo.root, "export", "cursor", "--output", str(target))
    assert first.returncode == 0, first.stderr
    written = target.read_bytes()
    target.write_bytes(written.replace(b"<!-- scarwarden:end -->", b"stale\n<!-- scarwarden:end -->"))
    again = _run(demo_repo.root, "export", "cursor", "--output", str(target))
    assert again.returncode == 0, again.stderr
    assert target.read_bytes() == written


@pytest.mark.parametrize("where", ["absolute", "dotdot"])
def test_an_output_outside_the_repository_is_written_and_not_offered_to_commit(
    demo_repo: MemoryRepo, where: str
) -> None:
    root = demo_repo.root
    target = root.parent / f"outside-{where}-AGENTS.md"
    given = str(target) if where == "absolute" else f"../{target.name}"
    before = git(root, "status", "--porcelain").stdout
    result = _run(root, "export", "agents-md", "--output", given)
    assert result.returncode == 0, result.stderr
    assert target.is_file() and b"scarwarden:begin" in target.read_bytes()
    assert "--commit" not in result.stderr, result.stderr
    assert git(root, "status", "--porcelain").stdout == before


def test_commit_with_an_outside_output_is_refused_before_writing(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    target = root.parent / "outside-commit-AGENTS.md"
    before, commit = git(root, "status", "--porcelain").stdout, head(root)
    for given in (str(target), f"../{target.name}"):
        result = _run(root, "export", "agents-md", "--output", given, "--commit")
        assert result.returncode == ExitCode.USAGE, result.stderr
        assert result.stderr.startswith("error: --commit cannot be combined with --output")
    assert not target.exists()
    assert head(root) == commit and git(root, "status", "--porcelain").stdout == before


def test_the_help_says_where_output_may_write(demo_repo: MemoryRepo) -> None:
    shown = " ".join(_run(demo_repo.root, "export", "--help").stdout.split())
    assert "outside the repository too" in shown
    assert "never committed (--commit is refused with --output)" in shown


def test_an_output_inside_the_repository_is_left_to_commit_without_offering_commit(
    demo_repo: MemoryRepo,
) -> None:
    result = _run(demo_repo.root, "export", "agents-md", "--output", "docs/agents.md")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "Not committed: review and commit the exported file.\n"


def test_an_output_through_a_link_outside_the_repository_writes_the_file_it_names(
    demo_repo: MemoryRepo, tmp_path: Path
) -> None:
    """``--output ~/.codex/AGENTS.md``, a link into a dotfiles folder: the export replaced
    the link with a file of its own (the link lost, the dotfiles' file never updated).
    It writes the file the link names now, as it does for a link in the repository."""
    (tmp_path / "dotfiles").mkdir()
    real = tmp_path / "dotfiles" / "AGENTS.md"
    real.write_bytes(b"mine\n")
    link = tmp_path / "AGENTS.md"
    link.symlink_to(real)
    result = _run(demo_repo.root, "export", "agents-md", "--output", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    text = real.read_text()
    assert text.startswith("mine\n") and "<!-- scarwarden:begin -->" in text
    check = _run(demo_repo.root, "export", "agents-md", "--output", str(link), "--check")
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["agents-md", "--check", "--commit"], "--commit goes with an export that writes"),
        (["--check", "--commit"], "--commit goes with an export that writes; --check writes nothing"),
        (["agents-md", "--import-agents"], "--import-agents/--inline goes with claude-md"),
        (["cursor", "copilot", "--inline"], "--import-agents/--inline goes with claude-md"),
    ],
)
def test_an_option_the_export_would_ignore_is_refused(
    demo_repo: MemoryRepo, args: list[str], says: str
) -> None:
    """``export --check --commit`` checked and committed nothing, and ``export agents-md
    --import-agents`` wrote AGENTS.md as if the option were not there: silently."""
    root = demo_repo.root
    before, commit = git(root, "status", "--porcelain").stdout, head(root)
    result = _run(root, "export", *args)
    assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
    assert result.stderr.startswith(f"error: {says}"), result.stderr
    assert result.stdout == ""
    assert head(root) == commit and git(root, "status", "--porcelain").stdout == before


def test_import_agents_still_goes_with_claude_md_and_with_a_bare_check(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    assert _run(root, "export", "claude-md", "--import-agents").returncode == 0
    assert _run(root, "export", "all", "--inline").returncode == 0
    checked = _run(root, "export", "--check", "--inline")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_check_of_an_output_names_its_format(demo_repo: MemoryRepo, tmp_path: Path) -> None:
    """``export --check --output FILE`` with no FORMAT checked the files exported at the
    default paths instead: with none, 'nothing exported yet', exit 0, a CI step that
    passed whatever FILE held (missing too); with one, FILE was read as that format."""
    root = demo_repo.root
    for where in (tmp_path / "AGENTS.md", root / "docs" / "AGENTS.md"):
        result = _run(root, "export", "--check", "--output", str(where))
        assert result.returncode == ExitCode.USAGE, result.stdout + result.stderr
        assert result.stderr.startswith("error: --output needs one FORMAT"), result.stderr
        assert "scarwarden export agents-md --check --output" in result.stderr
    assert _run(root, "export", "cursor").returncode == 0
    assert _run(root, "export", "--check", "-o", str(tmp_path / "AGENTS.md")).returncode == ExitCode.USAGE
    assert _run(root, "export", "--check").returncode == 0
