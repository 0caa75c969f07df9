"""What committing through a temporary index costs (issue 15): ``episode add`` at 1k and
100k episodes vs plain ``git add`` + ``git commit`` of an equivalent file, measured
interleaved in the same run, and (``--baseline DIR``) vs another checkout's
``episode add`` (the ``git commit`` path this replaced: ``git archive <commit>`` it into
DIR). Repositories come from bench/_gen.py (cached, copied per size).

    python bench/write_bench.py                          # 1k and 100k, 7 runs each
    python bench/write_bench.py --sizes 1000 --reps 5 --baseline /tmp/old-checkout

Figures go to docs/benchmarks.md ("Writes through a temporary index").
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from _gen import make_repo  # noqa: E402

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{argv}: {proc.stderr.decode()}")
    return time.perf_counter() - start


def plain_commit(repo: Path, i: int) -> float:
    rel = f"memory/notes/plain-{i}.yaml"
    start = time.perf_counter()
    (repo / rel).parent.mkdir(parents=True, exist_ok=True)
    (repo / rel).write_text(f"task: plain commit {i}\ncorrection: the floor\n")
    subprocess.run(["git", "add", "--", rel], cwd=repo, env=ENV, check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"plain {i}"], cwd=repo, env=ENV, check=True)
    return time.perf_counter() - start


def episode_add(repo: Path, i: int, src: Path, label: str) -> float:
    env = {**ENV, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-m", "scarwarden", "episode", "add", "--task", f"Bench {label} {i}"]
    return timed([*argv, "--correction", f"Lesson {i} of the write bench"], repo, env)


def bench_size(n: int, reps: int, baseline: Path | None, work: Path) -> dict[str, float]:
    repo = make_repo(n, work / f"repo-{n}")
    for key, value in (("user.name", "Bench"), ("user.email", "bench@example.com")):
        subprocess.run(["git", "config", key, value], cwd=repo, check=True)
    subprocess.run([sys.executable, "-m", "scarwarden", "index"], cwd=repo, env=ENV, capture_output=True)
    samples: dict[str, list[float]] = {"plain": [], "ours": [], "baseline": []}
    for i in range(reps):  # interleaved: load from other processes hits all alike
        samples["plain"].append(plain_commit(repo, i))
        samples["ours"].append(episode_add(repo, i, ROOT, "ours"))
        if baseline is not None:
            samples["baseline"].append(episode_add(repo, i, baseline, "baseline"))
    status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
    if status.strip():
        raise RuntimeError(f"the repository is not clean after the runs:\n{status}")
    shutil.rmtree(repo, ignore_errors=True)
    return {k: statistics.median(v) for k, v in samples.items() if v}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="1000,100000")
    parser.add_argument("--reps", type=int, default=7)
    parser.add_argument("--baseline", type=Path, help="a checkout with the old write path")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="scarwarden-write-"))
    print(f"load {os.getloadavg()[0]:.1f}, {args.reps} runs each, medians")
    print("| episodes | git add + commit | `episode add` | ratio | baseline `episode add` | ratio |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            m = bench_size(n, args.reps, args.baseline, work)
            base = m.get("baseline")
            tail = f"{base * 1000:.0f} ms | {base / m['plain']:.2f}x" if base else "- | -"
            print(
                f"| {n:,} | {m['plain'] * 1000:.0f} ms | {m['ours'] * 1000:.0f} ms | "
                f"{m['ours'] / m['plain']:.2f}x | {tail} |",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
