"""``atomic_write`` and a file with more than one name (a hard link). A rename gives the
path a new file and leaves the other names with the old content, silently; writing in
place would instead change a file outside the repository (a ``cp -al`` copy's original)
and give up atomicity. So a hard-linked file is refused, nothing written, with the fix."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import Cli, git

from scarwarden.errors import ExitCode, FileAccessError
from scarwarden.files.atomic import atomic_write
from scarwarden.repo import MemoryRepo


def test_a_hard_linked_file_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    target = tmp_path / "AGENTS.md"
    target.write_bytes(b"old\n")
    os.link(target, tmp_path / "elsewhere.md")
    with pytest.raises(FileAccessError, match="2 names") as caught:
        atomic_write(target, b"new\n")
    assert caught.value.exit_code == ExitCode.USAGE and "ln -s" in (caught.value.hint or "")
    assert target.read_bytes() == (tmp_path / "elsewhere.md").read_bytes() == b"old\n"
    assert target.stat().st_nlink == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["AGENTS.md", "elsewhere.md"]


def test_rule_add_on_a_hard_linked_playbook_says_so_and_writes_nothing(
    demo_repo: MemoryRepo, cli: Cli, tmp_path: Path
) -> None:
    link = tmp_path / "playbook-link.md"
    os.link(demo_repo.playbook_path, link)
    before, head = link.read_bytes(), git(demo_repo.root, "rev-parse", "HEAD").stdout
    ep = sorted(demo_repo.episodes_dir.rglob("ep-*.yaml"))[0].stem
    result = cli("rule", "add", "--text", "Always say the timezone.", "--tag", "links", "--cites", ep)
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "memory/playbook.md" in result.output and "hard link" in result.output
    assert "Traceback" not in result.output
    assert demo_repo.playbook_path.read_bytes() == link.read_bytes() == before
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    # The hint's fix works: one file again, and the command goes through.
    copy = demo_repo.playbook_path.with_suffix(".tmp")
    copy.write_bytes(before)
    copy.replace(demo_repo.playbook_path)
    result = cli("rule", "add", "--text", "Always say the timezone.", "--tag", "links", "--cites", ep)
    assert result.exit_code == 0, result.output


def test_export_all_with_one_hard_linked_target_writes_none(
    demo_repo: MemoryRepo, cli: Cli, tmp_path: Path
) -> None:
    """``export all`` wrote its targets one by one: a hard-linked GEMINI.md stopped it with
    AGENTS.md, CLAUDE.md and the others already rewritten. Every target is checked first."""
    root = demo_repo.root
    gemini = root / "GEMINI.md"
    gemini.write_text("# Gemini\n\nMy own notes.\n")
    os.link(gemini, tmp_path / "gemini-elsewhere.md")
    before = _work_files(root)
    result = cli("export", "all")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert "GEMINI.md" in result.output and "hard link" in result.output
    after = _work_files(root)
    assert after == before  # no AGENTS.md, CLAUDE.md, .cursor/... written
    assert gemini.read_text() == "# Gemini\n\nMy own notes.\n"


def _work_files(root: Path) -> set[str]:
    """The work tree's paths, git's and the index's folders left out."""
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if not {".git", ".scarwarden"} & set(p.relative_to(root).parts)
    }
