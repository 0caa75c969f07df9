"""kill -9 of every writing command, reduced (bench/kill_bench.py runs 30 trials each):
the next run of the command works and nothing is left behind (issue 15)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import kill_bench  # noqa: E402


@pytest.mark.slow
def test_every_writing_command_survives_kill_9(tmp_path: Path) -> None:
    world = kill_bench.make_world(tmp_path, episodes=2)
    failures = {}
    for command in kill_bench.COMMANDS:
        # A fixed window (no calibration run) keeps this under a minute on a busy machine.
        out = kill_bench.run_trials(world, command, trials=2, check_every=0, seed=15, duration=0.8)
        assert out.trials == 2
        if out.failures:
            failures[command.name] = out.failures
    assert failures == {}
    # Once at the end (the bench does it every 5 trials): the index rebuilds, the gate passes.
    assert kill_bench.rebuild_and_check(world) == []
