"""Benchmark of the secret scanner: its cost inside the hook, and how well it sorts.

1. The scanner's own cost in a fresh interpreter, as the hook pays it on top of the
   episode validator it imports anyway: importing
   ``scarwarden.files.secret_scan`` and ``privacy``, compiling the patterns, and scanning
   the episode and the playbook lines the hook's benchmark commit adds (median of runs).
   For comparison, importing detect-secrets when it is installed (the library we did
   not pick).
2. The hook as git runs it (``bench/hook_bench.py``'s measurement, scanner included) at
   1,000 and 100,000 episodes (``--quick``: 10,000).
3. Detection and false positives: the fake credentials of tests/fake_secrets.py and the
   ordinary texts of tests/ordinary_episodes.py.

    python bench/secret_bench.py [--quick] [--runs 15]
    python bench/secret_bench.py --baseline /tmp/before   # A/B against another checkout
    (issue 27: git worktree add /tmp/before df2d898, the scanner before normalising,
    base64 and nested fields; the ratio line is this checkout's hook over that one's)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "tests")]

import hook_bench  # noqa: E402

_PROBE = r"""
import time
import scarwarden.files.episodes  # the hook imports it anyway: not the scanner's cost
t0 = time.perf_counter()
from scarwarden.files import privacy, secret_scan
t1 = time.perf_counter()
data = {
    "id": "ep-bench0new1", "at": "2026-11-29T10:00:00Z", "agent": "writer",
    "task": "Write the webinar invite for the spring sale",
    "action": "Gave the start time without a timezone",
    "outcome": "Attendees in three countries asked which 10:00 was meant",
    "correction": "Always state webinar times in UTC and the main local timezone",
    "corrected_by": "maya", "tags": ["webinar", "timezone"], "source": "correction",
}
rule = ("## PB-51: Give webinar times with a timezone\n\nState webinar times in UTC and the "
        "audience's main timezone.\n\n- Tags: webinar, timezone\n- Learnt in: ep-bench0new1\n")
found = secret_scan.scan_mapping(data) + privacy.scan_mapping(data, ("card",))
found += secret_scan.scan_text(rule, by_line=True)
t2 = time.perf_counter()
assert not found, found
print(f"{(t1 - t0) * 1000:.3f} {(t2 - t1) * 1000:.3f}")
"""


def scanner_cost(runs: int) -> tuple[float, float]:
    """(import ms, compile-and-scan ms), medians over fresh interpreters."""
    imports, scans = [], []
    env = {**os.environ, "PYTHONPATH": str(HERE.parent)}
    for _ in range(runs + 1):
        out = subprocess.run(
            [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, env=env
        ).stdout
        a, b = map(float, out.split())
        imports.append(a)
        scans.append(b)
    return statistics.median(imports[1:]), statistics.median(scans[1:])


def detect_secrets_import(runs: int) -> float | None:
    """Median ms to import detect-secrets' scanner, if it is installed anywhere we can see."""
    python = os.environ.get("DETECT_SECRETS_PYTHON", sys.executable)
    probe = (
        "import time; t=time.perf_counter(); import detect_secrets.core.scan, detect_secrets.settings; "
        "print((time.perf_counter()-t)*1000)"
    )
    times = []
    for _ in range(runs + 1):
        proc = subprocess.run([python, "-c", probe], capture_output=True, text=True)
        if proc.returncode:
            return None
        times.append(float(proc.stdout))
    return statistics.median(times[1:])


def bench_baseline(baseline: Path, sizes: list[int], runs: int, work: Path) -> None:
    """The hook from this checkout against the hook from ``baseline`` (a checkout of the
    code before the scanner, e.g. ``git worktree add /tmp/before <sha>``), interleaved
    run by run so both see the same load: the scanner's cost inside the hook."""
    trees = {"this checkout": HERE.parent, "baseline": baseline.resolve()}
    repos = {}
    for n in sizes:
        repos[n] = hook_bench.ledger_repo(n, work)
        hook_bench.stage_commit(repos[n])
    cpu: dict[tuple[str, int], list[float]] = {}
    wall: dict[tuple[str, int], list[float]] = {}
    for i in range(runs + 1):
        for n in sizes:
            for name, tree in trees.items():
                env = {**hook_bench._env(), "PYTHONPATH": str(tree)}
                w, c, _out = hook_bench.run_once(
                    [sys.executable, "-m", "scarwarden", "check", "--staged"], repos[n], env
                )
                if i:
                    wall.setdefault((name, n), []).append(w)
                    cpu.setdefault((name, n), []).append(c)
    for n in sizes:
        base_cpu = statistics.median(cpu[("baseline", n)])
        base_wall = statistics.median(wall[("baseline", n)])
        for name in trees:
            c, w = statistics.median(cpu[(name, n)]), statistics.median(wall[(name, n)])
            print(
                f"{name:>12}, {n:>7,} episodes: {w:6.1f} ms wall, {c:6.1f} ms CPU (medians; "
                f"{c - base_cpu:+.1f} ms CPU, {w - base_wall:+.1f} ms wall against the baseline; "
                f"ratio {c / base_cpu:.3f} CPU, {w / base_wall:.3f} wall)"
            )


def sorting() -> None:
    from fake_secrets import fake_secrets, more_secrets
    from ordinary_episodes import everyday_texts, ordinary_texts

    from scarwarden.files import privacy, secret_scan

    secrets = {**fake_secrets(), **more_secrets()}
    caught = sum(bool(secret_scan.scan_text(text)) for text in secrets.values())
    texts = ordinary_texts() + everyday_texts()
    flagged = [t for t in texts if secret_scan.scan_text(t) or list(privacy.find(t))]
    print(f"fake credentials caught: {caught}/{len(secrets)}")
    print(f"ordinary texts flagged (false positives): {len(flagged)}/{len(texts)}")
    for text in flagged:
        print(f"    {text[:70]!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1k vs 10k episodes")
    parser.add_argument("--runs", type=int, default=15, help="timed runs per figure")
    parser.add_argument("--baseline", type=Path, help="a checkout without the scanner: A/B the hook")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, load average {os.getloadavg()[0]:.2f}")
    imp, scan = scanner_cost(args.runs)
    print(f"scanner in a fresh interpreter: import {imp:.2f} ms, compile + scan {scan:.2f} ms (medians)")
    ds = detect_secrets_import(args.runs)
    print(
        "detect-secrets import: "
        + (f"{ds:.1f} ms (median)" if ds is not None else "not installed (set DETECT_SECRETS_PYTHON)")
    )
    sorting()
    small, large = (1_000, 10_000) if args.quick else (1_000, 100_000)
    cache = hook_bench.CACHE
    work = Path(tempfile.mkdtemp(prefix="secret-bench-", dir=cache if cache.exists() else None))
    try:
        if args.baseline is not None:
            bench_baseline(args.baseline, [small, large], args.runs, work)
            return 0
        medians = hook_bench.bench_hook([small, large], args.runs, work)
        small_ms, large_ms = medians[small], medians[large]
        print(f"hook (scanner included): {small_ms:.1f} ms at {small:,}, {large_ms:.1f} ms at {large:,}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
