"""The distill commit: message, trailers, the gate, --branch, --no-commit, --dry-run, merges."""

from __future__ import annotations

import os
import re
import stat

import pytest
from conftest import git
from fakellm import FakeLLM, reply_json
from helpers import minted_rule

from scarwarden.config import ModelSettings
from scarwarden.distill import distill
from scarwarden.distill.state import distilled_by_commits
from scarwarden.errors import ExitCode, GitError
from scarwarden.files import playbook as pb
from scarwarden.files.record import add_episodes
from scarwarden.llm.client import ChatClient
from scarwarden.repo import MemoryRepo

NEW = ["ep-9ak5fm33w3", "ep-b9jr19c6sp", "ep-hm3eyyreap"]


def state(repo: MemoryRepo) -> dict[str, object]:
    """Everything --branch must leave alone."""
    return {
        "head": git(repo.root, "rev-parse", "HEAD").stdout,
        "branch": git(repo.root, "symbolic-ref", "HEAD").stdout,
        "status": git(repo.root, "status", "--porcelain").stdout,
        "index": git(repo.root, "ls-files", "-s").stdout,
        "playbook": repo.playbook_path.read_bytes(),
        "notes": (repo.root / "notes.txt").read_bytes() if (repo.root / "notes.txt").exists() else None,
    }


def test_message_and_trailers(demo_repo: MemoryRepo) -> None:
    result = distill(demo_repo, offline=True)
    message = git(demo_repo.root, "log", "-1", "--format=%B").stdout
    assert message == result.message + "\n" or message == result.message
    subject, blank, *body = message.splitlines()
    assert subject == "distill: +2 rules, ~0 updated, -0 retired" and blank == ""
    book = pb.parse(demo_repo.playbook_path.read_text())
    webinar = minted_rule(book, "Webinar invitations must state the timezone")
    german = next(c.rule_id for c in result.changes if c.rule_id != webinar.id)
    assert f"Added {webinar.id}: Webinar invitations must state the timezone" in body
    assert "  learnt in ep-9ak5fm33w3, ep-b9jr19c6sp" in body
    out = git(demo_repo.root, "log", "-1", "--format=%(trailers:only,unfold)").stdout
    parsed = [line for line in out.splitlines() if line]
    assert parsed == [
        "Scarwarden-Distiller: offline",
        "Scarwarden-Distilled: 3",
        "Scarwarden-Tokens: 0",
        f"Scarwarden-Rule: {webinar.id}",
        f"Scarwarden-Rule: {german}",
        *[f"Scarwarden-Distilled-Episode: {ep}" for ep in NEW],
    ]
    assert distilled_by_commits(demo_repo, "HEAD") == set(NEW)


def test_the_commit_passes_the_gate(cli, demo_repo: MemoryRepo) -> None:
    check = pytest.importorskip("scarwarden.gate.check")
    assert cli("distill", "--offline").exit_code == 0
    report = check.check_all(demo_repo.root)
    assert report.ok, [str(p) for p in report.problems]
    ranged = check.check_range(demo_repo.root, "HEAD~1", "HEAD")
    assert ranged.ok, [str(p) for p in ranged.problems]


def test_commits_only_the_playbook(demo_repo: MemoryRepo) -> None:
    (demo_repo.root / "notes.txt").write_text("unrelated, staged\n")
    git(demo_repo.root, "add", "notes.txt")
    distill(demo_repo, offline=True)
    files = git(demo_repo.root, "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert files == ["memory/playbook.md"]
    assert git(demo_repo.root, "diff", "--cached", "--name-only").stdout.split() == ["notes.txt"]


def test_nothing_new_makes_no_commit(cli, demo_repo: MemoryRepo) -> None:
    assert cli("distill", "--offline").exit_code == 0
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    result = cli("distill", "--offline")
    assert result.exit_code == 0
    assert "nothing new to distill" in result.stdout
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head


def test_dry_run_prints_the_diff_and_changes_nothing(cli, demo_repo: MemoryRepo) -> None:
    before = state(demo_repo)
    result = cli("distill", "--offline", "--dry-run")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("--- a/memory/playbook.md\n+++ b/memory/playbook.md\n")
    assert re.search(r"\n\+## PB-[0-9a-z]{8}: Webinar invitations must state the timezone\n", result.stdout)
    assert "+- Learnt in: ep-9ak5fm33w3, ep-b9jr19c6sp" in result.stdout
    assert "nothing was written or committed" in result.stderr
    assert state(demo_repo) == before


def test_branch_leaves_the_current_branch_index_and_tree_alone(cli, demo_repo: MemoryRepo) -> None:
    # A messy working state: a staged file, an unstaged edit of the playbook.
    (demo_repo.root / "notes.txt").write_text("staged\n")
    git(demo_repo.root, "add", "notes.txt")
    (demo_repo.root / "notes.txt").write_text("staged, then edited\n")
    with demo_repo.playbook_path.open("a") as handle:
        handle.write("\n<!-- a reviewer's unsaved thought -->\n")
    before = state(demo_repo)
    result = cli("distill", "--offline", "--branch", "distill/review")
    assert result.exit_code == 0, result.output
    assert "on new branch distill/review" in result.stdout
    assert state(demo_repo) == before
    branch_log = git(demo_repo.root, "log", "-1", "--format=%s%n%P", "distill/review").stdout.split("\n")
    assert branch_log[0] == "distill: +2 rules, ~0 updated, -0 retired"
    assert branch_log[1] == before["head"].strip()
    on_branch = git(demo_repo.root, "show", "distill/review:memory/playbook.md").stdout
    assert re.search(r"\n## PB-[0-9a-z]{8}: Webinar invitations must state the timezone\n", on_branch)
    assert "unsaved thought" not in on_branch  # built from the committed playbook
    files = git(demo_repo.root, "show", "--name-only", "--format=", "distill/review").stdout.split()
    assert files == ["memory/playbook.md"]
    leftovers = [p for p in os.listdir(demo_repo.root / ".git") if p.startswith("scarwarden-index")]
    assert leftovers == []
    # Until the branch is merged, its episodes are still new on the current branch.
    assert distill(demo_repo, offline=True, dry_run=True).new == NEW
    # The same name again is refused, before any work.
    again = cli("distill", "--offline", "--branch", "distill/review")
    assert again.exit_code == ExitCode.USAGE and "already exists" in again.stderr
    bad = cli("distill", "--offline", "--branch", "no..dots")
    assert bad.exit_code == ExitCode.USAGE and "not a valid branch name" in bad.stderr


def test_merging_a_distill_branch_counts_its_episodes(demo_repo: MemoryRepo) -> None:
    distill(demo_repo, offline=True, branch="distill/review")
    git(demo_repo.root, "merge", "-q", "--no-ff", "--no-edit", "distill/review")
    assert distill(demo_repo, offline=True, dry_run=True).new == []


def test_distilled_state_survives_merges_of_parallel_branches(demo_repo: MemoryRepo) -> None:
    """Two branches distil different episodes with a model; after the merge both count."""
    with FakeLLM(default=reply_json({"operations": []})) as llm:
        client = ChatClient(ModelSettings(base_url=llm.url, backoff=0.01), "sk-test")
        distill(demo_repo, client=client)  # the demo's three uncited episodes, main
        git(demo_repo.root, "checkout", "-q", "-b", "side")
        [side] = add_episodes(demo_repo, [{"task": "Side task", "outcome": "went fine"}])
        assert distill(demo_repo, client=client).distilled == [side.id]
        git(demo_repo.root, "checkout", "-q", "main")
        [main] = add_episodes(demo_repo, [{"task": "Main task", "outcome": "went fine too"}])
        git(demo_repo.root, "merge", "-q", "--no-edit", "side")
        result = distill(demo_repo, client=client, dry_run=True)
        assert result.new == [main.id]
        assert {side.id, *NEW} <= distilled_by_commits(demo_repo, "HEAD")


def test_cited_episodes_count_as_distilled(cli, demo_repo: MemoryRepo) -> None:
    # A hand-written rule citing the webinar episodes: only the German one is new.
    assert (
        cli(
            "rule",
            "add",
            "--text",
            "Always give the timezone.",
            "--tag",
            "webinar",
            "--cites",
            "ep-9ak5fm33w3,ep-b9jr19c6sp",
        ).exit_code
        == 0
    )
    assert distill(demo_repo, offline=True, dry_run=True).new == ["ep-hm3eyyreap"]


def test_no_commit_leaves_the_change_in_the_working_tree(cli, demo_repo: MemoryRepo) -> None:
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    result = cli("distill", "--offline", "--no-commit")
    assert result.exit_code == 0, result.output
    assert "git commit -F .scarwarden/distill-message.txt memory/playbook.md" in result.stdout
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    assert git(demo_repo.root, "status", "--porcelain").stdout == " M memory/playbook.md\n"
    minted_rule(pb.parse(demo_repo.playbook_path.read_text()), "Webinar invitations must state the timezone")
    saved = (demo_repo.root / ".scarwarden" / "distill-message.txt").read_text()
    assert saved.startswith("distill: +2 rules")
    # The suggested commit works and records the episodes as distilled.
    git(demo_repo.root, "commit", "-q", "-F", ".scarwarden/distill-message.txt", "memory/playbook.md")
    assert distill(demo_repo, offline=True, dry_run=True).new == []


def test_no_commit_writes_no_playbook_when_its_message_cannot_be_saved(cli, demo_repo: MemoryRepo) -> None:
    """The playbook was written before the message: with the message's place taken (a
    folder there), distill failed (exit 2) yet left the new playbook behind, its rules
    citing the episodes, so the next run found nothing new and the message (the
    distilled-episode lines) was lost. Now the message is saved first: nothing written."""
    (demo_repo.root / ".scarwarden" / "distill-message.txt").mkdir(parents=True)
    before = demo_repo.playbook_path.read_bytes()
    result = cli("distill", "--offline", "--no-commit")
    assert result.exit_code == ExitCode.USAGE, result.output
    assert ".scarwarden/distill-message.txt: is a folder" in result.stderr
    assert demo_repo.playbook_path.read_bytes() == before
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""


def test_refuses_to_overwrite_uncommitted_playbook_edits(cli, demo_repo: MemoryRepo) -> None:
    with demo_repo.playbook_path.open("a") as handle:
        handle.write("\n<!-- work in progress -->\n")
    before = state(demo_repo)
    result = cli("distill", "--offline")
    assert result.exit_code == ExitCode.USAGE
    assert "uncommitted changes" in result.stderr and "--branch" in result.stderr
    assert state(demo_repo) == before


def test_a_rejecting_hook_leaves_everything_as_it_was(demo_repo: MemoryRepo) -> None:
    hook = demo_repo.root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'rejected by policy' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    before = state(demo_repo)
    with pytest.raises(GitError) as info:
        distill(demo_repo, offline=True)
    assert "rejected by policy" in info.value.message
    assert state(demo_repo) == before


def test_branch_and_no_commit_together_is_a_usage_error(cli, demo_repo: MemoryRepo) -> None:
    result = cli("distill", "--branch", "x", "--no-commit")
    assert result.exit_code == ExitCode.USAGE


def test_demo_section_shows_the_commit(demo_repo: MemoryRepo) -> None:
    from scarwarden.demo.sections import distill_section as demo_section

    lines: list[str] = []
    demo_section(demo_repo, lines.append)
    out = "\n".join(lines)
    assert "distill: +2 rules, ~0 updated, -0 retired" in out
    assert "Scarwarden-Distiller: offline" in out
    assert "memory/playbook.md | " in out and "1 file changed" in out
    book = pb.parse(demo_repo.playbook_path.read_text())
    webinar = minted_rule(book, "Webinar invitations must state the timezone")
    assert f"scarwarden rule show {webinar.id}" in out
    assert webinar.episode_ids == ("ep-9ak5fm33w3", "ep-b9jr19c6sp")


def test_a_reverted_distillation_is_distilled_again(demo_repo: MemoryRepo) -> None:
    first = distill(demo_repo, offline=True)
    git(demo_repo.root, "revert", "--no-edit", first.commit)
    assert distill(demo_repo, offline=True, dry_run=True).new == NEW
    revert = git(demo_repo.root, "rev-parse", "HEAD").stdout.strip()
    git(demo_repo.root, "revert", "--no-edit", revert)  # re-done: counts again
    assert distill(demo_repo, offline=True, dry_run=True).new == []


def test_no_commit_after_a_model_run_that_changed_nothing_saves_its_message(
    cli, demo_repo: MemoryRepo, fake_llm: FakeLLM
) -> None:
    """The model saw the three new episodes and found nothing: a commit records them so
    they are not sent again; --no-commit recorded nothing and said nothing, so every
    later run sent them again (tokens, and another answer each time). Distillation stays
    a commit: the message is saved, with how to commit it and what happens until then."""
    fake_llm.script(reply_json({"operations": []}))
    head = git(demo_repo.root, "rev-parse", "HEAD").stdout
    before = demo_repo.playbook_path.read_bytes()
    result = cli("distill", "--no-commit")
    assert result.exit_code == 0, result.output
    saved = (demo_repo.root / ".scarwarden" / "distill-message.txt").read_text()
    assert saved.count("Scarwarden-Distilled-Episode: ep-") == 3
    assert "git commit --allow-empty -F .scarwarden/distill-message.txt" in result.stdout
    assert "the 3 episode(s) the model saw that no rule cites are not marked distilled" in result.stderr
    assert "until that commit is made: the next distill sends them again" in result.stderr
    assert demo_repo.playbook_path.read_bytes() == before
    assert git(demo_repo.root, "rev-parse", "HEAD").stdout == head
    assert git(demo_repo.root, "status", "--porcelain").stdout == ""
    # The suggested commit records them: the next run asks the model nothing.
    git(demo_repo.root, "commit", "-q", "--allow-empty", "-F", ".scarwarden/distill-message.txt")
    assert distill(demo_repo, dry_run=True, commit=False).new == []
    assert len(fake_llm.requests) == 1


def test_a_second_no_commit_keeps_the_first_one_s_uncommitted_message(cli, demo_repo: MemoryRepo) -> None:
    """The first --no-commit added two rules, left uncommitted; a second one (after a new
    episode) built on that playbook and replaced the saved message with its own: the
    playbook held three new rules, the message '+1 rule', one distilled episode, and a
    commit made with it described a third of what it committed. Now refused, nothing
    written, until the first is committed or discarded."""
    assert cli("distill", "--offline", "--no-commit").exit_code == 0
    saved = (demo_repo.root / ".scarwarden" / "distill-message.txt").read_text()
    written = demo_repo.playbook_path.read_bytes()
    add_episodes(demo_repo, [{"task": "Write release notes", "correction": "List breaking changes first"}])
    again = cli("distill", "--offline", "--no-commit")
    assert again.exit_code == ExitCode.USAGE, again.output
    assert "an earlier 'distill --no-commit' is not committed yet" in again.stderr
    assert "git commit -F .scarwarden/distill-message.txt memory/playbook.md" in again.stderr
    assert (demo_repo.root / ".scarwarden" / "distill-message.txt").read_text() == saved
    assert demo_repo.playbook_path.read_bytes() == written
    # Committed, the message file left behind is history: the next --no-commit runs.
    git(demo_repo.root, "commit", "-q", "-F", ".scarwarden/distill-message.txt", "memory/playbook.md")
    assert cli("distill", "--offline", "--no-commit").exit_code == 0
