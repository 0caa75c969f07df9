"""Helpers shared by tests in several folders: writing episodes and rules by hand,
committing past the hook, and snapshotting a repository to prove nothing changed."""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
from conftest import Cli, git

from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_edit import load_playbook, save_playbook
from scarwarden.index import open_index
from scarwarden.recall.engine import recall_task
from scarwarden.repo import MemoryRepo


def first_with_verdict(repo: MemoryRepo, candidates: tuple[str, ...], verdict: str) -> str:
    """The first candidate task recall routes to ``verdict`` (router tuning moves tasks
    between verdicts, so a test names several)."""

    for task in candidates:
        if recall_task(repo, task, log=False).verdict == verdict:
            return task
    pytest.fail(f"no {verdict} task among the candidates {candidates}")


EP = "ep-test000001"


def write_playbook(
    repo: MemoryRepo,
    rules: list[tuple[str, str, str, list[str]]],
    *,
    commit: bool = False,
    retired: tuple[pb.Rule, ...] = (),
) -> None:
    book = pb.Playbook(
        rules=tuple(pb.make_rule(i, t, x, tags, [EP]) for i, t, x, tags in rules), retired=retired
    )
    repo.playbook_path.write_text(pb.render(book))
    if commit:
        git(repo.root, "add", repo.playbook_rel)
        git(repo.root, "commit", "-q", "-m", "playbook")


FIXED = [
    (
        "PB-01",
        "Flag new features",
        "Put every new feature behind a flag before release.",
        ["feature-flag", "release"],
    ),
    ("PB-02", "Name flags plainly", "Use plain names for each flag; no abbreviations.", ["naming"]),
    ("PB-03", "Release on Tuesdays", "Release to production on Tuesdays only.", ["release", "schedule"]),
    ("PB-04", "No tags here", "Rotate the deploy keys every quarter.", []),
]


def bypass_env() -> dict[str, str]:
    """The environment plus ``SCARWARDEN_SKIP=1``: with ``--no-verify`` it gets a bad
    commit past every hook (the reference-transaction hook ignores ``--no-verify``)."""
    return {**os.environ, "SCARWARDEN_SKIP": "1"}


def commit_no_verify(root: Path, message: str) -> str:
    git(root, "add", "-A", "memory")
    git(root, "commit", "-q", "--no-verify", "-m", message, env=bypass_env())
    return git(root, "rev-parse", "HEAD").stdout.strip()


NEW_ID = "ep-gate0new01"


def episode_text(ep_id: str, at: str = "2026-11-20T10:00:00Z", **extra: str) -> str:
    lines = [
        f"id: {ep_id}",
        f"at: {at}",
        "agent: writer",
        "task: Write the webinar invite",
        "correction: Always give the timezone",
        "tags: [webinar, timezone]",
        "source: correction",
    ]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n"


def write(root: Path, rel: str, text: str) -> str:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return rel


def add_rule(
    repo: MemoryRepo,
    cites: list[str],
    rule_id: str | None = None,
    title: str = "Give webinar times with a timezone",
) -> str:
    book = load_playbook(repo)
    rule = pb.make_rule(
        rule_id or book.next_id(),
        title,
        "State webinar times in UTC and the main local timezone.",
        ["webinar", "timezone"],
        cites,
    )
    save_playbook(repo, pb.Playbook(book.rules + (rule,), book.retired, book.preamble))
    return repo.playbook_rel


def first_episode(repo: MemoryRepo) -> str:
    return sorted(p.relative_to(repo.root).as_posix() for p in repo.episodes_dir.glob("*/*/*.yaml"))[0]


def unretire(repo: MemoryRepo, rule_id: str) -> None:
    """Bring a retired rule back as an active one, keeping its ID (what the gate refuses)."""
    book = load_playbook(repo)
    rule = book.get(rule_id)
    assert rule is not None and rule.retired
    save_playbook(
        repo,
        pb.Playbook(
            book.rules + (replace(rule, retired=False, reason=None),),
            tuple(r for r in book.retired if r.id != rule_id),
            book.preamble,
        ),
    )


def write_episode(
    repo: MemoryRepo,
    ep_id: str,
    *,
    at: str = "2026-11-20T10:00:00Z",
    task: str = "Hand-written task",
    path: str | None = None,
    **extra: object,
) -> str:
    data: dict[str, object] = {"id": ep_id, "at": at, "task": task, "outcome": "written by hand", **extra}
    rel = path or Episode(data).relpath(repo.episodes_rel)
    target = repo.root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(Episode(data).render())
    return rel


@dataclass(frozen=True)
class State:
    """Everything a failed write must leave exactly as it was."""

    head: str
    status: str
    staged: str
    paths: frozenset[str]
    episodes: int

    @classmethod
    def of(cls, repo: MemoryRepo) -> State:
        root = repo.root
        paths = set()
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".git", ".scarwarden")]
            rel = Path(dirpath).relative_to(root).as_posix()
            paths.add(rel + "/")
            paths.update(f"{rel}/{f}" for f in filenames)
        with open_index(repo) as index:
            count = index.episode_count()
        return cls(
            git(root, "rev-parse", "HEAD").stdout.strip(),
            git(root, "status", "--porcelain", "--untracked-files=all").stdout,
            git(root, "diff", "--cached", "--name-status").stdout,
            frozenset(paths),
            count,
        )


def minted_rule(book: pb.Playbook, title: str) -> pb.Rule:
    """The active rule titled ``title``, checked to carry a minted ID (``PB-7k2m9q4x``):
    what ``rule add`` and the distillers give a new rule (issue 15)."""
    from scarwarden.files.rule_ids import RULE_ID_RE, is_minted

    found = [rule for rule in book.rules if rule.title == title]
    assert len(found) == 1, [rule.title for rule in book.rules]
    rule = found[0]
    assert RULE_ID_RE.match(rule.id) and is_minted(rule.id), rule.id
    return rule


def retire_rule(repo: MemoryRepo, rule_id: str) -> None:
    """Retire ``rule_id`` in the playbook and commit it (no hook)."""
    book = pb.parse(repo.playbook_path.read_text())
    old = book.get(rule_id)
    assert old is not None
    retired = pb.Rule(**{**old.__dict__, "retired": True, "reason": "superseded"})
    active = tuple(r for r in book.rules if r.id != rule_id)
    repo.playbook_path.write_text(
        pb.render(pb.Playbook(rules=active, retired=(*book.retired, retired), preamble=book.preamble))
    )
    git(repo.root, "commit", "-q", "--no-verify", "-am", f"retire {rule_id}")


def recall_json(repo: MemoryRepo, task: str, trace: list[str] | None = None) -> str:
    """The recall of ``task`` (top 10) as JSON, with its explanation (every rule's stems
    and masses): two recalls that print the same text recalled the same; ``trace``
    collects the SQL statements run."""
    import json

    from scarwarden.recall.engine import recall
    from scarwarden.recall.explain import explain_data

    with open_index(repo) as index:
        if trace is not None:
            index.conn.set_trace_callback(trace.append)
        result = recall(index, task, limit=10)
        index.conn.set_trace_callback(None)
        doc = {"result": result.to_json(), "explain": explain_data(result)}
        return json.dumps(doc, sort_keys=True, default=str)


def commit_playbook_bytes(repo: MemoryRepo, data: bytes) -> None:
    """Commit ``data`` as the playbook, as its user keeps it (line endings, spacing)."""
    repo.playbook_path.write_bytes(data)
    git(repo.root, "commit", "-q", "-am", "playbook as the user keeps it")


def numstat(repo: MemoryRepo) -> tuple[int, int]:
    """Lines added and deleted by the last commit (one file): the diff a reviewer reads."""
    added, deleted, _ = git(repo.root, "diff", "--numstat", "HEAD~1", "HEAD").stdout.split("\t")
    return int(added), int(deleted)


def new_memory(tmp_path: Path, *first: str) -> tuple[Path, Cli]:
    """A new git repository ``tmp_path/r`` and a CLI in it, once the newcomer's first
    command ``first`` succeeded (``init --no-hooks`` when none is given)."""
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    cli = Cli(root)
    result = cli(*(first or ("init", "--no-hooks")))
    assert result.exit_code == 0, result.output
    return root, cli


#: Personal data for the privacy tests of the doors that record a human's answer.
CARD = "4111 1111 1111 1111"  # a test card number: Luhn-valid, Visa's prefix
EMAIL = "jane@acme.io"


def set_privacy(repo: MemoryRepo, **kinds: str) -> MemoryRepo:
    """``repo`` with a committed scarwarden.yaml setting ``privacy:`` to ``kinds``
    (``email="warn"``), opened again so that its settings are read."""
    from scarwarden.repo import open_repo

    lines = "".join(f"  {kind}: {action}\n" for kind, action in kinds.items())
    (repo.root / "scarwarden.yaml").write_text(f"privacy:\n{lines}", encoding="utf-8")
    git(repo.root, "add", "scarwarden.yaml")
    git(repo.root, "commit", "-q", "--no-gpg-sign", "-m", "privacy settings")
    return open_repo(repo.root)
