"""What the gate says of a receipt once recall has been re-run
(:class:`scarwarden.gate.proofs.Prover`): a receipt whose recall differs (verdict,
ranked rules, version 4's evidence), one rewritten after it was made, and rules applied
beyond what recall gave. Split from :mod:`scarwarden.gate.proofs`.
"""

from __future__ import annotations

from scarwarden.files import receipt as receipt_format
from scarwarden.files.episodes import Episode
from scarwarden.gate.policy import GateProblem, problem

#: (verdict, ranked rule IDs, evidence: rule -> episode, None before version 4) recall
#: gives, or the problem code why it cannot run.
Outcome = tuple[str, tuple[str, ...], dict[str, str] | None] | str


def rewritten(path: str, episode: Episode, receipt: receipt_format.Receipt) -> GateProblem:
    return problem(
        "receipt-unverifiable",
        f"{episode.id}'s receipt {receipt.id} names ledger {(receipt.ledger_tree or '')[:12]}, real "
        "episodes that no commit of this history holds as such (a rebase rewrote the commits "
        "recall ran on?), so its verdict and ranking are unverified (not a pass)",
        file=path,
        field="recalled",
        episode=episode.id,
        hint="recall again on the rebased branch and record that receipt",
    )


def compare(
    path: str,
    episode: Episode,
    receipt: receipt_format.Receipt,
    derived: tuple[str, tuple[str, ...], dict[str, str] | None],
) -> list[GateProblem]:
    """The receipt against what recall gives: the verdict, each rule, then the order,
    then (version 4) the evidence given with each rule."""
    verdict, rules, given = derived
    at = f"for this task at playbook {receipt.short_playbook}"
    out = []

    def refuse(message: str, rule: str | None = None) -> None:
        out.append(
            problem(
                "receipt-mismatch",
                f"{episode.id}'s receipt {message}",
                file=path,
                field="recalled",
                rule=rule,
                episode=episode.id,
                hint=f"recall gives {verdict} {', '.join(rules) or '(no rules)'} {at}; "
                "record the receipt recall printed, unchanged",
            )
        )

    if receipt.verdict != verdict:
        refuse(f"says {receipt.verdict}, but recall gives {verdict} {at}")
    for rule in receipt.rules:
        if rule not in rules:
            refuse(f"lists {rule}, which recall did not return {at}", rule)
    for rule in rules:
        if rule not in receipt.rules:
            refuse(f"leaves out {rule}, which recall returned {at}", rule)
    if not out and tuple(receipt.rules) != rules:
        refuse(f"ranks the rules {', '.join(receipt.rules)}; recall ranks them {', '.join(rules)} {at}")
    if not out and given is not None and (receipt.evidence or {}) != given:
        for rule in rules:
            said, derived_ep = (receipt.evidence or {}).get(rule), given.get(rule)
            if said != derived_ep:
                refuse(
                    f"gives {rule} the evidence of {said or 'no episode'}, but recall gives "
                    f"{derived_ep or 'none'} {at}",
                    rule,
                )
    return out


def applied_beyond(path: str, episode: Episode, receipt: receipt_format.Receipt) -> list[GateProblem]:
    """``rules_applied`` entries the receipt does not hold, unless the episode says why."""
    if episode.get("rules_applied_reason"):
        return []
    given = set(receipt.rules)
    return [
        problem(
            "rules-applied-not-recalled",
            f"{episode.id} says it applied {rule}, which its receipt {receipt.id} does not hold "
            f"(recall gave {', '.join(receipt.rules) or 'no rules'})",
            file=path,
            field="rules_applied",
            rule=rule,
            episode=episode.id,
            hint="an agent applies what recall gave it; if someone told it to apply this "
            "rule, say so in rules_applied_reason",
        )
        for rule in episode.get("rules_applied") or []
        if rule not in given
    ]


def clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."
