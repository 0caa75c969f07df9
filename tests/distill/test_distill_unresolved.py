"""Distill never commits on top of a rule whose citation does not resolve (one let in
with SCARWARDEN_SKIP=1 and --no-verify): the gate checks only what a commit changes, so
the broken citation would ride along into a reviewed "distill:" commit."""

from __future__ import annotations

import pytest
from conftest import git, head
from helpers import add_rule, commit_no_verify

from scarwarden.files import playbook as pb
from scarwarden.files.playbook_edit import load_playbook, save_playbook
from scarwarden.repo import MemoryRepo


def _sneak_rule(repo: MemoryRepo, *, touched: bool = False) -> str:
    """A rule citing no episode, committed past the gate. ``touched``: one the offline
    distiller updates (it teaches webinars, as new demo episodes do); else one it leaves
    alone, which the gate of the distill commit never looks at."""
    if touched:
        add_rule(repo, ["ep-nosuch0001"], title="Always post on Fridays")
    else:
        book = load_playbook(repo)
        rule = pb.make_rule(
            book.next_id(), "Always post on Fridays", "Post on Fridays.", ["friday"], ["ep-nosuch0001"]
        )
        save_playbook(repo, pb.Playbook((*book.rules, rule), book.retired, book.preamble))
    return commit_no_verify(repo.root, "rule: post on Fridays")


@pytest.mark.parametrize("touched", [False, True])
@pytest.mark.parametrize("args", [(), ("--branch", "distill/nov"), ("--no-commit",), ("--dry-run",)])
def test_refuses_and_names_the_rule_the_episode_and_the_commit(
    cli, demo_repo: MemoryRepo, args: tuple[str, ...], touched: bool
) -> None:
    sneak = _sneak_rule(demo_repo, touched=touched)
    playbook = demo_repo.playbook_path.read_bytes()
    result = cli("distill", "--offline", *args)
    assert result.exit_code == 1, result.output
    out = result.output
    assert "Traceback" not in out and "internal error" not in out
    assert "nothing was distilled" in out
    assert "PB-15 cites ep-nosuch0001" in out, out
    assert f"[{sneak[:10]}]" in out and "rule: post on Fridays" in out, out
    assert "Learnt in" in out and "scarwarden verify" in out, out
    assert head(demo_repo) == sneak  # no commit
    assert git(demo_repo.root, "branch", "--list", "distill/nov").stdout == ""
    assert demo_repo.playbook_path.read_bytes() == playbook
    assert git(demo_repo.root, "status", "--porcelain", "--untracked-files=no").stdout == ""


def test_json_names_the_problem_too(cli, demo_repo: MemoryRepo) -> None:
    _sneak_rule(demo_repo)
    result = cli("distill", "--offline", "--json")
    assert result.exit_code == 1, result.output
    assert "ep-nosuch0001" in result.output, result.output


def test_recited_rule_lets_distill_commit_again(cli, demo_repo: MemoryRepo) -> None:
    _sneak_rule(demo_repo)
    text = demo_repo.playbook_path.read_text()
    real = sorted(p.stem for p in demo_repo.episodes_dir.glob("*/*/*.yaml"))[0]
    demo_repo.playbook_path.write_text(text.replace("- Learnt in: ep-nosuch0001", f"- Learnt in: {real}"))
    git(demo_repo.root, "commit", "-qam", "rule: cite the episode that taught it")
    result = cli("distill", "--offline")
    assert result.exit_code == 0, result.output
    assert git(demo_repo.root, "log", "-1", "--format=%s").stdout.startswith("distill:")
    book = pb.parse(demo_repo.playbook_path.read_text())
    assert all(ep != "ep-nosuch0001" for r in book.all_rules() for ep in r.episode_ids)


@pytest.mark.parametrize("args", [(), ("--branch", "distill/nov"), ("--dry-run",)])
def test_a_committed_playbook_that_is_a_symlink_is_named_as_such(cli, demo_repo: MemoryRepo, args) -> None:
    # distill read the link's target path as the playbook's text: "must start with '# Playbook'".
    root = demo_repo.root
    (root / "README.md").write_bytes(demo_repo.playbook_path.read_bytes())
    demo_repo.playbook_path.unlink()
    demo_repo.playbook_path.symlink_to("../README.md")
    commit_no_verify(root, "playbook as a link")
    before = head(demo_repo)
    result = cli("distill", "--offline", *args)
    assert result.exit_code == 1, result.output
    assert "must start with '# Playbook'" not in result.output
    assert "memory/playbook.md: a symlink where the playbook should be" in result.output, result.output
    assert "nothing was distilled" in result.output
    assert head(demo_repo) == before
    assert git(root, "branch", "--list", "distill/nov").stdout == ""


def test_a_secret_let_past_the_hooks_is_not_called_a_bug(cli, demo_repo: MemoryRepo) -> None:
    # A rule holding a token, committed past the hooks, that distill updates: the gate
    # of the distill commit refuses the rewritten line, and the hint said "please report
    # this as a bug", though the token came from the committed playbook.
    real = sorted(p.stem for p in demo_repo.episodes_dir.glob("*/*/*.yaml"))[0]
    book = load_playbook(demo_repo)
    token = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
    text = f"State webinar times in UTC, token {token}."
    rule = pb.make_rule(book.next_id(), "Webinar times", text, ["webinar", "timezone"], [real])
    save_playbook(demo_repo, pb.Playbook((*book.rules, rule), book.retired, book.preamble))
    before = commit_no_verify(demo_repo.root, "rule: webinar times")
    result = cli("distill", "--offline")
    assert result.exit_code == 1, result.output
    assert "holds a secret: GitHub token" in result.output
    assert "bug" not in result.output, result.output
    assert "committed playbook or an episode" in result.output
    assert head(demo_repo) == before


def test_a_committed_playbook_that_is_a_folder_is_called_a_folder(cli, demo_repo: MemoryRepo) -> None:
    root, rel = demo_repo.root, demo_repo.playbook_rel
    git(root, "rm", "-q", rel)
    (root / rel).mkdir()
    (root / rel / "notes.md").write_text("# Playbook\n")
    before = commit_no_verify(root, "playbook as a folder")
    result = cli("distill", "--offline")
    assert result.exit_code == 1, result.output
    assert f"{rel}: a folder where the playbook should be" in result.output, result.output
    assert "mode 040000" not in result.output and head(demo_repo) == before


def test_every_missing_citation_is_listed_a_few_traced(cli, demo_repo: MemoryRepo) -> None:
    book = load_playbook(demo_repo)
    missing = [f"ep-nosuch000{n}" for n in range(7)]
    for ep in missing:
        rule = pb.make_rule(book.next_id(), f"Post on day {ep[-1]}", "Post then.", ["friday"], [ep])
        book = pb.Playbook((*book.rules, rule), book.retired, book.preamble)
    save_playbook(demo_repo, book)
    sneak = commit_no_verify(demo_repo.root, "rules: posting days")
    result = cli("distill", "--offline")
    assert result.exit_code == 1
    for ep in missing:
        assert f"cites {ep}, which is not an episode" in result.output
    assert result.output.count(f"commit {sneak[:10]} ('rules: posting days') added it") == 5
