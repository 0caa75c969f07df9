"""The offline distiller: deterministic, no model, same input -> same bytes.

What it learns from: episodes that carry a ``correction`` (for a ``human-answer``
episode that is the human's answer). An episode with only an action and an outcome
holds a lesson a model may infer, but not one we can write down without inventing
words, so it is left for a model distillation (reported, not marked distilled).

1. **Group** the learnable episodes, oldest first, by leader clustering: an episode
   joins the best existing group when it shares at least three of the group's core
   tags, or two core tags and two core terms (Snowball stems of the corrections); a
   ``refs`` to a member only breaks ties. Otherwise it starts a group. Core = present
   in at least half the group's members, so a group cannot drift by chaining (what a
   transitive closure of "shares a tag" would do).
2. **Match** each group against the active rules: when it overlaps a rule strongly
   (shared tags and most of the corrections' terms already in the rule, or a ``refs``
   to an episode the rule cites), the rule is **updated** (the citations are added,
   the ID and the reviewed wording are kept) instead of adding a near-duplicate.
3. Otherwise the group becomes a **new rule**: text = the group's distinct corrections
   (a correction whose terms are mostly covered by an earlier one is skipped), title =
   the first correction's first clause, tags = the group's most frequent tags.

A group of one becomes a rule too: a human's correction or answer is an instruction,
and the ask -> answer -> rule loop only closes offline if it does.

The output is the same :class:`~scarwarden.distill.ops.Operation` list the model
produces, so it passes through the same provenance gate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from scarwarden import text as txt
from scarwarden.distill.lessons import Flag, Loader, Planner
from scarwarden.distill.ops import Operation, slug
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_edit import title_from_text

#: Most tags a new rule gets, and most corrections quoted in its text.
MAX_TAGS = 6
MAX_SENTENCES = 4
#: A correction adds nothing when this share of its terms is already in the text.
COVERED = 0.8


def _terms(*parts: str | None) -> set[str]:
    return set(txt.stems(" ".join(p for p in parts if p)))


@dataclass
class _Item:
    episode: Episode
    tags: tuple[str, ...]
    terms: frozenset[str]
    refs: tuple[str, ...]

    @property
    def id(self) -> str:
        return self.episode.id


@dataclass
class Group:
    items: list[_Item] = field(default_factory=list)
    tag_counts: Counter[str] = field(default_factory=Counter)
    term_counts: Counter[str] = field(default_factory=Counter)
    members: set[str] = field(default_factory=set)

    def add(self, item: _Item) -> None:
        self.items.append(item)
        self.members.add(item.id)
        self.tag_counts.update(item.tags)
        self.term_counts.update(item.terms)

    def _core(self, counts: Counter[str]) -> set[str]:
        need = len(self.items) / 2
        return {key for key, n in counts.items() if n >= need}

    def core_tags(self) -> set[str]:
        return self._core(self.tag_counts)

    def core_terms(self) -> set[str]:
        return self._core(self.term_counts)

    @property
    def ids(self) -> list[str]:
        return [item.id for item in self.items]


def _join_score(item: _Item, group: Group) -> int:
    """How strongly ``item`` belongs in ``group``; 0 when it does not."""
    tags = len(set(item.tags) & group.core_tags())
    terms = len(item.terms & group.core_terms())
    linked = any(ref in group.members for ref in item.refs)
    if tags >= 3 or (tags >= 2 and terms >= 2):
        return 2 * tags + terms + (1 if linked else 0)
    return 0


def group_episodes(episodes: Iterable[Episode]) -> list[Group]:
    """Leader clustering of learnable episodes (see the module docstring); deterministic."""
    groups: list[Group] = []
    by_tag: dict[str, list[int]] = {}
    by_episode: dict[str, int] = {}
    for ep in sorted(episodes, key=lambda e: (e.at, e.id)):
        item = _Item(ep, tuple(ep.tags), frozenset(_terms(ep.get("correction"))), tuple(ep.get("refs") or ()))
        candidates = {g for tag in item.tags for g in by_tag.get(tag, ())}
        candidates |= {by_episode[r] for r in item.refs if r in by_episode}
        best, best_score = None, 0
        for index in sorted(candidates):
            score = _join_score(item, groups[index])
            if score > best_score:
                best, best_score = index, score
        if best is None:
            best = len(groups)
            groups.append(Group())
        groups[best].add(item)
        by_episode[item.id] = best
        for tag in item.tags:
            members = by_tag.setdefault(tag, [])
            if not members or members[-1] != best:
                members.append(best)
    return groups


# -- matching existing rules ----------------------------------------------------------


@dataclass
class _RuleIndex:
    tags: dict[str, tuple[str, ...]]
    terms: dict[str, set[str]]
    by_tag: dict[str, list[str]]
    by_episode: dict[str, str]

    @classmethod
    def build(cls, playbook: pb.Playbook) -> _RuleIndex:
        terms: dict[str, set[str]] = {}
        by_tag: dict[str, list[str]] = {}
        by_episode: dict[str, str] = {}
        for rule in playbook.rules:
            stems = _terms(rule.title, rule.text)
            for tag in rule.tags:
                stems.update(txt.tag_stems(tag))
                by_tag.setdefault(tag, []).append(rule.id)
            terms[rule.id] = stems
            for ep in rule.episode_ids:
                by_episode.setdefault(ep, rule.id)
        return cls({rule.id: rule.tags for rule in playbook.rules}, terms, by_tag, by_episode)


def _correction_terms(group: Group) -> set[str]:
    return _terms(*(item.episode.get("correction") for item in group.items))


def match_rule(group: Group, index: _RuleIndex) -> str | None:
    """The active rule this group restates, if it overlaps one strongly enough."""
    core = group.core_tags()
    wanted = _correction_terms(group)
    refs = {ref for item in group.items for ref in item.refs}
    candidates = {rid for tag in core for rid in index.by_tag.get(tag, ())}
    candidates |= {index.by_episode[r] for r in refs if r in index.by_episode}
    best, best_score = None, 0.0
    for rule_id in sorted(candidates):
        tags = len(core & set(index.tags[rule_id]))
        coverage = len(wanted & index.terms[rule_id]) / len(wanted) if wanted else 0.0
        linked = any(index.by_episode.get(r) == rule_id for r in refs)
        strong = (
            (tags >= 2 and coverage >= 0.4)
            or (tags >= 1 and coverage >= 0.6)
            or (linked and tags >= 1 and coverage >= 0.3)
        )
        if not strong:
            continue
        score = 2 * tags + 5 * coverage + (3 if linked else 0)
        if score > best_score:
            best, best_score = rule_id, score
    return best


# -- writing a new rule ---------------------------------------------------------------


def _sentence(correction: str) -> str:
    s = " ".join(correction.split()).strip()
    if s and s[-1] not in ".!?":
        s += "."
    return s[:1].upper() + s[1:]


def rule_text(group: Group) -> str:
    """The group's distinct corrections, oldest first, as one paragraph."""
    sentences: list[str] = []
    seen: set[str] = set()
    for item in group.items:
        correction = item.episode.get("correction") or ""
        terms = _terms(correction)
        if sentences and terms and len(terms & seen) / len(terms) >= COVERED:
            continue
        sentences.append(_sentence(correction))
        seen |= terms
        if len(sentences) == MAX_SENTENCES:
            break
    return " ".join(sentences)


def rule_title(text: str) -> str:
    """A new rule's title: the first clause of its text, cut at a comma or conjunction
    when long (:func:`~scarwarden.files.playbook_edit.title_from_text`, clause style)."""
    return title_from_text(text, clause=True)


def rule_tags(group: Group) -> list[str]:
    """The group's most frequent tags (ties: first seen); from its words if it has none."""
    order: dict[str, int] = {}
    for item in group.items:
        for tag in item.tags:
            order.setdefault(tag, len(order))
    if order:
        ranked = sorted(order, key=lambda t: (-group.tag_counts[t], order[t]))
        return ranked[:MAX_TAGS]
    counts: Counter[str] = Counter()
    surface: dict[str, str] = {}  # stem -> first word seen with it (insertion-ordered)
    for item in group.items:
        for token in txt.tokens(f"{item.episode.task} {item.episode.get('correction') or ''}"):
            stem = txt.stem(token)
            counts[stem] += 1
            surface.setdefault(stem, token)
    first = {s: i for i, s in enumerate(surface)}
    ranked_stems = sorted(counts, key=lambda s: (-counts[s], first[s]))
    tags = [slug(surface[s]) for s in ranked_stems if len(s) > 2]
    return [t for t in dict.fromkeys(tags) if t][:4]


# -- the distiller ---------------------------------------------------------------------


@dataclass
class OfflinePlan:
    operations: list[Operation]
    #: Episodes the plan learns from (they become ``Scarwarden-Distilled-Episode``).
    used: list[str]
    #: (episode ID, why it was left for later).
    left: list[tuple[str, str]]
    #: Contradictions found: decided (superseded, reversed) or flagged for a human.
    flags: list[Flag] = field(default_factory=list)
    #: (episode ID, why it taught nothing): distilled all the same.
    no_lesson: list[tuple[str, str]] = field(default_factory=list)


def learnable(ep: Episode) -> bool:
    return any(ch.isalnum() for ch in str(ep.get("correction") or ""))


def _blank_correction(ep: Episode) -> bool:
    """A correction given but without a word ("", "-", "..."): a reviewer's decision
    that there is nothing to learn, not a gap a model could fill."""
    return ep.get("correction") is not None and not learnable(ep)


def offline_operations(
    episodes: list[Episode], playbook: pb.Playbook, load: Loader | None = None
) -> OfflinePlan:
    """Turn new episodes into add/update/supersede operations without a model.

    ``load`` reads episodes a rule already cites (to tell which still support it when
    it is superseded); without it a superseded rule's citations are all carried over.
    """
    episodes = sorted(episodes, key=lambda e: (e.at, e.id))  # input order must not matter
    usable = [ep for ep in episodes if learnable(ep)]
    blank = [ep for ep in episodes if not learnable(ep) and _blank_correction(ep)]
    left = [
        (ep.id, "no correction or human answer to learn from; left for a model distillation")
        for ep in episodes
        if not learnable(ep) and not _blank_correction(ep)
    ]
    index = _RuleIndex.build(playbook)
    planner = Planner(playbook, load)
    for group in group_episodes(usable):
        planner.place([item.episode for item in group.items], match_rule(group, index), rule_tags(group))
    used = [ep.id for ep in episodes if learnable(ep) or _blank_correction(ep)]
    return OfflinePlan(
        planner.operations(),
        used,
        left,
        planner.flags,
        [(ep.id, "no lesson: the correction has no words") for ep in blank],
    )
