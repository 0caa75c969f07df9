"""The support check (issue 25): does each sentence share words with its episodes?

Every sentence of an active rule names the episodes it came from (``- Sentences
from:``; a sentence the map leaves out is from all the rule's citations). A sentence
that shares no *content word* with them (Snowball stems, stopwords, generic words,
numbers and identifiers left out: :func:`content`) states something those episodes
never said:

* an **error** for a mapped sentence (the offline distiller's, ``rule add``'s): its
  words are quoted from its episodes, so none in common is a provenance break;
* a **warning** for a model's sentence (``(model)``: a model may generalise) and for a
  sentence without a map (older playbooks, hand-written rules).

A map naming an episode the rule does not cite never parses (the playbook parser
refuses it with the sentence and a fix), so it cannot reach this check.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from scarwarden import text as txt
from scarwarden.files import claims
from scarwarden.files import playbook as pb
from scarwarden.files.episodes import Episode

#: The fields of an episode whose words can support a sentence.
FIELDS = ("task", "action", "outcome", "correction")


def content(text: str) -> frozenset[str]:
    """Content stems of ``text``: no stopwords, generic words, numbers or identifiers."""
    return frozenset(
        s for s in txt.stems(claims.without_identifiers(text)) if s not in claims.GENERIC and not s.isdigit()
    )


def episode_words(ep: Episode) -> frozenset[str]:
    parts = [str(ep.get(name) or "") for name in FIELDS] + [" ".join(ep.tags)]
    return content(" ".join(parts))


@dataclass(frozen=True)
class Unsupported:
    rule: str
    number: int
    sentence: str
    episode_ids: tuple[str, ...]
    severity: str  # "error" | "warning"
    kind: str  # "stated" | "model" | "rule"
    line: int = 0

    def message(self) -> str:
        whose = ", ".join(self.episode_ids)
        what = {"stated": "", "model": " (written by a model)", "rule": " (no sentence map)"}[self.kind]
        return (
            f"{self.rule}: sentence {self.number}{what} shares no word with {whose}, "
            f"the episodes it names: {self.sentence!r}"
        )

    def hint(self) -> str:
        return (
            "no provenance, no sentence: name in '- Sentences from:' the episode that taught it "
            "(and cite it in '- Learnt in:'), or reword the sentence in that episode's words"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "sentence": self.number,
            "text": self.sentence,
            "episode_ids": list(self.episode_ids),
            "severity": self.severity,
            "kind": self.kind,
        }


def unsupported(
    book: pb.Playbook, episodes: Mapping[str, Episode], rules: Iterable[pb.Rule] | None = None
) -> list[Unsupported]:
    """The sentences of ``rules`` (default: every active rule) that share no content word
    with the episodes they name. Episodes not in ``episodes`` are skipped (the citation
    check reports a missing one); a sentence without content words is not checked."""
    cache: dict[str, frozenset[str]] = {}
    out: list[Unsupported] = []
    for rule in book.rules if rules is None else rules:
        if rule.retired:
            continue
        for said in rule.said():
            known = [ep for ep in said.episode_ids if ep in episodes]
            words = content(said.sentence)
            if not known or not words:
                continue
            for ep in known:
                if ep not in cache:
                    cache[ep] = episode_words(episodes[ep])
            if any(words & cache[ep] for ep in known):
                continue
            severity = "error" if said.kind == "stated" else "warning"
            out.append(
                Unsupported(rule.id, said.number, said.sentence, tuple(known), severity, said.kind, rule.line)
            )
    return out


def supporting_words(sentence: str, episodes: Iterable[Episode]) -> list[tuple[str, list[str]]]:
    """For a reviewer: each episode's words that the sentence shares (surface forms)."""
    wanted = content(sentence)
    out: list[tuple[str, list[str]]] = []
    for ep in episodes:
        shared: dict[str, str] = {}
        for name in FIELDS:
            for token in txt.tokens(claims.without_identifiers(str(ep.get(name) or ""))):
                stem = txt.stem(token)
                if stem in wanted and stem not in shared:
                    shared[stem] = token
        out.append((ep.id, list(shared.values())))
    return out
