"""The distillers' operations (add, update, retire, supersede), their results, and
checking a reply's shape (:func:`parse_operations`). Applying them under the provenance
rules is :mod:`scarwarden.distill.ops`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from scarwarden.files import playbook as pb
from scarwarden.files.input_policy import text_problem
from scarwarden.files.playbook_sentences import Source

KINDS = ("add", "update", "retire", "supersede")


#: How a no-op update is reported (a report, not a refusal: nothing is retried).
NOTHING_TO_CHANGE = "nothing to change"


@dataclass(frozen=True)
class Operation:
    kind: str  # "add" | "update" | "retire"
    rule_id: str | None = None
    title: str | None = None
    text: str | None = None
    tags: tuple[str, ...] | None = None
    episode_ids: tuple[str, ...] = ()
    reason: str | None = None
    replaced_by: str | None = None
    key: str | None = None
    #: (episode ID, the lesson it added or why none): the offline distiller's account.
    lessons: tuple[tuple[str, str], ...] = ()
    #: Which citations each sentence of ``text`` came from (issue 25); ``None``: not said.
    sources: tuple[Source, ...] | None = None
    #: ``("images",)`` when the lesson came from attached images; ``None``: from the words.
    applies_to: tuple[str, ...] | None = None

    def label(self) -> str:
        """How reports name this operation: ``add "Title"`` or ``update PB-03``."""
        if self.kind == "add":
            return f'add "{_short(self.title or self.text or "")}"'
        return f"{self.kind} {self.rule_id}"

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"op": self.kind}
        for name in ("rule_id", "title", "text", "reason", "replaced_by", "key"):
            value = getattr(self, name)
            if value is not None:
                data[name] = value
        if self.tags is not None:
            data["tags"] = list(self.tags)
        data["episode_ids"] = list(self.episode_ids)
        return data


@dataclass(frozen=True)
class Change:
    """One change that reached the playbook."""

    kind: str
    rule_id: str
    title: str
    episode_ids: tuple[str, ...]  # add: cited; update: added; retire: evidence; supersede: cited
    detail: str = ""
    #: The rule's text before and after (update with new text, supersede).
    before: str | None = None
    after: str | None = None
    #: (episode ID, the lesson it added, or why it added none).
    lessons: tuple[tuple[str, str], ...] = ()
    #: supersede: the new rule replacing ``rule_id``.
    replaced_by: str | None = None

    def describe(self) -> str:
        verbs = {"add": "Added", "update": "Updated", "retire": "Retired", "supersede": "Superseded"}
        verb = verbs[self.kind]
        line = f"{verb} {self.rule_id}: {self.title}"
        if self.replaced_by:
            line += f" by {self.replaced_by}"
        if self.detail:
            line += f" ({self.detail})"
        if self.episode_ids:
            what = {"add": "learnt in", "update": "now also learnt in", "retire": "evidence"}.get(
                self.kind, "learnt in"
            )
            line += f"\n  {what} {', '.join(self.episode_ids)}"
        if self.before is not None and self.after is not None and self.before != self.after:
            line += f"\n  before: {self.before}\n  after:  {self.after}"
        for episode_id, lesson in self.lessons:
            line += f"\n  {episode_id}: {lesson}"
        return line

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.kind,
            "rule_id": self.rule_id,
            "title": self.title,
            "episode_ids": list(self.episode_ids),
            "detail": self.detail,
            "before": self.before,
            "after": self.after,
            "lessons": [{"episode_id": ep, "lesson": lesson} for ep, lesson in self.lessons],
            "replaced_by": self.replaced_by,
        }


@dataclass(frozen=True)
class Drop:
    """Something the gate refused: a citation removed, or a whole operation dropped."""

    operation: str  # Operation.label()
    reason: str
    episode_ids: tuple[str, ...] = ()
    whole: bool = True  # False: only the citations were removed, the operation stands

    def describe(self) -> str:
        if self.whole:
            return f"dropped {self.operation}: {self.reason}"
        if not self.episode_ids:  # a part left out (a tag, a replaced_by)
            return f"{self.operation}: {self.reason}"
        ids = ", ".join(self.episode_ids)
        plural = "s" if len(self.episode_ids) > 1 else ""
        return f"removed citation{plural} {ids} from {self.operation}: {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "operation": self.operation,
            "reason": self.reason,
            "episode_ids": list(self.episode_ids),
            "whole_operation": self.whole,
        }


@dataclass
class GateResult:
    playbook: pb.Playbook
    changes: list[Change] = field(default_factory=list)
    drops: list[Drop] = field(default_factory=list)


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _str(value: Any, where: str, *, required: bool = False, one_line: bool = False) -> str | None:
    if value is None:
        if required:
            raise ValueError(f"{where} is missing")
        return None
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise ValueError(f"{where} is empty")
    problem = text_problem(value)  # the input policy: the model's text is input like any other
    if problem is not None:
        raise ValueError(f"{where} {problem}")
    # An ID (a rule's, an episode's, a key) with a line break went raw into the drop
    # report, and in the commit message made lines of its own: a forged
    # "Scarwarden-Distilled-Episode:" line marked an episode distilled.
    if one_line and ("\n" in value.strip() or "\t" in value):
        raise ValueError(f"{where} must be one line, got {value[:60]!r}")
    return value


def _str_list(value: Any, where: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):  # a lone ID or a comma-separated list: say so, do not guess
        raise ValueError(f"{where} must be a JSON list of strings, got a string")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"{where} must be a JSON list of strings")
    return tuple(v.strip() for v in value if _str(v, where, one_line=True) and v.strip())


def parse_operations(data: Any) -> list[Operation]:
    """Check the reply's shape: ``{"operations": [...]}``; raise ValueError saying what is wrong."""
    if not isinstance(data, dict) or "operations" not in data:
        raise ValueError('the reply must be a JSON object of the form {"operations": [...]}')
    raw_ops = data["operations"]
    if not isinstance(raw_ops, list):
        raise ValueError('"operations" must be a JSON list')
    ops: list[Operation] = []
    for i, raw in enumerate(raw_ops):
        where = f"operations[{i}]"
        if not isinstance(raw, dict):
            raise ValueError(f"{where} must be a JSON object")
        kind = raw.get("op", raw.get("type"))
        if kind not in KINDS:
            raise ValueError(f'{where}.op must be "add", "update", "retire" or "supersede", got {kind!r}')
        rule_id = _str(
            raw.get("rule_id", raw.get("id")), f"{where}.rule_id", required=kind != "add", one_line=True
        )
        ids = _str_list(raw.get("episode_ids"), f"{where}.episode_ids")
        if kind == "add" and ids is None:
            raise ValueError(f"{where}.episode_ids is missing (every new rule cites its episodes)")
        ops.append(
            Operation(
                kind=kind,
                rule_id=rule_id.strip() if rule_id else None,
                title=_str(raw.get("title"), f"{where}.title"),
                text=_str(raw.get("text"), f"{where}.text", required=kind in ("add", "supersede")),
                tags=_str_list(raw.get("tags"), f"{where}.tags"),
                episode_ids=ids or (),
                reason=_str(raw.get("reason"), f"{where}.reason", required=kind == "retire"),
                replaced_by=_str(raw.get("replaced_by"), f"{where}.replaced_by", one_line=True),
                key=_str(raw.get("key"), f"{where}.key", one_line=True),
                sources=_sources(raw.get("sentences_from"), f"{where}.sentences_from"),
            )
        )
    return ops


def _sources(value: Any, where: str) -> tuple[Source, ...] | None:
    """``{"1": ["ep-a"], "2": ["ep-b"]}``: which episodes each sentence of the text came
    from (issue 25), marked as a model's (it may generalise)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f'{where} must be a JSON object such as {{"1": ["ep-..."]}}')
    out: list[Source] = []
    for key, ids in value.items():
        if not str(key).strip().isdigit() or int(key) < 1:
            raise ValueError(f"{where}: {key!r} is not a sentence number (1, 2, ...)")
        listed = _str_list(ids, f"{where}[{key!r}]") or ()
        if int(key) in {source.number for source in out}:  # "1" and "01": the playbook refuses the map
            raise ValueError(f"{where}: sentence {int(key)} is given twice")
        out.append(Source(int(key), tuple(dict.fromkeys(listed)), model=True))
    return tuple(sorted(out, key=lambda s: s.number))


def slug(tag: str) -> str:
    """A tag as a slug (``"Subject Line"`` -> ``subject-line``); ``""`` if nothing is left."""
    return re.sub(r"[^a-z0-9]+", "-", tag.lower()).strip("-")
