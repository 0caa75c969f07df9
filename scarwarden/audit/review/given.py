"""What each new episode's agent was given, beside what it says it applied (issue 20).

For every episode a range adds, the review shows the rules its recall receipt lists
(the verdict, the playbook version, whether the gate proved it) next to its
``rules_applied``: a reviewer sees at a glance a rule applied that recall never gave,
or a rule given and ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scarwarden import git
from scarwarden.errors import ValidationError
from scarwarden.files.episodes import parse_episode_bytes

if TYPE_CHECKING:
    from scarwarden.repo import MemoryRepo


@dataclass(frozen=True)
class GivenApplied:
    """One new episode: what recall gave its agent, and what it says it applied."""

    episode: str
    path: str
    #: The receipt's verdict and rules; ``None``: the episode carries no receipt.
    verdict: str | None
    given: list[str]
    applied: list[str]
    receipt: str | None = None
    playbook: str | None = None
    reason: str | None = None
    #: "proved", "refused", "unverifiable" (the gate's word), or "" without a receipt.
    status: str = ""
    problems: list[str] = field(default_factory=list)
    #: On ASK_HUMAN, the candidates the receipt says were shown (issue 26); ``None``:
    #: it names none (another verdict, or a receipt made before they were recorded).
    candidates: list[str] | None = None

    @property
    def beyond(self) -> list[str]:
        """Rules applied that the receipt does not hold."""
        return [r for r in self.applied if self.verdict is not None and r not in self.given]

    @property
    def unused(self) -> list[str]:
        """Rules given that the episode does not say it applied."""
        return [r for r in self.given if r not in self.applied]

    def to_json(self) -> dict[str, Any]:
        return {
            "episode": self.episode,
            "path": self.path,
            "receipt": self.receipt,
            "playbook": self.playbook,
            "verdict": self.verdict,
            "given": list(self.given),
            "applied": list(self.applied),
            "beyond_receipt": self.beyond,
            "rules_applied_reason": self.reason,
            "status": self.status,
            "problems": list(self.problems),
            "candidates": None if self.candidates is None else list(self.candidates),
        }

    def gave(self) -> str:
        """The "recall gave" cell: the verdict and rules, and on ASK_HUMAN what was shown."""
        if self.verdict is None:
            return "—"
        out = f"{self.verdict} {', '.join(self.given) or '(no rules)'}"
        if self.candidates is not None:
            out += f"; candidates shown: {', '.join(self.candidates) or 'none'}"
        elif self.verdict == "ASK_HUMAN":
            out += "; candidates not covered by this receipt"
        return out


def given_and_applied(repo: MemoryRepo, rev: str, paths: list[str]) -> list[GivenApplied]:
    """For each added episode file at ``rev``: its receipt next to its ``rules_applied``,
    with the gate's proof of the receipt (one ``cat-file --batch`` for the files)."""
    from scarwarden.gate.proofs import Prover

    blobs = git.cat_file_batch(repo.root, [f"{rev}:{p}" for p in paths])
    episodes = []
    for path, raw in zip(paths, blobs, strict=True):
        if raw is None:
            continue
        try:
            episodes.append((path, parse_episode_bytes(raw, path)))
        except ValidationError:
            continue  # the gate reports invalid episodes
    proofs = {p.path: p for p in Prover(repo.root, repo.playbook_rel, rev=rev).prove_all(episodes)}
    out = []
    for path, ep in episodes:
        applied = list(ep.get("rules_applied") or [])
        receipt = ep.get("recalled")
        proof = proofs.get(path)
        if receipt is None or proof is None:
            if applied:
                out.append(GivenApplied(ep.id, path, None, [], applied))
            continue
        out.append(
            GivenApplied(
                ep.id,
                path,
                receipt["verdict"],
                list(receipt["rules"]),
                applied,
                receipt=receipt["receipt"],
                playbook=receipt["playbook"],
                reason=ep.get("rules_applied_reason"),
                status=proof.status,
                problems=[p.message for p in proof.problems + proof.warnings],
                candidates=list(receipt["candidates"]) if receipt.get("candidates") is not None else None,
            )
        )
    return out


def markdown_lines(rows: list[GivenApplied], md: Callable[[str], str]) -> list[str]:
    """The review's table: one row per new episode that has a receipt or applied rules;
    ``md`` escapes untrusted text (the reason is the episode's words)."""
    if not rows:
        return []
    mark = {
        "proved": "✅ proved",
        "refused": "❌ refused",
        "unverifiable": "⚠️ unverifiable",
        "": "no receipt",
    }
    out = [
        "### What each new episode was given, and what it applied",
        "",
        "| episode | recall gave (receipt) | it says it applied | receipt |",
        "|---|---|---|---|",
    ]
    for row in rows:
        given = row.gave()
        applied = ", ".join(f"**{r}** (not given)" if r in row.beyond else r for r in row.applied) or "(none)"
        if row.reason:
            applied += f"; reason: {md(' '.join(row.reason.split()))}"
        where = f" `{row.receipt}` at playbook `{(row.playbook or '')[:12]}`" if row.receipt else ""
        out.append(f"| `{row.episode}` | {given} | {applied} | {mark[row.status]}{where} |")
    out.append("")
    return out
