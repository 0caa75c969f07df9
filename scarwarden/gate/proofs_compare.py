"""What the gate says of a receipt once recall has been re-run
(:class:`scarwarden.gate.proofs.Prover`): a receipt whose recall differs (verdict,
ranked rules, version 4's evidence, the candidates shown on ``ASK_HUMAN``), one
rewritten after it was made, and rules applied beyond what recall gave. Split from
:mod:`scarwarden.gate.proofs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scarwarden.files import receipt as receipt_format
from scarwarden.files.episodes import Episode
from scarwarden.gate.policy import GateProblem, problem


@dataclass(frozen=True)
class Derived:
    """What recall gives for a receipt's task, re-run by the gate."""

    verdict: str
    rules: tuple[str, ...]
    #: Rule -> the episode of its evidence (``None`` before version 4).
    evidence: dict[str, str] | None = None
    #: On ``ASK_HUMAN``, the candidates' IDs and each candidate rule's evidence episode;
    #: ``None`` when not derived (the receipt names none, or recall showed none).
    candidates: tuple[str, ...] | None = None
    candidate_evidence: dict[str, str] | None = None


#: What recall gives, or the problem code why it cannot run.
Outcome = Derived | str


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
    derived: Derived,
) -> list[GateProblem]:
    """The receipt against what recall gives: the verdict, each rule, then the order,
    then (version 4) the evidence given with each rule, then the candidates shown on
    ``ASK_HUMAN`` (when the receipt names them)."""
    verdict, rules, given = derived.verdict, derived.rules, derived.evidence
    at = f"for this task at playbook {receipt.short_playbook}"
    out: list[GateProblem] = []
    refuse = _refuser(out, path, episode, f"recall gives {verdict} {', '.join(rules) or '(no rules)'} {at}")

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
    if not out and receipt.candidates is not None:
        out += _candidates(path, episode, receipt, derived)
    return out


def _candidates(
    path: str, episode: Episode, receipt: receipt_format.Receipt, derived: Derived
) -> list[GateProblem]:
    """The candidates a receipt names against those recall shows: each one, their order,
    then the evidence shown with each candidate rule."""
    shown, quoted = derived.candidates or (), derived.candidate_evidence or {}
    said, said_quoted = receipt.candidates or (), receipt.candidate_evidence or {}
    at = f"for this task at playbook {receipt.short_playbook}"
    listed = ", ".join(shown) or "no candidate"
    out: list[GateProblem] = []
    refuse = _refuser(out, path, episode, f"recall shows {listed} on ASK_HUMAN {at}")

    for c in said:
        if c not in shown:
            refuse(f"names the candidate {c}, which recall did not show {at}", c)
    for c in shown:
        if c not in said:
            refuse(f"leaves out the candidate {c}, which recall showed {at}", c)
    if not out and tuple(said) != tuple(shown):
        refuse(f"orders the candidates {', '.join(said)}; recall shows them as {listed} {at}")
    if not out and dict(said_quoted) != dict(quoted):
        for c in shown:
            if said_quoted.get(c) != quoted.get(c):
                refuse(
                    f"shows the candidate {c} with the evidence of {said_quoted.get(c) or 'no episode'}, "
                    f"but recall gives {quoted.get(c) or 'none'} {at}",
                    c,
                )
    return out


def _refuser(out: list[GateProblem], path: str, episode: Episode, gives: str) -> Callable[..., None]:
    """``refuse(message, rule=None)``: append a ``receipt-mismatch`` to ``out`` (``rule``
    named when it is a rule ID; ``gives``: what recall gives, for the hint)."""

    def refuse(message: str, rule: str | None = None) -> None:
        out.append(
            problem(
                "receipt-mismatch",
                f"{episode.id}'s receipt {message}",
                file=path,
                field="recalled",
                rule=rule if rule and rule.startswith("PB-") else None,
                episode=episode.id,
                hint=f"{gives}; record the receipt recall printed, unchanged",
            )
        )

    return refuse


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
