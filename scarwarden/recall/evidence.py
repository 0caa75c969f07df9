"""Evidence with every recalled rule (recall version 4, issue 26): the sentences of its
closest cited episode's correction (or a human's answer, which is stored as the
correction of a ``human-answer`` episode), with the episode's ID.

Which episode: the one whose words add most to the task's score
(:func:`scarwarden.recall.score.closest_episode`), then the rule's other citations in
the order the rule lists them; the first of them that has a correction gives the
evidence. A redacted episode has no correction left (its stub keeps only ``id`` and
``at``), so its removed text never appears: the next episode is used, or none.

Which sentences: the correction is split into sentences; the one sharing the most of
the task's words (weighted by idf in the task) comes first, then the next best while
the quote stays within :data:`MAX_CHARS` (about :data:`MAX_TOKENS` tokens at four
characters a token), shown in the correction's own order. A single sentence longer
than that is cut at a word boundary and ends with ``...``. So the evidence of a rule
stays bounded whatever the rule cites (one episode, at most ~60 tokens).

Version 5 (issue 26): the evidence adds to the rule, it does not repeat it. A sentence
whose stems the rule's title and text already all say is left out (it tells the agent
nothing the rule did not); the sentences kept are those with a word of their own (a
value, a name, the case). When none is left, the evidence still names the episode, with
no text: the ID is always given, so the agent (or the human) can open it.

Pure functions of the episode's text and the task's words: the engine and the gate's
re-derivation (:mod:`scarwarden.recall.pure_ledger`) pick the same episode and the
same sentences.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet

from scarwarden import text
from scarwarden.records import field, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The evidence's size bound, in tokens (the replay counts characters / 4).
MAX_TOKENS = 60
MAX_CHARS = 4 * MAX_TOKENS
#: What the text output shows for evidence with no sentence left (version 5).
NOTHING_MORE = "(nothing the rule does not already say; open the episode for the whole case)"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


@record(frozen=True)
class Evidence:
    """One rule's evidence: an episode it cites and sentences of its correction."""

    episode_id: str
    text: str

    def to_json(self) -> dict[str, str]:
        return {"episode_id": self.episode_id, "text": self.text}

    @property
    def shown(self) -> str:
        """The text to print: the sentences, or, when none adds to the rule (version 5),
        a note that the episode says nothing the rule does not."""
        return self.text or NOTHING_MORE


@record
class Candidate:
    """A nearest rule, or a nearest failed episode, shown (unconfirmed) on ASK_HUMAN."""

    kind: str  # "rule" or "episode"
    id: str
    title: str = ""
    text: str = ""
    score: float = 0.0
    confidence: float | None = None
    quotes: list[Evidence] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "id": self.id}
        if self.kind == "rule":
            out.update(title=self.title, text=self.text, score=self.score, confidence=self.confidence)
        else:
            out.update(task=self.title, score=self.score)
        out["evidence"] = [q.to_json() for q in self.quotes]
        return out


def sentences(correction: str) -> list[str]:
    """The correction's sentences, stripped, in order."""
    return [s.strip() for s in _SENTENCE_END.split(correction) if s.strip()]


def _cut(sentence: str) -> str:
    """A sentence longer than :data:`MAX_CHARS`, cut at a word boundary."""
    head = sentence[: MAX_CHARS - 4]
    space = head.rfind(" ")
    return (head[:space] if space > MAX_CHARS // 2 else head).rstrip(" ,;:") + " ..."


def quote(correction: str, weights: Mapping[str, float], said: AbstractSet[str] | None = None) -> str:
    """The sentences of ``correction`` to show for a task whose stems weigh ``weights``
    (idf x ledger weight), bounded by :data:`MAX_CHARS`; with ``said`` (version 5: the
    rule's stems), only the sentences that say a stem the rule does not."""
    stemmed = [(p, set(text.stems(p))) for p in sentences(correction)]  # once a sentence
    if said is not None:
        stemmed = [(p, stems) for p, stems in stemmed if not stems <= said]  # says something new
    if not stemmed:
        return ""
    parts = [p for p, _stems in stemmed]
    scored = []
    for i, (_sentence, stems) in enumerate(stemmed):
        shared = stems & weights.keys()
        scored.append((-sum(weights[s] for s in sorted(shared)), i))
    scored.sort()
    chosen: list[int] = []
    size = 0
    for _score, i in scored:
        extra = len(parts[i]) + (1 if chosen else 0)
        if size + extra > MAX_CHARS:
            if not chosen:
                return _cut(parts[i])
            continue
        chosen.append(i)
        size += extra
    return " ".join(parts[i] for i in sorted(chosen))


def order(closest: str | None, cited: list[str]) -> list[str]:
    """The episodes to look at for evidence: the closest first, then the rule's other
    citations in the rule's order."""
    return list(dict.fromkeys(([closest] if closest else []) + list(cited)))


def choose(
    closest: str | None,
    cited: list[str],
    correction_of: Callable[[str], str | None],
    weights: Mapping[str, float],
    said: AbstractSet[str] | None = None,
) -> Evidence | None:
    """The evidence of a rule: the first episode of :func:`order` with a correction.

    With ``said`` (version 5: the rule's own stems), its sentences that add to the rule,
    and the episode named even when none does (an empty text)."""
    for episode_id in order(closest, cited):
        correction = correction_of(episode_id)
        if isinstance(correction, str) and correction.strip():
            quoted = quote(correction, weights, said)
            if quoted or said is not None:
                return Evidence(episode_id, quoted)
    return None


def rule_stems(title: str, body: str) -> frozenset[str]:
    """The stems a rule's title and text say (what its evidence need not repeat)."""
    return frozenset(text.stems(f"{title}\n{body}"))


def given_evidence(result: Any) -> dict[str, str]:
    """Rule ID -> the episode whose sentences were given as its evidence (version 4),
    for a :class:`~scarwarden.recall.result.RecallResult`: what a receipt names."""
    return {r.id: r.quotes[0].episode_id for r in result.rules if r.quotes}
