"""The gate through the real ``git commit``: every door closed, every honest commit accepted.

Each bad input is committed for real, with the hook installed by
:func:`scarwarden.hooks.install` (so it runs ``sys.executable -m scarwarden``), in each of
``git commit``, ``git commit -a`` and ``git commit <paths>`` (the last two make git hand
the hook a temporary index through ``GIT_INDEX_FILE``).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import git, head
from helpers import NEW_ID, add_rule, bypass_env, episode_text, first_episode, unretire, write

from scarwarden.files import playbook as pb
from scarwarden.files.playbook_edit import load_playbook, save_playbook
from scarwarden.gate.hooks import install
from scarwarden.repo import MemoryRepo

MODES = ("index", "all", "paths")


@dataclass
class Change:
    """What a case did to the working folder, so each mode can commit it its own way."""

    paths: list[str]  # every path the commit must include (for `git commit <paths>`)
    new: list[str] = field(default_factory=list)  # untracked files git must be told about
    staged: bool = False  # the case staged its own change (git mv)


def commit(
    repo: MemoryRepo, change: Change, mode: str, message: str = "test"
) -> subprocess.CompletedProcess[str]:
    root = repo.root
    if mode == "index":
        if not change.staged:
            git(root, "add", "-A", "--", *change.paths)
        return git(root, "commit", "-m", message, check=False)
    if change.new:
        git(root, "add", "--", *change.new)
    if mode == "all":
        return git(root, "commit", "-a", "-m", message, check=False)
    return git(root, "commit", "-m", message, "--", *change.paths, check=False)


@pytest.fixture
def gate_repo(demo_repo: MemoryRepo) -> MemoryRepo:
    install(demo_repo.root)
    return demo_repo


# -- the bad inputs ------------------------------------------------------------------


def cite_missing(repo: MemoryRepo) -> tuple[Change, list[str]]:
    return Change([add_rule(repo, ["ep-nosuch0001"])]), [
        "PB-15 cites ep-nosuch0001, which is not an episode in the tree being committed",
        "memory/playbook.md:",
        "hint: no provenance, no rule",
    ]


def no_citation(repo: MemoryRepo) -> tuple[Change, list[str]]:
    text = repo.playbook_path.read_text()
    repo.playbook_path.write_text(text + "\n## PB-15: Uncited rule\n\nDo a thing.\n\n- Tags: x\n")
    return Change([repo.playbook_rel]), ["PB-15: missing '- Learnt in:' line (no provenance, no rule)"]


def modify_episode(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = first_episode(repo)
    path = repo.root / rel
    path.write_text(path.read_text().replace("task: ", "task: Reworded: ", 1))
    return Change([rel]), [
        f"{rel}: episode {Path(rel).stem} was modified; the ledger is append-only",
        "record a new episode that refs",
    ]


def delete_episode(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = first_episode(repo)
    (repo.root / rel).unlink()
    return Change([rel]), [
        f"episode {Path(rel).stem} was deleted; the ledger is append-only",
        # the rule that cited it no longer resolves either
        f"PB-07 cites {Path(rel).stem}, which is not an episode",
        "scarwarden check: 2 problems",
    ]


def rename_episode(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = first_episode(repo)
    target = rel.replace("/08/", "/12/")
    (repo.root / target).parent.mkdir(parents=True, exist_ok=True)
    git(repo.root, "mv", rel, target)
    return Change([rel, target], staged=True), [
        f"episode {Path(rel).stem} was renamed to {target}",
        "move it back: git mv",
    ]


def mode_change(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = first_episode(repo)
    os.chmod(repo.root / rel, 0o755)
    return Change([rel]), [
        f"episode {Path(rel).stem} changed mode 100644 -> 100755",
        "git update-index --chmod=-x",
    ]


def invalid_episode(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = write(
        repo.root,
        f"{repo.episodes_rel}/2026/11/{NEW_ID}.yaml",
        episode_text(NEW_ID).replace("correction:", "corection:"),
    )
    return Change([rel], new=[rel]), [
        f"{rel}:5: field 'corection': unknown key",
        "did you mean 'correction'?",
        "an episode needs at least one of action, outcome, correction",
        "scarwarden check: 2 problems",
    ]


def misplaced_episode(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = write(repo.root, f"{repo.episodes_rel}/2026/10/{NEW_ID}.yaml", episode_text(NEW_ID))
    return Change([rel], new=[rel]), [
        "file name and folder do not match the episode's id and date "
        f"(expected {repo.episodes_rel}/2026/11/{NEW_ID}.yaml)"
    ]


def escaping_id(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = write(repo.root, f"{repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text("../../../etc/passwd"))
    return Change([rel], new=[rel]), ["field 'id': '../../../etc/passwd' is not a valid episode ID"]


def duplicate_id(repo: MemoryRepo) -> tuple[Change, list[str]]:
    existing = first_episode(repo)
    ep = Path(existing).stem
    rel = write(
        repo.root, f"{repo.episodes_rel}/2026/12/{ep}.yaml", episode_text(ep, at="2026-12-01T09:00:00Z")
    )
    return Change([rel], new=[rel]), [f"episode ID {ep} is already used by {existing}"]


def not_yaml(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = write(repo.root, f"{repo.episodes_rel}/2026/11/notes.txt", "just notes\n")
    return Change([rel], new=[rel]), [f"{rel}: only episode files (<id>.yaml) belong in the episodes folder"]


def symlink_episode(repo: MemoryRepo) -> tuple[Change, list[str]]:
    rel = f"{repo.episodes_rel}/2026/11/{NEW_ID}.yaml"
    (repo.root / rel).parent.mkdir(parents=True, exist_ok=True)
    os.symlink("/etc/passwd", repo.root / rel)
    return Change([rel], new=[rel]), [f"{rel}: a symlink in the episodes folder"]


def unparseable_playbook(repo: MemoryRepo) -> tuple[Change, list[str]]:
    text = repo.playbook_path.read_text()
    repo.playbook_path.write_text(text.replace("## PB-02: ", "## PB-2 ", 1))
    return Change([repo.playbook_rel]), ["cannot parse heading '## PB-2 Never share"]


def duplicate_rule_id(repo: MemoryRepo) -> tuple[Change, list[str]]:
    return Change([add_rule(repo, [Path(first_episode(repo)).stem], rule_id="PB-03")]), [
        "duplicate rule ID PB-03 (first at line"
    ]


def reused_retired_id(repo: MemoryRepo) -> tuple[Change, list[str]]:
    _retire(repo, "PB-14")
    return Change([add_rule(repo, [Path(first_episode(repo)).stem], rule_id="PB-14")]), [
        "rule ID PB-14 is retired and used again"
    ]


def unretired_id(repo: MemoryRepo) -> tuple[Change, list[str]]:
    _retire(repo, "PB-14")
    unretire(repo, "PB-14")
    return Change([repo.playbook_rel]), ["PB-14 is retired and is back as an active rule"]


def removed_rule(repo: MemoryRepo) -> tuple[Change, list[str]]:
    book = load_playbook(repo)
    save_playbook(
        repo, pb.Playbook(tuple(r for r in book.rules if r.id != "PB-14"), book.retired, book.preamble)
    )
    return Change([repo.playbook_rel]), [
        "PB-14 (",
        "was removed; rule IDs stay on record",
        "move PB-14 under '## Retired'",
    ]


def _retire(repo: MemoryRepo, rule_id: str) -> None:
    """An honest retirement, committed through the gate."""
    save_playbook(repo, load_playbook(repo).with_retired(rule_id, "superseded", None))
    git(repo.root, "commit", "-q", "-am", f"retire {rule_id}")
    assert "### PB-14" in git(repo.root, "show", f"HEAD:{repo.playbook_rel}").stdout


CASES: dict[str, Callable[[MemoryRepo], tuple[Change, list[str]]]] = {
    f.__name__: f
    for f in (
        cite_missing,
        no_citation,
        modify_episode,
        delete_episode,
        rename_episode,
        mode_change,
        invalid_episode,
        misplaced_episode,
        escaping_id,
        duplicate_id,
        not_yaml,
        symlink_episode,
        unparseable_playbook,
        duplicate_rule_id,
        reused_retired_id,
        unretired_id,
        removed_rule,
    )
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_rejected_by_git_commit(gate_repo: MemoryRepo, case: str) -> None:
    root = gate_repo.root
    start = head(root)
    for mode in MODES:  # one repo, reset between modes: the hook is the slow part
        git(root, "reset", "-q", "--hard", start)
        git(root, "clean", "-qfdx", "--", "memory")
        change, expected = CASES[case](gate_repo)
        before = head(root)
        proc = commit(gate_repo, change, mode)
        output = proc.stdout + proc.stderr
        assert proc.returncode == 1, f"{mode}: {output}"
        for fragment in expected:
            assert fragment in output, f"{mode}: {fragment!r} not in:\n{output}"
        if not any(f.startswith("scarwarden check:") for f in expected):
            assert "scarwarden check: 1 problem in staged memory changes" in output, output
        assert head(root) == before, mode  # nothing was committed


@pytest.mark.parametrize("mode", MODES)
def test_honest_episode_and_rule_are_accepted(gate_repo: MemoryRepo, mode: str) -> None:
    rel = write(gate_repo.root, f"{gate_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    existing = Path(first_episode(gate_repo)).stem
    change = Change([rel, add_rule(gate_repo, [NEW_ID, existing])], new=[rel])
    proc = commit(gate_repo, change, mode)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "scarwarden check: OK" in proc.stderr
    tree = git(gate_repo.root, "ls-tree", "-r", "--name-only", "HEAD").stdout
    assert rel in tree
    assert (
        f"Learnt in: {NEW_ID}, {existing}"
        in git(gate_repo.root, "show", f"HEAD:{gate_repo.playbook_rel}").stdout
    )


def test_hand_edited_playbook_keeping_citations_passes(gate_repo: MemoryRepo) -> None:
    text = gate_repo.playbook_path.read_text()
    edited = text.replace(
        "Mark any ticket about a disputed invoice", "Treat every ticket about a disputed invoice", 1
    )
    edited = edited.replace(
        "## PB-03: Treat billing disputes as high priority",
        "## PB-03: Billing disputes are always high priority",
        1,
    )
    assert edited != text
    gate_repo.playbook_path.write_text(edited)
    proc = git(gate_repo.root, "commit", "-am", "review: reword PB-03", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "scarwarden check: OK" in proc.stderr
    assert "Treat every ticket" in git(gate_repo.root, "show", "HEAD:memory/playbook.md").stdout
    # Re-citing (swapping one cited episode for another real one) is checked and passes.
    other = Path(first_episode(gate_repo)).stem
    text = gate_repo.playbook_path.read_text()
    gate_repo.playbook_path.write_text(
        text.replace("- Learnt in: ep-dmhmsjkxp2, ep-1jwckg9x17", f"- Learnt in: ep-dmhmsjkxp2, {other}")
    )
    proc = git(gate_repo.root, "commit", "-am", "review: cite a better episode", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "1 rule checked, 2 citations checked" in proc.stderr


def test_every_problem_is_reported_in_one_run(gate_repo: MemoryRepo) -> None:
    changes = [f(gate_repo)[0] for f in (cite_missing, modify_episode, not_yaml)]
    bad = write(
        gate_repo.root,
        f"{gate_repo.episodes_rel}/2026/11/{NEW_ID}.yaml",
        episode_text(NEW_ID, **{"x-ok": "fine"}).replace("task:", "tsk:"),
    )
    git(gate_repo.root, "add", "-A", "memory")
    proc = git(gate_repo.root, "commit", "-m", "many", check=False)
    assert proc.returncode == 1
    for needle in (
        "cites ep-nosuch0001",
        "was modified",
        "only episode files",
        "field 'tsk': unknown key",
        f"{bad}:1: field 'task': missing",
    ):
        assert needle in proc.stderr, proc.stderr
    assert "scarwarden check: 5 problems" in proc.stderr
    assert len(changes) == 3


def test_citation_resolving_only_to_an_untracked_file_is_rejected(gate_repo: MemoryRepo) -> None:
    rel = write(gate_repo.root, f"{gate_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    git(gate_repo.root, "add", add_rule(gate_repo, [NEW_ID]))
    proc = git(gate_repo.root, "commit", "-m", "rule only", check=False)
    assert proc.returncode == 1
    assert f"PB-15 cites {NEW_ID}, which is not an episode in the tree being committed" in proc.stderr
    assert f"{rel} exists in the working folder but not in this commit" in proc.stderr


def test_citation_resolving_only_to_an_unstaged_change_is_rejected(gate_repo: MemoryRepo) -> None:
    rel = write(gate_repo.root, f"{gate_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    git(gate_repo.root, "add", "--intent-to-add", rel)  # known to git, content unstaged
    git(gate_repo.root, "add", add_rule(gate_repo, [NEW_ID]))
    proc = git(gate_repo.root, "commit", "-m", "rule, episode unstaged", check=False)
    assert proc.returncode == 1
    assert f"PB-15 cites {NEW_ID}, which is not an episode in the tree being committed" in proc.stderr


def test_citation_staged_but_left_out_of_git_commit_paths_is_rejected(gate_repo: MemoryRepo) -> None:
    rel = write(gate_repo.root, f"{gate_repo.episodes_rel}/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    git(gate_repo.root, "add", rel, add_rule(gate_repo, [NEW_ID]))
    # `git commit <playbook>` records HEAD + the playbook only: the staged episode is not in it.
    proc = git(gate_repo.root, "commit", "-m", "rule only", "--", gate_repo.playbook_rel, check=False)
    assert proc.returncode == 1
    assert f"PB-15 cites {NEW_ID}" in proc.stderr
    # Both together pass.
    proc = git(gate_repo.root, "commit", "-m", "both", "--", gate_repo.playbook_rel, rel, check=False)
    assert proc.returncode == 0, proc.stderr


def test_first_commit_without_head(tmp_path: Path) -> None:
    root = tmp_path / "fresh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    install(root)
    ep = write(root, f"memory/episodes/2026/11/{NEW_ID}.yaml", episode_text(NEW_ID))
    write(
        root,
        "memory/playbook.md",
        "# Playbook\n\n## PB-01: Timezones\n\nGive the timezone.\n\n"
        "- Tags: webinar\n- Learnt in: ep-gate0new01, ep-nosuch0001\n",
    )
    git(root, "add", "-A")
    proc = git(root, "commit", "-m", "first", check=False)
    assert proc.returncode == 1
    assert "PB-01 cites ep-nosuch0001" in proc.stderr
    assert f"cites {NEW_ID}" not in proc.stderr
    write(
        root,
        "memory/playbook.md",
        "# Playbook\n\n## PB-01: Timezones\n\nGive the timezone.\n\n"
        f"- Tags: webinar\n- Learnt in: {NEW_ID}\n",
    )
    git(root, "add", "-A")
    proc = git(root, "commit", "-m", "first", check=False)
    assert proc.returncode == 0, proc.stderr
    assert ep in git(root, "ls-files").stdout


def _branch_with_episode(repo: MemoryRepo, branch: str, ep_id: str, at: str) -> str:
    git(repo.root, "checkout", "-q", "-b", branch, "main")
    rel = write(repo.root, f"{repo.episodes_rel}/{at[:4]}/{at[5:7]}/{ep_id}.yaml", episode_text(ep_id, at=at))
    git(repo.root, "add", rel, add_rule(repo, [ep_id], title=f"Rule from {branch}"))
    proc = git(repo.root, "commit", "-m", f"{branch}: episode and rule", check=False)
    assert proc.returncode == 0, proc.stderr
    return rel


def test_merge_of_two_branches_each_adding_episodes_passes(gate_repo: MemoryRepo) -> None:
    root = gate_repo.root
    git(root, "checkout", "-q", "-b", "a")
    a = write(root, f"{gate_repo.episodes_rel}/2026/11/ep-branch0a01.yaml", episode_text("ep-branch0a01"))
    git(root, "add", a)
    assert git(root, "commit", "-m", "a", check=False).returncode == 0
    git(root, "checkout", "-q", "-b", "b", "main")
    b = write(
        root,
        f"{gate_repo.episodes_rel}/2026/12/ep-branch0b01.yaml",
        episode_text("ep-branch0b01", at="2026-12-02T08:00:00Z"),
    )
    git(root, "add", b)
    assert git(root, "commit", "-m", "b", check=False).returncode == 0
    git(root, "checkout", "-q", "main")
    assert git(root, "merge", "-q", "--no-ff", "-m", "merge a", "a", check=False).returncode == 0
    # `git merge` commits through the pre-merge-commit hook, which is the gate too.
    proc = git(root, "merge", "--no-ff", "-m", "merge b", "b", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "scarwarden check: OK" in proc.stderr and "1 episode added" in proc.stderr
    files = git(root, "ls-files").stdout
    assert a in files and b in files


def test_conflicting_merge_resolved_by_hand_passes_and_bad_resolution_fails(gate_repo: MemoryRepo) -> None:
    root = gate_repo.root
    _branch_with_episode(gate_repo, "left", "ep-left00001", "2026-11-21T08:00:00Z")
    _branch_with_episode(gate_repo, "right", "ep-right0001", "2026-12-01T08:00:00Z")
    git(root, "checkout", "-q", "left")
    proc = git(root, "merge", "right", check=False)
    assert proc.returncode != 0 and "CONFLICT" in proc.stdout
    # Resolve by giving the right branch's rule the next ID, keeping both citations.
    git(root, "checkout", "--ours", "--", gate_repo.playbook_rel)
    book = load_playbook(gate_repo)
    save_playbook(
        gate_repo,
        book.with_rule(
            pb.make_rule(
                "PB-16", "Rule from right", "State webinar times in UTC.", ["webinar"], ["ep-nosuch0009"]
            )
        ),
    )
    git(root, "add", gate_repo.playbook_rel)
    proc = git(root, "commit", "--no-edit", check=False)
    assert proc.returncode == 1
    assert "PB-16 cites ep-nosuch0009" in proc.stderr
    save_playbook(
        gate_repo,
        book.with_rule(
            pb.make_rule(
                "PB-16", "Rule from right", "State webinar times in UTC.", ["webinar"], ["ep-right0001"]
            )
        ),
    )
    git(root, "add", gate_repo.playbook_rel)
    proc = git(root, "commit", "--no-edit", check=False)
    assert proc.returncode == 0, proc.stderr
    assert len(git(root, "rev-list", "--parents", "-1", "HEAD").stdout.split()) == 3


def test_check_all_during_a_conflicted_merge_reports_the_unmerged_file(
    gate_repo: MemoryRepo, make_cli
) -> None:
    # check --all read one side of the unmerged playbook (git's index holds three) and
    # said OK while 'git commit' would refuse it.
    root = gate_repo.root
    _branch_with_episode(gate_repo, "left", "ep-left00001", "2026-11-21T08:00:00Z")
    _branch_with_episode(gate_repo, "right", "ep-right0001", "2026-12-01T08:00:00Z")
    git(root, "checkout", "-q", "left")
    assert git(root, "merge", "right", check=False).returncode != 0
    before = git(root, "status", "--porcelain").stdout
    assert f"UU {gate_repo.playbook_rel}" in before
    result = make_cli(root)("check", "--all")
    assert result.exit_code == 1, result.output
    assert f"{gate_repo.playbook_rel}: the file is unmerged" in result.stdout
    assert "1 problem in the memory tree" in result.stdout
    assert git(root, "status", "--porcelain").stdout == before
    # One problem, built in one place: the staged check says exactly the same of it.
    scopes = [json.loads(make_cli(root)("check", scope, "--json").stdout) for scope in ("--all", "--staged")]
    unmerged = [[p for p in report["problems"] if p["code"] == "unmerged"] for report in scopes]
    assert unmerged[0] == unmerged[1] and len(unmerged[0]) == 1, unmerged
    assert unmerged[0][0]["hint"] == "resolve the conflict and 'git add' it"


def test_commit_during_a_rebase(gate_repo: MemoryRepo) -> None:
    root = gate_repo.root
    _branch_with_episode(gate_repo, "topic", "ep-topic0001", "2026-11-22T08:00:00Z")
    git(root, "checkout", "-q", "main")
    save_playbook(
        gate_repo,
        load_playbook(gate_repo).with_rule(
            pb.make_rule(
                "PB-15", "Main's rule", "Something else.", ["x"], [Path(first_episode(gate_repo)).stem]
            )
        ),
    )
    assert git(root, "commit", "-qam", "main rule", check=False).returncode == 0
    git(root, "checkout", "-q", "topic")
    assert git(root, "rebase", "main", check=False).returncode != 0  # playbook conflict
    book_main = pb.parse(git(root, "show", f"main:{gate_repo.playbook_rel}").stdout)
    topic_rule = pb.make_rule(
        "PB-16", "Rule from topic", "State webinar times in UTC.", ["webinar"], ["ep-topic0001"]
    )
    (root / gate_repo.playbook_rel).write_text(pb.render(book_main.with_rule(topic_rule)))
    git(root, "add", gate_repo.playbook_rel)
    # HEAD is detached at main's tip; the hook compares the index with it.
    proc = git(root, "commit", "-m", "topic: episode and rule (rebased)", check=False)
    assert proc.returncode == 0, proc.stderr
    assert "1 episode added" in proc.stderr
    assert git(root, "-c", "core.editor=true", "rebase", "--continue", check=False).returncode == 0
    assert "ep-topic0001" in git(root, "show", f"topic:{gate_repo.playbook_rel}").stdout


def test_merge_bringing_in_a_tampered_branch_is_rejected(gate_repo: MemoryRepo) -> None:
    root = gate_repo.root
    git(root, "checkout", "-q", "-b", "sneaky")
    rel = first_episode(gate_repo)
    (root / rel).write_text((root / rel).read_text() + "x-edited: yes\n")
    git(root, "commit", "-q", "--no-verify", "-am", "edit an episode, skipping the hook", env=bypass_env())
    git(root, "checkout", "-q", "main")
    proc = git(root, "merge", "--no-ff", "-m", "merge sneaky", "sneaky", check=False)
    assert proc.returncode != 0
    assert f"episode {Path(rel).stem} was modified" in proc.stderr


@pytest.mark.parametrize(("mode", "kind"), [("120000", "a symlink"), ("160000", "a submodule")])
def test_a_playbook_that_is_not_a_plain_file_is_named_as_such(
    gate_repo: MemoryRepo, make_cli, mode: str, kind: str
) -> None:
    # The gate read the link's target or the submodule's commit as the playbook's text
    # and said "the playbook must start with '# Playbook'".
    root, rel = gate_repo.root, gate_repo.playbook_rel
    target = head(root) if mode == "160000" else git(root, "hash-object", "-w", "--stdin").stdout.strip()
    git(root, "update-index", "--cacheinfo", f"{mode},{target},{rel}")
    for scope in ("--staged", "--all"):
        result = make_cli(root)("check", scope)
        assert result.exit_code == 1, result.output
        assert f"- {rel}: {kind} where the playbook should be; it must be a plain file" in result.stdout
        assert "must start with" not in result.stdout
    proc = git(root, "commit", "-m", "playbook link", check=False)
    assert proc.returncode == 1 and f"{kind} where the playbook should be" in proc.stderr


@pytest.mark.parametrize("change", ["delete", "edit"])
def test_a_change_to_the_ledger_folders_gitkeep_does_not_name_episode_none(
    memory_repo: MemoryRepo, make_cli, change: str
) -> None:
    # .gitkeep is no episode: the gate said "episode None was deleted" and, for an edit,
    # "record a new episode that refs None instead".
    root, keep = memory_repo.root, f"{memory_repo.episodes_rel}/.gitkeep"
    if change == "delete":
        git(root, "rm", "-q", keep)
    else:
        (root / keep).write_text("keep\n")
        git(root, "add", keep)
    result = make_cli(root)("check")
    assert result.exit_code == 1, result.output
    assert "None" not in result.stdout
    said = "was deleted" if change == "delete" else "was modified"
    assert f"- {keep}: .gitkeep (not an episode) {said}; the ledger is append-only" in result.stdout


@pytest.mark.parametrize(
    "args",
    [["--from-ref", ""], ["--from-ref", "", "--to-ref", "HEAD"], ["--from-ref", "HEAD", "--to-ref", ""]],
)
def test_an_empty_ref_is_refused_not_read_as_no_range(
    memory_repo: MemoryRepo, make_cli, args: list[str]
) -> None:
    # CI's "scarwarden check --from-ref "$BASE"" with $BASE unset checked the staged
    # changes instead (nothing, in CI) and passed: a green check of no commit at all.
    result = make_cli(memory_repo.root)("check", *args)
    assert result.exit_code == 2, result.output
    assert "is empty" in result.stderr and "OK" not in result.output
