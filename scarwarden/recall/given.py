"""What recall gives the agent beyond the ranked rules (version 4, issue 26): the
evidence of each returned rule, and, when the router says ``ASK_HUMAN``, the nearest
*candidates*, never in ``rules``.

* **Evidence** (:mod:`scarwarden.recall.evidence`): per returned rule, sentences of
  its closest cited episode's correction, with the episode's ID. Read from the index's
  episodes (their stored documents): a redacted episode's stub has no correction, so
  its removed text never appears.
* **Candidates**: on ``ASK_HUMAN``, the best-ranked rules that were not returned (at
  most :data:`MAX_CANDIDATES`, each with its evidence), or, when no rule shares a word
  or a tag with the task, the failed episodes (those with a correction) whose tasks
  share the most words with it, by the summed idf over the ledger's tasks. Shown as
  "nearest, unconfirmed: ask before using": an agent that applies ``rules`` blindly
  never acts on them. ``scarwarden ask --confirm PB-..`` turns a human's "yes, that
  one" into an episode citing the rule.
"""

from __future__ import annotations

import json
import math

from scarwarden.index.packed import load_rest
from scarwarden.recall import evidence
from scarwarden.recall.evidence import Candidate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from scarwarden.index import Index
    from scarwarden.recall.result import RecalledRule
    from scarwarden.recall.score import TaskTerms

#: Candidates shown on ASK_HUMAN.
MAX_CANDIDATES = 3


def corrections(index: Index, episode_ids: list[str]) -> dict[str, str | None]:
    """Episode ID -> its stored correction (None: none, or a redaction stub)."""
    return read_episodes(index, episode_ids)[0]


def read_episodes(index: Index, episode_ids: list[str]) -> tuple[dict[str, str | None], set[str]]:
    """Episode ID -> its stored correction (None: none, or a redaction stub), and which
    of them are redaction stubs (:meth:`Index.redacted_episode_ids`'s test): one read of
    each episode's stored document for both."""
    if not episode_ids:
        return {}, set()
    rows = index.conn.execute(
        "SELECT id, z FROM episodes WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(set(episode_ids))),),
    )
    found: dict[str, str | None] = {}
    redacted: set[str] = set()
    for ep, packed in rows:  # the stored JSON parsed once here (a valid episode's correction is text)
        data = load_rest(packed)
        stub = data.get("redacted") is not None
        correction = data.get("correction")
        found[ep] = None if stub or not isinstance(correction, str) else correction
        if stub:
            redacted.add(ep)
    return found, redacted


def attach_evidence(
    index: Index, rules: list[RecalledRule], task: TaskTerms, found: dict[str, str | None] | None = None
) -> None:
    """Set each rule's ``quotes``: its closest cited episode's correction sentences.
    ``found``: the episodes' corrections when already read (:func:`read_episodes`)."""
    if found is None:
        wanted = [ep for r in rules for ep in evidence.order(r.closest_episode, r.episode_ids)]
        found = corrections(index, wanted)
    weights = task.stem_weights()
    for rule in rules:
        said = rule.said_stems
        if task.version < 5:
            said = None
        elif said is None:  # not read by scoring
            said = evidence.rule_stems(rule.title, rule.text)
        chosen = evidence.choose(rule.closest_episode, rule.episode_ids, found.get, weights, said)
        rule.quotes = [chosen] if chosen else []


def rule_candidates(index: Index, ranked: list[RecalledRule], task: TaskTerms) -> list[Candidate]:
    """The best-ranked rules, with their evidence, as candidates."""
    near = ranked[:MAX_CANDIDATES]
    attach_evidence(index, near, task)
    return [Candidate("rule", r.id, r.title, r.text, r.score, r.confidence, list(r.quotes)) for r in near]


def episode_candidates(index: Index, task: TaskTerms) -> list[Candidate]:
    """The failed episodes (with a correction) whose tasks share the most words with the
    task: sum over shared stems of ln(1 + tasks / task_df), best first, then by ID."""
    stems = sorted(task.qtf)
    if not stems:
        return []
    rows = index.conn.execute(
        "SELECT t.episode_id, t.term, d.df FROM task_terms AS t JOIN task_term_df AS d ON d.term = t.term "
        "WHERE t.term IN (SELECT value FROM json_each(?))",
        (json.dumps(stems),),
    ).fetchall()
    count = max(1, task.task_count)
    sums: dict[str, list[float]] = {}
    for episode_id, _term, df in rows:
        sums.setdefault(episode_id, []).append(math.log(1.0 + count / max(1, int(df))))
    ranked = sorted(((round(math.fsum(v), 4), ep) for ep, v in sums.items()), key=lambda p: (-p[0], p[1]))
    found = corrections(index, [ep for _s, ep in ranked[: 20 * MAX_CANDIDATES]])
    weights = task.stem_weights()
    out: list[Candidate] = []
    for score, episode_id in ranked[: 20 * MAX_CANDIDATES]:
        said = found.get(episode_id)
        if not said:
            continue
        title = _task_of(index, episode_id)
        out.append(
            Candidate("episode", episode_id, title, "", score, None, [_quote(episode_id, said, weights)])
        )
        if len(out) == MAX_CANDIDATES:
            break
    return out


def _quote(episode_id: str, correction: str, weights: dict[str, float]) -> evidence.Evidence:
    return evidence.Evidence(episode_id, evidence.quote(correction, weights))


def _task_of(index: Index, episode_id: str) -> str:
    row = index.conn.execute("SELECT task FROM episodes WHERE id = ?", (episode_id,)).fetchone()
    task = str(row[0] or "") if row else ""
    return task if len(task) <= evidence.MAX_CHARS else evidence.quote(task, {})


def candidates(index: Index, ranked: list[RecalledRule], task: TaskTerms) -> list[Candidate]:
    """ASK_HUMAN's candidates: the nearest rules, else the nearest failed episodes."""
    return rule_candidates(index, ranked, task) if ranked else episode_candidates(index, task)
