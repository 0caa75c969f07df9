"""One rule per lesson: where each correction sentence goes (the offline distiller).

Each correction is read as whole sentences (:mod:`.lesson_text`), oldest episode
first. A sentence is compared, by its content stems with identifiers, numbers, dates
and amounts masked, with every sentence of the playbook and of this run:

* **a contradiction** (:mod:`scarwarden.files.claims`; the same object, the same
  action, opposite polarity or a different limit) with a related sentence: newer
  evidence wins. Against a committed rule, the rule is **superseded**: retired, and
  ``Replaced by:`` a rule without the contradicted sentence, stating the new one, citing
  every old episode whose words remain plus the new one. Against a sentence of this
  run, the later replaces it and both stay cited. An **unsure** case keeps the lesson
  and its citation, and is flagged for a human (never dropped);
* **the same lesson** (overlap >= :data:`SAME`, the same polarity, and no identifier
  the sentence does not already name): the episode is cited, by the rule and in the
  sentence's map; no word changes;
* **something new on the same topic** (overlap >= :data:`TOPIC` with a sentence of a
  rule, the same polarity) **about the same object** (:func:`_same_object`): a sentence
  of that rule, with its own provenance, while the rule stays under :data:`MAX_TOKENS`;
* otherwise **a new rule**: that sentence, titled by its first clause. So the same
  lesson about *another object* (another reservation or user) is a rule of its own:
  masked, templated corrections about different users look alike, and merged, one
  user's lesson sat in a rule titled, ranked and cited for another's (issue 26).

Never by tags: a rule about something else cannot absorb a lesson. No cap drops a
lesson: a full rule sends it to a new rule. Deterministic: same input, same output.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from scarwarden.distill.lesson_text import Unit, analyse, lead, subject, tokens, units
from scarwarden.distill.ops import Operation, slug
from scarwarden.files import claims
from scarwarden.files import playbook as pb
from scarwarden.files import playbook_sentences as ps
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_edit import title_from_text

#: Overlap (Jaccard, masked stems) at which two sentences teach the same lesson.
SAME = 0.7
#: Share of the shorter sentence's (weighted) stems in the other at which a new
#: sentence is about the topic of a rule's sentence.
TOPIC = 0.5
#: Sentences a new one is checked against for a contradiction: the closest ones.
CHECKED = 8
#: A rule grows by a sentence while it stays under this many tokens (chars / 4).
MAX_TOKENS = 150
#: Most tags a new rule gets from its episodes.
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
class Line:
    """A sentence of a rule as this run grows it, with the episodes that taught it."""

    unit: Unit
    #: ``None``: a committed sentence without a map (from the rule's citations).
    episodes: list[str] | None
    committed: bool
    model: bool = False


@dataclass
class Target:
    """A rule as this run grows it: an existing one (``base``) or a new one."""

    base: pb.Rule | None
    lines: list[Line]
    tags: list[str]
    title: str = ""
    cites: list[str] = field(default_factory=list)
    lessons: list[tuple[str, str]] = field(default_factory=list)
    #: Contradictions with the committed text: the rule is superseded.
    overruled: list[tuple[str, claims.Contradiction]] = field(default_factory=list)
    images: bool = False
    grew: bool = False
    _cited: set[str] = field(default_factory=set)

    @property
    def text(self) -> str:
        return " ".join(line.unit.text for line in self.lines)

    def label(self) -> str:
        return self.base.id if self.base else f'new rule "{self.title}"'

    def cite(self, ep: str) -> None:
        if ep not in self._cited:
            self._cited.add(ep)
            self.cites.append(ep)


def _existing(rule: pb.Rule) -> Target:
    lines = [
        Line(analyse(s.sentence), None if s.kind == "rule" else list(s.episode_ids), True, s.kind == "model")
        for s in rule.said()
    ]
    return Target(rule, lines, list(rule.tags), rule.title)


def _tags(ep: Episode) -> list[str]:
    """A new rule's tags: the episode's own (never words of its task)."""
    return [t for t in dict.fromkeys(slug(t) for t in ep.tags) if t][:MAX_TAGS]


def _same_object(target: Target, key: Unit, episode_id: str) -> bool:
    """Whether a sentence is about an object ``target`` is about: it names no identifier,
    the rule names none or names its subject (its first identifier, :func:`subject`), or
    the rule holds a sentence of the same episode (one correction is one case)."""
    about = subject(key)
    if about is None or episode_id in target.cites:
        return True
    named = set().union(*(line.unit.ids for line in target.lines))
    return not named or about in named


def _has_images(ep: Episode) -> bool:
    return bool(ep.get("attachments"))


class Planner:
    """Places each episode's sentences; :meth:`operations` turns the result into ops."""

    def __init__(self, playbook: pb.Playbook, load: Loader | None = None) -> None:
        self.playbook = playbook
        self.load = load
        self.targets: list[Target] = [_existing(rule) for rule in playbook.rules]
        self.flags: list[Flag] = []
        #: Episode -> why a sentence of it taught nothing (no words, only identifiers).
        self.empty: dict[str, str] = {}
        self.reviewers: dict[str, object] = {}
        self._index: dict[str, set[tuple[int, int]]] = defaultdict(set)
        self._lines = 0
        self._weights: dict[str, float] = {}
        self._totals: dict[tuple[int, int], float] = {}
        for t, target in enumerate(self.targets):
            for i, line in enumerate(target.lines):
                self._post(t, i, line.unit)

    def _post(self, t: int, i: int, unit: Unit) -> None:
        self._lines += 1
        self._weights.clear()
        self._totals.clear()
        for stem in lead(unit).stems:
            self._index[stem].add((t, i))

    def _weight(self, stem: str) -> float:
        """Rarer stems weigh more: boilerplate every correction shares ("the run left this
        write out") cannot make two lessons one. Cached until the next sentence is posted."""
        found = self._weights.get(stem)
        if found is None:
            found = math.log(1 + (self._lines + 1) / (len(self._index.get(stem, ())) + 1))
            self._weights[stem] = found
        return found

    def _line_weight(self, key: tuple[int, int]) -> float:
        found = self._totals.get(key)
        if found is None:
            t, i = key
            found = sum(self._weight(s) for s in lead(self.targets[t].lines[i].unit).stems)
            self._totals[key] = found
        return found

    def _near(self, unit: Unit) -> list[tuple[float, float, int, int]]:
        """(same, topic, target, line) of every sentence about the same topic, best
        first. Stems are weighed by their rarity; ``same`` is the weighted Jaccard
        overlap, ``topic`` the weighted share of the shorter sentence the other holds."""
        shared: dict[tuple[int, int], float] = defaultdict(float)
        weights = {stem: self._weight(stem) for stem in unit.stems}
        for stem in unit.stems:
            for key in self._index.get(stem, ()):
                shared[key] += weights[stem]
        mine = sum(weights.values())
        out: list[tuple[float, float, int, int]] = []
        for (t, i), both in shared.items():
            line = self.targets[t].lines[i]
            if not line.unit.text:
                continue
            other = self._line_weight((t, i))
            topic = both / min(mine, other)
            if topic >= TOPIC:
                out.append((both / (mine + other - both), topic, t, i))
        out.sort(key=lambda x: (-x[0], -x[1], x[2], x[3]))
        return out

    def place_episode(self, ep: Episode) -> None:
        """Place every sentence of ``ep``'s correction."""
        self.reviewers[ep.id] = ep.get("corrected_by")
        found = units(str(ep.get("correction") or ""))
        placed = False
        for unit in found:
            if not lead(unit).stems:
                continue
            self._place(ep, unit)
            placed = True
        if not placed:
            self.empty[ep.id] = (
                "no lesson: the correction holds only identifiers and numbers"
                if found
                else "no lesson: the correction has no sentence with words"
            )

    def _place(self, ep: Episode, unit: Unit) -> None:
        key = lead(unit)
        near = self._near(key)
        for _, _, t, i in near[:CHECKED]:
            line = self.targets[t].lines[i]
            found = claims.contradiction(lead(line.unit).text, key.text)
            if found is None:
                continue
            if found.clear:
                self._reverse(t, i, found, ep, unit)
                return
            self.flags.append(Flag(self.targets[t].label(), ep.id, found.reason, False))
            break  # unsure: flagged; the lesson is placed as any other
        for same, _, t, i in near:
            line = self.targets[t].lines[i]
            said = lead(line.unit)
            if same >= SAME and said.negated == key.negated and key.ids <= said.ids:
                self._restate(self.targets[t], line, ep)
                return
        for _, _, t, i in sorted(near, key=lambda x: (-x[1], x[2], x[3])):
            target = self.targets[t]
            if (
                lead(target.lines[i].unit).negated == key.negated
                and _same_object(target, key, ep.id)
                and tokens(f"{target.title} {target.text} {unit.text}") <= MAX_TOKENS
            ):
                self._append(t, ep, unit)
                return
        self._new(ep, unit)

    def _restate(self, target: Target, line: Line, ep: Episode) -> None:
        if line.episodes is not None and ep.id not in line.episodes:
            line.episodes.append(ep.id)
            target.grew = True
        target.cite(ep.id)
        target.lessons.append((ep.id, f"already said by {target.label()}"))
        target.images |= _has_images(ep)

    def _append(self, t: int, ep: Episode, unit: Unit) -> None:
        target = self.targets[t]
        target.lines.append(Line(unit, [ep.id], False))
        self._post(t, len(target.lines) - 1, unit)
        target.cite(ep.id)
        target.lessons.append((ep.id, unit.text))
        target.images |= _has_images(ep)
        target.grew = True

    def _new(self, ep: Episode, unit: Unit) -> None:
        target = Target(
            None, [Line(unit, [ep.id], False)], _tags(ep), title_from_text(unit.text, clause=True)
        )
        target.cite(ep.id)
        target.lessons.append((ep.id, unit.text))
        target.images = _has_images(ep)
        self.targets.append(target)
        self._post(len(self.targets) - 1, 0, unit)

    def _reverse(self, t: int, i: int, found: claims.Contradiction, ep: Episode, unit: Unit) -> None:
        """Newer evidence wins: the contradicted sentence goes (whole), the new one is said."""
        target = self.targets[t]
        old = target.lines[i]
        target.lines[i] = Line(analyse(""), [], False)  # keeps the index's line numbers valid
        self._append(t, ep, unit)
        earlier = ", ".join(old.episodes or ()) or "the rule's citations"
        if old.committed and target.base is not None:
            target.overruled.append((ep.id, found))
            self.flags.append(Flag(target.label(), ep.id, f"{found.reason}; superseded", True))
            return
        reviewer = ""
        first = (old.episodes or [""])[0]
        who = ep.get("corrected_by")
        if who and self.reviewers.get(first) == who:
            reviewer = f" (the same reviewer, {who})"
        self.flags.append(
            Flag(target.label(), ep.id, f"{found.reason}; reverses {earlier}{reviewer}, later wins", True)
        )
        if target.base is None and i == 0:
            target.title = title_from_text(unit.text, clause=True)

    # -- operations ---------------------------------------------------------------------

    def _parts(self, target: Target) -> list[tuple[str, list[str], bool]]:
        return [
            (line.unit.text, list(line.episodes or ()), line.model) for line in target.lines if line.unit.text
        ]

    def operations(self) -> list[Operation]:
        """Updates and supersedes in playbook order, then new rules in creation order."""
        ops: list[Operation] = []
        for target in self.targets:
            if not target.cites:
                continue
            text, sources = ps.build(self._parts(target))
            images = ("images",) if target.images else ()
            if target.base is None:
                ops.append(
                    Operation(
                        "add",
                        title=target.title,
                        text=text,
                        tags=tuple(target.tags),
                        episode_ids=tuple(target.cites),
                        lessons=tuple(target.lessons),
                        sources=sources,
                        applies_to=images,
                    )
                )
            elif target.overruled:
                ops.append(self._supersede(target, target.base, text, sources, images))
            else:
                base = target.base
                ops.append(
                    Operation(
                        "update",
                        rule_id=base.id,
                        text=text if target.grew and text != base.text else None,
                        episode_ids=tuple(target.cites),
                        lessons=tuple(target.lessons),
                        sources=sources if target.grew else None,
                        applies_to=images,
                    )
                )
        return ops

    def _supersede(
        self,
        target: Target,
        base: pb.Rule,
        text: str,
        sources: tuple[ps.Source, ...],
        images: tuple[str, ...],
    ) -> Operation:
        """The replacing rule cites every old episode whose words remain in it."""
        mapped = {ep for line in target.lines if line.unit.text for ep in (line.episodes or ())}
        unmapped = any(line.episodes is None and line.unit.text for line in target.lines)
        still = [ep for ep in base.episode_ids if ep in mapped or (unmapped and self._remains(ep, text))]
        gone = [ep for ep in base.episode_ids if ep not in still]
        why = "; ".join(f"contradicted by {ep} ({c.reason})" for ep, c in target.overruled)
        if gone:
            verb = "is" if len(gone) == 1 else "are"
            why += f"; {', '.join(gone)} taught only the old wording and {verb} cited by {base.id} alone"
        retitle = any(claims.contradiction(base.title, line.unit.text) for line in target.lines)
        return Operation(
            "supersede",
            rule_id=base.id,
            title=title_from_text(text, clause=True) if retitle else base.title,
            text=text,
            tags=tuple(target.tags),
            episode_ids=tuple(dict.fromkeys(still + target.cites)),
            reason=f"Superseded: {why}",
            lessons=tuple(target.lessons),
            sources=sources,
            applies_to=images,
        )

    def _remains(self, ep_id: str, text: str) -> bool:
        """Whether an old episode's correction still shares content words with ``text``
        (without a loader: assumed, so no citation is lost)."""
        if self.load is None:
            return True
        loaded = self.load([ep_id])
        if not loaded:
            return True
        words = {s for u in units(str(loaded[0].get("correction") or "")) for s in u.stems}
        return bool(words & {s for u in units(text) for s in u.stems})


def place_all(planner: Planner, episodes: Iterable[Episode]) -> None:
    for ep in episodes:
        planner.place_episode(ep)
