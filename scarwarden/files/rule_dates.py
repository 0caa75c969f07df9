"""When each rule last changed what it says, from the playbook's git history.

A rule *changes* when its title, text or tags change, or it is retired or restored;
new citations alone do not change what an agent is told. The history is walked once
for every rule (``git log --first-parent`` of the playbook, one ``cat-file --batch``
for its versions), so a revert counts as a change (the words changed back) and a merge
counts when it changed the rule on the branch it landed on. The result is cached per
HEAD commit for the life of the process.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from scarwarden import git
from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo


@dataclass(frozen=True)
class RuleChange:
    """The last commit that changed what a rule says."""

    commit: str
    date: str  # ISO 8601, the commit's author date


def _said(rule: pb.Rule) -> tuple[object, ...]:
    return (rule.title, " ".join(rule.text.split()), rule.tags, rule.retired)


@lru_cache(maxsize=16)
def _walk(root: str, head: str, playbook_rel: str, blob: str | None = None) -> dict[str, RuleChange] | None:
    """Rule ID -> its last change over the first-parent history of ``head``; with
    ``blob``, as of the last version of the playbook whose blob is ``blob`` (``None``
    when no version is)."""
    entries = list(reversed(git.log(root, "--first-parent", head, "--", playbook_rel)))
    blobs = git.cat_file_batch(root, [f"{e.sha}:{playbook_rel}" for e in entries]) if entries else []
    last: dict[str, RuleChange] = {}
    said: dict[str, tuple[object, ...]] = {}
    found: dict[str, RuleChange] | None = None
    for entry, raw in zip(entries, blobs, strict=True):
        if raw is None:
            continue
        try:
            book: pb.Playbook | None = pb.parse(raw.decode("utf-8", "replace"), source=playbook_rel)
        except ValidationError:
            book = None  # a version that does not parse (only possible with --no-verify)
        for rule in book.all_rules() if book is not None else ():
            now = _said(rule)
            if said.get(rule.id) != now:
                said[rule.id] = now
                last[rule.id] = RuleChange(entry.sha, entry.date)
        if blob is not None and git.blob_id(raw) == blob:
            found = dict(last)
    return last if blob is None else found


def last_changes_at(root: Path | str, rev: str, playbook_rel: str, blob: str) -> dict[str, RuleChange] | None:
    """Rule ID -> the last commit that changed what it says, as of the latest commit in
    the first-parent history of ``rev`` whose playbook is the blob ``blob``: what
    :func:`last_changes` gave while that playbook was HEAD's (the gate re-deriving a
    recall receipt, issue 20). ``None`` when no such commit is there."""
    head = git.rev_parse(root, rev)
    if head is None:
        return None
    found = _walk(str(root), head, playbook_rel, blob)
    return None if found is None else dict(found)


def last_changes(repo: MemoryRepo, rev: str = "HEAD") -> dict[str, RuleChange]:
    """Rule ID -> the last commit reachable from ``rev`` that changed what it says."""
    head = git.rev_parse(repo.root, rev)
    if head is None:
        return {}
    return dict(_walk(str(repo.root), head, repo.playbook_rel) or {})
