"""What one distillation found, changed, refused and (maybe) committed:
:class:`DistillResult`, as :func:`scarwarden.distill.run.distill` returns it, with its
playbook diff and its JSON (``distill --json``, the web UI's preview)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from scarwarden.distill import commit as commits
from scarwarden.distill.injection import ReviewFlag
from scarwarden.distill.lessons import Flag
from scarwarden.distill.ops import Change, Drop
from scarwarden.index.lineage import Lineage
from scarwarden.llm.client import Usage


@dataclass
class DistillResult:
    """What a distillation found, changed, refused and (maybe) committed."""

    distiller: str  # "offline" or "model"
    model: str | None
    head: str
    #: Episodes in the ledger at HEAD not distilled before this run.
    new: list[str]
    #: Episodes this run records as distilled (its ``Scarwarden-Distilled-Episode``s).
    distilled: list[str]
    left: list[tuple[str, str]]
    changes: list[Change]
    drops: list[Drop]
    before: str
    after: str
    usage: Usage = field(default_factory=Usage)
    calls: int = 0
    batches: list[tuple[int, int, int]] = field(default_factory=list)
    notice: str | None = None
    message: str | None = None
    commit: str | None = None
    branch: str | None = None
    dry_run: bool = False
    #: With ``--no-commit``: where the suggested commit message was saved.
    message_file: str | None = None
    playbook_rel: str = "memory/playbook.md"
    #: Contradictions found (decided, or flagged for a human).
    contradictions: list[Flag] = field(default_factory=list)
    #: (episode ID, why it taught nothing): distilled all the same.
    no_lesson: list[tuple[str, str]] = field(default_factory=list)
    #: Rules corrected in at least half of 3+ applications since they last changed.
    struggling: list[Lineage] = field(default_factory=list)
    #: (episode ID, "cited by PB-..." or "left out: why"): every new episode with a correction.
    accounts: list[tuple[str, str]] = field(default_factory=list)
    #: Sentences a model wrote that may be injected text, not a lesson (a reviewer's aid).
    review: list[ReviewFlag] = field(default_factory=list)

    @property
    def subject(self) -> str:
        return commits.subject(self.changes)

    def uncited(self) -> list[str]:
        """The distilled episodes no rule of the new playbook cites: with ``--no-commit``
        only the saved message's lines mark them, so until it is committed the next
        distill sends them again."""
        cited = {ep for c in self.changes if c.kind != "retire" for ep in c.episode_ids}
        return [ep for ep in self.distilled if ep not in cited]

    @property
    def nothing_new(self) -> bool:
        return not self.changes and not self.distilled

    def diff(self) -> str:
        """Unified diff of the playbook file, before -> after."""
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                f"a/{self.playbook_rel}",
                f"b/{self.playbook_rel}",
            )
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "distiller": self.distiller,
            "model": self.model,
            "notice": self.notice,
            "head": self.head,
            "dry_run": self.dry_run,
            "commit": self.commit,
            "branch": self.branch,
            "message_file": self.message_file,
            "subject": None if self.nothing_new else self.subject,
            "new_episodes": self.new,
            "distilled_episodes": self.distilled,
            "left": [{"episode_id": ep, "reason": why} for ep, why in self.left],
            "no_lesson": [{"episode_id": ep, "reason": why} for ep, why in self.no_lesson],
            "accounts": [{"episode_id": ep, "status": status} for ep, status in self.accounts],
            "contradictions": [f.to_json() for f in self.contradictions],
            "struggling": [lineage.to_json() for lineage in self.struggling],
            "changes": [c.to_json() for c in self.changes],
            "dropped": [d.to_json() for d in self.drops],
            "review": [flag.to_json() for flag in self.review],
            "usage": self.usage.to_json(calls=self.calls),
            "batches": [
                {"episodes": e, "context_rules": r, "prompt_tokens_estimated": t} for e, r, t in self.batches
            ],
            "message": self.message,
            "diff": self.diff(),
        }
