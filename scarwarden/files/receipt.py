"""Recall receipts: what memory an agent was given, in a form git can prove.

A receipt names everything recall's answer depends on: the task, the playbook's git
blob ID, the recall settings, the recall algorithm's version, and what it returned
(the verdict and the ranked rule IDs). Since recall algorithm version 2 the answer also
depends on the ledger (the words of past tasks, the episodes rules cite, lineage), so a
receipt names the ledger too: the git tree ID of the episodes folder recall's index
held (``ledger``, absent from version-1 receipts). Recall is deterministic, so anyone
holding the repository can re-run recall on that blob and tree and confirm the answer
(:mod:`scarwarden.gate.proofs`). The ``receipt`` field is a short content hash over
the other fields: it identifies the recall (the recall log and episodes share it) and
catches a receipt edited by hand. It is not a signature: anyone can recompute it, which
is why the gate re-derives the answer instead of trusting the hash.

An episode stores its receipt in its ``recalled:`` block (docs/formats.md).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from scarwarden.digests import sha256
from scarwarden.errors import Problem, ValidationError
from scarwarden.files.input_policy import named
from scarwarden.files.receipt_fields import (
    CANDIDATES_SINCE,
    HASH_CHARS,
    MAX_TASK_CHARS,
    SETTING_KEYS,
    UNCOMMITTED,
    VERDICTS,
    check_fields,
)
from scarwarden.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CANDIDATES_SINCE", "HASH_CHARS", "MAX_TASK_CHARS", "SETTING_KEYS", "UNCOMMITTED", "VERDICTS"]

#: Keys of a receipt, in the order they are written.
KEYS = (
    "receipt",
    "algorithm",
    "playbook",
    "ledger",
    "task",
    "settings",
    "verdict",
    "rules",
    "evidence",
    "candidates",
    "candidate_evidence",
)
#: Keys a receipt may leave out: ``ledger`` (version-1 receipts, and those made before
#: receipts named the ledger, have none); ``evidence`` (recall version 4 on: which
#: cited episode's sentences were given with each returned rule; older versions none);
#: ``candidates`` and ``candidate_evidence`` (issue 26: on ``ASK_HUMAN``, the nearest
#: rules or failed episodes shown, and the episode each candidate rule's sentences came
#: from; receipts made before they were recorded have neither, and cover no candidate).
OPTIONAL = ("ledger", "evidence", "candidates", "candidate_evidence")


@record(frozen=True)
class Receipt:
    """One recall's receipt. ``id`` is the content hash of the other fields."""

    task: str
    playbook: str
    algorithm: int
    settings: dict[str, float | int]
    verdict: str
    rules: tuple[str, ...]
    id: str = ""
    #: The episodes folder's tree ID recall's ledger words came from (``<tree>`` or
    #: ``<tree>+uncommitted``); ``None`` on receipts made before receipts named it.
    ledger: str | None = None
    #: Version 4 on: returned rule ID -> the episode whose sentences were given as its
    #: evidence (rules given none are absent); ``None`` on older receipts.
    evidence: dict[str, str] | None = None
    #: On ``ASK_HUMAN`` (recall version 4 on, issue 26): the candidates shown, in order
    #: (rule IDs, or the failed episodes' IDs when no rule was near); ``None`` on
    #: receipts that do not record them (older ones, other verdicts).
    candidates: tuple[str, ...] | None = None
    #: Candidate rule ID -> the episode whose sentences were shown with it (``None``
    #: exactly when ``candidates`` is).
    candidate_evidence: dict[str, str] | None = None

    @classmethod
    def make(
        cls,
        *,
        task: str,
        playbook: str,
        algorithm: int,
        settings: Mapping[str, float | int],
        verdict: str,
        rules: list[str] | tuple[str, ...],
        ledger: str | None = None,
        evidence: Mapping[str, str] | None = None,
        candidates: list[str] | tuple[str, ...] | None = None,
        candidate_evidence: Mapping[str, str] | None = None,
    ) -> Receipt:
        """A receipt with its hash computed."""
        extra: dict[str, Any] = {
            "ledger": ledger,
            "evidence": None if evidence is None else dict(evidence),
            "candidates": None if candidates is None else tuple(candidates),
            "candidate_evidence": None if candidate_evidence is None else dict(candidate_evidence),
        }
        clean = _canonical_settings(settings)
        body = cls(task, playbook, algorithm, clean, verdict, tuple(rules), **extra)
        return cls(task, playbook, algorithm, clean, verdict, tuple(rules), content_hash(body), **extra)

    @classmethod
    def from_valid(cls, data: Mapping[str, Any]) -> Receipt:
        """The receipt of an episode that passed validation (its hash was checked then)."""
        return cls(
            data["task"],
            data["playbook"],
            data["algorithm"],
            dict(data["settings"]),
            data["verdict"],
            tuple(data["rules"]),
            data["receipt"],
            ledger=data.get("ledger"),
            evidence=dict(data["evidence"]) if data.get("evidence") is not None else None,
            candidates=tuple(data["candidates"]) if data.get("candidates") is not None else None,
            candidate_evidence=(
                dict(data["candidate_evidence"]) if data.get("candidate_evidence") is not None else None
            ),
        )

    @property
    def short_playbook(self) -> str:
        return self.playbook[:12]

    @property
    def ledger_tree(self) -> str | None:
        """The ledger's tree ID (without the uncommitted mark), or ``None``."""
        return self.ledger.removesuffix(UNCOMMITTED) if self.ledger else None

    @property
    def ledger_uncommitted(self) -> bool:
        """Whether recall's index held episode files the named tree does not."""
        return bool(self.ledger and self.ledger.endswith(UNCOMMITTED))

    def to_json(self) -> dict[str, Any]:
        """The stored form (an episode's ``recalled:`` block), keys in :data:`KEYS` order."""
        out: dict[str, Any] = {"receipt": self.id, "algorithm": self.algorithm, "playbook": self.playbook}
        if self.ledger is not None:
            out["ledger"] = self.ledger
        out.update(task=self.task, settings=dict(self.settings), verdict=self.verdict, rules=list(self.rules))
        if self.evidence is not None:
            out["evidence"] = dict(self.evidence)
        if self.candidates is not None:
            out["candidates"] = list(self.candidates)
            out["candidate_evidence"] = dict(self.candidate_evidence or {})
        return out


def _canonical_settings(settings: Mapping[str, float | int]) -> dict[str, float | int]:
    """Thresholds as floats, counts as ints, in :data:`SETTING_KEYS` order."""
    return {
        "act_threshold": float(settings["act_threshold"]),
        "floor": float(settings["floor"]),
        "act_tag_hits": int(settings["act_tag_hits"]),
        "limit": int(settings["limit"]),
    }


def content_hash(receipt: Receipt) -> str:
    """The hash over every field but ``id``: SHA-256 of canonical JSON, first 16 hex.
    ``ledger`` is hashed when present (so a version-1 receipt's hash is unchanged)."""
    payload: dict[str, Any] = {
        "algorithm": receipt.algorithm,
        "playbook": receipt.playbook,
        "rules": list(receipt.rules),
        "settings": _canonical_settings(receipt.settings),
        "task": receipt.task,
        "verdict": receipt.verdict,
    }
    if receipt.ledger is not None:
        payload["ledger"] = receipt.ledger
    if receipt.evidence is not None:
        payload["evidence"] = dict(receipt.evidence)
    if receipt.candidates is not None:  # absent from older receipts: their hash is unchanged
        payload["candidates"] = list(receipt.candidates)
        payload["candidate_evidence"] = dict(receipt.candidate_evidence or {})
    data = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha256(data.encode("utf-8")).hexdigest()[:HASH_CHARS]


def check(data: Any, *, source: str, field: str = "recalled") -> tuple[Receipt | None, list[Problem]]:
    """Validate a receipt mapping (stored or given as input); the receipt and the
    problems found, each naming ``field``. A hash that does not match the fields is a
    problem: the receipt was edited after recall made it."""
    problems: list[Problem] = []

    def bad(message: str, hint: str | None = None) -> None:
        problems.append(Problem(message, file=source, field=field, hint=hint))

    if not isinstance(data, Mapping):
        bad(
            f"a receipt must be a mapping, got {type(data).__name__}",
            "pass the 'receipt' object that recall printed (scarwarden recall --json)",
        )
        return None, problems
    unknown = [named(str(k)) for k in data if k not in KEYS]
    missing = [k for k in KEYS if k not in data and k not in OPTIONAL]
    if unknown:
        bad(f"unknown receipt key(s): {', '.join(unknown)}", "a receipt has: " + ", ".join(KEYS))
    if missing:
        bad(f"the receipt lacks: {', '.join(missing)}", "pass the receipt exactly as recall printed it")
    if problems:
        return None, problems
    check_fields(data, bad)
    if problems:
        return None, problems
    receipt = Receipt.make(
        task=data["task"],
        playbook=data["playbook"],
        algorithm=data["algorithm"],
        settings=data["settings"],
        verdict=data["verdict"],
        rules=list(data["rules"]),
        ledger=data.get("ledger"),
        evidence=data.get("evidence"),
        candidates=data.get("candidates"),
        candidate_evidence=data.get("candidate_evidence"),
    )
    if receipt.id != data["receipt"]:
        bad(
            f"receipt {data['receipt']} does not match its contents (they hash to {receipt.id}): "
            "it was changed after recall made it",
            "record the receipt exactly as recall printed it, or leave it out",
        )
        return None, problems
    return receipt, problems


def parse(data: Any, *, source: str = "--receipt") -> Receipt:
    """A receipt from input (a mapping, JSON text, or a recall's whole ``--json``
    output holding one); :class:`ValidationError` naming every problem."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except (ValueError, RecursionError) as exc:
            # A few thousand '[' exhaust json's recursion: input, not a bug.
            reason = exc if isinstance(exc, ValueError) else "nested too deeply"
            raise ValidationError(
                f"{source}: not JSON ({reason})",
                problems=[
                    Problem("not JSON", file=source, hint="pass the receipt recall printed, or a file")
                ],
            ) from None
    if isinstance(data, Mapping) and "receipt" in data and isinstance(data["receipt"], Mapping):
        data = data["receipt"]  # a whole recall --json document
    receipt, problems = check(data, source=source, field="receipt")
    if receipt is None:
        raise ValidationError(f"{source}: invalid receipt", problems=problems)
    return receipt


#: The recall algorithm versions the gate re-derives
#: (:data:`scarwarden.gate.proofs.IMPLEMENTED`; a test keeps the two equal: this layer
#: may not import recall). A receipt of another version proves nothing here.
REDERIVED = (1, 2, 3, 4, 5, 6)


def rederivable(recalled: Any) -> bool:
    """Whether the gate re-derives this receipt from git (issue 27): a version it
    implements, naming a committed ledger when the version reads one. A receipt of
    another version, a version-2+ receipt naming no ledger, or one made over
    uncommitted episodes (``+uncommitted``) is only *unverifiable* to the gate (a
    warning), so it proves nothing for lineage either."""
    if not isinstance(recalled, Mapping):
        return False
    algorithm, ledger = recalled.get("algorithm"), recalled.get("ledger")
    if isinstance(algorithm, bool) or algorithm not in REDERIVED:
        return False
    if algorithm == 1:
        return True
    return isinstance(ledger, str) and not ledger.endswith(UNCOMMITTED)


def applied_rules(episode: Mapping[str, Any]) -> dict[str, str]:
    """How each of an episode's ``rules_applied`` stands, for lineage counts (issue 20):

    * ``verified``: its recall receipt holds the rule (what the agent was given), and it
      is a receipt the gate re-derives from git before the episode is committed;
    * ``unverifiable``: its receipt holds the rule, but the gate cannot re-derive that
      receipt (:func:`rederivable`: another algorithm version, no ledger named, or
      ``+uncommitted``), so nothing proves it (issue 27: not counted);
    * ``reason``: not in the receipt, but the episode says why (``rules_applied_reason``);
    * ``claimed``: the episode has no receipt; only its word says the rule was applied.

    A rule beyond the receipt without a reason is left out: the gate refuses it.
    """
    recalled = episode.get("recalled")
    given = set(recalled.get("rules") or []) if isinstance(recalled, Mapping) else None
    proved = rederivable(recalled)
    out: dict[str, str] = {}
    for rule in episode.get("rules_applied") or []:
        if given is None:
            out[rule] = "claimed"
        elif rule in given:
            out[rule] = "verified" if proved else "unverifiable"
        elif episode.get("rules_applied_reason"):
            out[rule] = "reason"
    return out
