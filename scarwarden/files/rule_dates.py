"""When each rule last changed what it says, from the playbook's git history.

A rule *changes* when its title, text or tags change, or it is retired or restored;
new citations alone do not change what an agent is told. The history is walked once
for every rule (``git log --first-parent`` of the playbook, one ``cat-file --batch``
for its versions), so a revert counts as a change (the words changed back) and a merge
counts when it changed the rule on the branch it landed on. The result is cached per
HEAD commit for the life of the process, and (:func:`last_changes`) in
``.scarwarden/rule-dates.json`` for the next process: a function of the commit and the
playbook's path alone, so a cold ``recall`` of an applied rule reads one small file
instead of every version of the playbook (two git processes and a parse per version).
The gate's :func:`last_changes_at` always walks the history.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from scarwarden import git
from scarwarden.errors import ValidationError
from scarwarden.records import record
from scarwarden.repo import MemoryRepo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.files import playbook as pb


@record(frozen=True)
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
    from scarwarden.files import playbook as pb  # the parser: only when the cache cannot answer

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


#: The last walk's result, kept for the next process (derived data, never committed).
CACHE_NAME = "rule-dates.json"
_CACHE_FORMAT = 1


def last_changes(repo: MemoryRepo, *, known_head: str | None = None) -> dict[str, RuleChange]:
    """Rule ID -> the last commit reachable from HEAD that changed what it says.
    ``known_head``: the commit git last said HEAD was (the index's): read from the ref
    files when they still say so, git unasked (:func:`scarwarden.git.head`)."""
    head = git.head(repo.root, known=known_head)
    if head is None:
        return {}
    key = {"format": _CACHE_FORMAT, "commit": head, "playbook": repo.playbook_rel}
    path = repo.state_dir / CACHE_NAME
    found = _cached(path, key)
    if found is None:
        found = dict(_walk(str(repo.root), head, repo.playbook_rel) or {})
        _keep(path, key, found)
    return found


def _cached(path: Path, key: dict[str, object]) -> dict[str, RuleChange] | None:
    """The walk kept in ``path`` for ``key``; None when absent, for another commit or
    unreadable (then the history is walked again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return {rule_id: RuleChange(str(c), str(d)) for rule_id, (c, d) in data["changes"].items()}
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        return None


def _keep(path: Path, key: dict[str, object], changes: dict[str, RuleChange]) -> None:
    """Write the walk for the next process; best effort (a read-only clone walks again)."""
    from scarwarden.files.atomic import atomic_write

    doc = {"key": key, "changes": {rule_id: [c.commit, c.date] for rule_id, c in sorted(changes.items())}}
    try:
        if path.parent.is_dir():
            atomic_write(path, json.dumps(doc, separators=(",", ":")).encode("utf-8"))
    except OSError:
        pass
