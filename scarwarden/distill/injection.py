"""Sentences a model distillation wrote that a reviewer should read twice.

Episode text is untrusted, and code checks citations, not meaning: an injection the
model obeys, copied from an episode, becomes a rule when it cites an episode of the
batch, or retires a rule it asks to retire. This is a reviewer's aid, not a gate
(nothing is dropped on a heuristic): each sentence a model distill writes or changes,
and each reason it gives for a retirement, is flagged, with the rule, the episodes and
the field its words came from, on either or both of two deterministic signals:

* ``asked-not-happened`` (provenance by field): at least :data:`ASKED_SHARE` of the
  sentence's stems are in its episodes' ``task``/``action`` (what was asked: for an
  imported run, an end user's words) and less than :data:`HAPPENED_SHARE` in their
  ``outcome``/``correction`` (what happened, what a human corrected). A lesson comes
  from what happened; an injection rides in what was asked. Sentences of fewer than
  :data:`MIN_TERMS` stems are not judged (any short phrase is "covered");
* ``addressed-to-model``: wording addressed to a model or to the memory itself
  (:data:`PHRASES`, after the lists public prompt-injection detectors keep: "ignore
  previous instructions", "system prompt", "you are now", "new rule:"...), matched on
  the lower-cased sentence. A title is checked for this signal only.

An unchanged sentence the map now names a new episode for is judged against that
episode too, and flagged ``re-attributed`` when it shares none of the sentence's words.

Neither signal catches an injection written in the ``correction`` field in a lesson's
own words: that is what the pull request's reviewer is for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from scarwarden import text as txt
from scarwarden.distill.operations import Change
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode
from scarwarden.files.playbook_sentences import split as split_sentences

ASKED = ("task", "action")
HAPPENED = ("outcome", "correction")
#: Share of a sentence's stems that must come from what was asked ...
ASKED_SHARE = 0.8
#: ... and that what happened must not reach, for the sentence to be flagged.
HAPPENED_SHARE = 0.5
MIN_TERMS = 3
ASKED_SIGNAL = "asked-not-happened"
ADDRESSED_SIGNAL = "addressed-to-model"
#: An unchanged sentence the map now says came from episodes sharing none of its words.
REATTRIBUTED_SIGNAL = "re-attributed"

_Q = r"(?:(?:all|any|the|your|my|these|those)\s+)*"
#: (name, pattern) of wording addressed to a model or to the memory, not a lesson.
PHRASES: tuple[tuple[str, str], ...] = (
    (
        "ignore previous instructions",
        r"\b(?:ignore|disregard|forget|override|bypass)\s+"
        + _Q
        + r"(?:previous|prior|above|earlier|preceding|former|system|original)\s+"
        r"(?:instructions?|prompts?|directions?|guidelines?|directives?|commands?|rules)\b"
        r"|\b(?:ignore|disregard|forget)\s+(?:all|your)\s+(?:instructions|prompts|rules)\b",
    ),
    ("ignore everything above", r"\b(?:ignore|disregard|forget)\s+(?:everything|all)\s+(?:above|before)\b"),
    # Not "system message" nor "system instructions": a status page or a payment system has them.
    (
        "system prompt",
        r"\b(?:system|developer|hidden|initial)\s+prompt\b|\bhidden\s+instructions?\b|\bdeveloper\s+message\b",
    ),
    (
        "you are now",
        r"\byou\s+are\s+now\s+(?:a|an|no\s+longer|free|unrestricted)\b|\bfrom\s+now\s+on,?\s+you\s+(?:are|will)\b"
        r"|\bpretend\s+(?:to\s+be|you\s+are)\b",
    ),
    ("new rule:", r"\bnew\s+(?:rules?|instructions?|lesson)\s*:"),
    ("a role marker (system:, assistant:)", r"(?:^|[\[<|])\s*(?:system|assistant|developer)\s*[\]|>]?\s*:"),
    ("developer mode", r"\b(?:developer|god|jailbreak)\s+mode\b|\bjailbreak|\bdo\s+anything\s+now\b"),
    (
        "reveal your instructions",
        r"\b(?:reveal|print|show|repeat|output|leak|display)\s+(?:me\s+)?(?:all\s+(?:of\s+)?)?"
        r"(?:your|the\s+(?:system|hidden|original|initial))\s+(?:instructions|prompt|system\s+prompt|rules)\b",
    ),
    (
        "add this to the memory",
        r"\b(?:add|save|store|write|record|insert)\s+(?:this|it|the\s+following)\s+"
        r"(?:as\s+a\s+(?:rule|lesson)|(?:to|in|into)\s+(?:the\s+|your\s+)?(?:memory|playbook))\b",
    ),
    ("a prompt fence (BEGIN/END EPISODES)", r"\b(?:begin|end)\s+(?:episodes|rules)\b|<\|im_(?:start|end)\|>"),
)
_COMPILED = tuple((name, re.compile(pattern)) for name, pattern in PHRASES)


@dataclass(frozen=True)
class ReviewFlag:
    """A sentence of a changed rule a reviewer should read twice, and why."""

    rule_id: str
    sentence: str
    episode_ids: tuple[str, ...]
    signals: tuple[str, ...]  # ADDRESSED_SIGNAL and/or ASKED_SIGNAL
    #: (episode ID, field) the flagged words came from (none: the model's own words).
    fields: tuple[tuple[str, str], ...]
    reason: str
    #: Where the sentence stands: "text", "title" or "retirement reason".
    part: str = "text"

    def describe(self) -> str:
        whose = "the rule's" if REATTRIBUTED_SIGNAL in self.signals else "the model's"
        where = ", ".join(f"{ep} {field}" for ep, field in self.fields) or f"no episode ({whose} words)"
        signals = ", ".join(self.signals)
        rule = self.rule_id if self.part == "text" else f"{self.rule_id} ({self.part})"
        sentence = " ".join(self.sentence.split())  # one line: the commit body's trailers follow
        return f'{rule}: "{sentence}" [{signals}] {self.reason}; from {where}'

    def to_json(self) -> dict[str, Any]:
        return {
            "rule_id": self.rule_id,
            "sentence": self.sentence,
            "episode_ids": list(self.episode_ids),
            "signals": list(self.signals),
            "fields": [{"episode_id": ep, "field": field} for ep, field in self.fields],
            "reason": self.reason,
            "part": self.part,
        }


def _field(ep: Episode, name: str) -> str:
    value = ep.get(name)
    return value if isinstance(value, str) else ""


@lru_cache(maxsize=4096)
def _stems(text: str) -> frozenset[str]:
    """A field's stems, once per run: every sentence of a batch is judged against them."""
    return frozenset(txt.stems(text))


def _share(terms: set[str], known: frozenset[str]) -> float:
    return len(terms & known) / len(terms) if terms else 0.0


def asked_not_happened(sentence: str, episodes: Sequence[Episode]) -> tuple[tuple[str, str], ...]:
    """The (episode, field) pairs of what was asked that the sentence's words come from,
    when none of what happened says it; ``()`` when the sentence is not flagged."""
    terms = set(txt.stems(sentence))
    if len(terms) < MIN_TERMS or not episodes:
        return ()
    asked = frozenset().union(*(_stems(_field(ep, name)) for ep in episodes for name in ASKED))
    happened = frozenset().union(*(_stems(_field(ep, name)) for ep in episodes for name in HAPPENED))
    if _share(terms, asked) < ASKED_SHARE or _share(terms, happened) >= HAPPENED_SHARE:
        return ()
    shares = [(_share(terms, _stems(_field(ep, name))), ep.id, name) for ep in episodes for name in ASKED]
    best = max(share for share, _, _ in shares)
    # The field that says most of it, and any other that says it alone.
    return tuple((ep, name) for share, ep, name in shares if share == best or share >= ASKED_SHARE)


def addressed_to_model(sentence: str, names: Iterable[str] | None = None) -> str | None:
    """The name of the first :data:`PHRASES` entry (of ``names``; else any) the
    lower-cased sentence matches, if any."""
    lowered = " ".join(sentence.replace("\u2019", "'").lower().split())
    wanted = None if names is None else set(names)
    hits = (
        name for name, pattern in _COMPILED if (wanted is None or name in wanted) and pattern.search(lowered)
    )
    return next(hits, None)


def _phrase_fields(phrase: str, episodes: Sequence[Episode]) -> tuple[tuple[str, str], ...]:
    """Where the same wording stands in the episodes (any of their text fields)."""
    return tuple(
        (ep.id, name)
        for ep in episodes
        for name in (*ASKED, *HAPPENED)
        if addressed_to_model(_field(ep, name), [phrase]) is not None
    )


def sentence_flag(
    rule_id: str, sentence: str, episodes: Sequence[Episode], *, part: str = "text"
) -> ReviewFlag | None:
    """The flag one sentence earns, if any (a title: the wording signal only)."""
    title = part == "title"
    signals: list[str] = []
    fields: list[tuple[str, str]] = []
    reasons: list[str] = []
    phrase = addressed_to_model(sentence)
    if phrase is not None:
        signals.append(ADDRESSED_SIGNAL)
        fields += _phrase_fields(phrase, episodes)
        reasons.append(f"it is worded to a model or the memory ('{phrase}'), not as a lesson")
    asked = () if title else asked_not_happened(sentence, episodes)
    if asked:
        signals.append(ASKED_SIGNAL)
        fields += asked
        reasons.append("its words come from what was asked (task/action), none from an outcome or correction")
    if not signals:
        return None
    ids = tuple(ep.id for ep in episodes)
    return ReviewFlag(
        rule_id, sentence, ids, tuple(signals), tuple(dict.fromkeys(fields)), "; ".join(reasons), part
    )


def _re_attributed(
    rule_id: str, old: pb.Rule, rule: pb.Rule, by_id: Mapping[str, Episode]
) -> list[ReviewFlag | None]:
    """Flags for the unchanged sentences the map now names a new episode for (a map-only
    update): judged against those episodes as a new sentence is, and flagged
    :data:`REATTRIBUTED_SIGNAL` when they share none of its words (the support check's
    reading), or the sentence would be said to come from an episode that never said it."""
    from scarwarden.gate.support import content, episode_words

    named = {said.sentence: set(said.episode_ids) for said in old.said()}
    texts = split_sentences(rule.text)
    found: list[ReviewFlag | None] = []
    for source in rule.sources:
        sentence = texts[source.number - 1] if source.number <= len(texts) else None
        if sentence is None or sentence not in named:
            continue  # a new sentence: judged above
        eps = [by_id[ep] for ep in source.episode_ids if ep not in named[sentence] and ep in by_id]
        if not eps:
            continue
        flag = sentence_flag(rule_id, sentence, eps)
        if content(sentence) & frozenset().union(*(episode_words(ep) for ep in eps)):
            found.append(flag)
            continue
        ids = ", ".join(ep.id for ep in eps)
        why = f"its words are unchanged, and {ids}, which the sentence map now names for it, shares none"
        signals = (*(flag.signals if flag else ()), REATTRIBUTED_SIGNAL)
        reason = "; ".join(r for r in ((flag.reason if flag else ""), why) if r)
        fields = flag.fields if flag else ()
        found.append(ReviewFlag(rule_id, sentence, tuple(ep.id for ep in eps), signals, fields, reason))
    return found


#: The evidence the gate appends to a retirement's reason (ops.py): not the model's words.
_EVIDENCE = re.compile(r"\s*\(evidence: [^()]*\)$")


def review(
    before: pb.Playbook, after: pb.Playbook, changes: Sequence[Change], episodes: Iterable[Episode]
) -> list[ReviewFlag]:
    """Flags for every sentence (and title) the ``changes`` wrote or changed in ``after``,
    and for the reasons of the rules they retired (an injection may retire a rule); a
    sentence is judged against its episodes among ``episodes`` (those the model saw)."""
    by_id = {ep.id: ep for ep in episodes}
    targets = (c.replaced_by if c.kind == "supersede" else c.rule_id for c in changes if c.kind != "retire")
    found: list[ReviewFlag | None] = []
    for rule_id in dict.fromkeys(t for t in targets if t):
        rule, old = after.get(rule_id), before.get(rule_id)
        if rule is None:
            continue
        seen = set(split_sentences(old.text)) if old is not None else set()
        mine = [by_id[ep] for ep in rule.episode_ids if ep in by_id]
        if old is None or old.title != rule.title:
            found.append(sentence_flag(rule_id, rule.title, mine, part="title"))
        for said in rule.said():
            if said.sentence not in seen:
                eps = [by_id[ep] for ep in said.episode_ids if ep in by_id]
                found.append(sentence_flag(rule_id, said.sentence, eps))
        if old is not None:
            found += _re_attributed(rule_id, old, rule, by_id)
    for change in (c for c in changes if c.kind in ("retire", "supersede")):
        retired = after.get(change.rule_id)
        if retired is None or not retired.retired or not retired.reason:
            continue
        eps = [by_id[ep] for ep in change.episode_ids if ep in by_id]
        for sentence in split_sentences(_EVIDENCE.sub("", retired.reason)):
            found.append(sentence_flag(change.rule_id, sentence, eps, part="retirement reason"))
    return [flag for flag in found if flag is not None]
