"""The offline distiller: deterministic, no model, same input -> same bytes.

What it learns from: episodes that carry a ``correction`` (for a ``human-answer``
episode that is the human's answer). An episode with only an action and an outcome
holds a lesson a model may infer, but not one we can write down without inventing
words, so it is left for a model distillation (reported, not marked distilled).

One rule per lesson (issue 25): every correction is split into whole sentences, and
each sentence is placed by what it teaches, identifiers, numbers, dates and amounts
masked (:mod:`scarwarden.distill.lessons`): the same lesson adds a citation, something
new on the same topic adds a sentence with its own provenance, anything else starts a
rule. Every sentence written carries its map (``- Sentences from:``), so a rule's text
never states a lesson from an episode it does not cite.

The output is the same :class:`~scarwarden.distill.ops.Operation` list the model
produces, so it passes through the same provenance gate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from scarwarden.distill.lessons import Flag, Loader, Planner, place_all
from scarwarden.distill.ops import Operation
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_edit import title_from_text


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


def rule_title(text: str) -> str:
    """A new rule's title: the first clause of its text, cut at a comma or conjunction
    when long (:func:`~scarwarden.files.playbook_edit.title_from_text`, clause style)."""
    return title_from_text(text, clause=True)


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
    it is superseded); without it a superseded rule keeps its citations.
    """
    episodes = sorted(episodes, key=lambda e: (e.at, e.id))  # input order must not matter
    usable = [ep for ep in episodes if learnable(ep)]
    left = [
        (ep.id, "no correction or human answer to learn from; left for a model distillation")
        for ep in episodes
        if not learnable(ep) and not _blank_correction(ep)
    ]
    planner = Planner(playbook, load)
    place_all(planner, usable)
    no_lesson = [
        (ep.id, "no lesson: the correction has no words") for ep in episodes if _blank_correction(ep)
    ]
    no_lesson += [(ep.id, planner.empty[ep.id]) for ep in usable if ep.id in planner.empty]
    used = [ep.id for ep in episodes if learnable(ep) or _blank_correction(ep)]
    return OfflinePlan(planner.operations(), used, left, planner.flags, no_lesson)
