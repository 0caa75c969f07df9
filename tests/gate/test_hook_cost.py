"""The reference-transaction hook's cost (issue 30): its own entry without the CLI, one
``git cat-file`` for every object it reads, and the support check kept by what decides
it. None of it may let through what the gate refuses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, head
from helpers import bypass_env, episode_text, write

from scarwarden import git as g
from scarwarden.distill import distill
from scarwarden.files.record import add_episodes
from scarwarden.gate import support_memo
from scarwarden.gate.check import check_range
from scarwarden.gate.hooks import install
from scarwarden.gate.ledger import cache_dir
from scarwarden.git.batch import session
from scarwarden.repo import MemoryRepo


def _move(repo: MemoryRepo, change: str, rel: str, text: str = "") -> subprocess.CompletedProcess[str]:
    """Build one commit on HEAD that ``change``s ``rel`` (add, edit, delete), then move
    main onto it with ``git update-ref``: the reference-transaction hook alone judges it
    (no pre-commit hook runs), traced."""
    old = head(repo)
    if change == "delete":
        git(repo.root, "rm", "-q", "--cached", rel)
    else:
        write(repo.root, rel, text)
        git(repo.root, "add", rel)
    tree = git(repo.root, "write-tree").stdout.strip()
    new = git(repo.root, "commit-tree", tree, "-p", old, "-m", f"{change} {rel}").stdout.strip()
    git(repo.root, "reset", "-q", old)  # the index as it was, whatever the hook says
    env = {**os.environ, "GIT_TRACE": str(repo.root / ".git" / "trace.txt")}
    env.pop("SCARWARDEN_SKIP", None)
    (repo.root / ".git" / "trace.txt").unlink(missing_ok=True)
    return subprocess.run(
        ["git", "update-ref", "refs/heads/main", new, old],
        cwd=repo.root,
        capture_output=True,
        text=True,
        env=env,
    )


def _hook_processes(repo: MemoryRepo) -> list[str]:
    """The git commands the hook's Python started (after the shell's fast-path checks)."""
    lines = (repo.root / ".git" / "trace.txt").read_text().splitlines()
    commands = [line.split("trace: built-in: ", 1)[1] for line in lines if "trace: built-in: git " in line]
    # The shell's last question (the memory folders' tree IDs, one cat-file), then Python.
    shell = next(i for i, c in enumerate(commands) if c == "git cat-file '--batch-check=%(objectname)'")
    return commands[shell + 1 :]


LESSONS = [
    {
        "at": "2026-11-01T10:00:00Z",
        "task": "Cancel the trip",
        "tags": ["cancel"],
        "source": "correction",
        "correction": "Cancel reservation Z7GOZK before refunding the certificate",
    },
    {
        "at": "2026-11-02T10:00:00Z",
        "task": "Write the webinar invite",
        "tags": ["webinar"],
        "source": "correction",
        "correction": "Always state the timezone in webinar invitations",
    },
]


def _rules(repo: MemoryRepo) -> tuple[str, str]:
    """Two episodes and the two rules the offline distiller learns from them."""
    cancel, webinar = (ep.id for ep in add_episodes(repo, LESSONS))
    distill(repo, offline=True)
    return cancel, webinar


def _an_episode(repo: MemoryRepo) -> g.StagedEntry:
    return next(e for e in g.ls_tree(repo.root, "HEAD", repo.episodes_rel) if e.path.endswith(".yaml"))


@pytest.fixture
def hooked(memory_repo: MemoryRepo) -> MemoryRepo:
    _rules(memory_repo)
    install(memory_repo.root)
    text = (memory_repo.root / ".git" / "hooks" / "reference-transaction").read_text()
    assert "-m scarwarden.gate.hook_main" in text and f"INSTALL_PYTHON={sys.executable}" in text
    return memory_repo


def test_the_hook_refuses_an_edit_a_deletion_and_a_bad_citation_with_one_cat_file(hooked: MemoryRepo) -> None:
    repo = hooked
    ep = _an_episode(repo)
    # An honest move lands, and fills the support memo the next moves read.
    added = _move(
        repo, "add", f"{repo.episodes_rel}/2026/11/ep-0000000001.yaml", episode_text("ep-0000000001")
    )
    assert added.returncode == 0, added.stderr
    assert list((cache_dir(repo.root) / support_memo.FOLDER).glob("*.json"))
    commands = _hook_processes(repo)
    assert sum(c.startswith("git cat-file") for c in commands) == 1, commands
    assert not [c for c in commands if "--verify" in c or c.startswith("git cat-file -e")], commands
    # git sets GIT_PREFIX for every hook; it moves nothing, so where the work tree is
    # and where its index is are read from the .git folder, not asked of git.
    assert not [c for c in commands if "--show-toplevel" in c or "--git-path index" in c], commands
    before = head(repo)
    edited = _move(repo, "edit", ep.path, "id: changed\n")
    ep_id = ep.path.rpartition("/")[2].removesuffix(".yaml")
    assert edited.returncode != 0 and f"episode {ep_id} was modified; the ledger" in edited.stderr, (
        edited.stderr
    )
    deleted = _move(repo, "delete", ep.path)
    assert deleted.returncode != 0 and f"episode {ep_id} was deleted; the ledger" in deleted.stderr
    book = repo.playbook_path.read_text()
    rule = "\n## PB-90: Say the timezone\n\nAlways say the timezone.\n\n- Tags: webinar\n"
    bad = f"{book}{rule}- Learnt in: ep-nosuch0001\n"
    cited = _move(repo, "edit", repo.playbook_rel, bad)
    assert cited.returncode != 0 and "cites ep-nosuch0001, which is not an episode" in cited.stderr, (
        cited.stderr
    )
    for proc in (edited, deleted, cited):
        assert "scarwarden: refused to move refs/heads/main" in proc.stderr
        assert "Traceback" not in proc.stderr
    assert head(repo) == before


def test_the_hooks_entry_says_what_is_wrong_without_a_traceback(tmp_path: Path) -> None:
    entry = [sys.executable, "-m", "scarwarden.gate.hook_main"]
    line = f"{'1' * 40} {'2' * 40} refs/heads/main\n"
    outside = subprocess.run(
        [*entry, "reference-transaction"], cwd=tmp_path, input=line, capture_output=True, text=True
    )
    assert outside.returncode == 2, outside.stderr
    assert "is not inside a git repository" in outside.stderr and "Traceback" not in outside.stderr
    wrong = subprocess.run([*entry, "post-commit"], cwd=tmp_path, input="", capture_output=True, text=True)
    assert wrong.returncode == 2 and "usage: python -m scarwarden.gate.hook_main" in wrong.stderr
    # Nothing to check (a tag): silent, like 'scarwarden gate-hook'.
    quiet = subprocess.run(
        [*entry, "reference-transaction"],
        cwd=tmp_path,
        input=f"{'1' * 40} {'2' * 40} refs/tags/v1\n",
        capture_output=True,
        text=True,
    )
    assert quiet.returncode == 0 and quiet.stderr == ""


def _unsupported_range(repo: MemoryRepo) -> str:
    """A rule whose stated sentence is mapped to an episode that never said it,
    committed past the hooks; returns the commit before it."""
    cancel, webinar = _rules(repo)
    base = head(repo)
    book = repo.playbook_path.read_text()
    mapped = f"- Learnt in: {webinar}\n- Sentences from: 1: {webinar}"
    assert mapped in book
    write(
        repo.root,
        repo.playbook_rel,
        book.replace(mapped, f"- Learnt in: {webinar}, {cancel}\n- Sentences from: 1: {cancel}"),
    )
    git(repo.root, "commit", "-q", "--no-verify", "-am", "unsupported", env=bypass_env())
    return base


def _seen(report) -> list[tuple[str, str]]:  # noqa: ANN001
    return sorted((p.code, p.message) for p in report.problems + report.warnings)


def test_the_support_memo_gives_the_result_it_was_made_from(
    memory_repo: MemoryRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = _unsupported_range(memory_repo)
    folder = cache_dir(memory_repo.root) / support_memo.FOLDER
    first = check_range(memory_repo.root, base, "HEAD")
    assert any(p.code == "sentence-unsupported" for p in first.problems)
    (kept,) = folder.glob("*.json")
    again = check_range(memory_repo.root, base, "HEAD")  # read from the memo
    assert _seen(again) == _seen(first) and not again.ok
    monkeypatch.setenv("SCARWARDEN_LEDGER_CACHE", "off")  # derived, nothing read or kept
    kept.write_text("[]")
    assert _seen(check_range(memory_repo.root, base, "HEAD")) == _seen(first)
    monkeypatch.delenv("SCARWARDEN_LEDGER_CACHE")
    kept.write_text("not json")  # damaged: derived again, and kept again
    assert _seen(check_range(memory_repo.root, base, "HEAD")) == _seen(first)
    assert kept.read_text().startswith("[[")
    # Another playbook is another key.
    write(memory_repo.root, memory_repo.playbook_rel, memory_repo.playbook_path.read_text() + "\n")
    git(memory_repo.root, "commit", "-q", "-am", "a blank line", env=bypass_env())
    check_range(memory_repo.root, base, "HEAD")
    assert len(list(folder.glob("*.json"))) == 2


def test_a_session_answers_as_separate_processes_do(hooked: MemoryRepo) -> None:
    root = hooked.root
    ep = _an_episode(hooked)
    names = [
        ep.blob,
        f"HEAD:{ep.path}",
        "HEAD:no/such/file",
        "0" * 40,
        f":{ep.path}",
        f"HEAD:{hooked.episodes_rel}",
    ]
    revs = ["HEAD", "HEAD~1", "HEAD^{tree}", "no-such-ref", ep.blob]
    specs = [f"HEAD:{hooked.episodes_rel}", f"HEAD:{ep.path}", "HEAD:nothing"]

    def ask() -> tuple[object, ...]:
        return (
            g.cat_file_batch(root, names),
            [g.object_exists(root, n) for n in names if not n.startswith(":")],
            [g.rev_parse(root, r) for r in revs],
            g.tree_ids(root, specs),
            g.blob_ids(root, specs),
            g.objects_exist(root, names),
            g.git_path(root, "scarwarden/ledger"),
        )

    apart = ask()
    with session() as shared:
        together = ask()
        assert len(shared.readers) == 1
        together_again = ask()
    assert together == apart == together_again


def test_the_pre_commit_hook_refuses_through_its_own_entry(hooked: MemoryRepo) -> None:
    repo = hooked
    text = (repo.root / ".git" / "hooks" / "pre-commit").read_text()
    assert "-m scarwarden.gate.hook_main pre-commit" in text
    ep = _an_episode(repo)
    write(repo.root, ep.path, "id: changed\n")
    git(repo.root, "add", ep.path)
    before = head(repo)
    proc = git(repo.root, "commit", "-m", "edit an episode", check=False)
    assert proc.returncode != 0 and head(repo) == before
    out = proc.stderr  # git shows a hook's output on its stderr
    ep_id = ep.path.rpartition("/")[2].removesuffix(".yaml")
    assert f"- {ep.path}: episode {ep_id} was modified; the ledger is append-only" in out, out
    assert "scarwarden check: 1 problem in staged memory changes" in out
    # The same answer as 'scarwarden check --staged', word for word.
    cli = subprocess.run(
        [sys.executable, "-m", "scarwarden", "check", "--staged"],
        cwd=repo.root,
        capture_output=True,
        text=True,
    )
    entry = subprocess.run(
        [sys.executable, "-m", "scarwarden.gate.hook_main", "pre-commit"],
        cwd=repo.root,
        capture_output=True,
        text=True,
    )
    assert (entry.returncode, entry.stdout, entry.stderr) == (cli.returncode, cli.stdout, cli.stderr)
    # Under the pre-commit framework's range variables, the CLI's own path runs.
    framework = {**os.environ, "PRE_COMMIT_FROM_REF": "HEAD~1", "PRE_COMMIT_TO_REF": "HEAD"}
    ranged = subprocess.run(
        [sys.executable, "-m", "scarwarden.gate.hook_main", "pre-commit"],
        cwd=repo.root,
        capture_output=True,
        text=True,
        env=framework,
    )
    assert "checking HEAD~1..HEAD (from PRE_COMMIT_FROM_REF/PRE_COMMIT_TO_REF)" in ranged.stderr
    assert ranged.returncode == 0, ranged.stdout + ranged.stderr
