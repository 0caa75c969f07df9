from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from scarwarden.cli.commands._common import echo_json, get_repo
from scarwarden.recall.engine import RecallResult
from scarwarden.repo import MemoryRepo

_VERDICT_COLOUR = {"ACT": "green", "ACT_AND_FLAG": "yellow", "ASK_HUMAN": "red"}


def read_task(words: tuple[str, ...]) -> str:
    """TASK words joined by spaces; a single ``-`` reads the task from stdin."""
    if words == ("-",):
        return sys.stdin.read()
    return " ".join(words)


@click.command()
@click.argument("task", nargs=-1, required=True)
@click.option("--json", "as_json", is_flag=True,
              help="Print {task, verdict, playbook_commit, rules: [{id, title, text, score, "
                   "matched_tags, matched_terms, contributions, episode_ids}]}.")
@click.option("--limit", "-n", type=click.IntRange(min=1), metavar="N",
              help="At most N rules (default: recall.limit in scarwarden.yaml, 5).")
@click.option("--explain", is_flag=True,
              help="Show the full arithmetic: idf, tf, length normalisation, weights.")
@click.option("--no-log", is_flag=True, help="Do not append this recall to the recall log.")
@click.pass_context
def recall(ctx: click.Context, task: tuple[str, ...], as_json: bool, limit: int | None,
           explain: bool, no_log: bool) -> None:
    """Rules that apply to TASK, why each matched, and the router's verdict.

    Deterministic (no model, no network): the same playbook and task give the same
    output, byte for byte. The verdict says how to proceed: ACT (follow the rules),
    ACT_AND_FLAG (follow them, but state your assumptions), ASK_HUMAN (memory has
    nothing: ask, e.g. with `scarwarden ask`). Each recall is appended to the recall
    log (`scarwarden log`) unless --no-log. TASK may be several words, or `-` to read
    it from stdin (at most 20,000 characters).

    \b
    Examples:
      scarwarden recall "Draft a LinkedIn post announcing our beta"
      scarwarden recall "Post our discount code on Twitter" --json
      scarwarden recall --explain --limit 3 "Close the billing ticket"
    """
    from scarwarden.recall.engine import recall_task

    repo = get_repo(ctx)
    result = recall_task(repo, read_task(task), limit=limit, log=not no_log)
    if as_json:
        data = result.to_json()
        if explain:
            data["explain"] = explain_json(result)
        echo_json(data)
        return
    click.echo(format_result(result, playbook_rel=repo.playbook_rel))
    if explain:
        click.echo("")
        click.echo(format_explain(result))


def format_result(result: RecallResult, *, playbook_rel: str = "the playbook") -> str:
    """The readable form: the verdict and its meaning, then the ranked rules and why."""
    verdict = click.style(result.verdict, fg=_VERDICT_COLOUR[result.verdict], bold=True)
    lines = [f"{verdict}  {result.meaning}"]
    if not result.rules:
        lines.append("No rule in memory matches this task.")
    for rank, rule in enumerate(result.rules, 1):
        lines.append("")
        lines.append(click.style(f"{rank}. {rule.id}: {rule.title}", bold=True)
                     + f"  (score {rule.score:g}, confidence {rule.confidence:g})")
        lines.append(f"   {rule.text}")
        lines.append(f"   why: {rule.why()}")
        lines.append(f"   cite: {rule.citation()}")
    lines.append("")
    if result.playbook_commit:
        lines.append(click.style(f"playbook: {result.playbook_commit[:12]} (last commit that "
                                 f"changed {playbook_rel})", dim=True))
    else:
        lines.append(click.style("playbook: uncommitted (the working-tree playbook is not "
                                 "a committed version)", dim=True))
    return "\n".join(lines)


def explain_json(result: RecallResult) -> dict[str, Any]:
    """Everything --explain prints, as data."""
    from scarwarden import text
    from scarwarden.recall import engine as rc
    from scarwarden.recall import router

    stats = result.stats
    assert stats is not None

    def rule_json(r: rc.RecalledRule) -> dict[str, Any]:
        return {"id": r.id, "score": r.score, "confidence": r.confidence,
                "matched_mass": round(r.matched_mass, rc.DECIMALS),
                "rule_mass": round(r.rule_mass, rc.DECIMALS), "evidence": r.evidence,
                "matched_stems": r.matched_stems, "rule_stems": r.stem_df,
                "tags": [{"tag": t, "stems": list(text.tag_stems(t))} for t in r.matched_tags],
                "terms": [{"stem": m.stem, "qtf": m.qtf, "df": m.df,
                           "idf": round(m.idf, rc.DECIMALS), "tf": m.tf, "length": m.length,
                           "contribution": m.contribution} for m in r.terms]}

    data: dict[str, Any] = {
        "formula": {"k1": rc.K1, "b": rc.B, "tag_weight": rc.TAG_WEIGHT,
                    "idf": "ln(1 + (N - df + 0.5) / (df + 0.5))",
                    "term": "idf * qtf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))",
                    "confidence": "matched_mass / sqrt(task_mass * rule_mass)",
                    "evidence": "matched_mass / idf(df=1)"},
        "rule_count": stats.rule_count, "avg_length": round(stats.avg_length, rc.DECIMALS),
        "task_stems": stats.task_stems, "unknown_stems": stats.unknown_stems,
        "task_mass": round(stats.task_mass, rc.DECIMALS), "task_df": stats.task_df,
        "rare_idf": round(rc.idf(1, stats.rule_count), rc.DECIMALS) if stats.rule_count else None,
        "rules": [rule_json(r) for r in result.rules],
        "router": {"act_threshold": stats.settings.act_threshold, "floor": stats.settings.floor,
                   "act_tag_hits": stats.settings.act_tag_hits,
                   "best_rule": stats.best.id if stats.best is not None else None,
                   "best_confidence": stats.best_confidence,
                   "best_tag_hits": stats.best_tag_hits, "best_evidence": stats.best_evidence,
                   "best_score": stats.best_score,
                   "reason": router.reason(stats.best_confidence, stats.best_tag_hits,
                                           stats.best_evidence, stats.settings)},
    }
    if not result.rules and stats.best is not None:
        data["best_not_returned"] = rule_json(stats.best)
    return data


def format_explain(result: RecallResult) -> str:
    """The arithmetic behind every score and the verdict, in a form to redo by hand."""
    from scarwarden import text
    from scarwarden.recall import engine as rc
    from scarwarden.recall import router

    stats = result.stats
    assert stats is not None
    k1, b, avg = rc.K1, rc.B, stats.avg_length
    stems = ", ".join(s if q == 1 else f"{s} x{q}" for s, q in stats.task_stems.items())
    lines = [click.style("How the scores were computed", bold=True),
             f"  task stems: {stems or '(none: only stopwords or punctuation)'}"]
    if stats.unknown_stems:
        lines.append(f"  in no rule: {', '.join(stats.unknown_stems)}")
    lines += [
        f"  N = {stats.rule_count} active rules, avglen = {avg:.4f} stems; "
        f"K1 = {k1}, B = {b}, tag hit = {rc.TAG_WEIGHT:g}",
        "  idf(t)  = ln(1 + (N - df + 0.5) / (df + 0.5))",
        "  term(t) = idf x qtf x tf x (K1 + 1) / (tf + K1 x (1 - B + B x len / avglen))",
        "  confidence = matched / sqrt(task x rule): sums of idf over the matched stems, the "
        "task's stems and the rule's stems (title, text, tags)",
        f"  evidence   = matched / {rc.idf(1, max(1, stats.rule_count)):.4f} (the idf of a "
        "stem in one rule)",
        f"  task mass  = {stats.task_mass:.4f} = "
        + _mass(list(stats.task_df.values()), stats.rule_count),
    ]
    shown = result.rules or ([stats.best] if stats.best is not None else [])
    for rule in shown:
        lines.append("")
        length = rule.terms[0].length if rule.terms else None
        size = f", len {length}" if length is not None else ""
        note = "" if result.rules else " (best-ranked; below the floor, so not returned)"
        lines.append(f"  {rule.id}{size}{note}: score {rule.score:.4f} = sum of")
        for tag in rule.matched_tags:
            parts = " + ".join(text.tag_stems(tag))
            lines.append(f"    tag:{tag:<20} {rc.TAG_WEIGHT:8.4f}  (all of {parts} in the task)")
        for m in rule.terms:
            lines.append(
                f"    term:{m.stem:<19} {m.contribution:8.4f}  = idf {m.idf:.4f} (df {m.df}) x "
                f"qtf {m.qtf} x tf {m.tf} x {k1 + 1:g} / ({m.tf} + {k1} x ({1 - b:g} + {b} x "
                f"{m.length}/{avg:.4f}))")
        matched = [rule.stem_df[s] for s in rule.matched_stems]
        lines += [
            f"    confidence {rule.confidence:.4f} = matched {rule.matched_mass:.4f} / sqrt(task "
            f"{stats.task_mass:.4f} x rule {rule.rule_mass:.4f}); evidence {rule.evidence:g}",
            f"      matched {', '.join(rule.matched_stems)} = "
            + _mass(matched, stats.rule_count),
            f"      rule {len(rule.stem_df)} stems = "
            + _mass(list(rule.stem_df.values()), stats.rule_count)]
    lines.append("")
    lines.append("  router: " + router.reason(stats.best_confidence, stats.best_tag_hits,
                                              stats.best_evidence, stats.settings))
    return "\n".join(lines)


def _mass(dfs: list[int], n: int) -> str:
    """A sum of idf written by df, to redo by hand: ``3 x 2.3026 (df 1) + 1 x 1.7918 (df 2)``."""
    from collections import Counter

    from scarwarden.recall.engine import idf

    counts = Counter(dfs)
    return " + ".join(f"{k} x {idf(df, n):.4f} (df {df})" for df, k in sorted(counts.items())) \
        or "0"


def demo_section(repo: MemoryRepo, echo: Callable[[str], None]) -> None:
    """Recall on the demo memory: two tasks it knows, one it does not."""
    from scarwarden.recall.engine import recall_task

    echo("Recall matches a task against the rules' tags and words (no model, no vectors)")
    echo("and a router says how sure it is.")
    for task in ("Draft a LinkedIn post announcing our beta",
                 "Post our discount code on Twitter",
                 "Book travel for the Berlin conference"):
        result = recall_task(repo, task, limit=2)
        echo("")
        echo(f'$ scarwarden recall "{task}"')
        verdict = click.style(result.verdict, fg=_VERDICT_COLOUR[result.verdict], bold=True)
        echo(f"  {verdict}: {result.meaning}")
        if not result.rules:
            nothing = result.stats is None or result.stats.best is None
            echo("  no rule shares a tag or a word with it: the answer a human gives" if nothing
                 else "  no rule covers enough of it: the answer a human gives")
            echo(f'  becomes an episode (scarwarden ask "{task}" --answer "...")')
        for rule in result.rules[:1]:
            echo(f"  {rule.id}: {rule.title}  (score {rule.score:g}, confidence "
                 f"{rule.confidence:g})")
            echo(f"    why: {rule.why()}")
            echo(f"    cite as {rule.citation()}")
    echo("")
    echo("Each recall went to the recall log: scarwarden log")
