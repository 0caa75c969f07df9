"""The hooks as git runs them, this code against a baseline checkout, interleaved (issue 30).

On the scale bench's prepared memories (``bench/scale.py``: ``SCARWARDEN_BENCH_CACHE``),
each arm gets its own copy with its own hooks installed (``hooks install`` run by that
arm's code; the baseline's code is put first on ``PYTHONPATH``, which git passes to the
hooks). Every round runs every size and arm, in an order that alternates, so all arms
see the same machine load; the first round warms the caches and is not timed.

Rows, each as git runs it:

* ``pre-commit hook``: the installed ``.git/hooks/pre-commit`` script, one episode staged;
* ``ref hook, one-commit move``: ``git update-ref`` of main onto a commit adding one
  episode (the reference-transaction hook judges it);
* ``ref hook, memo dropped`` (this code only): the same with the support check's kept
  results removed first, what the first move after a playbook change pays;
* the floors: ``python -c pass``, and git's own read of its index for the staged diff
  (``git diff --cached --quiet HEAD -- memory``).

    git archive main | tar -x -C /tmp/main-src
    python bench/hook_ab.py --baseline /tmp/main-src --sizes 1000,100000 --runs 5
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import scale  # noqa: E402

_NEXT = itertools.count(5000)


def _env(src: Path | None) -> dict[str, str]:
    env = scale._env()
    if src is not None:
        env["PYTHONPATH"] = str(src)
    else:
        env.pop("PYTHONPATH", None)
    return env


#: The CPU time (user + system) of the last :func:`_run`, its processes' and theirs.
LAST_CPU = [0.0]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _run(cwd: Path, cmd: list[str], src: Path | None) -> float:
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=_env(src))
    wall = time.perf_counter() - start
    LAST_CPU[0] = _children_cpu() - cpu
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return wall


def _add(runs: dict[str, list[float]], row: str, arm: str, wall: float) -> None:
    """A sample of ``row``'s wall time and of the CPU time it took (a steadier figure on
    a loaded machine: waiting for a core is not counted)."""
    runs.setdefault(f"{row}|{arm}", []).append(wall)
    runs.setdefault(f"{row}, CPU|{arm}", []).append(LAST_CPU[0])


def _stage(repo: Path, n: int) -> str:
    return scale._stage(repo, next(_NEXT), n)


def _round(repo: Path, n: int, src: Path | None, arm: str, runs: dict[str, list[float]]) -> None:
    """One sample of each row for one size and arm."""
    path = _stage(repo, n)
    _add(runs, "pre-commit hook", arm, _run(repo, [str(repo / ".git/hooks/pre-commit")], src))
    runs.setdefault(f"git diff --cached (git's index read)|{arm}", []).append(_git_floor(repo))
    old = scale.sh(repo, "git", "rev-parse", "HEAD").strip()
    tree = scale.sh(repo, "git", "write-tree").strip()
    new = scale.sh(repo, "git", "commit-tree", tree, "-p", old, "-m", "move").strip()
    kinds = ["ref hook, one-commit move"] + (["ref hook, memo dropped"] if src is None else [])
    for kind in kinds:
        if kind.endswith("dropped"):
            shutil.rmtree(repo / ".git/scarwarden/ledger/support", ignore_errors=True)
        _add(runs, kind, arm, _run(repo, ["git", "update-ref", "refs/heads/main", new, old], src))
        scale.sh(repo, "git", "-c", "core.hooksPath=/dev/null", "update-ref", "refs/heads/main", old)
    scale.sh(repo, "git", "rm", "-q", "--cached", path)
    (repo / path).unlink()


def _git_floor(repo: Path) -> float:
    start = time.perf_counter()
    subprocess.run(["git", "diff", "--cached", "--quiet", "HEAD", "--", "memory"], cwd=repo, env=scale._env())
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="source tree to compare with")
    parser.add_argument("--sizes", default="1000,100000", help="episode counts, comma-separated")
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (after one warm-up round)")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    arms: dict[str, Path | None] = {"this": None, "baseline": args.baseline.resolve()}
    print(f"load average before: {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="hook-ab-") as tmp:
        work = Path(tmp)
        repos: dict[tuple[int, str], Path] = {}
        for n in sizes:
            src = scale.prepare(n)
            for arm, code in arms.items():
                repo = scale.copy(src, work / f"{arm}-{n}")
                _run(repo, scale.sw("hooks", "install"), code)
                _run(repo, scale.sw("check", "--from-ref", "HEAD~2", "--to-ref", "HEAD"), code)
                repos[(n, arm)] = repo
        runs: dict[str, dict[str, list[float]]] = {}
        started = time.time()
        for r in range(args.runs + 1):
            for n in sizes:
                order = list(arms.items()) if r % 2 else list(reversed(arms.items()))
                for arm, code in order:
                    target = runs.setdefault(str(n), {}) if r else {}
                    _round(repos[(n, arm)], n, code, arm, target)
            _add(
                runs.setdefault("python -c pass", {}) if r else {},
                "python -c pass",
                "this",
                _run(work, [sys.executable, "-c", "pass"], None),
            )
        _report(runs, sizes, time.time() - started)
    print(f"load average after: {os.getloadavg()}")
    return 0


def _report(runs: dict[str, dict[str, list[float]]], sizes: list[int], took: float) -> None:
    print(f"\nmedians of the timed rounds, ms (wall, and CPU: user + system of every process; {took:.0f} s)")
    rows = sorted({k for size in sizes for k in runs[str(size)]})
    head = " | ".join(f"{n:,}" for n in sizes)
    print(f"| row | arm | {head} | {sizes[-1]:,} / {sizes[0]:,} |")
    for row in rows:
        meds = [statistics.median(runs[str(n)][row]) * 1000 for n in sizes]
        name, arm = row.split("|")
        ratio = meds[-1] / meds[0]
        print(f"| {name} | {arm} | " + " | ".join(f"{m:,.0f}" for m in meds) + f" | {ratio:.2f}x |")
    for n in sizes:
        for name in {r.split("|")[0] for r in rows}:
            this, base = runs[str(n)].get(f"{name}|this"), runs[str(n)].get(f"{name}|baseline")
            if this and base:
                ratio = statistics.median(this) / statistics.median(base)
                print(f"{n:,} {name}: this / baseline = {ratio:.2f}x")
    wall, cpu = (statistics.median(v) * 1000 for v in runs["python -c pass"].values())
    print(f"python -c pass: {wall:.0f} ms wall, {cpu:.0f} ms CPU")


if __name__ == "__main__":
    raise SystemExit(main())
