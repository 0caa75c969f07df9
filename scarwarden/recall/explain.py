"""``--explain``: the arithmetic behind a recall, as data and as lines to redo by hand.

One explanation for every face: the CLI prints :func:`explain_lines` under
:data:`HEADING` (``recall --explain``) or embeds :func:`explain_data` in its JSON
(``recall --json --explain``); the web UI and MCP can show the same. Both read only the
:class:`~scarwarden.recall.result.RecallResult` (its stats hold the router settings the
verdict was reached with), never the index.
"""

from __future__ import annotations

from collections import Counter

from scarwarden import text
from scarwarden.recall.formulas import (
    CASE_POWER,
    CASE_WEIGHT,
    DECIMALS,
    EPISODE_WEIGHT,
    K1,
    LEDGER_PRIOR,
    LONG_RULE,
    TAG_WEIGHT,
    B,
    idf,
    specificity,
)
from scarwarden.recall.result import RecalledRule, RecallResult, RecallStats

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

#: The title :func:`explain_lines` goes under (the CLI prints it in bold).
HEADING = "How the scores were computed"

_FORMULA = {
    "k1": K1,
    "b": B,
    "tag_weight": TAG_WEIGHT,
    "idf": "ln(1 + (N - df + 0.5) / (df + 0.5))",
    "term": "idf * ledger * qtf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))",
    "tag": "tag_weight * min(ledger of the tag's stems)",
    "episode": "episode_weight * idf(episode df) * ledger * qtf * etf * (k1 + 1) / (etf + k1)",
    "episode_weight": EPISODE_WEIGHT,
    "ledger": f"1 - max(0, task_df - 1) / (task_count + {LEDGER_PRIOR})",
    "confidence": (
        "matched_mass / sqrt(task_mass * rule_mass * share), masses: sums of idf * ledger; share = 1, "
        f"or {LONG_RULE:g} * avglen / len for a rule longer than {LONG_RULE:g} * avglen"
    ),
    "closest_episode": "episode words count from the cited episode whose words add most (max, not sum)",
    "case": (
        f"{CASE_WEIGHT:g} * share ** {CASE_POWER} * task_mass, share = (idf * ledger of the task stems "
        "the closest cited episode's task says) / task_mass (version 6)"
    ),
    "case_weight": CASE_WEIGHT,
    "case_power": CASE_POWER,
    "evidence": (
        "sum over matched stems of min(1, idf / idf(df=1)) * ledger (x episode_weight through episodes)"
    ),
}


def explain_data(result: RecallResult) -> dict[str, Any]:
    """Everything :func:`explain_lines` says, as data (``recall --json --explain``)."""
    stats = _stats(result)
    data: dict[str, Any] = {
        "formula": dict(_FORMULA),
        "rule_count": stats.rule_count,
        "avg_length": round(stats.avg_length, DECIMALS),
        "task_stems": stats.task_stems,
        "unknown_stems": stats.unknown_stems,
        "task_mass": round(stats.task_mass, DECIMALS),
        "task_df": stats.task_df,
        "rare_idf": round(idf(1, stats.rule_count), DECIMALS) if stats.rule_count else None,
        "task_count": stats.task_count,
        "ledger_df": stats.ledger_df,
        "ledger": stats.ledger,
        "rules": [_rule_data(r) for r in result.rules],
        "router": _router_data(stats),
    }
    if not result.rules and stats.best is not None:
        data["best_not_returned"] = _rule_data(stats.best)
    return data


def _rule_data(r: RecalledRule) -> dict[str, Any]:
    return {
        "id": r.id,
        "score": r.score,
        "confidence": r.confidence,
        "matched_mass": round(r.matched_mass, DECIMALS),
        "rule_mass": round(r.rule_mass, DECIMALS),
        "evidence": r.evidence,
        "closest_episode": r.closest_episode,
        "length_share": r.length_share,
        "matched_stems": r.matched_stems,
        "through_episodes": r.through_episodes,
        "rule_stems": dict(sorted(r.stem_df.items())),
        "rule_ledger": dict(sorted(r.stem_ledger.items())),
        "tags": [{"tag": t, "stems": list(text.tag_stems(t))} for t in r.matched_tags],
        "terms": [
            {
                "stem": m.stem,
                "qtf": m.qtf,
                "df": m.df,
                "idf": round(m.idf, DECIMALS),
                "tf": m.tf,
                "length": m.length,
                "contribution": m.contribution,
            }
            for m in r.terms
        ],
        "episodes": [
            {
                "stem": e.stem,
                "qtf": e.qtf,
                "df": e.df,
                "idf": round(e.idf, DECIMALS),
                "etf": e.etf,
                "contribution": e.contribution,
                "via": [{"episode": ep, "field": where, "tf": tf} for ep, where, tf in e.via],
            }
            for e in r.via_episodes
        ],
        "pairs": [
            {
                "pair": p.pair,
                "weight": p.weight,
                "df": p.df,
                "idf": round(p.idf, DECIMALS),
                "tf": p.tf,
                "length": p.length,
                "contribution": p.contribution,
            }
            for p in r.pairs
        ],
        "case": r.case.to_json() if r.case is not None else None,
    }


def _router_data(stats: RecallStats) -> dict[str, Any]:
    """The router's settings, what it read from the best-ranked rule, and its reason."""
    return {
        "act_threshold": stats.settings.act_threshold,
        "floor": stats.settings.floor,
        "act_tag_hits": stats.settings.act_tag_hits,
        "best_rule": stats.best.id if stats.best is not None else None,
        "best_confidence": stats.best_confidence,
        "best_tag_hits": stats.best_tag_hits,
        "best_evidence": stats.best_evidence,
        "best_score": stats.best_score,
        "best_matched_words": stats.best_matched_words,
        "task_words": len(stats.task_stems),
        "best_rule_coverage": stats.best_rule_coverage,
        "reason": _reason(stats),
        "downgraded_by": stats.downgraded_by.to_json() if stats.downgraded_by is not None else None,
        "return_share": stats.return_share,
        "left_by_share": [{"id": rule_id, "score": score} for rule_id, score in stats.left_by_share],
    }


def explain_lines(result: RecallResult) -> list[str]:
    """The arithmetic behind every score and the verdict, one line each (indented by
    two spaces, blank lines between rules; :data:`HEADING` goes above them)."""
    stats = _stats(result)
    lines = _formula_lines(stats)
    shown = result.rules or ([stats.best] if stats.best is not None else [])
    for rule in shown:
        lines.append("")
        note = "" if result.rules else " (best-ranked; below the floor, so not returned)"
        lines += _rule_lines(rule, stats, note)
    lines.append("")
    lines.append("  router: " + _reason(stats))
    if stats.downgraded_by is not None:
        lines.append(
            f"  downgraded to ACT_AND_FLAG: {stats.downgraded_by.sentence()}; it is struggling "
            "(corrected in at least half of 3+ applications) and no other rule earns ACT on its own"
        )
    if stats.left_by_share:
        lines.append("  " + _share_line(stats))
    for rule in result.rules:
        if rule.lineage is not None:
            lines.append(f"  lineage: {_lineage_line(rule.id, rule.lineage)}")
    return lines


def _share_line(stats: RecallStats) -> str:
    """Which rules over the floor the return share left out, and the bar they missed."""
    best = stats.best_score or 0.0
    left = ", ".join(f"{rule_id} ({score:.4f})" for rule_id, score in stats.left_by_share)
    return (
        f"left out by the return share (a score under {stats.return_share:g} x the best's "
        f"{best:.4f} = {stats.return_share * best:.4f}): {left}"
    )


def _lineage_line(rule_id: str, counts: dict[str, Any]) -> str:
    return (
        f"{rule_id} applied {counts['applied']}, went well {counts['went_well']}, corrected "
        f"{counts['corrected']} since it last changed ({counts['counted']})"
        + (": struggling" if counts.get("struggling") else "")
    )


def _formula_lines(stats: RecallStats) -> list[str]:
    """The task's stems, the constants and formulas, and the task's mass."""
    stems = ", ".join(s if q == 1 else f"{s} x{q}" for s, q in stats.task_stems.items())
    lines = [f"  task stems: {stems or '(none: only stopwords or punctuation)'}"]
    if stats.unknown_stems:
        lines.append(f"  in no rule: {', '.join(stats.unknown_stems)}")
    return lines + [
        f"  N = {stats.rule_count} active rules, avglen = {stats.avg_length:.4f} stems; "
        f"K1 = {K1}, B = {B}, tag hit = {TAG_WEIGHT:g}",
        "  idf(t)  = ln(1 + (N - df + 0.5) / (df + 0.5))",
        "  term(t) = idf x qtf x tf x (K1 + 1) / (tf + K1 x (1 - B + B x len / avglen))",
        "  confidence = matched / sqrt(task x rule): sums of idf x ledger over the matched stems, "
        "the task's stems and the rule's stems (title, text, tags)",
        f"  episode(t) = {EPISODE_WEIGHT:g} x idf (df: rules whose episodes say t) x ledger x qtf x etf x "
        f"{K1 + 1:g} / (etf + {K1})",
        "  pair(a b)  = idf (df: rules saying a then b) x weight (the lesser of qtf x ledger of a and of b) "
        "x the term(t) fraction for tf = how often the rule says a then b; ranks only",
        f"  evidence   = sum over matched stems of min(1, idf / {idf(1, max(1, stats.rule_count)):.4f}) x "
        f"ledger ({EPISODE_WEIGHT:g} x that for a stem matched only through episodes)",
        *_ledger_lines(stats),
        f"  task mass  = {stats.task_mass:.4f} = "
        + _mass(list(stats.task_df.values()), stats.rule_count, _weights(stats.task_df, stats.ledger)),
    ]


def _ledger_lines(stats: RecallStats) -> list[str]:
    """How common each task stem is across the ledger's tasks, and what that weighs."""
    if not stats.task_count:
        return ["  ledger: no episodes, every word weighs 1"]
    said = ", ".join(
        f"{t} {stats.ledger.get(t, 1.0):g} ({d} of {stats.task_count})" for t, d in stats.ledger_df.items()
    )
    return [
        f"  ledger(t) = 1 - (past tasks saying t - 1) / ({stats.task_count} tasks + {LEDGER_PRIOR}); "
        f"words at most one task says weigh 1",
        f"  ledger weights: {said or '(no task stem is in a past task)'}",
    ]


def _weights(dfs: dict[str, int], ledger: dict[str, float]) -> list[float]:
    return [ledger.get(t, 1.0) for t in dfs]


def _rule_lines(rule: RecalledRule, stats: RecallStats, note: str) -> list[str]:
    """One rule's score as a sum of its contributions, and its confidence's masses."""
    avg = stats.avg_length
    length = rule.terms[0].length if rule.terms else None
    size = f", len {length}" if length is not None else ""
    lines = [f"  {rule.id}{size}{note}: score {rule.score:.4f} = sum of"]
    if rule.closest_episode:
        lines.append(
            f"    closest cited episode: {rule.closest_episode} (only its words count below; "
            f"{len(rule.episode_ids)} cited)"
        )
    for tag in rule.matched_tags:
        parts = " + ".join(text.tag_stems(tag))
        value = rule.contributions["tag:" + tag]
        lines.append(f"    tag:{tag:<20} {value:8.4f}  (all of {parts} in the task){_x(value / TAG_WEIGHT)}")
    for m in rule.terms:
        lines.append(
            f"    term:{m.stem:<19} {m.contribution:8.4f}  = idf {m.idf:.4f} (df {m.df}) x "
            f"qtf {m.qtf} x tf {m.tf} x {K1 + 1:g} / ({m.tf} + {K1} x ({1 - B:g} + {B} x "
            f"{m.length}/{avg:.4f})){_x(stats.ledger.get(m.stem, 1.0))}"
        )
    for e in rule.via_episodes:
        where = ", ".join(f"{ep} {field} (tf {tf})" for ep, field, tf in e.via)
        lines.append(
            f"    episode:{e.stem:<16} {e.contribution:8.4f}  = {EPISODE_WEIGHT:g} x idf {e.idf:.4f} "
            f"(df {e.df}) x qtf {e.qtf} x etf {e.etf} x {K1 + 1:g} / ({e.etf} + {K1})"
            f"{_x(stats.ledger.get(e.stem, 1.0))}: term {e.stem} via {where}"
        )
    for p in rule.pairs:
        lines.append(
            f"    pair:{p.pair:<19} {p.contribution:8.4f}  = idf {p.idf:.4f} (df {p.df}) x "
            f"weight {p.weight:g} x tf {p.tf} x {K1 + 1:g} / ({p.tf} + {K1} x ({1 - B:g} + {B} x "
            f"{p.length}/{avg:.4f})): {p.pair.replace(' ', ' then ')} side by side (ranking only)"
        )
    if rule.case is not None:
        c = rule.case
        lines.append(
            f"    case:{c.episode_id:<19} {c.contribution:8.4f}  = {CASE_WEIGHT:g} x share {c.share:.4f}^"
            f"{CASE_POWER} x task {stats.task_mass:.4f}: {c.episode_id}'s task says "
            f"{', '.join(c.stems)} ({c.said:.4f} of the task's mass; ranking only)"
        )
    return lines + _confidence_lines(rule, stats)


def _confidence_lines(rule: RecalledRule, stats: RecallStats) -> list[str]:
    """A rule's confidence and evidence, mass by mass, and what its length counts."""
    avg = stats.avg_length
    n = stats.rule_count
    matched = [rule.stem_df[s] for s in rule.matched_stems]
    ledger = {**stats.ledger, **rule.stem_ledger}
    lines = [
        f"    confidence {rule.confidence:.4f} = matched {rule.matched_mass:.4f} / sqrt(task "
        f"{stats.task_mass:.4f} x rule {rule.rule_mass:.4f}); evidence {rule.evidence:g} = "
        + " + ".join(
            [f"{specificity(rule.stem_df[s], n) * ledger.get(s, 1.0):.4f} ({s})" for s in rule.matched_stems]
            + [
                f"{EPISODE_WEIGHT:g} x {specificity(stats.task_df.get(s, 0), n) * ledger.get(s, 1.0):.4f}"
                f" ({s})"
                for s in rule.through_episodes
            ]
        ),
        f"      matched {', '.join(rule.matched_stems)} = "
        + _mass(matched, n, [ledger.get(s, 1.0) for s in rule.matched_stems]),
        f"      rule {len(rule.stem_df)} stems = "
        + _mass(list(rule.stem_df.values()), n, [ledger.get(s, 1.0) for s in rule.stem_df]),
    ]
    if rule.length_share is not None and rule.length_share < 1.0:
        lines.append(
            f"      the rule is longer than {LONG_RULE:g} x the average rule ({avg:.4f} stems): its mass "
            f"counts as {LONG_RULE:g} x the average rule, x {rule.length_share:.4f}"
        )
    if rule.through_episodes:
        lines.append(
            f"      + {EPISODE_WEIGHT:g} x (idf x ledger) on both sides for "
            f"{', '.join(rule.through_episodes)} (matched only through the rule's episodes)"
        )
    return lines


def _x(weight: float) -> str:
    """`` x ledger 0.41`` when a ledger weight below 1 applied."""
    return "" if weight >= 1.0 else f" x ledger {weight:.4f}"


def _mass(dfs: list[int], n: int, weights: list[float] | None = None) -> str:
    """A sum of idf (x ledger weight) written by df, to redo by hand:
    ``3 x 2.3026 (df 1) + 1 x 1.7918 (df 2) x 0.5``."""
    counts = Counter(zip(dfs, weights or [1.0] * len(dfs), strict=True))
    return (
        " + ".join(f"{k} x {idf(df, n):.4f} (df {df}){_x(w)}" for (df, w), k in sorted(counts.items())) or "0"
    )


def _reason(stats: RecallStats) -> str:
    return stats.route_reason()


def _stats(result: RecallResult) -> RecallStats:
    # recall() always fills the stats; a RecallResult built by hand may not.
    if result.stats is None:
        raise ValueError("this recall result carries no stats to explain")
    return result.stats
