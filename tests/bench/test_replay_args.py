"""bench/replay.py given a folder without the dataset: one clear line and exit 2, no
traceback (runs without the dataset, unlike tests/bench/test_replay_bench.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_folder_without_the_dataset_is_named_with_the_fix(tmp_path: Path) -> None:
    (tmp_path / "policy.md").write_text("# Policy\n")
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "replay.py"), "--data", str(tmp_path), "--no-docs"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith(f"replay: no gpt-4o-airline.json in {tmp_path}: give the tau-airline folder")
    assert "--data" in out.stderr and "Traceback" not in out.stderr
