"""The playbook merge driver keeps the file as its user keeps it: a CRLF or hand-spaced
playbook merged rule by rule comes back with its line endings and spacing, so the merge
commit's diff holds the merged rules only (as ``rule add`` and ``distill`` write it)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import Cli, git
from helpers import commit_playbook_bytes

from scarwarden.files import playbook as pb
from scarwarden.files.playbook_merge import run_merge_driver
from scarwarden.repo import MemoryRepo

EPISODES = ("ep-9ak5fm33w3", "ep-b9jr19c6sp", "ep-04yqq457qh")


def _user_kept(text: str, newline: str) -> str:
    """``text`` with hand spacing (two blank lines before each rule) and ``newline``."""
    return text.replace("\n\n## PB", "\n\n\n## PB").replace("\n", newline)


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_merge_by_rule_keeps_line_endings_and_spacing(
    demo_repo: MemoryRepo, cli: Cli, newline: str
) -> None:
    assert cli("hooks", "install").exit_code == 0
    commit_playbook_bytes(demo_repo, _user_kept(demo_repo.playbook_path.read_text(), newline).encode())
    for branch, text in (("one", "Say the timezone in every invite."), ("two", "Link a time converter.")):
        git(demo_repo.root, "checkout", "-q", "-b", branch, "main")
        added = cli("rule", "add", "--text", text, "--tag", "merge", "--cites", EPISODES[0])
        assert added.exit_code == 0, added.output
    git(demo_repo.root, "checkout", "-q", "main")
    git(demo_repo.root, "merge", "-q", "--no-edit", "one")  # a fast-forward
    ours = demo_repo.playbook_path.read_bytes()
    merged = git(demo_repo.root, "merge", "-q", "--no-edit", "two", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    data = demo_repo.playbook_path.read_bytes()
    assert data.startswith(ours.rstrip(b"\r\n"))  # every byte of ours kept
    assert b"Link a time converter." in data
    if newline == "\r\n":
        assert b"\n" not in data.replace(b"\r\n", b"")
    diff = git(demo_repo.root, "diff", "--numstat", "HEAD^1", "HEAD").stdout.split("\t")
    assert diff[1] == "0" and int(diff[0]) <= 8  # the new rule's lines, nothing removed


def test_a_citation_merged_from_theirs_changes_that_line_alone(tmp_path: Path) -> None:
    base_book = pb.parse((Path(pb.__file__).parents[1] / "demo" / "memory" / "playbook.md").read_text())
    rule = base_book.rules[0]
    theirs_book = base_book.with_rule(replace(rule, episode_ids=(*rule.episode_ids, EPISODES[2])))
    base, ours, theirs = (tmp_path / name for name in ("base", "ours", "theirs"))
    base.write_text(pb.render(base_book))
    kept = _user_kept(pb.render(base_book), "\r\n").encode()
    ours.write_bytes(kept)
    theirs.write_text(pb.render(theirs_book))
    result = run_merge_driver(base, ours, theirs)
    assert result.clean
    old = f"- Learnt in: {', '.join(rule.episode_ids)}\r\n".encode()
    new = f"- Learnt in: {', '.join((*rule.episode_ids, EPISODES[2]))}\r\n".encode()
    assert ours.read_bytes() == kept.replace(old, new)


def test_a_conflict_is_written_in_ours_line_endings(tmp_path: Path) -> None:
    base_book = pb.parse((Path(pb.__file__).parents[1] / "demo" / "memory" / "playbook.md").read_text())
    rule = base_book.rules[0]
    base, ours, theirs = (tmp_path / name for name in ("base", "ours", "theirs"))
    base.write_text(pb.render(base_book))
    ours_text = pb.render(base_book.with_rule(replace(rule, text="Ours.")))
    ours.write_bytes(ours_text.replace("\n", "\r\n").encode())
    theirs.write_text(pb.render(base_book.with_rule(replace(rule, text="Theirs."))))
    result = run_merge_driver(base, ours, theirs)
    assert result.conflicts == [rule.id]
    data = ours.read_bytes()
    assert b"<<<<<<< ours\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")


def test_save_playbook_keeps_the_file_as_its_user_keeps_it(demo_repo: MemoryRepo) -> None:
    """The demo's (and the Python API's) whole-playbook write splices too."""
    from scarwarden.files.playbook_edit import load_playbook, save_playbook

    kept = _user_kept(demo_repo.playbook_path.read_text(), "\r\n")
    demo_repo.playbook_path.write_bytes(kept.encode())
    book = load_playbook(demo_repo)
    rule = book.minted(pb.make_rule("PB-00", "Say the timezone", "Say the timezone.", ["time"], EPISODES[:1]))
    save_playbook(demo_repo, book.with_rule(rule))
    data = demo_repo.playbook_path.read_bytes().decode()
    assert data.startswith(kept.split("\r\n\r\n\r\n## Retired")[0]) and "Say the timezone.\r\n" in data
    assert "\n" not in data.replace("\r\n", "")
    assert pb.parse(pb.universal_newlines(data)) == book.with_rule(rule)


def test_a_fifo_for_a_side_is_refused_not_waited_on(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    playbook = Path(pb.__file__).parents[1] / "demo" / "memory" / "playbook.md"
    base, ours = tmp_path / "base", tmp_path / "ours"
    base.write_bytes(playbook.read_bytes())
    ours.write_bytes(playbook.read_bytes())
    theirs = tmp_path / "theirs"
    os.mkfifo(theirs)
    run = subprocess.run(
        [sys.executable, "-m", "scarwarden", "merge-playbook", str(base), str(ours), str(theirs)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode not in (0, 1) and "Traceback" not in run.stderr
    assert "theirs" in run.stderr and ours.read_bytes() == playbook.read_bytes()


def test_a_rule_retired_on_their_side_keeps_our_spacing(tmp_path: Path) -> None:
    """A rule theirs retired goes to the end of our '## Retired', as distill puts it,
    after the rules retired before: the splice places it, and our spacing stays."""
    book = pb.parse((Path(pb.__file__).parents[1] / "demo" / "memory" / "playbook.md").read_text())
    book = book.with_retired(book.rules[0].id, "old", None)
    gone = book.rules[2]
    base, ours, theirs = (tmp_path / name for name in ("base", "ours", "theirs"))
    base.write_text(pb.render(book))
    kept = _user_kept(pb.render(book), "\n")
    ours.write_text(kept)
    theirs.write_text(pb.render(book.with_retired(gone.id, "gone", None)))
    assert run_merge_driver(base, ours, theirs).clean
    merged = ours.read_text()
    assert [rule.id for rule in pb.parse(merged).retired] == [book.retired[0].id, gone.id]
    assert merged.startswith(kept[: kept.index(f"## {gone.id}")])
    assert merged.count("\n\n\n## PB") == kept.count("\n\n\n## PB") - 1


def test_a_line_merge_of_sides_given_by_relative_paths_in_a_folder(tmp_path: Path) -> None:
    """By hand, ``merge-playbook sides/base sides/ours sides/theirs``: when a side does
    not parse, git's line merge must read the same files, not ``sides/sides/...``."""
    import subprocess
    import sys

    playbook = (Path(pb.__file__).parents[1] / "demo" / "memory" / "playbook.md").read_text()
    sides = tmp_path / "sides"
    sides.mkdir()
    (sides / "base").write_text(playbook)
    (sides / "ours").write_text(playbook + "<<<<<<< left over\n")  # does not parse
    (sides / "theirs").write_text(playbook.replace("within days", "within hours"))
    run = subprocess.run(
        [sys.executable, "-m", "scarwarden", "merge-playbook", "sides/base", "sides/ours", "sides/theirs"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 0, run.stderr  # the lines changed do not overlap
    merged = (sides / "ours").read_text()
    assert "within hours" in merged and merged.endswith("<<<<<<< left over\n")


def test_a_side_git_cannot_merge_as_text_is_not_called_a_conflict(tmp_path: Path) -> None:
    """Theirs holds NUL bytes (binary junk): git's line merge refuses it and writes
    nothing, but the driver said 'conflict in memory/playbook.md: lines; resolve each
    conflict', sending the user to look for markers that are not there."""
    import subprocess
    import sys

    playbook = (Path(pb.__file__).parents[1] / "demo" / "memory" / "playbook.md").read_bytes()
    (tmp_path / "base").write_bytes(playbook)
    (tmp_path / "ours").write_bytes(playbook)
    (tmp_path / "theirs").write_bytes(playbook + b"\x00\x01junk\x00\n")
    sides = ("base", "ours", "theirs", "memory/playbook.md")
    run = subprocess.run(
        [sys.executable, "-m", "scarwarden", "merge-playbook", *sides],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert run.returncode == 1
    assert "cannot merge memory/playbook.md" in run.stderr and "not text" in run.stderr
    assert "resolve each conflict" not in run.stderr and "Traceback" not in run.stderr
    assert (tmp_path / "ours").read_bytes() == playbook
