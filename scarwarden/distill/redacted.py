"""Rules left with no evidence after a redaction: ``distill`` proposes retiring them.

A rule citing only redacted episodes (``scarwarden redact``) no longer rests on any
experience anyone can read. Retiring it is a proposal like any other distill change
(reviewed, committed through the gate); its evidence is the episodes that recorded the
redactions, so the retirement cites what the ledger holds.
"""

from __future__ import annotations

from scarwarden.distill import state
from scarwarden.distill.ops import Operation
from scarwarden.files import playbook as pb
from scarwarden.repo import MemoryRepo


def retirements(repo: MemoryRepo, playbook: pb.Playbook, ledger: state.Ledger) -> list[Operation]:
    """A retire operation for each active rule whose every citation is redacted."""
    cited = sorted({ep for rule in playbook.rules for ep in rule.episode_ids if ep in ledger})
    if not cited:
        return []
    loaded, _bad = state.load_episodes(repo, ledger, cited)
    records = {ep.id: str(ep.get("redacted")["record"]) for ep in loaded if ep.get("redacted") is not None}
    ops = []
    for rule in playbook.rules:
        if rule.episode_ids and all(ep in records for ep in rule.episode_ids):
            ops.append(
                Operation(
                    "retire",
                    rule_id=rule.id,
                    episode_ids=tuple(dict.fromkeys(records[ep] for ep in rule.episode_ids)),
                    reason=f"all its evidence was redacted ({', '.join(rule.episode_ids)})",
                )
            )
    return ops
