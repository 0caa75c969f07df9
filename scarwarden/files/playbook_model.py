"""The playbook's model: a rule, the playbook, and the headings that frame them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from scarwarden.errors import ValidationError
from scarwarden.files.playbook_sentences import Said, Source, sentence_sources
from scarwarden.files.rule_ids import mint_rule_id, rule_content

TITLE = "# Playbook"


RETIRED_HEADING = "## Retired"
#: A rule's field line: ``- Tags: ...``, ``- Learnt in: ...``, ``- Retired: ...``.
FIELD_RE = re.compile(r"^- (Tags|Learnt in|Sentences from|Applies to|Retired|Replaced by):(?: (.*?))?\s*$")
#: What ``- Applies to:`` may name (issue 19): a rule about images is a visual rule,
#: the one ``audit-image`` always sends along.
APPLIES_TO = ("images",)


#: A markdown (ATX) heading: '#'s then a space. "#launchday" at the start of a line is
#: a hashtag in rule text, not a heading (CommonMark agrees).
HEADING_RE = re.compile(r"^#{1,6}(?:[ \t]|$)")


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    text: str
    tags: tuple[str, ...]
    episode_ids: tuple[str, ...]
    retired: bool = False
    reason: str | None = None
    replaced_by: str | None = None
    #: 1-based line of the heading in the file it was parsed from (0 when built in code).
    line: int = field(default=0, compare=False)
    #: ``- Applies to:`` (issue 19): ``("images",)`` for a visual rule.
    applies_to: tuple[str, ...] = ()
    #: ``- Sentences from:``: which citations each sentence came from (issue 25).
    sources: tuple[Source, ...] = ()

    def said(self) -> list[Said]:
        """Every sentence of the text with the episodes it came from (an unmapped
        sentence: the rule's citations)."""
        return sentence_sources(self.text, self.sources, self.episode_ids)

    @property
    def visual(self) -> bool:
        """A rule about images (``- Applies to: images``)."""
        return "images" in self.applies_to

    @property
    def number(self) -> int:
        """The number of a sequential ID (``PB-07`` -> 7); 0 for a minted one."""
        suffix = self.id[3:]
        return int(suffix) if suffix.isdigit() else 0

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "id": self.id,
            "title": self.title,
            "text": self.text,
            "tags": list(self.tags),
            "episode_ids": list(self.episode_ids),
        }
        if self.applies_to:
            data["applies_to"] = list(self.applies_to)
        if self.sources:
            data["sentences_from"] = {
                str(s.number): {"episode_ids": list(s.episode_ids), "model": s.model} for s in self.sources
            }
        if self.retired:
            data["retired"] = True
            data["reason"] = self.reason
            data["replaced_by"] = self.replaced_by
        return data


@dataclass(frozen=True)
class Playbook:
    rules: tuple[Rule, ...] = ()
    retired: tuple[Rule, ...] = ()
    #: Free text between the title and the first rule, kept verbatim.
    preamble: str = ""

    def get(self, rule_id: str) -> Rule | None:
        for rule in self.rules:
            if rule.id == rule_id:
                return rule
        for rule in self.retired:
            if rule.id == rule_id:
                return rule
        return None

    def all_rules(self) -> tuple[Rule, ...]:
        return self.rules + self.retired

    def all_ids(self) -> set[str]:
        return {rule.id for rule in self.all_rules()}

    def next_id(self) -> str:
        """The next sequential rule ID (the original ``PB-NN`` form); retired IDs count,
        so they are never reused. Tools mint with :meth:`new_id` instead."""
        highest = max((rule.number for rule in self.all_rules()), default=0)
        return f"PB-{highest + 1:02d}"

    def new_id(self, title: str, text: str, tags: Iterable[str], episode_ids: Iterable[str]) -> str:
        """A new rule ID (``PB-7k2m9q4x``), a hash of the rule's content, that no rule
        here, active or retired, has: what ``rule add`` and the distillers mint, so two
        branches adding different rules never take the same ID."""
        return mint_rule_id(self.all_ids(), rule_content(title, text, tags, episode_ids))

    def minted(self, rule: Rule) -> Rule:
        """``rule`` (built under any placeholder ID) with a new ID minted from its
        content as it will be written: :meth:`new_id`."""
        return replace(rule, id=self.new_id(rule.title, rule.text, rule.tags, rule.episode_ids))

    def cited_episode_ids(self) -> set[str]:
        return {ep for rule in self.all_rules() for ep in rule.episode_ids}

    def with_rule(self, rule: Rule) -> Playbook:
        """A copy with ``rule`` added, or replacing the active rule with its ID."""
        rules = list(self.rules)
        for i, existing in enumerate(rules):
            if existing.id == rule.id:
                rules[i] = rule
                break
        else:
            rules.append(rule)
        return replace(self, rules=tuple(rules))

    def with_retired(self, rule_id: str, reason: str, replaced_by: str | None) -> Playbook:
        """A copy with an active rule moved to the Retired section."""
        target = self.get(rule_id)
        if target is None or target.retired:
            raise ValidationError(f"{rule_id} is not an active rule")
        retired_rule = replace(target, retired=True, reason=reason, replaced_by=replaced_by)
        return replace(
            self,
            rules=tuple(r for r in self.rules if r.id != rule_id),
            retired=self.retired + (retired_rule,),
        )
