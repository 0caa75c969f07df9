"""What each correction teaches, placed in the playbook by the offline distiller.

:mod:`.offline` groups the new episodes and finds the rule each group restates; this
module decides, one episode at a time (oldest first), what its correction adds:

* **already said**: most of its stems are in the rule (``claims.covered``): the episode
  is cited, the text is left alone;
* **a new lesson**: the correction becomes a sentence of the rule's text (its new tags
  too), never a duplicate sentence; when the rule already holds
  :data:`MAX_SENTENCES` sentences the lesson starts a rule of its own instead;
* **a contradiction** (:mod:`scarwarden.files.claims`): newer evidence wins. Against
  a rule's committed text, the rule is **superseded**: retired with the reason and
  ``Replaced by:`` a new rule whose text drops the contradicted clause and states the
  new one, citing the old rule's episodes that still support it plus the new one.
  Against a sentence added earlier in the same run, the later one replaces it, both
  stay cited, and the reversal is flagged. When the detector is unsure, the episode is
  not cited by the rule at all; the flag goes to the commit body (and a
  ``Scarwarden-Contradiction:`` line that ``check --all`` and ``review`` read back).

Everything is deterministic: same episodes, same playbook, same operations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from scarwarden.distill.ops import Operation, slug
from scarwarden.files import claims
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_edit import title_from_text

#: Most sentences in a rule the offline distiller writes or grows.
MAX_SENTENCES = 4
#: Most tags a rule gets from the offline distiller (a rule may have more by hand).
MAX_TAGS = 6

Loader = Callable[[list[str]], list[Episode]]


@dataclass(frozen=True)
class Flag:
    """A contradiction found: decided (superseded, reversed) or left for a human."""

    rule: str  # a rule ID, or the title of a rule added in this run
    episode_id: str
    reason: str
    decided: bool

    def describe(self) -> str:
        verb = "contradicts" if self.decided else "may contradict"
        return f"{self.episode_id} {verb} {self.rule}: {self.reason}"

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "episode_id": self.episode_id,
            "reason": self.reason,
            "decided": self.decided,
        }


@dataclass
class Target:
    """A rule as this run grows it: an existing one (``base``) or a new one."""

    base: pb.Rule | None
    sentences: list[str]
    tags: list[str]
    title: str = ""
    #: Sentence -> the episode of this run that wrote it (absent: the committed text).
    written_by: dict[str, str] = field(default_factory=dict)
    cites: list[str] = field(default_factory=list)
    lessons: list[tuple[str, str]] = field(default_factory=list)
    #: Contradictions with the committed text: the rule is superseded.
    overruled: list[tuple[str, claims.Contradiction]] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def label(self) -> str:
        return self.base.id if self.base else f'new rule "{self.title}"'


def _lesson(ep: Episode) -> str:
    return claims.as_sentence(str(ep.get("correction") or ""))


def _tags_of(episodes: Iterable[Episode]) -> list[str]:
    counts: dict[str, int] = {}
    for ep in episodes:
        for tag in ep.tags:
            counts[tag] = counts.get(tag, 0) + 1
    first = {t: i for i, t in enumerate(counts)}
    return sorted(counts, key=lambda t: (-counts[t], first[t]))


def _news(sentence: str, known: str) -> str:
    """The parts (``;``-clauses) of ``sentence`` that ``known`` does not already say,
    as a sentence; "" when it says them all."""
    kept: list[str] = []
    for part in (p.strip().rstrip(".!?") for p in sentence.split(";")):
        if part and not claims.covered(part, known + " " + " ".join(kept)):
            kept.append(part)
    return claims.as_sentence("; ".join(kept)) if kept else ""


class Planner:
    """Places each episode's lesson; :meth:`operations` turns the result into ops."""

    def __init__(self, playbook: pb.Playbook, load: Loader | None = None) -> None:
        self.playbook = playbook
        self.load = load
        self.targets: dict[str, Target] = {}  # rule ID or "new-N" -> target
        self.flags: list[Flag] = []
        self.flagged_only: list[str] = []  # episodes cited nowhere, only flagged
        self.reviewers: dict[str, object] = {}  # episode ID -> corrected_by

    def _target(self, rule_id: str) -> Target:
        if rule_id not in self.targets:
            rule = self.playbook.get(rule_id)
            assert rule is not None and not rule.retired
            self.targets[rule_id] = Target(rule, claims.sentences(rule.text), list(rule.tags), rule.title)
        return self.targets[rule_id]

    def _new(self, ep: Episode, tags: list[str]) -> Target:
        sentence = _lesson(ep)
        target = Target(None, [sentence], tags[:MAX_TAGS], title_from_text(sentence, clause=True))
        target.written_by[sentence] = ep.id
        target.cites.append(ep.id)
        target.lessons.append((ep.id, sentence))
        self.targets[f"new-{len(self.targets)}"] = target
        return target

    def _related(self, tags: set[str], matched: str | None) -> list[Target]:
        """The rules a group could contradict: the matched one, then any sharing two tags
        with it (one shared tag, "ticket", is not a shared subject)."""
        out = [self._target(matched)] if matched else []
        for rule in self.playbook.rules:
            if rule.id != matched and len(tags & set(rule.tags)) >= 2:
                out.append(self._target(rule.id))
        out += [
            t
            for t in self.targets.values()
            if t.base is None and len(tags & set(t.tags)) >= 2 and t not in out
        ]
        return out

    def place(self, group: list[Episode], matched: str | None, tags: list[str] | None = None) -> None:
        """Place a group's lessons (oldest first) in ``matched`` or a new rule
        (tagged ``tags``, by default the group's most frequent tags)."""
        tags = tags if tags is not None else _tags_of(group)
        home = self._target(matched) if matched else None
        for ep in group:
            self.reviewers[ep.id] = ep.get("corrected_by")
            sentence = _lesson(ep)
            if self._contradicts(ep, sentence, self._related(set(tags) | set(ep.tags), matched)):
                continue
            if home is None:
                home = self._new(ep, tags)
                continue
            self._grow(home, ep, sentence, tags)

    def _contradicts(self, ep: Episode, sentence: str, related: list[Target]) -> bool:
        """Handle a contradiction with a related rule; False when there is none."""
        for target in related:
            for old in list(target.sentences):
                found = claims.contradiction(old, sentence)
                if found is None:
                    continue
                if not found.clear:
                    self.flags.append(Flag(target.label(), ep.id, found.reason, False))
                    self.flagged_only.append(ep.id)
                    return True
                self._replace(target, old, found, ep, sentence)
                return True
        return False

    def _replace(
        self, target: Target, old: str, found: claims.Contradiction, ep: Episode, sentence: str
    ) -> None:
        """Newer evidence wins: drop the contradicted clause, state the new lesson."""
        index = target.sentences.index(old)
        kept = claims.without(old, found.old)
        if kept:
            target.sentences[index] = kept
        else:
            del target.sentences[index]
        target.sentences.append(sentence)
        earlier = target.written_by.get(old)
        target.written_by[sentence] = ep.id
        target.cites.append(ep.id)
        target.lessons.append((ep.id, sentence))
        for tag in ep.tags:
            if tag not in target.tags and len(target.tags) < MAX_TAGS:
                target.tags.append(tag)
        if earlier is None and target.base is not None:
            target.overruled.append((ep.id, found))
            self.flags.append(Flag(target.label(), ep.id, f"{found.reason}; superseded", True))
        else:
            reviewer = ""
            if earlier is not None and self._same_reviewer(earlier, ep):
                reviewer = f" (the same reviewer, {ep.get('corrected_by')})"
            self.flags.append(
                Flag(target.label(), ep.id, f"{found.reason}; reverses {earlier}{reviewer}, later wins", True)
            )
        if target.base is None and index == 0:
            target.title = title_from_text(target.text, clause=True)

    def _same_reviewer(self, earlier: str, ep: Episode) -> bool:
        who = ep.get("corrected_by")
        return bool(who) and self.reviewers.get(earlier) == who

    def _grow(self, target: Target, ep: Episode, sentence: str, tags: list[str]) -> None:
        sentence = _news(sentence, f"{target.title} {target.text}")
        if not sentence:
            target.cites.append(ep.id)
            target.lessons.append((ep.id, f"already said by {target.label()}"))
            return
        if len(target.sentences) >= MAX_SENTENCES:
            if target.base is None:  # a new rule quotes at most four corrections
                target.cites.append(ep.id)
                target.lessons.append(
                    (ep.id, f"not quoted: {target.label()} already has {MAX_SENTENCES} sentences")
                )
            else:  # a full reviewed rule: the lesson starts a rule of its own
                self._new(ep, list(ep.tags) or tags)
            return
        target.sentences.append(sentence)
        target.written_by[sentence] = ep.id
        target.cites.append(ep.id)
        target.lessons.append((ep.id, sentence))
        for tag in ep.tags:
            if tag not in target.tags and len(target.tags) < MAX_TAGS:
                target.tags.append(slug(tag))

    # -- operations ---------------------------------------------------------------------

    def operations(self) -> list[Operation]:
        """Updates and supersedes in playbook order, then new rules in creation order."""
        order = {rule.id: i for i, rule in enumerate(self.playbook.rules)}
        grown = [t for t in self.targets.values() if t.base is not None and t.cites]
        ops = [self._changed(t) for t in sorted(grown, key=lambda t: order[t.base.id if t.base else ""])]
        for target in self.targets.values():
            if target.base is None:
                ops.append(
                    Operation(
                        "add",
                        title=target.title,
                        text=target.text,
                        tags=tuple(target.tags),
                        episode_ids=tuple(dict.fromkeys(target.cites)),
                        lessons=tuple(target.lessons),
                    )
                )
        return ops

    def _changed(self, target: Target) -> Operation:
        base = target.base
        assert base is not None
        if target.overruled:
            return self._supersede(target, base)
        return Operation(
            "update",
            rule_id=base.id,
            text=target.text if target.text != claims.clean(base.text) else None,
            tags=tuple(target.tags) if tuple(target.tags) != base.tags else None,
            episode_ids=tuple(dict.fromkeys(target.cites)),
            lessons=tuple(target.lessons),
        )

    def _supersede(self, target: Target, base: pb.Rule) -> Operation:
        """The replacing rule cites the old rule's episodes that still support it."""
        gone: list[str] = []
        if self.load is not None:
            for old in self.load(list(base.episode_ids)):
                found = claims.contradiction(target.text, _lesson(old)) if _lesson(old) else None
                if found is not None and found.clear:
                    gone.append(old.id)
        still = [ep for ep in base.episode_ids if ep not in gone]
        why = "; ".join(f"contradicted by {ep} ({c.reason})" for ep, c in target.overruled)
        if gone:
            verb = "is" if len(gone) == 1 else "are"
            why += f"; {', '.join(gone)} taught the old wording and {verb} not cited"
        retitle = any(claims.contradiction(base.title, s) for s in target.sentences)
        return Operation(
            "supersede",
            rule_id=base.id,
            title=title_from_text(target.text, clause=True) if retitle else base.title,
            text=target.text,
            tags=tuple(target.tags),
            episode_ids=tuple(dict.fromkeys(still + target.cites)),
            reason=f"Superseded: {why}",
            lessons=tuple(target.lessons),
        )
