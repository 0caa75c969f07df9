"""``scarwarden verify``: a history written with --no-verify is caught, at its first commit."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from conftest import git
from helpers import (
    NEW_ID,
    add_rule,
    bypass_env,
    commit_no_verify,
    episode_text,
    first_episode,
    unretire,
    write,
)

from scarwarden.files import playbook as pb
from scarwarden.files.playbook_edit import load_playbook, save_playbook
from scarwarden.gate.hooks import install
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo


def test_clean_history_is_proven(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    install(root)
    write(root, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    git(root, "add", "-A", "memory")
    git(root, "commit", "-qm", "episode")
    git(root, "add", add_rule(demo_repo, [NEW_ID]))
    git(root, "commit", "-qm", "rule")
    save_playbook(demo_repo, load_playbook(demo_repo).with_retired("PB-14", "superseded", "PB-15"))
    git(root, "commit", "-qam", "retire PB-14")
    result = cli("verify")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == (
        "scarwarden verify: OK, history HEAD is honest: 5 commits (4 touching memory), "
        "35 episodes, 3 playbook versions, 16 rule versions and 32 citations checked, "
        "2 images proved by content"  # the demo's visual episodes and their images (issue 19)
    )
    data = json.loads(cli("verify", "--json").stdout)
    assert data["ok"] is True and data["problems"] == []
    assert {k: data[k] for k in ("commits", "memory_commits", "episodes", "playbooks")} == {
        "commits": 5,
        "memory_commits": 4,
        "episodes": 35,
        "playbooks": 3,
    }


def test_no_verify_tampering_is_caught_at_the_first_offending_commit(cli, demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    install(root)
    eps = sorted(p.relative_to(root).as_posix() for p in demo_repo.episodes_dir.glob("*/*/*.yaml"))
    edited, deleted, renamed = eps[1], eps[2], eps[3]
    (root / edited).write_text((root / edited).read_text() + "x-note: rewritten\n")
    c_edit = commit_no_verify(root, "rewrite history a little")
    (root / edited).write_text((root / edited).read_text() + "x-more: again\n")
    commit_no_verify(root, "and again (not news: same file)")
    (root / deleted).unlink()
    c_delete = commit_no_verify(root, "drop an episode")
    target = renamed.replace("/08/", "/12/")
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", renamed, target)
    c_rename = commit_no_verify(root, "move an episode")
    add_rule(demo_repo, ["ep-nosuch0001"])
    c_cite = commit_no_verify(root, "a rule citing nothing")
    write(
        root, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID).replace("task:", "tsk:")
    )
    c_invalid = commit_no_verify(root, "an invalid episode")
    git(root, "commit", "-q", "--allow-empty", "-m", "later honest commit")

    result = verify(root)
    got = [(p.code, p.commit, p.file) for p in result.problems]
    assert ("episode-modified", c_edit, edited) in got
    assert ("episode-deleted", c_delete, deleted) in got
    assert ("episode-renamed", c_rename, renamed) in got
    assert ("citation-missing", c_cite, "memory/playbook.md") in got
    assert ("episode-invalid", c_invalid, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml") in got
    assert [c for c, *_ in got].count("episode-modified") == 1  # the first commit only
    # Problems come in history order.
    order = [p.commit for p in result.problems]
    assert order.index(c_edit) < order.index(c_delete) < order.index(c_cite)

    out = cli("verify")
    assert out.exit_code == 1
    assert f"- [{c_edit[:10]}] {edited}: episode {Path(edited).stem} was modified" in out.stdout
    # The hint fits a history (restoring from HEAD would not take it out of one).
    assert f"rewrite it (git rebase -i {c_edit[:10]}^)" in out.stdout
    assert "git restore --source=HEAD" not in out.stdout
    assert out.stdout.splitlines()[-1].startswith("scarwarden verify: ")
    data = json.loads(cli("verify", "--json").stdout)
    assert data["ok"] is False
    assert {p["commit"] for p in data["problems"]} >= {c_edit, c_delete, c_rename, c_cite}


def test_rule_dropped_then_reused_and_retired_id_revived(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    book = load_playbook(demo_repo)
    save_playbook(
        demo_repo, pb.Playbook(tuple(r for r in book.rules if r.id != "PB-14"), book.retired, book.preamble)
    )
    c_drop = commit_no_verify(root, "drop PB-14")
    add_rule(demo_repo, [Path(first_episode(demo_repo)).stem], rule_id="PB-14", title="New meaning")
    c_reuse = commit_no_verify(root, "reuse PB-14")
    save_playbook(demo_repo, load_playbook(demo_repo).with_retired("PB-13", "old", None))
    commit_no_verify(root, "retire PB-13 (honest)")
    unretire(demo_repo, "PB-13")
    c_revive = commit_no_verify(root, "revive PB-13")
    got = {(p.code, p.rule, p.commit) for p in verify(root).problems}
    assert got == {
        ("rule-removed", "PB-14", c_drop),
        ("rule-id-reused", "PB-14", c_reuse),
        ("rule-id-reused", "PB-13", c_revive),
    }


def test_merges_are_honest_and_an_evil_merge_is_caught(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    install(root)
    git(root, "checkout", "-q", "-b", "side")
    write(
        root,
        f"{demo_repo.episodes_rel}/2026/12/ep-side00001.yaml",
        episode_text("ep-side00001", at="2026-12-05T10:00:00Z"),
    )
    git(root, "add", "-A", "memory")
    git(root, "commit", "-qm", "side episode")
    git(root, "checkout", "-q", "main")
    write(root, f"{demo_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    git(root, "add", "-A", "memory")
    git(root, "commit", "-qm", "main episode")
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    git(root, "add", add_rule(demo_repo, ["ep-side00001", NEW_ID]))
    git(root, "commit", "-qm", "rule citing both")
    clean = verify(root)
    assert clean.ok, clean.problems
    assert clean.episodes == 36  # the merged-in episode counted once, in its own commit

    # An evil merge drops the side branch's new episode while merging it.
    git(root, "checkout", "-q", "-b", "side2", "HEAD~2")
    write(
        root,
        f"{demo_repo.episodes_rel}/2026/12/ep-side00002.yaml",
        episode_text("ep-side00002", at="2026-12-06T10:00:00Z"),
    )
    git(root, "add", "-A", "memory")
    git(root, "commit", "-qm", "side2 episode")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "--no-commit", "side2")
    git(root, "rm", "-q", "-f", f"{demo_repo.episodes_rel}/2026/12/ep-side00002.yaml")
    git(root, "commit", "-q", "--no-verify", "-m", "evil merge", env=bypass_env())
    evil = git(root, "rev-parse", "HEAD").stdout.strip()
    got = [(p.code, p.commit, p.episode) for p in verify(root).problems]
    assert got == [("episode-deleted", evil, "ep-side00002")]


def test_range_and_empty_history(cli, demo_repo: MemoryRepo, git_repo: Path, make_cli) -> None:
    root = demo_repo.root
    rel = first_episode(demo_repo)
    (root / rel).write_text((root / rel).read_text() + "x-note: edited\n")
    commit_no_verify(root, "edit")
    git(root, "commit", "-q", "--allow-empty", "-m", "after")
    result = cli("verify", "HEAD~1..HEAD")
    assert result.exit_code == 0 and "history HEAD~1..HEAD is honest: 1 commit (0 touching" in result.stdout
    assert cli("verify", "HEAD~2..HEAD").exit_code == 1
    empty = git_repo.parent / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert make_cli(empty)("verify").exit_code == 0


def test_a_revision_that_names_no_commit_is_refused_not_proven(cli, demo_repo: MemoryRepo) -> None:
    """``git rev-list HEAD^{tree}`` lists nothing and succeeds: verify said "honest: 0
    commits". A tree, a blob or a tag of a tree is no history to prove."""
    import pytest

    from scarwarden.errors import UsageError

    root = demo_repo.root
    git(root, "tag", "-a", "-m", "a tree", "treetag", "HEAD^{tree}")
    for rev, kind in [
        ("HEAD^{tree}", "tree"),
        (f"HEAD:{demo_repo.playbook_rel}", "blob"),
        ("HEAD^{tree}..HEAD", "tree"),
        ("treetag", "tree"),
    ]:
        result = cli("verify", rev)
        assert result.exit_code == 2, (rev, result.output)
        assert f"cannot verify {rev!r}: it names a {kind}" in result.stderr and "honest" not in result.output
    with pytest.raises(UsageError, match="not a commit"):
        verify(demo_repo, "HEAD^{tree}")  # the library, for the Python API's callers
    assert cli("verify", "HEAD..HEAD").exit_code == 0  # an empty range of commits is still fine
    assert cli("verify", "HEAD --not --branches").exit_code == 0


def test_a_bare_repository_or_a_git_folder_is_named_as_such(
    demo_repo: MemoryRepo, tmp_path: Path, make_cli
) -> None:
    # A bare clone (a server's copy) was called "not inside a git repository", with the
    # hint "run 'git init' first".
    bare = tmp_path / "memory.git"
    git(tmp_path, "clone", "-q", "--bare", str(demo_repo.root), str(bare))
    for where, said, hint in [
        (bare, f"{bare} is a bare git repository: it has no working tree", f"git clone {bare}"),
        (
            demo_repo.root / ".git" / "hooks",
            f"{demo_repo.root / '.git' / 'hooks'} is inside a git folder (.git), not in a working tree",
            "run it in the repository's own folder",
        ),
    ]:
        for command in (["verify"], ["check", "--all"], ["hooks", "install"]):
            result = make_cli(where)(*command)
            assert result.exit_code == 2, result.output
            error, hint_line = result.stderr.splitlines()
            assert error == f"error: {said}"
            assert hint in hint_line and "git init" not in hint_line
    assert not (bare / "hooks" / "pre-commit").exists()


def test_a_range_word_that_is_a_git_option_is_refused(cli, demo_repo: MemoryRepo, tmp_path: Path) -> None:
    # The RANGE's words went to 'git rev-list' as they were: '--output=FILE' made git
    # create (or empty) FILE, '--bisect' walked half the history and said "honest",
    # '--count' and '--format' ended in "git diff-tree answered 0 of 1 diffs".
    written = tmp_path / "written"
    for rev in (f"--output={written}", f"HEAD --output={written}", "HEAD --bisect", "HEAD --count", "-n1"):
        result = cli("verify", "--", rev)
        assert result.exit_code == 2, (rev, result.output)
        word = rev.split()[-1]
        assert result.stderr.splitlines()[0] == f"error: cannot verify {rev!r}: {word!r} is not a revision"
        assert "honest" not in result.output
    assert not written.exists()
    for rev in ("HEAD --not --branches", "--all", "HEAD --not --remotes=origin --tags"):
        assert cli("verify", "--", rev).exit_code == 0, rev


def test_a_playbook_blob_missing_from_the_repository_is_not_proven(demo_repo: MemoryRepo, make_cli) -> None:
    # A corrupt clone (the object deleted, a partial clone whose promisor is gone): the
    # missing blob read as "no playbook", and verify said "honest: 0 rule versions".
    root = demo_repo.root
    git(root, "gc", "-q")  # one pack: the blob is taken out by repacking without it
    blob = git(root, "rev-parse", f"HEAD:{demo_repo.playbook_rel}").stdout.strip()
    keep = git(root, "rev-list", "--objects", "--all").stdout.split()
    objects = "".join(f"{sha}\n" for sha in keep if len(sha) == 40 and sha != blob)
    pack = root / ".git" / "objects" / "pack"
    old = list(pack.iterdir())
    subprocess.run(
        ["git", "pack-objects", "-q", str(pack / "pack")], cwd=root, input=objects, text=True, check=True
    )
    for path in old:
        path.unlink()
    assert git(root, "cat-file", "-e", blob, check=False).returncode != 0
    cli = make_cli(root)
    for command in (["verify"], ["check", "--from-ref", "HEAD~1"], ["check", "--all"]):
        result = cli(*command)
        assert result.exit_code == 1, (command, result.output)
        assert f"{demo_repo.playbook_rel}: the playbook's blob {blob[:10]} cannot be read" in result.stdout
        assert "OK" not in result.stdout
    for command in (["diff", "HEAD~1", "HEAD"], ["review", "--base", "HEAD~1"]):
        result = cli(*command)  # "no rule changed" hid the loss
        assert result.exit_code == 1, (command, result.output)
        assert f"the playbook at HEAD ({blob[:10]}) cannot be read" in result.stderr
        assert "no rule changed" not in result.output.lower()


def test_a_ref_naming_an_object_the_repository_lacks(cli, demo_repo: MemoryRepo) -> None:
    # "cannot verify 'gone': it names a 1234...^{} missing (1234567890), not a commit"
    (demo_repo.root / ".git" / "refs" / "heads" / "gone").write_text("12" * 20 + "\n")
    result = cli("verify", "gone")
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines()[0] == (
        "error: cannot verify 'gone': it names an object missing from this repository "
        "(1212121212), not a commit"
    )


def test_a_repository_git_cannot_open_says_why(demo_repo: MemoryRepo, make_cli) -> None:
    # A config git cannot read made every command say "is not inside a git repository"
    # with the hint "run 'git init' first".
    config = demo_repo.root / ".git" / "config"
    lines = config.read_text().count("\n")
    config.write_text(config.read_text() + "| Provenance gate | passed |\n")
    for command in (["verify"], ["check"]):
        result = make_cli(demo_repo.root)(*command)
        assert result.exit_code == 2, result.output
        error, hint = result.stderr.splitlines()
        assert error == (
            f"error: git cannot open the repository at {demo_repo.root}: "
            f"bad config line {lines + 1} in file .git/config"
        )
        assert "git init" not in hint


def test_a_playbook_that_is_a_symlink_or_a_submodule_is_named_as_such(cli, demo_repo: MemoryRepo) -> None:
    # The walk parsed the link's target path (or the submodule's commit) as playbook
    # text and said "must start with '# Playbook'", which is not what is wrong.
    root, rel = demo_repo.root, demo_repo.playbook_rel
    start = git(root, "rev-parse", "HEAD").stdout.strip()
    (root / "README.md").write_text("# Playbook\n")
    demo_repo.playbook_path.unlink()
    demo_repo.playbook_path.symlink_to("../README.md")
    git(root, "add", "-A")
    git(root, "commit", "-q", "--no-verify", "-m", "playbook as a link", env=bypass_env())
    link = git(root, "rev-parse", "HEAD").stdout.strip()
    git(root, "rm", "-q", "--cached", rel)
    demo_repo.playbook_path.unlink()
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{start},{rel}")
    git(root, "commit", "-q", "--no-verify", "-m", "playbook as a submodule", env=bypass_env())
    module = git(root, "rev-parse", "HEAD").stdout.strip()
    for args in (("verify",), ("check", "--from-ref", start)):
        result = cli(*args)
        assert result.exit_code == 1, result.output
        assert "must start with '# Playbook'" not in result.stdout, result.stdout
        assert f"[{link[:10]}] {rel}: a symlink where the playbook should be" in result.stdout, result.stdout
        assert f"[{module[:10]}] {rel}: a submodule where the playbook should be" in result.stdout
        problems = json.loads(cli(*args, "--json").stdout)["problems"]
        assert {p["code"] for p in problems} == {"playbook-not-a-file"}, problems


def test_a_folder_where_the_playbook_should_be_is_refused_at_every_door(cli, demo_repo: MemoryRepo) -> None:
    # memory/playbook.md/notes.md: every command then stops ("is a folder, where a file
    # should be"), yet check, check --all and verify said OK.
    root, rel = demo_repo.root, demo_repo.playbook_rel
    start = git(root, "rev-parse", "HEAD").stdout.strip()
    save_playbook(demo_repo, pb.empty())  # no rule to lose: only the folder is wrong
    commit_no_verify(root, "empty playbook")
    git(root, "rm", "-q", rel)
    (root / rel).mkdir()
    (root / rel / "a.md").write_text("# Playbook\n")
    (root / rel / "b.md").write_text("# Playbook\n")
    git(root, "add", rel)
    said = f"{rel}: a folder where the playbook should be; it must be a plain file"
    for args in (("check",), ("check", "--all")):
        result = cli(*args)
        assert result.exit_code == 1 and result.stdout.count(said) == 1, result.stdout
    git(root, "commit", "-q", "--no-verify", "-m", "playbook as a folder", env=bypass_env())
    folder = git(root, "rev-parse", "HEAD").stdout.strip()
    for args in (("verify",), ("check", "--from-ref", start), ("check", "--all")):
        result = cli(*args)
        assert result.exit_code == 1, result.output
        assert result.stdout.count(said) == 1, result.stdout
        if args[0] == "verify":
            assert f"[{folder[:10]}] {said}" in result.stdout


def test_the_restore_verify_asks_for_gets_past_the_hooks_as_its_hint_says(cli, demo_repo: MemoryRepo) -> None:
    """An episode edited in shared history: the hooks refuse its restore as any change,
    so the hint gives the command that restores it and the way past them, word for word."""
    root = demo_repo.root
    install(root)
    edited = first_episode(demo_repo)
    original = (root / edited).read_bytes()
    (root / edited).write_bytes(original + b"x-note: rewritten\n")
    c_edit = commit_no_verify(root, "rewrite history a little")
    hint = verify(root).problems[0].hint or ""
    restore = f"git restore --source={c_edit[:10]}^ --staged --worktree -- {edited}"
    assert f"({restore}; then SCARWARDEN_SKIP=1 git commit --no-verify," in hint
    subprocess.run(restore, shell=True, cwd=root, check=True)
    assert (root / edited).read_bytes() == original
    refused = git(root, "commit", "-qm", "restore", check=False)
    assert refused.returncode != 0 and "was modified" in refused.stderr  # as the hint warns
    git(root, "commit", "-q", "--no-verify", "-m", "restore", env=bypass_env())
    assert git(root, "show", f"HEAD:{edited}").stdout.encode() == original
    after = verify(root)
    assert [(p.code, p.commit) for p in after.problems] == [("episode-modified", c_edit)]  # reported once


def test_a_renamed_episode_hint_moves_it_back(demo_repo: MemoryRepo) -> None:
    root = demo_repo.root
    renamed = first_episode(demo_repo)
    *folder, month, name = renamed.split("/")
    target = "/".join([*folder, "12" if month != "12" else "01", name])
    (root / target).parent.mkdir(parents=True, exist_ok=True)
    git(root, "mv", renamed, target)
    c_rename = commit_no_verify(root, "move an episode")
    hint = verify(root).problems[0].hint or ""
    assert f"restore the file in a new commit (git mv {target} {renamed}; then SCARWARDEN_SKIP=1" in hint
    assert c_rename[:10] in hint
