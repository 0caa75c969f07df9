"""Benchmark of the doors pre-commit cannot see (issue 15): the reference-transaction and
pre-push hooks, as git runs them, at 1,000 and 100,000 committed episodes.

Each hook is a fresh ``python -m scarwarden.gate.hook_main <hook>`` (what the installed
hook runs: ``scarwarden gate-hook <hook>`` without the CLI) reading git's stdin, for a
branch moving by one commit that adds an episode and a rule citing it and an older
episode (the same change as bench/hook_bench.py's commit hook). Target: the cost follows
the change, not the ledger (within 1.5x from 1k to 100k). The shell part of the hook
(which skips tags, remote-tracking refs and the ``committed``/``aborted`` states without
starting Python) and an empty interpreter are timed for scale.

    python bench/ref_hook_bench.py            # 1k vs 100k
    python bench/ref_hook_bench.py --quick    # 1k vs 10k

Each figure is the median of ``--runs`` runs (min in brackets); runs alternate between
sizes so both see the same machine load.
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import hook_bench  # noqa: E402

from scarwarden.gate.hooks import render_hook  # noqa: E402


def prepared_move(repo: Path) -> tuple[str, str]:
    """(old, new): the branch tip and a commit on it adding the staged change."""
    old = hook_bench.git(repo, "rev-parse", "HEAD").strip()
    tree = hook_bench.git(repo, "write-tree").strip()
    new = hook_bench.git(repo, "commit-tree", tree, "-p", old, "-m", "bench: one episode, one rule").strip()
    return old, new


def run_stdin(cmd: list[str], cwd: Path, stdin: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, env=hook_bench._env())
    wall = (time.perf_counter() - start) * 1000
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stdout}{proc.stderr}")
    return wall


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k vs 10k")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per figure")
    args = parser.parse_args(argv)
    sizes = [1_000, 10_000] if args.quick else [1_000, 100_000]
    git_version = subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.strip()
    print(f"python {sys.version.split()[0]}, {git_version}, load average {os.getloadavg()[0]:.2f}")
    work = Path(tempfile.mkdtemp(prefix="ref-hook-bench-"))
    try:
        cases: dict[tuple[str, int], tuple[list[str], str, Path]] = {}
        for n in sizes:
            t0 = time.perf_counter()
            repo = hook_bench.ledger_repo(n, work)
            hook_bench.stage_commit(repo)
            old, new = prepared_move(repo)
            (work / f"hooks-{n}").mkdir()
            script = work / f"hooks-{n}" / "reference-transaction"
            script.write_text(render_hook(sys.executable, "reference-transaction"))
            script.chmod(0o755)
            move = f"{old} {new} refs/heads/main\n"
            cases[("reference-transaction", n)] = (
                [sys.executable, "-m", "scarwarden.gate.hook_main", "reference-transaction"],
                move,
                repo,
            )
            cases[("pre-push", n)] = (
                [sys.executable, "-m", "scarwarden.gate.hook_main", "pre-push"],
                f"refs/heads/main {new} refs/heads/main {old}\n",
                repo,
            )
            cases[("hook script, a tag (no Python)", n)] = (
                [str(script), "prepared"],
                f"{old} {new} refs/tags/v1\n",
                repo,
            )
            cases[("python -c pass", n)] = ([sys.executable, "-c", "pass"], "", repo)
            print(f"repo with {n:,} episodes ready in {time.perf_counter() - t0:.1f}s")
        walls: dict[tuple[str, int], list[float]] = {}
        for i in range(args.runs + 1):  # the first round warms the caches
            for key, (cmd, stdin, repo) in cases.items():
                wall = run_stdin(cmd, repo, stdin)
                if i:
                    walls.setdefault(key, []).append(wall)
        for kind in dict.fromkeys(k for k, _ in cases):
            for n in sizes:
                w = walls[(kind, n)]
                print(
                    f"{kind:>32}, {n:>7,} episodes: {statistics.median(w):6.1f} ms median [{min(w):6.1f} min]"
                )
        for kind in ("reference-transaction", "pre-push"):
            ratio = statistics.median(walls[(kind, sizes[1])]) / statistics.median(walls[(kind, sizes[0])])
            print(f"{kind} ratio {sizes[1]:,} / {sizes[0]:,}: {ratio:.2f}x (target <= 1.5x)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
