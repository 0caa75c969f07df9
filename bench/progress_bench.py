"""What a progress bar costs the long commands (issue 18): each run with no bar (a pipe)
against the same run drawing the real bar (``cli/commands/_progress.py``) into a fake
terminal, alternated, in the same process.

1. ``index --rebuild`` (the library's ``rebuild``) at 100,000 episodes;
2. ``check --all`` (``check_all``) on the same tree;
3. ``verify`` over 1,000 commits (hook_bench.py's cached history).

    python bench/progress_bench.py            # 100k episodes, 1,000 commits
    python bench/progress_bench.py --quick    # 10k episodes, 200 commits

Each figure is the median of ``--runs`` runs (min in brackets); the ratio compares the
medians. The bar is drawn exactly as on a terminal, only into memory. On a shared,
loaded machine the wall-clock ratio moves with the load, so the time spent inside the
bar's callback (drawing included) is measured too: that is the bar's whole cost.
"""

from __future__ import annotations

import argparse
import io
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import _gen  # noqa: E402
import hook_bench  # noqa: E402

from scarwarden.cli.commands._progress import progress_bar  # noqa: E402
from scarwarden.gate.check import check_all  # noqa: E402
from scarwarden.gate.history_check import verify_history  # noqa: E402
from scarwarden.index import rebuild  # noqa: E402
from scarwarden.repo import open_repo  # noqa: E402


class Terminal(io.StringIO):
    """Where the bar is drawn: a stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def timed(work: Callable[[Any], object], bar: bool) -> tuple[float, float, int, int]:
    """Seconds for one run, seconds inside the bar's callback, its calls, the characters drawn."""
    screen = Terminal()
    inside = 0.0
    calls = 0
    with progress_bar("working", stream=screen if bar else io.StringIO()) as progress:

        def counted(done: int, total: int) -> None:
            nonlocal inside, calls
            began = time.perf_counter()
            assert progress is not None
            progress(done, total)
            inside += time.perf_counter() - began
            calls += 1

        start = time.perf_counter()
        work(counted if progress is not None else None)
        seconds = time.perf_counter() - start
    return seconds, inside, calls, len(screen.getvalue())


def compare(name: str, work: Callable[[Any], object], runs: int) -> None:
    plain: list[float] = []
    drawn: list[float] = []
    inside: list[float] = []
    calls = chars = 0
    for _ in range(runs):  # alternated, so load on the machine falls on both
        plain.append(timed(work, bar=False)[0])
        seconds, in_bar, calls, chars = timed(work, bar=True)
        drawn.append(seconds)
        inside.append(in_bar)
    a, b, c = statistics.median(plain), statistics.median(drawn), statistics.median(inside)
    print(
        f"{name:<36} no bar {a * 1000:7.0f} ms ({min(plain) * 1000:.0f})  "
        f"bar {b * 1000:7.0f} ms ({min(drawn) * 1000:.0f})  = {b / a:.2f}x;  "
        f"inside the bar {c * 1000:.1f} ms in {calls} calls = {c / b:.3%} of the run ({chars} chars)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10k episodes and 200 commits")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    n, commits = (10_000, 200) if args.quick else (100_000, 1_000)
    with tempfile.TemporaryDirectory() as tmp:
        repo = open_repo(_gen.make_repo(n, Path(tmp) / "repo"), initialised=False)
        rebuild(repo)  # warm the page cache and the pack once
        compare(f"index --rebuild, {n:,} episodes", lambda p: rebuild(repo, progress=p), args.runs)
        compare(f"check --all, {n:,} episodes", lambda p: check_all(repo, progress=p), args.runs)
    history = open_repo(hook_bench.generate_history(hook_bench.CACHE / f"history-{commits}", commits))
    compare(f"verify, {commits:,} commits", lambda p: verify_history(history, progress=p), args.runs)


if __name__ == "__main__":
    main()
