"""The playbook merge driver (issue 15): two branches that each teach the agent something
merge rule by rule, in either order, under merge, rebase and cherry-pick."""

from __future__ import annotations

import itertools

import pytest
from conftest import Cli, git

from scarwarden.files import playbook as pb
from scarwarden.files.rule_ids import is_minted
from scarwarden.gate.check import check_all, check_staged
from scarwarden.gate.verify import verify
from scarwarden.repo import MemoryRepo

EPISODES = ("ep-9ak5fm33w3", "ep-b9jr19c6sp", "ep-04yqq457qh")


@pytest.fixture
def repo(demo_repo: MemoryRepo, cli: Cli) -> MemoryRepo:
    result = cli("hooks", "install")
    assert result.exit_code == 0, result.output
    assert "Registered the playbook merge driver" in result.stdout
    return demo_repo


def add_on_branch(repo: MemoryRepo, cli: Cli, branch: str, text: str, start: str = "main") -> str:
    git(repo.root, "checkout", "-q", "-b", branch, start)
    added = cli("rule", "add", "--text", text, "--tag", "merge", "--cites", EPISODES[0])
    assert added.exit_code == 0, added.output
    git(repo.root, "checkout", "-q", "main")
    return added.stdout.strip()


def book(repo: MemoryRepo, rev: str = "HEAD") -> pb.Playbook:
    return pb.parse(git(repo.root, "show", f"{rev}:memory/playbook.md").stdout)


def assert_gate_passes(repo: MemoryRepo) -> None:
    text = repo.playbook_path.read_text()
    assert pb.render(pb.parse(text)) == text  # canonical
    assert check_all(repo).ok
    assert verify(repo.root).ok


def edit_rule(repo: MemoryRepo, rule_id: str, message: str, **changes: object) -> None:
    from dataclasses import replace

    current = pb.parse(repo.playbook_path.read_text())
    rule = current.get(rule_id)
    assert rule is not None
    if changes.pop("retire", False):
        current = current.with_retired(rule_id, "no longer true", None)
    else:
        current = current.with_rule(replace(rule, **changes))
    repo.playbook_path.write_text(pb.render(current))
    git(repo.root, "commit", "-qam", message)


@pytest.mark.parametrize("first", ["one", "two"])
def test_two_branches_adding_rules_merge_cleanly_in_either_order(repo, cli, first) -> None:
    ids = {
        "one": add_on_branch(repo, cli, "one", "Say the timezone in every webinar invite."),
        "two": add_on_branch(repo, cli, "two", "Link a time converter in every invite."),
    }
    assert ids["one"] != ids["two"] and all(is_minted(i) for i in ids.values())
    second = "two" if first == "one" else "one"
    git(repo.root, "merge", "-q", "--no-edit", first)  # fast-forward
    merged = git(repo.root, "merge", "-q", "--no-edit", second, check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    after = book(repo)
    assert {ids["one"], ids["two"]} <= after.all_ids()
    assert len(after.all_rules()) == len(after.all_ids())  # no duplicate IDs
    assert after.rules[-1].id == ids[second]  # ours first, then theirs
    assert_gate_passes(repo)


def test_eight_branches_merge_in_any_order_without_a_conflict(repo, cli) -> None:
    names = [f"b{i}" for i in range(8)]
    ids = [add_on_branch(repo, cli, name, f"Lesson {i}: keep it short.") for i, name in enumerate(names)]
    assert len(set(ids)) == 8
    for name in reversed(names):
        merged = git(repo.root, "merge", "-q", "--no-edit", name, check=False)
        assert merged.returncode == 0, merged.stdout + merged.stderr
    assert set(ids) <= book(repo).all_ids()
    assert_gate_passes(repo)


def test_rebase_and_cherry_pick_merge_by_rule(repo, cli) -> None:
    one = add_on_branch(repo, cli, "one", "Say the timezone in every webinar invite.")
    two = add_on_branch(repo, cli, "two", "Link a time converter in every invite.")
    three = add_on_branch(repo, cli, "three", "Send the invite a week ahead.")
    git(repo.root, "merge", "-q", "one")
    git(repo.root, "checkout", "-q", "two")
    rebased = git(repo.root, "rebase", "-q", "main", check=False)
    assert rebased.returncode == 0, rebased.stdout + rebased.stderr
    assert {one, two} <= book(repo).all_ids()
    git(repo.root, "checkout", "-q", "main")
    picked = git(repo.root, "cherry-pick", "three", check=False)
    assert picked.returncode == 0, picked.stdout + picked.stderr
    assert {one, three} <= book(repo).all_ids() and two not in book(repo).all_ids()
    assert_gate_passes(repo)


def test_the_same_rule_changed_on_both_sides_unions_citations_and_tags(repo, cli) -> None:
    git(repo.root, "checkout", "-q", "-b", "text")
    edit_rule(repo, "PB-01", "reword", text="Open with the reader's pain. Always.")
    git(repo.root, "checkout", "-q", "-b", "cites", "main")
    before = book(repo).get("PB-01")
    edit_rule(repo, "PB-01", "more evidence", episode_ids=(*before.episode_ids, EPISODES[2]), tags=("extra",))
    git(repo.root, "checkout", "-q", "main")
    git(repo.root, "merge", "-q", "text")
    merged = git(repo.root, "merge", "-q", "--no-edit", "cites", check=False)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    rule = book(repo).get("PB-01")
    assert rule.text == "Open with the reader's pain. Always."
    assert rule.episode_ids == (*before.episode_ids, EPISODES[2])
    assert rule.tags == (*before.tags, "extra")
    assert_gate_passes(repo)


@pytest.mark.parametrize("theirs", ["reword", "retire"])
def test_a_clash_marks_that_rule_alone_and_the_gate_names_it(repo, cli, theirs) -> None:
    added = add_on_branch(repo, cli, "added", "A rule that merges fine.")
    git(repo.root, "checkout", "-q", "-b", "ours")
    edit_rule(repo, "PB-02", "ours", text="Ours says this.")
    git(repo.root, "checkout", "-q", "-b", "theirs", "main")
    if theirs == "retire":
        edit_rule(repo, "PB-02", "theirs", retire=True)
    else:
        edit_rule(repo, "PB-02", "theirs", text="Theirs says that.")
    git(repo.root, "merge", "-q", "--no-edit", "added")
    git(repo.root, "checkout", "-q", "ours")
    merged = git(repo.root, "merge", "--no-edit", "theirs", check=False)
    assert merged.returncode != 0
    text = repo.playbook_path.read_text()
    assert text.count("<<<<<<< ours") == 1 and text.count(">>>>>>> theirs") == 1
    clash = text[text.index("<<<<<<< ours") : text.index(">>>>>>> theirs")]
    assert "PB-02" in clash and "PB-01" not in clash and added not in clash
    assert f"## {added}: A rule that merges fine\n" in text  # merged outside the markers
    git(repo.root, "add", "memory/playbook.md")
    report = check_staged(repo)
    assert not report.ok
    assert any("resolve the conflict in PB-02" in p.message for p in report.problems)
    refused = git(repo.root, "commit", "--no-edit", check=False)
    assert refused.returncode != 0 and "resolve the conflict in PB-02" in refused.stdout + refused.stderr


def test_merge_driver_flag_registers_only_the_driver(demo_repo, cli) -> None:
    result = cli("hooks", "install", "--merge-driver")
    assert result.exit_code == 0, result.output
    assert not (demo_repo.root / ".git/hooks/pre-commit").exists()
    driver = git(demo_repo.root, "config", "merge.scarwarden.driver").stdout
    assert driver.strip().endswith("-m scarwarden merge-playbook %O %A %B %P")
    attributes = (demo_repo.root / ".git/info/attributes").read_text()
    assert "/memory/playbook.md merge=scarwarden\n" in attributes
    again = cli("hooks", "install", "--merge-driver")
    assert again.exit_code == 0
    assert (demo_repo.root / ".git/info/attributes").read_text() == attributes  # idempotent
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""  # nothing in the tree


def test_attributes_that_are_not_utf8_keep_their_bytes(demo_repo, cli) -> None:
    # .git/info/attributes is git's, in any encoding: install and uninstall failed with
    # "internal error: UnicodeDecodeError" on a Latin-1 line of the user's.
    where = demo_repo.root / ".git/info/attributes"
    where.parent.mkdir(exist_ok=True)
    theirs = b"caf\xe9.txt -diff\r\n*.bin binary"  # Latin-1, CRLF, no final newline
    where.write_bytes(theirs)
    result = cli("hooks", "install")
    assert result.exit_code == 0, result.output
    assert where.read_bytes() == theirs + b"\n/memory/playbook.md merge=scarwarden\n"
    assert cli("hooks", "install", "--merge-driver").exit_code == 0
    assert where.read_bytes() == theirs + b"\n/memory/playbook.md merge=scarwarden\n"  # idempotent
    result = cli("hooks", "uninstall")
    assert result.exit_code == 0, result.output
    assert where.read_bytes() == theirs + b"\n"
    assert git(demo_repo.root, "config", "--get", "merge.scarwarden.driver", check=False).returncode == 1


def test_a_folder_where_the_attributes_go_is_refused_before_any_hook_is_written(demo_repo, cli) -> None:
    # It wrote the four hooks, then failed registering the merge driver: half installed.
    hooks_dir = demo_repo.root / ".git/hooks"
    before = sorted(p.name for p in hooks_dir.iterdir())
    where = demo_repo.root / ".git/info/attributes"
    where.unlink(missing_ok=True)
    where.mkdir(parents=True)
    result = cli("hooks", "install")
    assert result.exit_code == 2, result.output
    assert ".git/info/attributes: is a folder, where a file should be" in result.stderr
    assert sorted(p.name for p in hooks_dir.iterdir()) == before
    assert not (hooks_dir / "pre-commit").exists()
    assert git(demo_repo.root, "config", "--get", "merge.scarwarden.driver", check=False).returncode == 1


def test_a_side_that_does_not_parse_falls_back_to_a_line_merge(tmp_path) -> None:
    from scarwarden.files.playbook_merge import run_merge_driver

    base, ours, theirs = (tmp_path / n for n in ("base", "ours", "theirs"))
    base.write_text("# Playbook\n\nline\n")
    ours.write_text("not a playbook\n")
    theirs.write_text("# Playbook\n\nother\n")
    result = run_merge_driver(base, ours, theirs)
    assert not result.clean and "<<<<<<< ours" in ours.read_text()


def test_rule_sets_from_both_sides_are_kept_in_all_orders() -> None:
    from scarwarden.files.playbook_merge import merge_playbooks

    start = pb.Playbook().with_rule(pb.make_rule("PB-01", "Base", "Base rule.", ["a"], [EPISODES[0]]))
    sides = [
        start.with_rule(start.minted(pb.make_rule("PB-00", f"Side {i}", f"Side {i}.", ["s"], [EPISODES[1]])))
        for i in range(3)
    ]
    for ours, theirs in itertools.permutations(sides, 2):
        merged = merge_playbooks(start, ours, theirs)
        assert merged.clean
        result = pb.parse(merged.text)
        assert result.all_ids() == ours.all_ids() | theirs.all_ids()
        assert pb.render(result) == merged.text


def test_a_playbook_of_twenty_thousand_rules_merges_in_one_pass(tmp_path) -> None:
    """Each rule was looked up by reading the rules in turn (and the splice rebuilt a set
    per rule): merging a 20,000-rule playbook took one to two minutes, in every rebase
    step of a sync. The process's timeout fails it; one pass takes seconds."""
    import subprocess
    import sys
    from dataclasses import replace

    rules = [
        pb.make_rule(f"PB-{i:02d}", f"Rule {i}", f"Do thing {i}.", ["t"], [EPISODES[0]])
        for i in range(20_000)
    ]
    start = pb.Playbook(rules=tuple(rules))
    ours = start.with_rule(replace(rules[5], text="Ours changed it."))
    theirs = start.with_rule(replace(rules[-5], text="Theirs changed it."))
    for name, side in (("base", start), ("ours", ours), ("theirs", theirs)):
        (tmp_path / name).write_text(pb.render(side))
    run = subprocess.run(
        [sys.executable, "-m", "scarwarden", "merge-playbook", "base", "ours", "theirs"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=40,
    )
    assert run.returncode == 0, run.stderr
    merged = pb.parse((tmp_path / "ours").read_text())
    assert merged.get(rules[5].id).text == "Ours changed it."
    assert merged.get(rules[-5].id).text == "Theirs changed it."
    assert len(merged.rules) == 20_000
