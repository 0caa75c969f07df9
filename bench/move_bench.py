"""A branch move that adds N episodes, checked as the reference-transaction hook checks
it (``check --from-ref BASE --to-ref TIP``), at 100,000 episodes (issue 30).

The range's boundary is looked up for each added ID (:mod:`scarwarden.gate.boundary`).
Issue 30 measured the old lookup (one ``<commit>:<folder>/<ID>.yaml`` probe per ID per
month folder, each parsing a whole month tree) at 9.8 s for 50 episodes at 1M, with a
cliff where it falls back to a full listing. This times the move for several N, this
checkout against ``--baseline DIR`` (another checkout), runs interleaved.

    python bench/move_bench.py --baseline /tmp/before [--episodes 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

import _gen  # noqa: E402

from scarwarden.files.episodes import render_episode  # noqa: E402


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, env=env, input=input
    ).stdout.decode()


def add_episodes(repo: Path, base: str, n: int, tag: str) -> str:
    """A commit on ``base`` adding ``n`` new episodes spread over the months."""
    index = repo / ".git" / f"bench-index-{tag}"
    env = {**os.environ, "GIT_INDEX_FILE": str(index), **_gen.IDENTITY}
    git(repo, "read-tree", base, env=env)
    lines = []
    for i in range(n):
        at = dt.datetime(2024, 1 + i % 12, 1 + i % 27, 9, 0, tzinfo=dt.timezone.utc)
        ep = f"ep-mv{tag}{i:05d}"[:13]
        data = {"id": ep, "at": f"{at:%Y-%m-%dT%H:%M:%SZ}", "agent": "bench", "task": f"Move {i}"}
        data.update(outcome="Done", source="outcome")
        blob = git(repo, "hash-object", "-w", "--stdin", input=render_episode(data).encode()).strip()
        lines.append(f"100644 {blob}\tmemory/episodes/{at:%Y/%m}/{ep}.yaml")
    git(repo, "update-index", "--index-info", env=env, input=("\n".join(lines) + "\n").encode())
    tree = git(repo, "write-tree", env=env).strip()
    return git(repo, "commit-tree", tree, "-p", base, "-m", f"add {n}", env=env).strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True)
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--sizes", default="1,50,100,200")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="move-bench-"))
    repo = work / "repo"
    git(work, "clone", "-q", "--local", "--no-checkout", str(_gen.cached_repo(args.episodes)), str(repo))
    base = git(repo, "rev-parse", "HEAD").strip()
    sizes = [int(s) for s in args.sizes.split(",")]
    tips = {n: add_episodes(repo, base, n, f"{n:03d}"[:3]) for n in sizes}
    trees = {"this checkout": HERE.parent, "baseline": args.baseline.resolve()}
    times: dict[tuple[str, int], list[float]] = {}
    for _ in range(args.runs):
        for n in sizes:
            for name, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree)}
                cmd = [sys.executable, "-m", "scarwarden", "check", "--from-ref", base, "--to-ref", tips[n]]
                start = time.perf_counter()
                proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True)
                times.setdefault((name, n), []).append(time.perf_counter() - start)
                assert proc.returncode == 0, proc.stderr.decode()[-500:]
    print(f"{args.episodes:,} episodes, load average {os.getloadavg()[0]:.1f}, medians of {args.runs}")
    for n in sizes:
        new, old = (statistics.median(times[(name, n)]) for name in trees)
        print(f"move adding {n:>4} episodes: {new:6.2f} s this checkout, {old:6.2f} s baseline", end="")
        print(f" ({new / old:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
