"""The replay benchmark's report: the terminal summary and docs/replay.md (with the chart)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from replay_method import method_sections
from replay_stream import SYSTEMS

LABELS = {
    "scarwarden": "Scarwarden (playbook)",
    "scarwarden_rules": "Scarwarden, rules only",
    "raw": "raw episodes, BM25",
    "failures": "failed episodes' corrections, BM25",
    "policy": "policy rules, BM25",
    "none": "no memory",
}
HEADER = (
    "| measure | Scarwarden (rules, or candidates on ASK_HUMAN) | Scarwarden, `rules` only |"
    " raw episodes (BM25) | failed episodes, corrections only (BM25) |"
    " policy rules (BM25) | no memory |\n|---|---|---|---|---|---|---|"
)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.0f}%"


def frac(s: dict[str, Any]) -> str:
    """'62% (31/50)' from {rate, held, n}."""
    return f"{pct(s['rate'])} ({s['held']}/{s['n']})" if s["n"] else "n/a"


def num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.0f}"


def summary_lines(figs: dict[str, Any]) -> list[str]:
    """A few lines for the terminal."""
    final, events = figs["final"], figs["events"]
    meta = figs["meta"]
    head = f"replay: {meta['runs']} runs, {final['rules']} rules, {meta['seconds']} s"
    lines = [f"{head}, {meta['cli_calls']} CLI calls"]
    for name in SYSTEMS:
        s = final["systems"][name]
        lines.append(
            f"  {LABELS[name]:22} repeat {frac(s['repeat'])}, general {pct(s['repeat_general']['rate'])};"
            f" transfer {frac(s['transfer_pooled'])}; fix at repeat failures"
            f" {frac(events['fix_at_repeat'][name])}; tokens/recall {num(s['tokens_per_recall'])}"
        )
    r = final["router_pooled"]
    lines.append(
        f"  router (all sweeps): ASK_HUMAN {pct(r['shares']['ASK_HUMAN'])}, ACT {pct(r['shares']['ACT'])},"
        f" ACT precision {pct(r['act_precision'])} ({r['act_judged']} judged)"
    )
    return lines


def row(label: str, cells: dict[str, str]) -> str:
    return f"| {label} | " + " | ".join(cells[name] for name in SYSTEMS) + " |"


def results_table(figs: dict[str, Any]) -> str:
    """The main table: every measure, every system, end of the stream."""
    final, ev = figs["final"], figs["events"]
    s = final["systems"]
    rows = [
        row("1. lesson at the repeat, specific (final sweep)", {n: frac(s[n]["repeat"]) for n in SYSTEMS}),
        row(
            "1. lesson at the repeat, general (final sweep)",
            {n: frac(s[n]["repeat_general"]) for n in SYSTEMS},
        ),
        row("1. every lesson of the last failure, specific", {n: frac(s[n]["repeat_all"]) for n in SYSTEMS}),
        row(
            f"1. at the {ev['repeat_failures']} repeat failures: this failure's own fix, specific",
            {n: frac(ev["fix_at_repeat"][n]) for n in SYSTEMS},
        ),
        row("1. ... the same, general", {n: frac(ev["fix_at_repeat_general"][n]) for n in SYSTEMS}),
        row(
            f"1. ... of those, the {ev['repeat_same_lesson']} that repeat an earlier lesson",
            {n: frac(ev["fix_at_repeat_same_lesson"][n]) for n in SYSTEMS},
        ),
        row(
            "2. transfer to unseen tasks, general (all sweeps pooled)",
            {n: frac(s[n]["transfer_pooled"]) for n in SYSTEMS},
        ),
        row(
            "2. transfer at first sight (the recall before each task's first run)",
            {n: frac(ev["transfer_first_sight"][n]) for n in SYSTEMS},
        ),
        row(
            "3. tokens read per recall (final sweep, all tasks)",
            {n: num(s[n]["tokens_per_recall"]) for n in SYSTEMS},
        ),
        row(
            "3. tokens read per recall (every run's recall)",
            {n: num(ev["tokens_per_recall"][n]) for n in SYSTEMS},
        ),
        row(
            "3. tokens read per lesson found at the repeat",
            {n: num(s[n]["tokens_per_lesson"]) for n in SYSTEMS},
        ),
    ]
    return HEADER + "\n" + "\n".join(rows)


def router_table(figs: dict[str, Any]) -> str:
    """The router at each run, by blocks of runs (one block = one trial of every task)."""
    lines = [
        "| runs | ACT | ACT_AND_FLAG | ASK_HUMAN | ACT precision (judged)"
        " | ASK_HUMAN on a kind never failed (n) |",
        "|---|---|---|---|---|---|",
    ]
    for b in figs["events"]["router_blocks"] + [{"runs": ["all", ""], **figs["events"]["router"]}]:
        sh = b["shares"]
        span = f"{b['runs'][0]}-{b['runs'][1]}" if b["runs"][1] != "" else "all"
        lines.append(
            f"| {span} | {pct(sh['ACT'])} | {pct(sh['ACT_AND_FLAG'])} | {pct(sh['ASK_HUMAN'])} |"
            f" {pct(b['act_precision'])} ({b['act_judged']}) |"
            f" {pct(b['ask_on_new_kind'])} ({b['new_kind_n']}) |"
        )
    return "\n".join(lines)


def halves_table(figs: dict[str, Any]) -> str:
    """Tasks 0-24 against tasks 25-49."""
    h = figs["final"]["halves"]
    rows = []
    for half in ("tasks 0-24", "tasks 25-49"):
        rows.append(row(f"1. lesson at the repeat, {half}", {n: frac(h[half][n]["repeat"]) for n in SYSTEMS}))
        rows.append(row(f"2. transfer, {half}", {n: frac(h[half][n]["transfer_pooled"]) for n in SYSTEMS}))
    return HEADER + "\n" + "\n".join(rows)


def goals(figs: dict[str, Any]) -> list[tuple[str, str, bool | None]]:
    """(goal, what was measured, met?) for issue 26's goals."""
    final, ev = figs["final"], figs["events"]
    s = final["systems"]
    rep = s["scarwarden"]["repeat"]["rate"] or 0.0
    rep_rules = s["scarwarden_rules"]["repeat"]["rate"] or 0.0
    rep_fail = s["failures"]["repeat"]["rate"] or 0.0
    fix = ev["fix_at_repeat"]["scarwarden"]["rate"] or 0.0
    tr = {n: s[n]["transfer_pooled"]["rate"] or 0.0 for n in SYSTEMS}
    tok_sw, tok_raw = s["scarwarden"]["tokens_per_lesson"], s["raw"]["tokens_per_lesson"]
    ratio = (tok_sw / tok_raw) if tok_sw and tok_raw else None
    pooled = final["router_pooled"]
    prec, act = pooled["act_precision"], pooled["shares"]["ACT"] or 0.0
    return [
        (
            "lesson at the repeat, specific, >= 95% and at least the failures-only baseline",
            f"{pct(rep)} vs {pct(rep_fail)} failures only, {pct(s['raw']['repeat']['rate'])} raw",
            rep >= 0.95 and rep >= rep_fail,
        ),
        (
            "... in `rules` only (what an agent may act on without asking): not a goal, shown beside it",
            f"{pct(rep_rules)}, own fix {pct(ev['fix_at_repeat']['scarwarden_rules']['rate'])},"
            f" transfer {pct(tr['scarwarden_rules'])}",
            None,
        ),
        ("this failure's own fix at the repeat failures >= 90%", pct(fix), fix >= 0.9),
        (
            "tokens read per lesson found <= 0.5x raw episodes",
            (f"{num(tok_sw)} vs {num(tok_raw)} ({ratio:.2f}x)" if ratio else "n/a"),
            ratio is not None and ratio <= 0.5,
        ),
        (
            "ACT precision >= 95% with ACT on >= 60% of the swept recalls",
            f"{pct(prec)} ({pooled['act_judged']} ACT judged), ACT on {pct(act)}",
            prec is not None and prec >= 0.95 and act >= 0.6,
        ),
        (
            "transfer (lesson text only) at least raw episodes'",
            f"{pct(tr['scarwarden'])} vs {pct(tr['raw'])} raw, {pct(tr['failures'])} failures only,"
            f" {pct(tr['policy'])} policy",
            tr["scarwarden"] >= tr["raw"],
        ),
    ]


def goals_table(figs: dict[str, Any]) -> str:
    lines = ["| goal (issue 26) | measured | met |", "|---|---|---|"]
    lines += [
        f"| {g} | {m} | {'-' if ok is None else 'yes' if ok else '**no**'} |" for g, m, ok in goals(figs)
    ]
    return "\n".join(lines)


def findings(figs: dict[str, Any]) -> list[str]:
    """Number-driven sentences on where the lessons went (written from the figures)."""
    final, ev = figs["final"], figs["events"]
    s = final["systems"]
    inpb = final["in_playbook"]
    lines = [
        f"- **Where the lessons went.** At the end, {final['rules']} active rules hold the lessons of"
        f" {figs['meta']['runs']} runs. Of the {inpb['n']} failed tasks, the last lesson (specific judge)"
        f" was in the top {figs['meta']['top']} for {inpb['found']}; it was in some rule but recall"
        f" answered ASK_HUMAN and its candidates did not hold it for {inpb['asked_human']}; it was in"
        f" some rule that recall did not return (other rules ranked first, or it scored under the"
        f" return share or the floor) for"
        f" {inpb['not_returned']}; and it was in no rule for {inpb['not_in_playbook']}. Recall returned"
        f" {s['scarwarden']['items_per_recall'] or 0:.1f} rules per task on average (at most"
        f" {figs['meta']['top']}).",
        f"- **Size.** The playbook is {num(final['playbook_tokens'])} tokens against"
        f" {num(final['ledger_tokens'])} for the ledger's episodes"
        f" ({pct(final['playbook_tokens'] / final['ledger_tokens']) if final['ledger_tokens'] else 'n/a'});"
        f" a recall returns {num(s['scarwarden']['tokens_per_recall'])} tokens against"
        f" {num(s['raw']['tokens_per_recall'])} for three raw episodes.",
        f"- **Repeat failures.** The stream holds {ev['repeat_failures_all']} failures of a task that"
        f" failed before; {ev['repeat_failures']} of them, after a failure with a correction, have a"
        " correction of their own and are judged (the others have no difference in writes to derive one"
        f" from). {ev['repeat_same_lesson']} of those {ev['repeat_failures']} repeat the first lesson of an"
        " earlier failure of the task; the rest fail differently, so no memory of the earlier failure"
        " holds their specific fix.",
    ]
    return lines


def run_section(figs: dict[str, Any], base: str, title: str) -> list[str]:
    """The figures of one replay: goals, table, chart, router, halves, findings."""
    meta = figs["meta"]
    out = [
        f"## {title}",
        "",
        f"`{meta['command']}`: {meta['runs']} runs of {meta['tasks']} tasks, distilled every"
        f" {meta['distill_every']} runs ({meta['distiller']}), swept every {meta['checkpoint_every']} runs,"
        f" top {meta['top']}; {meta['seconds']} s wall time on this machine (2 cores, shared; load"
        f" average {(meta.get('load_average') or ['?'])[0]} at the end),"
        f" {meta['cli_calls']} Scarwarden CLI calls{model_tokens(meta)}.",
        *(["", meta["baselines_note"]] if meta.get("baselines_note") else []),
        "",
        goals_table(figs),
        "",
        results_table(figs),
        "",
        f"![the curves]({'replay/' + base}.png) ([SVG]({'replay/' + base}.svg); figures in"
        f" [{base}.json](replay/{base}.json))",
        "",
        "The router before every run (the agent's-eye recall), by blocks of one trial of every task:",
        "",
        router_table(figs),
        "",
        "By half of the tasks (a judge fitted to some tasks would show as a gap between the halves"
        " for every system alike):",
        "",
        halves_table(figs),
        "",
        *findings(figs),
        "",
        *answers_lines(figs.get("answers")),
    ]
    return out


def model_tokens(meta: dict[str, Any]) -> str:
    """The model distiller's tokens, when it was used."""
    usage = meta.get("model_usage") or {}
    if not usage.get("prompt_tokens"):
        return ""
    prompt, completion = usage["prompt_tokens"], usage.get("completion_tokens") or 0
    return f"; the model distiller used {prompt:,} prompt and {completion:,} completion tokens"


def answers_lines(answers: dict[str, Any] | None) -> list[str]:
    """The --answer figures, when the run had a model."""
    if not answers:
        return []
    return [
        f"Re-answered with a model (`--answer`): {answers['answered']} repeat failures"
        f" ({answers['errors']} errors): correct with memory {pct(answers['correct_with_memory'])},"
        f" without {pct(answers['correct_without_memory'])}; {answers['asked_human']} routed to ASK_HUMAN;"
        f" citations verified {answers['citations_verified']}, invented {answers['citations_invented']};"
        f" tokens: answers {answers['answer_tokens']:,}, judge {answers['judge_tokens']:,}.",
        "",
    ]


def render(main: dict[str, Any] | None, seeded: list[tuple[str, dict[str, Any]]]) -> str:
    """docs/replay.md from the stored figures of the default run and of the seeded runs."""
    ref = main or seeded[0][1]
    meta = ref["meta"]
    last_unseen = max(
        (p["runs_seen"] for p in ref["curve"] if p["systems"]["none"]["transfer"]["n"]), default=0
    )
    parts = [
        "# The replay benchmark: memory on real agent failures",
        "",
        "Generated by `python bench/replay.py` (do not edit by hand). Issue 14.",
        "",
        "Scarwarden is fed the recorded runs of a GPT-4o customer-service agent (tau-airline: 50"
        " airline tasks, 4 trials each, 116 failures) as a stream of episodes, with a correction derived"
        " from the ground truth for every failure, and distils them into a playbook. Before every run,"
        " and for every task at checkpoints, recall is asked what an agent would ask, and code judges"
        " whether the lesson that would have fixed the failure is in what comes back: beside raw"
        " episodes (no distillation), the airline policy as rules (no experience) and no memory, in"
        " the same run.",
        "",
    ]
    if main:
        parts += stored_section(main, "replay", "Results")
    for base, figs in seeded:
        parts += stored_section(figs, base, f"Second order: tasks shuffled with seed {figs['meta']['seed']}")
    parts += method_sections(meta, last_unseen)
    return "\n".join(parts).rstrip() + "\n"


def stored_section(figs: dict[str, Any], base: str, title: str) -> list[str]:
    """A run's section, or a note when its stored figures predate this version of the script."""
    try:
        return run_section(figs, base, title)
    except (KeyError, TypeError, IndexError):
        command = (figs.get("meta") or {}).get("command", "python bench/replay.py")
        return [
            f"## {title}",
            "",
            f"`replay/{base}.json` was written by an older version of this"
            f" script; run `{command}` to refresh it.",
            "",
        ]


def write_docs(figs: dict[str, Any], docs: Path, chart: bool) -> None:
    """Store this run's figures and chart under docs/replay/, then render docs/replay.md."""
    seed = figs["meta"]["seed"]
    base = "replay" if seed is None else f"replay-seed{seed}"
    folder = docs / "replay"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{base}.json").write_text(json.dumps(figs, indent=1) + "\n", "utf-8")
    if chart:
        from replay_chart import draw

        draw(figs, folder / f"{base}.png", folder / f"{base}.svg")
    render_stored(docs)


def render_stored(docs: Path) -> None:
    """docs/replay.md from every figures file stored under docs/replay/."""
    folder = docs / "replay"
    main_path = folder / "replay.json"
    main = json.loads(main_path.read_text("utf-8")) if main_path.exists() else None
    seeded = [(p.stem, json.loads(p.read_text("utf-8"))) for p in sorted(folder.glob("replay-seed*.json"))]
    if main is None and not seeded:
        raise SystemExit(f"no stored figures under {folder}: run python bench/replay.py first")
    (docs / "replay.md").write_text(render(main, seeded), "utf-8")


def merge_baselines(figs: dict[str, Any], baselines: dict[str, Any], name: str, note: str) -> dict[str, Any]:
    """``figs`` with system ``name``'s figures taken from ``baselines`` (a
    ``--baselines-only`` run of the same stream) wherever the figures are keyed by
    system, and ``note`` in the meta: for a baseline redefined after a run began (the
    baselines do not depend on Scarwarden, so the rest of the run stands)."""

    def walk(ours: Any, theirs: Any) -> Any:
        if isinstance(ours, dict) and isinstance(theirs, dict):
            out = {}
            for key, value in ours.items():
                if key == name and "scarwarden" in ours and key in theirs:
                    out[key] = theirs[key]
                else:
                    out[key] = walk(value, theirs.get(key)) if key in theirs else value
            return out
        if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
            return [walk(a, b) for a, b in zip(ours, theirs, strict=True)]
        return ours

    merged: dict[str, Any] = walk(figs, baselines)
    merged["meta"] = {**merged["meta"], "baselines_note": note}
    return merged
