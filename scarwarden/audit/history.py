"""Rule history from git: the commits that introduced, changed and retired a rule.

Walks the commits that touched the playbook (oldest first), reads every version with
one ``git cat-file --batch`` and compares the rule between consecutive versions. The
versions are read and parsed once (:class:`PlaybookHistory`) for as many rules as ask.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from scarwarden import git
from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo


@dataclass(frozen=True)
class RuleEvent:
    sha: str
    date: str
    author: str
    subject: str
    kind: str  # "introduced", "changed", "retired", "restored", "removed"
    before: str | None
    after: str | None
    trailers: list[tuple[str, str]] = field(default_factory=list)

    def diff(self) -> str:
        """A unified diff of the rule's markdown between the two versions."""
        a = (self.before or "").splitlines(keepends=True)
        b = (self.after or "").splitlines(keepends=True)
        return "".join(difflib.unified_diff(a, b, "before", "after", n=2))

    def to_json(self) -> dict[str, object]:
        return {
            "commit": self.sha,
            "date": self.date,
            "author": self.author,
            "subject": self.subject,
            "kind": self.kind,
            "before": self.before,
            "after": self.after,
            "diff": self.diff(),
            "trailers": [{"key": k, "value": v} for k, v in self.trailers],
        }


def _rule_text(playbook: pb.Playbook | None, rule_id: str) -> tuple[str | None, bool]:
    if playbook is None:
        return None, False
    rule = playbook.get(rule_id)
    if rule is None:
        return None, False
    one = pb.Playbook(rules=() if rule.retired else (rule,), retired=(rule,) if rule.retired else ())
    text = pb.render(one).split("\n", 2)[2]  # drop the "# Playbook" title
    return text.strip("\n") + "\n", rule.retired


class PlaybookHistory:
    """The playbook's versions in the first-parent history of ``rev`` (oldest first),
    each parsed once, and the trailers of the commits asked about: read once for many
    rules' histories (``audit --html`` writes every rule's page) instead of once a rule.
    An unparseable version (only possible with ``--no-verify``) is left out."""

    def __init__(self, repo: MemoryRepo, rev: str = "HEAD") -> None:
        self.repo = repo
        self.versions: list[tuple[git.LogEntry, pb.Playbook | None]] = []
        self._trailers: dict[str, list[tuple[str, str]]] = {}
        if git.head(repo.root) is None:
            return
        entries = list(reversed(git.log(repo.root, "--first-parent", rev, "--", repo.playbook_rel)))
        if not entries:
            return
        blobs = git.cat_file_batch(repo.root, [f"{e.sha}:{repo.playbook_rel}" for e in entries])
        for entry, raw in zip(entries, blobs, strict=True):
            playbook = None
            if raw is not None:
                try:
                    playbook = pb.parse(raw.decode("utf-8", "replace"), source=repo.playbook_rel)
                except ValidationError:
                    continue
            self.versions.append((entry, playbook))

    def trailers(self, sha: str) -> list[tuple[str, str]]:
        """The commit's trailers (git asked once per commit); a list of the caller's own."""
        if sha not in self._trailers:
            self._trailers[sha] = git.trailers(self.repo.root, sha)
        return list(self._trailers[sha])


def rule_history(
    repo: MemoryRepo, rule_id: str, rev: str = "HEAD", *, playbooks: PlaybookHistory | None = None
) -> list[RuleEvent]:
    """Every commit (oldest first) in which ``rule_id`` appeared, changed or went;
    ``playbooks``: the playbook's history of ``rev`` already read (else read here)."""
    if playbooks is None:
        playbooks = PlaybookHistory(repo, rev)
    events: list[RuleEvent] = []
    prev_text: str | None = None
    prev_retired = False
    for entry, playbook in playbooks.versions:
        text, retired = _rule_text(playbook, rule_id)
        if text == prev_text:
            continue
        if prev_text is None:
            kind = "introduced"
        elif text is None:
            kind = "removed"
        elif retired and not prev_retired:
            kind = "retired"
        elif prev_retired and not retired:
            kind = "restored"
        else:
            kind = "changed"
        events.append(
            RuleEvent(
                entry.sha,
                entry.date,
                entry.author,
                entry.subject,
                kind,
                prev_text,
                text,
                playbooks.trailers(entry.sha),
            )
        )
        prev_text, prev_retired = text, retired
    return events
