"""What a gate run found: its problems and counts, and the one-line summary."""

from __future__ import annotations

from collections.abc import Sequence

from scarwarden.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.gate.policy import GateProblem


@record
class CheckReport:
    """What the gate found. ``ok`` when there is no problem."""

    scope: str  # "staged", "range", "all"
    problems: list[GateProblem] = field(default_factory=list)
    #: Counts for the summary line (stable keys, see :meth:`to_json`).
    stats: dict[str, int] = field(default_factory=dict)
    #: What was compared: the commit the index is checked against, or the range.
    base: str | None = None
    #: What the user should know but that does not fail the check (personal data under
    #: ``privacy: warn``, rules whose evidence was redacted).
    warnings: list[GateProblem] = field(default_factory=list)
    #: The memory folder, when git has none (neither HEAD nor the index): nothing was
    #: checked, and the hooks say nothing (a code repository's commits cost no noise).
    no_memory: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def count(self, key: str, by: int = 1) -> None:
        self.stats[key] = self.stats.get(key, 0) + by

    def summary(self) -> str:
        parts = [_counted(v, k) for k, v in self.stats.items() if v]
        detail = f" ({', '.join(parts)})" if parts else ""
        what = {
            "staged": "staged memory changes",
            "range": f"commits {self.base}",
            "all": "the memory tree",
        }.get(self.scope, self.scope)
        if self.ok and self.no_memory:
            return f"scarwarden check: OK, no memory to check (no {self.no_memory}/ folder in git)"
        if self.ok:
            return f"scarwarden check: OK, {what}{detail}"
        n = len(self.problems)
        return f"scarwarden check: {n} problem{'s' if n != 1 else ''} in {what}{detail}"

    def to_json(self) -> dict[str, object]:
        return {
            "ok": self.ok,
            "scope": self.scope,
            "base": self.base,
            "stats": dict(self.stats),
            "problems": [p.to_json() for p in self.problems],
            "warnings": [p.to_json() for p in self.warnings],
            "summary": self.summary(),
        }


_NOUNS = {
    "files_changed": "file changed",
    "episodes_added": "episode added",
    "episodes_checked": "episode checked",
    "rules_checked": "rule checked",
    "citations_checked": "citation checked",
    "sentences_checked": "sentence checked",
    "receipts_checked": "receipt re-derived",
    "receipts_not_rederived": "receipt not re-derived",
    "media_added": "image added",
    "media_checked": "image checked",
    "media_in_lfs": "image in Git LFS (its oid and size checked, its bytes not in git)",
    "commits": "commit",
}


def _counted(n: int, key: str) -> str:
    noun = _NOUNS.get(key, key.replace("_", " "))
    if n != 1:
        first, _, rest = noun.partition(" ")
        noun = f"{first}s{' ' + rest if rest else ''}"
    return f"{n} {noun}"


def problem_lines(problems: Sequence[object], summary: str) -> list[str]:
    """What ``check`` prints: one problem per item (its hint indented under it), then
    the summary line (the CLI and the hooks' entry print the same)."""
    out: list[str] = []
    for p in problems:
        lines = str(p).splitlines()
        out.append(f"- {lines[0]}")
        out.extend(f"  {line}" for line in lines[1:])
    out.append(summary)
    return out
