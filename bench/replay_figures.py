"""From the replay's raw rows to the figures: curves, final values, events, halves."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from replay_stream import SYSTEMS

VERDICTS = ("ACT", "ACT_AND_FLAG", "ASK_HUMAN")
#: The figures are also given per half of the tasks (0-24, 25-49): a judge or a correction
#: fitted to some tasks would show as a gap between the halves for every system alike.
HALF = 25


def mean(values: Iterable[Any]) -> float | None:
    """The mean of the values (booleans count 1/0), None when there are none."""
    vals = [float(v) for v in values]
    return round(sum(vals) / len(vals), 4) if vals else None


def share(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """{rate, held, n} of a boolean judgement over the rows that have it."""
    judged = [r[key] for r in rows if r.get(key) is not None]
    return {"rate": mean(judged), "held": sum(judged), "n": len(judged)}


def ok(row: dict[str, Any]) -> bool | None:
    """Was the recall right? The specific judge for a task that failed before, the general
    judge (against the lesson it will teach) for one that has not failed yet; None for a
    task that never fails."""
    return row["specific"] if row["category"] == "repeat" else row["other"]


def router(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Scarwarden's router over these rows: verdict shares, ACT precision, ASK on new kinds."""
    n = len(rows)
    acts = [r for r in rows if r["verdict"] == "ACT" and ok(r) is not None]
    new = [r for r in rows if r["new_kind"]]
    return {
        "shares": {v: mean(r["verdict"] == v for r in rows) if n else None for v in VERDICTS},
        "act_precision": mean(ok(r) for r in acts),
        "act_judged": len(acts),
        "act_precision_repeat": mean(r["specific"] for r in acts if r["category"] == "repeat"),
        "act_precision_other": mean(r["other"] for r in acts if r["category"] != "repeat"),
        "ask_on_new_kind": mean(r["verdict"] == "ASK_HUMAN" for r in new),
        "new_kind_n": len(new),
    }


def system_point(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One system's measures over one sweep's rows."""
    repeat = [r for r in rows if r["category"] == "repeat"]
    found = sum(1 for r in repeat if r["specific"])
    repeat_tokens = sum(r["tokens"] for r in repeat)
    return {
        "repeat": share(repeat, "specific"),
        "repeat_all": share(repeat, "specific_all"),
        "repeat_general": share(repeat, "general"),
        "transfer": share(rows, "transfer"),
        "tokens_per_recall": mean(r["tokens"] for r in rows),
        "items_per_recall": mean(r["items"] for r in rows),
        "tokens_per_repeat_recall": mean(r["tokens"] for r in repeat),
        "tokens_per_lesson": round(repeat_tokens / found, 1) if found else None,
    }


def curve(sweeps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every sweep as a point of the curves."""
    points = []
    for sw in sweeps:
        point = {k: sw[k] for k in ("runs_seen", "rules", "playbook_tokens", "ledger_tokens", "in_playbook")}
        point["systems"] = {name: system_point(sw["rows"][name]) for name in SYSTEMS}
        point["router"] = router(sw["rows"]["scarwarden_rules"])
        points.append(point)
    return points


def pooled(sweeps: list[dict[str, Any]], name: str, key: str, half: str | None = None) -> dict[str, Any]:
    """A judgement pooled over every sweep after the first run (transfer only exists while
    tasks are unseen). The sweep at 0 runs is left out: with nothing ingested, no memory
    but the policy can hold anything, and it would weigh 40 tasks against the memories."""
    rows = [r for sw in sweeps if sw["runs_seen"] for r in sw["rows"][name] if in_half(r["task"], half)]
    return share(rows, key)


def in_half(task: int, half: str | None) -> bool:
    """Whether a task is in the first half (0-24), the second (25-49), or ``half`` is None."""
    if half is None:
        return True
    return (task < HALF) == (half == "tasks 0-24")


def halves(last: dict[str, Any], sweeps: list[dict[str, Any]]) -> dict[str, Any]:
    """Lesson at the repeat (final sweep) and pooled transfer, per half of the tasks."""
    out: dict[str, Any] = {}
    for half in ("tasks 0-24", "tasks 25-49"):
        out[half] = {
            name: {
                "repeat": share(
                    [r for r in last["rows"][name] if r["category"] == "repeat" and in_half(r["task"], half)],
                    "specific",
                ),
                "transfer_pooled": pooled(sweeps, name, "transfer", half),
            }
            for name in SYSTEMS
        }
    return out


def blocks(events: list[dict[str, Any]], size: int) -> list[dict[str, Any]]:
    """The router's verdicts at each run, in blocks of ``size`` runs (one trial each by default)."""
    out = []
    for start in range(0, len(events), size):
        rows = [e["scarwarden_rules"] for e in events[start : start + size]]
        out.append({"runs": [start + 1, start + len(rows)], **router(rows)})
    return out


def event_figures(events: list[dict[str, Any]], block: int) -> dict[str, Any]:
    """The agent's-eye figures: at the repeat failures, at first sight, and the router."""
    repeats = [e for e in events if e["repeat_failure"]]
    return {
        "runs": len(events),
        "failures": sum(1 for e in events if e["failed"]),
        "repeat_failures": len(repeats),
        "repeat_failures_all": sum(1 for e in events if e["repeat_any"]),
        "repeat_same_lesson": sum(1 for e in repeats if e["same_as_before"]),
        "fix_at_repeat": {name: share([e[name] for e in repeats], "fix") for name in SYSTEMS},
        "fix_at_repeat_general": {name: share([e[name] for e in repeats], "fix_general") for name in SYSTEMS},
        "fix_at_repeat_same_lesson": {
            name: share([e[name] for e in repeats if e["same_as_before"]], "fix") for name in SYSTEMS
        },
        "transfer_first_sight": {name: share([e[name] for e in events], "transfer") for name in SYSTEMS},
        "tokens_per_recall": {name: mean(e[name]["tokens"] for e in events) for name in SYSTEMS},
        "router": router([e["scarwarden_rules"] for e in events]),
        "router_blocks": blocks(events, block),
    }


def figures(result: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """Everything the report, the chart and --json show."""
    sweeps = result["sweeps"]
    points = curve(sweeps)
    last = points[-1]
    final = {
        "runs_seen": last["runs_seen"],
        "rules": last["rules"],
        "in_playbook": last["in_playbook"],
        "playbook_tokens": last["playbook_tokens"],
        "ledger_tokens": last["ledger_tokens"],
        "systems": {
            name: {**last["systems"][name], "transfer_pooled": pooled(sweeps, name, "transfer")}
            for name in SYSTEMS
        },
        "router": last["router"],
        "router_pooled": router([r for sw in sweeps[1:] for r in sw["rows"]["scarwarden_rules"]]),
        "halves": halves(sweeps[-1], sweeps),
    }
    return {
        "meta": {
            **meta,
            "seconds": result["seconds"],
            "cli_calls": result["cli_calls"],
            "model_usage": result["model_usage"],
        },
        "final": final,
        "events": event_figures(result["events"], meta.get("block", 50)),
        "curve": points,
        "distills": result["distills"],
        "answers": result.get("answers"),
    }
