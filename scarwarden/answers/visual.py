"""``audit-image``: an image checked against the rules the team learnt (issue 19).

The rules that apply are the task's recalled rules plus every visual rule
(``- Applies to: images``, :mod:`scarwarden.distill.visual`). They go to the vision
model (``model.vision_model``) with the image, as OpenAI-compatible ``image_url``
content holding a data URL, and the model answers strict JSON: per rule ``pass``,
``violates`` or ``unclear``, a reason and the visible evidence. Code then checks every
rule the model cites was sent (one repair, then exit 5); a rule it skipped is
``unclear``. Each verdict carries its citation, ``[PB-07, learnt in ep-...]``.

Without a model the result lists the rules that apply and says that no image was
judged: it never pretends to have looked.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scarwarden.answers.usage import usage_json
from scarwarden.answers.visual_send import Sent, prepare
from scarwarden.errors import Problem, UsageError
from scarwarden.files.input_policy import text_problem
from scarwarden.files.media import Image
from scarwarden.llm.client import ChatClient, ChatResponse, complete_json
from scarwarden.repo import MemoryRepo

VERDICTS = ("pass", "violates", "unclear")
#: What every model-less result says, word for word (docs/answers.md).
NOT_JUDGED = "No image was judged: no vision model is configured; these are the rules that apply."

SYSTEM = (
    "You audit one image against rules a team learnt from its own corrections. Judge only "
    "what is visible in the image. Reply with one JSON object and nothing else: "
    '{"verdicts": [{"rule": "<rule ID>", "verdict": "pass" | "violates" | "unclear", '
    '"reason": "<one sentence>", "evidence": "<what in the image shows it>"}]}, exactly one '
    'verdict per rule given, with the rule IDs exactly as given. Use "unclear" when the image '
    "cannot show whether the rule is kept; never cite a rule that was not given."
)


@dataclass(frozen=True)
class AuditRule:
    id: str
    title: str
    text: str
    episode_ids: tuple[str, ...]
    #: Why it was sent: ``visual`` (Applies to: images), ``task`` (recalled), or both.
    why: str

    @property
    def citation(self) -> str:
        return f"[{self.id}, learnt in {', '.join(self.episode_ids)}]"

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "episode_ids": list(self.episode_ids),
            "why": self.why,
            "citation": self.citation,
        }


@dataclass(frozen=True)
class Verdict:
    rule: AuditRule
    verdict: str
    reason: str
    evidence: str

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule.id,
            "verdict": self.verdict,
            "reason": self.reason,
            "evidence": self.evidence,
            "citation": self.rule.citation,
        }


@dataclass
class ImageAudit:
    source: str
    image: Image
    task: str
    rules: list[AuditRule]
    verdicts: list[Verdict] = field(default_factory=list)
    judged: bool = False
    model: str | None = None
    sent: Sent | None = None
    responses: list[ChatResponse] = field(default_factory=list)

    @property
    def violations(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == "violates"]

    def to_json(self) -> dict[str, Any]:
        return {
            "image": self.source,
            "sha256": self.image.sha256,
            "format": self.image.ext,
            "task": self.task,
            "judged": self.judged,
            "note": None if self.judged else NOT_JUDGED,
            "model": self.model,
            "rules": [r.to_json() for r in self.rules],
            "verdicts": [v.to_json() for v in self.verdicts],
            "violations": len(self.violations),
            "sent": self.sent.to_json() if self.sent else None,
            "usage": usage_json(self.responses),
        }


def applicable_rules(repo: MemoryRepo, task: str) -> list[AuditRule]:
    """The task's recalled rules (unlogged) and every active visual rule, visual first."""
    from scarwarden.files.playbook_edit import load_playbook
    from scarwarden.recall.engine import recall_task

    book = load_playbook(repo)
    recalled = {r.id for r in recall_task(repo, task, log=False).rules}
    out = [
        AuditRule(r.id, r.title, r.text, r.episode_ids, "visual+task" if r.id in recalled else "visual")
        for r in book.rules
        if r.visual
    ]
    seen = {r.id for r in out}
    for rule in book.rules:
        if rule.id in recalled and rule.id not in seen:
            out.append(AuditRule(rule.id, rule.title, rule.text, rule.episode_ids, "task"))
    return out


def audit_image(
    repo: MemoryRepo, image: Image, task: str, *, client: ChatClient | None, source: str = "<image>"
) -> ImageAudit:
    """Audit ``image`` for ``task``; with ``client=None``, the rules and no verdict."""
    if not task.strip():
        raise UsageError(
            "the task is empty", hint='scarwarden audit-image card.png --task "Beta launch banner"'
        )
    result = ImageAudit(source, image, task.strip(), applicable_rules(repo, task))
    # No vision model (a text-only provider) is no model at all for an image.
    if client is None or not result.rules or not repo.config.model.vision_model:
        return result
    result.sent = prepare(image, repo.config.media, source=source)
    result.model = repo.config.model.vision_model
    by_id = {r.id: r for r in result.rules}
    verdicts, responses = complete_json(
        client,
        messages(result.task, result.rules, result.sent),
        model=result.model,
        parse=lambda data: parse_verdicts(data, by_id),
        what="list of verdicts",
    )
    result.responses = responses
    result.verdicts = verdicts
    result.judged = True
    return result


def messages(task: str, rules: list[AuditRule], sent: Sent) -> list[dict[str, Any]]:
    """The request: the rules with their citations as text, the image as a data URL."""
    listed = "\n\n".join(
        f"{r.id}: {r.title}\n{r.text}\n(learnt in {', '.join(r.episode_ids)})" for r in rules
    )
    prompt = f"Task the image was made for: {task}\n\nRules ({len(rules)}):\n\n{listed}"
    return [
        {"role": "system", "content": SYSTEM},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": prompt},
                {"type": "image_url", "image_url": {"url": sent.data_url()}},
            ],
        },
    ]


def parse_verdicts(data: Any, rules: dict[str, AuditRule]) -> list[Verdict]:
    """The model's JSON as verdicts, in the order the rules were sent; ``ValueError``
    (sent back in the repair request) for anything malformed or a rule not sent."""
    items = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise ValueError('the reply must be an object with a "verdicts" list')
    found: dict[str, Verdict] = {}
    for number, item in enumerate(items, 1):
        if not isinstance(item, dict):
            raise ValueError(f"verdict {number} is not an object")
        rule_id, verdict = item.get("rule"), item.get("verdict")
        if not isinstance(rule_id, str) or rule_id not in rules:
            raise ValueError(
                f"verdict {number} cites {rule_id!r}, which is not one of the rules given "
                f"({', '.join(rules)}); cite only those"
            )
        if verdict not in VERDICTS:
            raise ValueError(f'verdict {number} ({rule_id}): "verdict" must be pass, violates or unclear')
        reason, evidence = item.get("reason"), item.get("evidence", "")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f'verdict {number} ({rule_id}) needs a "reason"')
        if not isinstance(evidence, str):
            raise ValueError(f'verdict {number} ({rule_id}): "evidence" must be text')
        # Printed on a terminal and recorded (--record): text the ledger could store.
        for name, text in (("reason", reason), ("evidence", evidence)):
            if (problem := text_problem(text)) is not None:
                raise ValueError(f'verdict {number} ({rule_id}): "{name}" {problem}')
        found[rule_id] = Verdict(rules[rule_id], verdict, reason.strip(), evidence.strip())
    return [
        found.get(rule_id) or Verdict(rule, "unclear", "the model gave no verdict for this rule", "")
        for rule_id, rule in rules.items()
    ]


def record_audit(
    repo: MemoryRepo, audit: ImageAudit, *, warn: Callable[[Problem], None] | None = None
) -> Any:
    """The audit as a new episode with the image attached (``--record``); ``warn``
    receives what ``privacy:`` warns about, recorded anyway (``add_episodes``')."""
    from scarwarden.answers.asking import task_tags
    from scarwarden.files.record import add_episodes
    from scarwarden.gate.door import gate_check

    lines = [f"{v.rule.id} {v.verdict}: {v.reason}" for v in audit.verdicts]
    data: dict[str, object] = {
        "task": f"Audit an image: {audit.task}",
        "action": f"audit-image with {audit.model}: {len(audit.verdicts)} rule(s) judged",
        "outcome": "\n".join(lines) or "no rule applied",
        "source": "outcome",
        "attachments": [audit.image.attachment],
    }
    if audit.rules:
        data["rules_applied"] = [r.id for r in audit.rules]
    tags = task_tags(audit.task)
    if tags:
        data["tags"] = tags
    check = gate_check(repo, "the audit")
    (episode,) = add_episodes(
        repo, [data], source="audit-image", images=[audit.image], check=check, warn=warn
    )
    return episode
