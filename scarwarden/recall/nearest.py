"""ASK_HUMAN's candidates as a receipt names them, and as the gate re-derives them
without the index (issue 26: the receipt covers what the agent was given).

The engine computes the candidates from the index (:mod:`scarwarden.recall.given`):
the best-ranked rules with their evidence, or, when no rule shares a word or a tag
with the task, the failed episodes whose tasks share the most words with it. The same
arithmetic is here over plain data, so the gate (:mod:`scarwarden.gate.proofs`) can
re-run it on the playbook at a receipt's blob and the episodes at its ledger tree
(``tests/recall/test_nearest.py`` keeps the two equal on generated memories):

* :func:`rule_candidates`: the first :data:`~scarwarden.recall.given.MAX_CANDIDATES`
  of the ranking, each with the evidence :func:`scarwarden.recall.evidence.choose`
  picks (version 5 on: sentences that add to the rule);
* :func:`episode_candidates`: every episode whose task shares a stem with the task,
  scored by the sum over shared stems of ln(1 + tasks / task_df), best first then by
  ID; of the first ``20 x MAX_CANDIDATES``, the first with a correction (a redacted
  episode has none). Ranking needs only each episode's task stems and whether it has a
  correction (:class:`LedgerEpisode`, what the gate caches); the texts are read for the
  episodes chosen.

Nothing here imports the index or SQLite.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Callable, Collection, Iterable, Mapping

from scarwarden.recall import evidence
from scarwarden.recall.evidence import Candidate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

#: Candidates shown on ASK_HUMAN (:data:`scarwarden.recall.given.MAX_CANDIDATES`; a
#: test keeps them equal: that module reads the index, the gate may not import it).
MAX_CANDIDATES = 3
#: Of the nearest episodes, how many are looked at for a correction.
EPISODES_LOOKED_AT = 20 * MAX_CANDIDATES


if TYPE_CHECKING:

    class LedgerEpisode(NamedTuple):
        """What the candidates need of one episode of the ledger to rank it (a tuple: the
        gate makes one per episode, 100k of them on a large ledger)."""

        id: str
        #: The stems its task says (each once).
        stems: Collection[str]
        #: Whether it has a correction to show (not empty, not redacted).
        fixed: bool

else:  # the same tuple, made without typing's NamedTuple, which compiles each string
    # annotation (a cold recall imports this module: ~0.3 ms)
    LedgerEpisode = namedtuple("LedgerEpisode", ("id", "stems", "fixed"))


#: Episode IDs -> (task, correction) of those episodes: the texts shown, read only for
#: the episodes chosen.
Texts = Callable[[list[str]], Mapping[str, tuple[str, str]]]


def shown_candidates(result: Any) -> tuple[list[str], dict[str, str]] | None:
    """What a receipt names of a :class:`~scarwarden.recall.result.RecallResult`'s
    candidates: their IDs in order, and each candidate rule's evidence episode; ``None``
    when the verdict is not ``ASK_HUMAN`` (no candidate is shown)."""
    if result.verdict != "ASK_HUMAN":
        return None
    ids = [c.id for c in result.candidates]
    quoted = {c.id: c.quotes[0].episode_id for c in result.candidates if c.kind == "rule" and c.quotes}
    return ids, quoted


def rule_candidates(
    ranked: list[Any], task: Any, correction_of: Callable[[str], str | None]
) -> list[Candidate]:
    """The best-ranked rules (:class:`~scarwarden.recall.result.RecalledRule`, ranked),
    each with its evidence, as candidates; ``task``: the
    :class:`~scarwarden.recall.task.TaskTerms`."""
    near = ranked[:MAX_CANDIDATES]
    weights = task.stem_weights()
    for rule in near:
        said = evidence.rule_stems(rule.title, rule.text) if task.version >= 5 else None
        chosen = evidence.choose(rule.closest_episode, rule.episode_ids, correction_of, weights, said)
        rule.quotes = [chosen] if chosen else []
    return [Candidate("rule", r.id, r.title, r.text, r.score, r.confidence, list(r.quotes)) for r in near]


def episode_candidates(task: Any, episodes: Iterable[LedgerEpisode], texts: Texts) -> list[Candidate]:
    """The failed episodes nearest ``task`` (the engine's
    :func:`scarwarden.recall.given.episode_candidates`, over the ledger's episodes)."""
    stems = set(task.qtf)
    if not stems or not task.task_df:
        return []  # no past task says a word of this one
    count = max(1, task.task_count)
    sums: dict[str, float] = {}
    fixed: set[str] = set()
    for ep in episodes:
        shared = stems.intersection(ep.stems)
        if shared:
            idfs = [math.log(1.0 + count / max(1, int(task.task_df.get(s, 0)))) for s in shared]
            sums[ep.id] = round(math.fsum(idfs), 4)
            if ep.fixed:
                fixed.add(ep.id)
    ranked = sorted(((s, ep) for ep, s in sums.items()), key=lambda p: (-p[0], p[1]))
    chosen = [(s, ep) for s, ep in ranked[:EPISODES_LOOKED_AT] if ep in fixed][:MAX_CANDIDATES]
    said = texts([ep for _s, ep in chosen])
    weights = task.stem_weights()
    out: list[Candidate] = []
    for score, episode_id in chosen:
        asked, correction = said[episode_id]
        title = asked if len(asked) <= evidence.MAX_CHARS else evidence.quote(asked, {})
        quote = evidence.Evidence(episode_id, evidence.quote(correction, weights))
        out.append(Candidate("episode", episode_id, title, "", score, None, [quote]))
    return out


def fixed(correction: Any, redacted: bool) -> str | None:
    """The correction an episode shows as a candidate: ``None`` when it has none (or an
    empty one) or was redacted (the engine's :func:`scarwarden.recall.given.corrections`)."""
    return correction if not redacted and isinstance(correction, str) and correction else None


def gate_candidates(
    episodes: Callable[[], Iterable[LedgerEpisode]], texts: Texts
) -> Callable[[list[Any], Any, Callable[[str], str | None]], list[Candidate]]:
    """What :func:`scarwarden.recall.pure_ledger.recall_ledger` calls on ``ASK_HUMAN``
    (``candidates=``): the nearest rules, else the nearest failed episodes of the ledger
    (``episodes`` is called only then: it reads every episode of the tree; ``texts``
    reads the chosen ones' task and correction)."""

    def candidates(
        ranked: list[Any], task: Any, correction_of: Callable[[str], str | None]
    ) -> list[Candidate]:
        if ranked:
            return rule_candidates(ranked, task, correction_of)
        if not task.task_df:
            return []  # no past task says a word of this one: nothing to read
        return episode_candidates(task, episodes(), texts)

    return candidates
