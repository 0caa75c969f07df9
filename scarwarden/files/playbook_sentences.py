"""Per-sentence provenance: which of a rule's citations each sentence came from.

A rule's text is read as sentences (:func:`split`: ``.``, ``!`` or ``?`` then a space,
or a blank line). The optional field line ``- Sentences from:`` maps sentence numbers
(1-based) to the episodes that taught them::

    - Sentences from: 1: ep-a, ep-b; 2: ep-c; 3: ep-c (model)

* a numbered sentence is stated by those episodes: its words come from them (the
  offline distiller's sentences, and ``rule add``'s);
* ``(model)`` marks a sentence a model wrote from those episodes: it may generalise;
* a sentence the map leaves out (and every sentence of a rule without the line, as in
  playbooks written before the map existed) is "from the rule's citations".

Every episode the map names must be one the rule cites (``- Learnt in:``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scarwarden.files.episode_fields import EPISODE_ID_RE

_SPLIT = re.compile(r"(?<=[.!?])\s+|\n\s*\n")
_ENTRY = re.compile(r"^(\d{1,4}):\s*(.*?)(\s*\(model\))?$")
MODEL_MARK = "(model)"


def split(text: str) -> list[str]:
    """A rule's text as sentences, each with its spaces collapsed."""
    return [" ".join(s.split()) for s in _SPLIT.split(text.strip()) if s.strip()]


@dataclass(frozen=True)
class Source:
    """Sentence ``number`` (1-based) came from ``episode_ids``; ``model``: a model wrote it."""

    number: int
    episode_ids: tuple[str, ...]
    model: bool = False

    def render(self) -> str:
        mark = f" {MODEL_MARK}" if self.model else ""
        return f"{self.number}: {', '.join(self.episode_ids)}{mark}"


def render(sources: Sequence[Source]) -> str:
    return "; ".join(source.render() for source in sources)


def parse(raw: str) -> tuple[tuple[Source, ...], str | None]:
    """The sources of a ``- Sentences from:`` value, or the first problem with it."""
    out: list[Source] = []
    seen: set[int] = set()
    for part in (p.strip() for p in raw.split(";")):
        m = _ENTRY.match(part)
        if not part or not m:
            return (), f"cannot read {part!r} (write 'N: ep-..., ep-...', entries separated by ';')"
        number = int(m.group(1))
        ids = tuple(dict.fromkeys(e.strip() for e in m.group(2).split(",") if e.strip()))
        bad = [e for e in ids if not EPISODE_ID_RE.match(e)]
        if bad:
            return (), f"sentence {number}: {bad[0]!r} is not an episode ID"
        if not ids:
            return (), f"sentence {number} names no episode"
        if number in seen or number < 1:
            return (), f"sentence {number} is given twice" if number in seen else "sentences count from 1"
        seen.add(number)
        out.append(Source(number, ids, bool(m.group(3))))
    return tuple(out), None


@dataclass(frozen=True)
class Said:
    """One sentence of a rule and where it came from."""

    number: int
    sentence: str
    episode_ids: tuple[str, ...]
    #: "stated" (mapped), "model" (mapped, written by a model) or "rule" (not mapped).
    kind: str


def sentence_sources(text: str, sources: Sequence[Source], cited: Sequence[str]) -> list[Said]:
    """Every sentence of ``text`` with its episodes; an unmapped one: the rule's citations."""
    by_number = {source.number: source for source in sources}
    out: list[Said] = []
    for number, sentence in enumerate(split(text), 1):
        source = by_number.get(number)
        if source is None:
            out.append(Said(number, sentence, tuple(cited), "rule"))
        else:
            out.append(Said(number, sentence, source.episode_ids, "model" if source.model else "stated"))
    return out


def problems(text: str, sources: Sequence[Source], cited: Sequence[str]) -> list[str]:
    """What is wrong with a map against its rule: a number past the last sentence, an
    episode the rule does not cite (each message quotes the sentence)."""
    said = split(text)
    out: list[str] = []
    for source in sources:
        if source.number > len(said):
            out.append(f"'Sentences from' names sentence {source.number}; the text has {len(said)}")
            continue
        stray = [ep for ep in source.episode_ids if ep not in cited]
        if stray:
            out.append(
                f"sentence {source.number} ({_quote(said[source.number - 1])}) names "
                f"{', '.join(stray)}, which 'Learnt in' does not cite"
            )
    return out


def _quote(sentence: str, limit: int = 80) -> str:
    return repr(sentence if len(sentence) <= limit else sentence[: limit - 3] + "...")


def build(parts: Iterable[tuple[str, Sequence[str], bool]]) -> tuple[str, tuple[Source, ...]]:
    """Rule text and its map from (sentence, episodes, model) parts, in order. A part
    that :func:`split` reads as several sentences maps each of them to its episodes."""
    sentences: list[str] = []
    sources: list[Source] = []
    for sentence, episode_ids, model in parts:
        for piece in split(sentence):
            sentences.append(piece)
            ids = tuple(dict.fromkeys(episode_ids))
            if ids:
                sources.append(Source(len(sentences), ids, model))
    return " ".join(sentences), tuple(sources)


def uncite(
    text: str, sources: Sequence[Source], cited: Sequence[str], gone: Iterable[str]
) -> tuple[str, tuple[Source, ...], tuple[str, ...]]:
    """The rule without the citations ``gone``: a sentence only they supported is
    removed, the others keep their remaining episodes; (text, sources, citations).
    An unmapped sentence stays while the rule cites anything."""
    drop = set(gone)
    left = tuple(ep for ep in cited if ep not in drop)
    parts: list[tuple[str, Sequence[str], bool]] = []
    for said in sentence_sources(text, sources, cited):
        if said.kind == "rule":
            if left:
                parts.append((said.sentence, (), False))
            continue
        ids = [ep for ep in said.episode_ids if ep not in drop]
        if ids:
            parts.append((said.sentence, ids, said.kind == "model"))
    new_text, new_sources = build(parts)
    return new_text, new_sources, left
