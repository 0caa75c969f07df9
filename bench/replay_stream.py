"""The replay itself: ingest runs one by one, distil every N, measure every system.

Two kinds of measurement, both taken *before* the next run is ingested:

* an **event** per run: recall for the task about to be run, as the agent would call
  it, judged against that task's lessons (the run's own failure, when it fails, is the
  lesson that would have fixed it);
* a **sweep** at every checkpoint: recall for every task of the stream, judged the same
  way, so each measure has a value at that number of runs seen.
"""

from __future__ import annotations

import hashlib
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from replay_correction import Item
from replay_data import Run, episode_of
from replay_judge import Analysed, analyse, held, tokens
from replay_memory import (
    FailuresOnly,
    PolicyRules,
    RawEpisodes,
    Scarwarden,
    Texts,
    given_texts,
    rule_text,
)

#: ``scarwarden``: what recall gives the agent (``rules`` with their evidence on ACT /
#: ACT_AND_FLAG; on ASK_HUMAN the ``candidates`` it must show the human when it asks).
#: ``scarwarden_rules``: ``rules`` only, what an agent may act on without asking (ACT
#: precision is judged on it).
SYSTEMS = ("scarwarden", "scarwarden_rules", "raw", "failures", "policy", "none")
START = datetime(2024, 5, 15, 20, 0, tzinfo=timezone.utc)


@dataclass
class Options:
    """What the stream needs from the command line."""

    distill_every: int = 10
    checkpoint_every: int = 10
    top: int = 3
    jobs: int = 2
    model: bool = False
    progress: bool = True
    topic_tags: bool = False
    seed: int | None = None


@dataclass
class State:
    """What has been ingested so far."""

    seen: set[int] = field(default_factory=set)
    failures: dict[int, list[Run]] = field(default_factory=dict)  # with a correction
    failed_kinds: set[str] = field(default_factory=set)
    failed_tasks: set[int] = field(default_factory=set)  # with or without a correction
    runs_seen: int = 0


@dataclass
class Recalled:
    """One recall by one system: the texts returned (top k), the router's verdict, and
    the lesson text of each (instructions and action logs stripped: judged for transfer)."""

    texts: list[str]
    verdict: str | None = None
    lessons: list[str] | None = None

    @classmethod
    def of(cls, found: Texts) -> Recalled:
        return cls(found.read, None, found.lessons)

    def analysed(self) -> list[Analysed]:
        return [analyse(t) for t in self.texts]

    def lesson_texts(self) -> list[Analysed]:
        return [analyse(t) for t in (self.texts if self.lessons is None else self.lessons)]


def first_failures(stream: list[Run]) -> dict[int, Item]:
    """Each task's transfer target: the first item of its first failure in the stream."""
    targets: dict[int, Item] = {}
    for run in stream:
        if run.items and run.task_id not in targets:
            targets[run.task_id] = run.items[0]
    return targets


def distinct(items: list[Item]) -> list[Item]:
    """Items with distinct lesson keys, first kept."""
    seen: dict[Any, Item] = {}
    for item in items:
        seen.setdefault(item.key, item)
    return list(seen.values())


@dataclass
class Baselines:
    """The memories beside Scarwarden, fed the same episodes."""

    raw: RawEpisodes = field(default_factory=RawEpisodes)
    failures: FailuresOnly = field(default_factory=FailuresOnly)

    def add(self, episode: dict[str, Any]) -> None:
        self.raw.add(episode)
        self.failures.add(episode)


def recall_all(
    sw: Scarwarden, base: Baselines, policy: PolicyRules, task: str, top: int
) -> dict[str, Recalled]:
    """What each system returns for ``task``."""
    result = sw.recall(task, top)
    verdict = str(result.get("verdict"))
    rules = given_texts(result, top, candidates=False)
    given = given_texts(result, top, candidates=True)
    return {
        "scarwarden": Recalled(given.read, verdict, given.lessons),
        "scarwarden_rules": Recalled(rules.read, verdict, rules.lessons),
        "raw": Recalled.of(base.raw.top(task, top)),
        "failures": Recalled.of(base.failures.top(task, top)),
        "policy": Recalled.of(policy.top(task, top)),
        "none": Recalled([]),
    }


def judge_row(run: Run, got: Recalled, state: State, targets: dict[int, Item]) -> dict[str, Any]:
    """One task judged for one system at this point of the stream."""
    texts = got.analysed()
    earlier = state.failures.get(run.task_id, [])
    row: dict[str, Any] = {
        "task": run.task_id,
        "verdict": got.verdict,
        "tokens": sum(tokens(t) for t in got.texts),
        "items": len(got.texts),
        "category": "repeat" if earlier else ("seen" if run.task_id in state.seen else "unseen"),
        "new_kind": run.kind not in state.failed_kinds,
        "specific": None,
        "specific_all": None,
        "general": None,
        "transfer": None,
        "other": None,
    }
    if earlier:
        last = earlier[-1].items
        row["specific"] = held(last[0], texts, "specific")
        row["specific_all"] = all(held(i, texts, "specific") for i in distinct(last))
        row["general"] = held(last[0], texts, "general")
    target = targets.get(run.task_id)
    if target is not None and not earlier:
        # a task with no failure yet: its future lesson can only come from other tasks
        row["other"] = held(target, got.lesson_texts(), "general")
        row["transfer"] = row["other"] if row["category"] == "unseen" else None
    return row


_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def stream_id(seed: int | None, index: int) -> str:
    """A deterministic episode ID for the ``index``-th run of a stream (so two runs of
    the same stream rank ties, and name rules, alike)."""
    digest = hashlib.sha256(f"replay {seed} {index}".encode()).digest()
    number = int.from_bytes(digest[:7], "big")
    return "ep-" + "".join(_CROCKFORD[(number >> (5 * i)) & 31] for i in range(10))


def ingest(
    run: Run, index: int, sw: Scarwarden, base: Baselines, state: State, topics: bool, seed: int | None = None
) -> None:
    """Record one run as an episode (one commit) and update the state."""
    at = (START + timedelta(minutes=index)).strftime("%Y-%m-%dT%H:%M:%SZ")
    episode = {"id": stream_id(seed, index), **episode_of(run, at, topics)}
    sw.add(episode)
    base.add(episode)
    state.seen.add(run.task_id)
    if run.failed:
        state.failed_tasks.add(run.task_id)
    if run.items:
        state.failures.setdefault(run.task_id, []).append(run)
        state.failed_kinds.add(run.kind)
    state.runs_seen += 1


def event(
    run: Run,
    sw: Scarwarden,
    base: Baselines,
    policy: PolicyRules,
    state: State,
    targets: dict[int, Item],
    top: int,
) -> dict[str, Any]:
    """The agent's-eye measure before ``run``: recall for its task, judged per system."""
    got = recall_all(sw, base, policy, run.instruction, top)
    out: dict[str, Any] = {
        "index": state.runs_seen,
        "task": run.task_id,
        "trial": run.trial,
        "failed": run.failed,
        "kind": run.kind,
    }
    earlier = state.failures.get(run.task_id, [])
    out["repeat_failure"] = bool(earlier and run.items)
    out["repeat_any"] = run.failed and run.task_id in state.failed_tasks
    out["same_as_before"] = bool(run.items) and any(r.items[0].key == run.items[0].key for r in earlier)
    for name, recalled in got.items():
        row = judge_row(run, recalled, state, targets)
        if out["repeat_failure"]:
            texts = recalled.analysed()
            row["fix"] = held(run.items[0], texts, "specific")
            row["fix_general"] = held(run.items[0], texts, "general")
        out[name] = row
    return out


def sweep(
    tasks: list[Run],
    sw: Scarwarden,
    base: Baselines,
    policy: PolicyRules,
    state: State,
    targets: dict[int, Item],
    opts: Options,
) -> dict[str, Any]:
    """Every task recalled by every system at this point, judged; plus the memory sizes."""

    def one(run: Run) -> dict[str, Recalled]:
        return recall_all(sw, base, policy, run.instruction, opts.top)

    with ThreadPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        recalled = list(pool.map(one, tasks))
    rows = {
        name: [judge_row(run, got[name], state, targets) for run, got in zip(tasks, recalled)]
        for name in SYSTEMS
    }
    rules = sw.rules() if state.runs_seen else []
    return {
        "runs_seen": state.runs_seen,
        "rows": rows,
        "in_playbook": in_playbook(rules, state, rows["scarwarden"]),
        "rules": len(rules),
        "playbook_tokens": sum(tokens(rule_text(r)) for r in rules),
        "ledger_tokens": sum(tokens(t) for t in base.raw.texts),
    }


def in_playbook(rules: list[dict[str, Any]], state: State, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Where each failed task's last lesson is: found in the top k, in *some* rule but not
    returned (the router asked a human, or other rules came first), or in no rule at all.

    Separates what distillation lost from what recall did not return.
    """
    texts = [analyse(rule_text(r)) for r in rules]
    verdicts = {r["task"]: (r["verdict"], r["specific"]) for r in rows}
    out = {"held": 0, "n": 0, "found": 0, "asked_human": 0, "not_returned": 0, "not_in_playbook": 0}
    for task, runs in state.failures.items():
        inside = held(runs[-1].items[0], texts, "specific")
        verdict, found = verdicts.get(task, (None, False))
        out["n"] += 1
        out["held"] += inside
        where = "found" if found else "asked_human" if inside and verdict == "ASK_HUMAN" else None
        out[where or ("not_returned" if inside else "not_in_playbook")] += 1
    rate = round(out["held"] / out["n"], 4) if out["n"] else None
    return {**out, "rate": rate}


def say(opts: Options, message: str) -> None:
    """One progress line on stderr."""
    if opts.progress:
        print(message, file=sys.stderr, flush=True)


def replay(
    stream: list[Run],
    sw: Scarwarden,
    policy: PolicyRules,
    opts: Options,
    on_event: Callable[[Run, dict[str, Any], State], None] | None = None,
) -> dict[str, Any]:
    """Replay ``stream`` into ``sw``: events before each run, sweeps at checkpoints.

    ``on_event`` (the --answer mode) is called after each event, before the run is ingested.
    """
    started = time.monotonic()
    base, state = Baselines(), State()
    targets = first_failures(stream)
    tasks = list({r.task_id: r for r in sorted(stream, key=lambda r: r.task_id)}.values())
    sweeps = [sweep(tasks, sw, base, policy, state, targets, opts)]
    events, distills = [], []
    for index, run in enumerate(stream):
        events.append(event(run, sw, base, policy, state, targets, opts.top))
        if on_event is not None:
            on_event(run, events[-1], state)
        ingest(run, index, sw, base, state, opts.topic_tags, opts.seed)
        last = index == len(stream) - 1
        if state.runs_seen % opts.distill_every == 0 or last:
            result = sw.distill(opts.model)
            distills.append(
                {
                    "runs_seen": state.runs_seen,
                    "changes": len(result.get("changes") or []),
                    "commit": result.get("commit"),
                    "usage": result.get("usage"),
                }
            )
        if state.runs_seen % opts.checkpoint_every == 0 or last:
            sweeps.append(sweep(tasks, sw, base, policy, state, targets, opts))
            say(
                opts,
                f"replay: {state.runs_seen}/{len(stream)} runs, {sweeps[-1]['rules']} rules,"
                f" {time.monotonic() - started:.0f} s",
            )
    return {
        "sweeps": sweeps,
        "events": events,
        "distills": distills,
        "cli_calls": sw.calls,
        "model_usage": dict(sw.usage),
        "seconds": round(time.monotonic() - started, 1),
    }
