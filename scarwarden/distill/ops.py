"""Delta operations on the playbook, and the provenance gate that applies them.

Both distillers (the model and the offline one) produce the same three operations:

* ``add``: title, text, tags, episode_ids (and an optional ``key`` other operations
  in the same reply may use to refer to the new rule);
* ``update``: rule_id, optionally new title/text/tags, episode_ids to add;
* ``retire``: rule_id, reason, optionally replaced_by and supporting episode_ids.

:func:`parse_operations` checks the *shape* (a wrong shape goes back to the model for
one repair). :func:`apply_operations` is the gate, in code, never in a prompt: every
cited ID is checked against the ledger; IDs that are not there are removed; an
operation left without evidence is dropped; an operation on an unknown or retired rule
is dropped. Each removal is reported so it reaches stdout and the commit body.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import replace

from scarwarden.distill.operations import (
    KINDS,
    NOTHING_TO_CHANGE,
    Change,
    Drop,
    GateResult,
    Operation,
    parse_operations,
    slug,
)
from scarwarden.distill.visual import applies_to

__all__ = [
    "KINDS",
    "NOTHING_TO_CHANGE",
    "Change",
    "Drop",
    "GateResult",
    "Operation",
    "apply_operations",
    "parse_operations",
    "slug",
]
from scarwarden.errors import ValidationError
from scarwarden.files import playbook as pb
from scarwarden.files.episode_fields import MAX_TAG_CHARS
from scarwarden.files.episodes import EPISODE_ID_RE, RULE_ID_RE
from scarwarden.files.playbook_edit import MAX_RULE_CHARS, title_from_text
from scarwarden.files.playbook_sentences import Source
from scarwarden.files.playbook_sentences import split as split_sentences
from scarwarden.files.rule_ids import DRAFT_ID
from scarwarden.files.rule_ids import canonical as canonical_rule_id
from scarwarden.text import flat_words

# -- shape ------------------------------------------------------------------------------


# -- the gate ---------------------------------------------------------------------------


def _one_line(text: str) -> str:
    """Rule text as one paragraph that cannot fake a heading or a field line."""
    flat = " ".join(text.split())
    return flat.lstrip("#-* ").strip()


REASON = "the retirement's reason"
_MENTION = re.compile(r"\bep-[0-9a-z][0-9a-z-]{2,40}\b")


class _Gate:
    def __init__(self, playbook: pb.Playbook, ledger: Collection[str]) -> None:
        self.playbook = playbook
        self.ledger = ledger
        self.result = GateResult(playbook)
        self.keys: dict[str, str] = {}  # add-op key -> the rule ID it received

    def drop(self, op: Operation, reason: str, ids: tuple[str, ...] = ()) -> None:
        self.result.drops.append(Drop(op.label(), reason, ids, whole=True))

    def citations(self, op: Operation) -> tuple[str, ...]:
        """The operation's citations that resolve; report the ones that do not."""
        valid: list[str] = []
        bad_format: list[str] = []
        missing: list[str] = []
        for ep in dict.fromkeys(op.episode_ids):
            if not EPISODE_ID_RE.match(ep):
                bad_format.append(ep)
            elif ep in self.ledger:
                valid.append(ep)
            else:
                missing.append(ep)
        if valid:
            if missing:
                self.result.drops.append(Drop(op.label(), "not in the ledger", tuple(missing), False))
            if bad_format:
                self.result.drops.append(Drop(op.label(), "not an episode ID", tuple(bad_format), False))
        return tuple(valid)

    def no_evidence(self, op: Operation) -> str:
        bad = list(op.episode_ids)
        if not bad:
            return "it cites no episode (no provenance, no rule)"
        verb = "is" if len(bad) == 1 else "are"
        return f"no valid citation left ({', '.join(bad)} {verb} not in the ledger)"

    def words(self, op: Operation, value: str) -> str:
        """Free text of a rule, flattened; an episode ID it mentions must exist too,
        or a reader would take the mention for evidence."""
        flat = _one_line(value)
        unknown = sorted({m for m in _MENTION.findall(flat) if m not in self.ledger})
        if unknown:
            flat = _MENTION.sub(
                lambda m: m.group(0) if m.group(0) in self.ledger else "[unknown episode]", flat
            )
            self.result.drops.append(
                Drop(
                    op.label(),
                    "mentioned in the text but not in the ledger; replaced by [unknown episode]",
                    tuple(unknown),
                    False,
                )
            )
        return flat

    def sources(
        self, op: Operation, sources: tuple[Source, ...], text: str, cited: tuple[str, ...]
    ) -> tuple[Source, ...]:
        """The sentence map, kept to the rule's citations and sentences; an entry left
        with no episode is dropped and reported (its sentence is then from the rule's
        citations, and the support check reads it so)."""
        count = len(split_sentences(text))
        kept: list[Source] = []
        for source in sources:
            ids = tuple(ep for ep in source.episode_ids if ep in cited)
            stray = tuple(ep for ep in source.episode_ids if ep not in cited)
            if stray:
                self.result.drops.append(
                    Drop(op.label(), f"named for sentence {source.number} but not cited", stray, False)
                )
            if ids and source.number <= count:
                kept.append(Source(source.number, ids, source.model))
        return tuple(kept)

    def resolve(self, ref: str | None) -> str | None:
        """A rule ID, or the ID given to an earlier ``add`` with that ``key``."""
        if ref is None or not ref.strip():
            return None
        ref = ref.strip()
        rule_id = canonical_rule_id(ref)
        if self.playbook.get(rule_id) is not None:  # a key spelled "PB-02" shadows no rule
            return rule_id
        return self.keys.get(ref.lower(), rule_id)

    def tags(self, op: Operation, tags: tuple[str, ...]) -> list[str]:
        out: list[str] = []
        for tag in tags:
            s = slug(tag)
            if s and len(s) <= MAX_TAG_CHARS and s not in out:
                out.append(s)
            elif not s:
                self.result.drops.append(Drop(op.label(), f"tag {tag!r} is not a slug; left out", (), False))
            elif len(s) > MAX_TAG_CHARS:  # the tag alone, not the rule (make_rule refuses it)
                why = f"tag {s[:20]!r}... is {len(s):,} characters, over {MAX_TAG_CHARS}; left out"
                self.result.drops.append(Drop(op.label(), why, (), False))
        return out

    def too_long(self, op: Operation, *fields: tuple[str, str]) -> bool:
        """Words over the bound ``rule add`` keeps for a rule's are dropped, as it refuses them."""
        for name, value in fields:
            if len(value) > MAX_RULE_CHARS:
                self.drop(op, f"{name} is {len(value):,} characters; the limit is {MAX_RULE_CHARS:,}")
                return True
        return False

    def repeats(self, op: Operation, text: str, cited: tuple[str, ...]) -> bool:
        """An add saying word for word what an active rule says is no second rule."""
        said = text.lower()  # each rule flattened once: 0.7 ms an add at 10k rules, not 8.5
        same = next((r for r in self.playbook.rules if flat_words(r.text) == said), None)
        if same is None:
            return False
        if set(cited) <= set(same.episode_ids):
            why = f"{NOTHING_TO_CHANGE}: {same.id} says this word for word and cites these episodes"
            self.result.drops.append(Drop(op.label(), why))
        else:
            self.drop(op, f"{same.id} says this word for word; an update of it would add the citations")
        return True

    def active(self, op: Operation) -> pb.Rule | None:
        rule_id = self.resolve(op.rule_id)
        rule = self.playbook.get(rule_id) if rule_id else None
        if rule is None:
            self.drop(op, f"no rule {op.rule_id} in the playbook")
            return None
        if rule.retired:
            self.drop(op, f"{rule.id} is retired (retired rules are not changed)")
            return None
        return rule

    def add(self, op: Operation) -> None:
        cited = self.citations(op)
        if not cited:
            self.drop(op, self.no_evidence(op))
            return
        text = self.words(op, op.text or "")
        title = self.words(op, op.title or "") or title_from_text(text)
        if self.too_long(op, ("the rule's title", title), ("the rule's text", text)) or self.repeats(
            op, text, cited
        ):
            return
        kinds = op.applies_to if op.applies_to is not None else applies_to(title, text)
        try:
            rule = pb.make_rule(
                DRAFT_ID,
                title,
                text,
                self.tags(op, op.tags or ()),
                cited,
                applies_to=kinds,
                sources=self.sources(op, op.sources or (), text, cited),
            )
        except ValidationError as exc:
            self.drop(op, exc.message)
            return
        rule = self.playbook.minted(rule)
        rule_id = rule.id
        self.playbook = self.playbook.with_rule(rule)
        if op.key:
            self.keys[op.key.strip().lower()] = rule_id
        self.result.changes.append(Change("add", rule_id, rule.title, cited, lessons=op.lessons))

    def update(self, op: Operation) -> None:
        rule = self.active(op)
        if rule is None:
            return
        cited = self.citations(op)
        if not cited:
            self.drop(
                op,
                self.no_evidence(op) if op.episode_ids else "it cites no episode (an update needs evidence)",
            )
            return
        title = self.words(op, op.title) if op.title else rule.title
        text = self.words(op, op.text) if op.text else rule.text
        if self.too_long(op, ("the rule's title", title), ("the rule's text", text)):
            return
        tags = self.tags(op, op.tags) if op.tags is not None else list(rule.tags)
        added = tuple(ep for ep in cited if ep not in rule.episode_ids)
        if op.sources is not None:
            sources = self.sources(op, op.sources, text, rule.episode_ids + added)
        else:  # a new text without a map: its sentences are from the rule's citations
            sources = rule.sources if text == rule.text else ()
        kinds = op.applies_to if op.applies_to is not None else applies_to(title, text)
        try:
            new = pb.make_rule(
                rule.id,
                title,
                text,
                tags,
                rule.episode_ids + added,
                applies_to=rule.applies_to or kinds,
                sources=sources,
            )
        except ValidationError as exc:
            self.drop(op, exc.message)
            return
        what = [
            name
            for name, old, now in (
                ("title", rule.title, new.title),
                ("text", rule.text, new.text),
                ("tags", rule.tags, new.tags),
                ("sentence map", rule.sources, new.sources),
            )
            if old != now
        ]
        if not what and not added:  # the rule already says this and cites it
            self.result.drops.append(
                Drop(op.label(), f"{NOTHING_TO_CHANGE}: the rule already says this and cites these episodes")
            )
            return
        self.playbook = self.playbook.with_rule(new)
        detail = ", ".join(f"{w} changed" for w in what)
        before, after = (rule.text, new.text) if "text" in what else (None, None)
        self.result.changes.append(
            Change(
                "update", rule.id, new.title, added, detail, before, after, _lessons(op, new.text, rule.text)
            )
        )

    def supersede(self, op: Operation) -> None:
        """Retire a rule a newer episode contradicts, replaced by a new rule (its
        still-supporting episodes plus the contradicting one): newer evidence wins.
        The new rule is made exactly as ``add`` makes one."""
        rule = self.active(op)
        if rule is None:
            return
        cited = self.citations(op)
        if not cited:
            self.drop(op, self.no_evidence(op) + "; a supersede must cite the contradicting episode")
            return
        if self.too_long(op, (REASON, _one_line(op.reason or ""))):
            return
        tags = op.tags if op.tags is not None else rule.tags
        made = len(self.result.changes)
        self.add(replace(op, kind="add", key=None, episode_ids=cited, tags=tags))
        if len(self.result.changes) == made:
            return  # the add was dropped, and reported
        new = self.result.changes.pop()
        reason = self.words(op, op.reason or "") or "Superseded by newer evidence"
        self.playbook = self.playbook.with_retired(rule.id, reason, new.rule_id)
        after = self.playbook.get(new.rule_id)
        self.result.changes.append(
            Change(
                "supersede",
                rule.id,
                rule.title,
                cited,
                reason,
                rule.text,
                after.text if after else None,
                _lessons(op, after.text if after else "", rule.text),
                replaced_by=new.rule_id,
            )
        )

    def retire(self, op: Operation) -> None:
        rule = self.active(op)
        if rule is None:
            return
        cited = self.citations(op) if op.episode_ids else ()
        replaced_by = self.resolve(op.replaced_by)
        if replaced_by is not None:
            target = self.playbook.get(replaced_by)
            if (
                not RULE_ID_RE.match(replaced_by)
                or target is None
                or target.retired
                or replaced_by == rule.id
            ):
                self.result.drops.append(
                    Drop(
                        op.label(), f"replaced_by {op.replaced_by} is not an active rule; left out", (), False
                    )
                )
                replaced_by = None
        if not cited and replaced_by is None:
            self.drop(
                op,
                "neither a valid episode nor a replacing rule supports it"
                + (f" ({', '.join(op.episode_ids)} not in the ledger)" if op.episode_ids else ""),
            )
            return
        given = self.words(op, op.reason or "")
        if self.too_long(op, (REASON, given)):
            return
        # The evidence goes into the recorded reason: the retired rule keeps its own
        # "Learnt in", and the reason says what showed it wrong.
        reason = given + (f" (evidence: {', '.join(cited)})" if cited else "")
        self.playbook = self.playbook.with_retired(rule.id, reason, replaced_by)
        detail = given + (f"; replaced by {replaced_by}" if replaced_by else "")
        self.result.changes.append(Change("retire", rule.id, rule.title, cited, detail))


def _lessons(op: Operation, after: str, before: str) -> tuple[tuple[str, str], ...]:
    """The distiller's own account when it gave one; else the sentences the new text
    adds (a model does not say which episode taught which sentence)."""
    if op.lessons:
        return op.lessons
    old = set(_sentences(before))
    added = [s for s in _sentences(after) if s not in old]
    return (("new text", " ".join(added)),) if added else ()


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s]


def apply_operations(playbook: pb.Playbook, ops: list[Operation], ledger: Collection[str]) -> GateResult:
    """Apply ``ops`` in order to ``playbook``, admitting only what the ledger supports.

    ``ledger`` is every episode ID in the tree the result will be committed on; a
    citation outside it can never reach the returned playbook.
    """
    gate = _Gate(playbook, ledger)
    for op in ops:
        getattr(gate, op.kind)(op)
    gate.result.playbook = gate.playbook
    # Belt and braces: whatever happened above, nothing this run cited may lie outside
    # the ledger. A failure here is a bug in this module, never a model's doing.
    before = {rule.id for rule in playbook.all_rules()}
    for change in gate.result.changes:
        rule = gate.playbook.get(change.rule_id)
        cited = set(change.episode_ids) | (set(rule.episode_ids) if rule and rule.id not in before else set())
        stray = sorted(ep for ep in cited if ep not in ledger)
        if stray:
            raise AssertionError(f"provenance gate bypassed: {change.rule_id} cites {stray}")
    return gate.result
