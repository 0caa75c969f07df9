"""What a walk over history found: commits, counts and problems (``verify`` and ranges)."""

from __future__ import annotations

from dataclasses import dataclass, field

from scarwarden.gate.policy import GateProblem


@dataclass
class WalkResult:
    """What a walk proved or found (``verify --json`` prints :meth:`to_json`)."""

    rev_range: str
    problems: list[GateProblem] = field(default_factory=list)
    commits: int = 0
    memory_commits: int = 0
    episodes: int = 0
    playbooks: int = 0
    rules: int = 0
    citations: int = 0
    #: Episodes redacted (``scarwarden redact``), each proved against what it replaced.
    redactions: int = 0
    #: Recall receipts re-derived (issue 20), and what could not be proved nor refused.
    receipts: int = 0
    #: Images a commit added, proved by their content (issue 19), and how many of them
    #: were Git LFS pointers (their oid and size proved; their bytes are not in git).
    media: int = 0
    media_lfs: int = 0
    warnings: list[GateProblem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        def plural(count: int, noun: str) -> str:
            return f"{count} {noun}{'' if count == 1 else 's'}"

        counts = (
            f"{plural(self.commits, 'commit')} ({self.memory_commits} touching memory), "
            f"{plural(self.episodes, 'episode')}, "
            f"{plural(self.playbooks, 'playbook version')}, "
            f"{plural(self.rules, 'rule version')} and "
            f"{plural(self.citations, 'citation')} checked"
        )
        if self.redactions:
            counts += f", {plural(self.redactions, 'redaction')} proved"
        if self.receipts:
            counts += f", {plural(self.receipts, 'recall receipt')} re-derived"
        if self.media:
            counts += f", {plural(self.media, 'image')} proved by content"
            if self.media_lfs:
                counts += f" ({self.media_lfs} in Git LFS: oid and size only)"
        if self.ok:
            return f"scarwarden verify: OK, history {self.rev_range} is honest: {counts}"
        n = len(self.problems)
        return f"scarwarden verify: {n} problem{'s' if n != 1 else ''} in {self.rev_range}: {counts}"

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "range": self.rev_range,
            "commits": self.commits,
            "memory_commits": self.memory_commits,
            "episodes": self.episodes,
            "playbooks": self.playbooks,
            "rules": self.rules,
            "citations": self.citations,
            "redactions": self.redactions,
            "receipts": self.receipts,
            "media": self.media,
            "media_lfs": self.media_lfs,
            "problems": [p.to_json() for p in self.problems],
            "warnings": [p.to_json() for p in self.warnings],
            "summary": self.summary(),
        }
