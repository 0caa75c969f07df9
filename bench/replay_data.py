"""The replay benchmark's data: tau-airline's recorded runs, as runs and as episodes.

A record becomes a :class:`Run` (the agent's write calls from its trajectory, the
ground-truth writes, the figures it should have said, the facts its reads showed, the
correction derived from the ground truth) and a run the episode given to
``scarwarden episode add`` by :mod:`scarwarden.files.transcripts.tau`: the converter of
``scarwarden episode import --format tau-bench`` (issue 29; it was here before), so the
benchmark replays exactly the episodes an import gives.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from scarwarden.files.transcripts.tau import (
    ACTION_TAGS,
    KEY_TAGS,
    MAX_TAGS,
    TOPIC_TAGS,
    Run,
    action_text,
    agent_calls,
    correction_text,
    episode_of,
    facts_text,
    make_run,
    outcome_text,
    said_values,
    tags_of,
)

__all__ = [
    "ACTION_TAGS",
    "KEY_TAGS",
    "MAX_TAGS",
    "TOPIC_TAGS",
    "Run",
    "action_text",
    "agent_calls",
    "correction_text",
    "episode_of",
    "facts_text",
    "load_records",
    "load_runs",
    "make_run",
    "outcome_text",
    "said_values",
    "stream_order",
    "tags_of",
]


def load_records(data: Path) -> list[dict[str, Any]]:
    """The dataset's 200 records, in file order."""
    records: list[dict[str, Any]] = json.loads((data / "gpt-4o-airline.json").read_text("utf-8"))
    return records


def load_runs(data: Path) -> list[Run]:
    """Every record as a Run, in file order."""
    return [make_run(r) for r in load_records(data)]


def stream_order(
    runs: list[Run], *, seed: int | None = None, tasks: int | None = None, trials: int | None = None
) -> list[Run]:
    """Trial 0 of every task in task order, then trial 1, ...; --seed shuffles the task order."""
    ids = sorted({r.task_id for r in runs})
    if tasks is not None:
        ids = ids[:tasks]
    if seed is not None:
        random.Random(seed).shuffle(ids)
    rank = {t: i for i, t in enumerate(ids)}
    chosen = [r for r in runs if r.task_id in rank and (trials is None or r.trial < trials)]
    return sorted(chosen, key=lambda r: (r.trial, rank[r.task_id]))
