"""What proving ASK_HUMAN's failed-episode candidates costs the gate (issues 26 and 30),
before (main's reader: every episode of the tree, a per-blob cache) and after (each
month folder's words kept by month tree), in the same run, on the same task.

    python bench/candidates_bench.py PATH [PATH ...]   # memories (git repositories)
    SCARWARDEN_BENCH_CACHE=/work/coord/scale-cache python bench/candidates_bench.py --sizes 100000
    SCARWARDEN_BENCH_CACHE=/work/coord/scale-cache flock /work/coord/scale.lock \\
        nice -n 10 python bench/candidates_bench.py --sizes 1000000

When no rule is near the task, the candidates a receipt names are the failed episodes
whose tasks share the most words with it. Timed per memory, each arm with a fresh
reader (as a new process would start) and its own cache in a temporary folder (the
memories are only read: git ``cat-file`` and ``ls-tree``):

* cold: a fresh clone, nothing cached: HEAD's episodes folder proved from nothing;
* warm: the cache a CI run of the base commit leaves (HEAD~1's tree proved first, not
  timed), then HEAD's tree proved: what a job checking one new commit pays.

Wall time and CPU time (this process plus the git processes it ran: the machine is
shared, so CPU is the steadier figure) are printed, with the load before and after.

Every arm must name the same candidates (IDs, scores, quotes). The task's ledger
weights come from the ledger statistics (derived from a copy of the memory's cache, not
timed).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarwarden import text  # noqa: E402
from scarwarden.gate.proofs_candidates import LedgerEpisodes  # noqa: E402
from scarwarden.recall.nearest import episode_candidates  # noqa: E402
from scarwarden.recall.score import weigh_task  # noqa: E402

TASK = "Rotate the kafka credentials before the refund"
ROOT = Path(__file__).resolve().parents[1]
BASELINE = "scarwarden/gate/proofs_candidates.py"


def baseline_module() -> types.ModuleType:
    """Main's reader, as it was where this branch started (``git merge-base HEAD main``)."""
    base = _git(ROOT, "merge-base", "HEAD", "main")
    module = types.ModuleType("proofs_candidates_main")
    exec(compile(_git(ROOT, "show", f"{base}:{BASELINE}"), BASELINE, "exec"), module.__dict__)  # noqa: S102
    return module


def _git(where: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(where), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def _cpu() -> float:
    """CPU seconds of this process and of the git processes it waited for."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _shape(found: list[Any]) -> list[Any]:
    return [(c.id, c.score, c.title, [(q.episode_id, q.text) for q in c.quotes]) for c in found]


def before(main: types.ModuleType, root: Path, cache: Path) -> Callable[[str, Any], tuple[list[Any], int]]:
    def run(tree: str, terms: Any) -> tuple[list[Any], int]:
        reader = main.LedgerEpisodes(root, "memory/episodes", cache=cache)
        return episode_candidates(terms, reader.of(tree), reader.texts), reader.read_files

    return run


def after(root: Path, cache: Path) -> Callable[[str, Any], tuple[list[Any], int]]:
    def run(tree: str, terms: Any) -> tuple[list[Any], int]:
        reader = LedgerEpisodes(root, "memory/episodes", cache=cache)
        return reader.candidates(tree)([], terms, lambda _e: None), reader.read_files

    return run


def _terms(root: Path, tree: str, tmp: Path) -> Any:
    """The task's weights from the tree's ledger statistics (what the gate reads), from a
    copy of the memory's ledger cache (derived by a diff from HEAD~1's; not timed)."""
    from scarwarden.gate.ledger import LedgerReader

    kept = tmp / "ledger"
    kept.mkdir()
    for entry in (root / ".git" / "scarwarden" / "ledger").glob("*.json"):
        shutil.copy(entry, kept / entry.name)
    stats = LedgerReader(root, "memory/episodes", cache_dir=kept).stats(tree)
    qtf = Counter(text.stems(TASK))
    df = {s: stats.task_df[s] for s in qtf if stats.task_df.get(s)}
    return weigh_task(qtf, {}, 1, 1.0, df, stats.task_count, {}, True), stats.task_count


def _as_base_left_it(
    arm: str, main: types.ModuleType, root: Path, trees: tuple[str, str], cold: Path, cache: Path, count: int
) -> None:
    """Fill ``cache`` as the base commit's CI run leaves it (not timed). Main's reader:
    the base tree proved (above its 300,000 it keeps nothing: skipped, nothing to fill).
    This one: the cold run's entries (the head's months), the base tree proved from them
    (its changed month by a diff), then the head's own entries of the months that differ
    dropped: exactly the base's months, without parsing the ledger once more."""
    from scarwarden.gate.candidates_months import MonthCache, month_trees

    head, base = trees
    if arm == "before":
        if count <= main.MAX_KEPT:
            main.LedgerEpisodes(root, "memory/episodes", cache=cache).of(base)
        return
    shutil.copytree(cold, cache)
    LedgerEpisodes(root, "memory/episodes", cache=cache)._of(base)
    kept = MonthCache(cache, "memory/episodes")
    for month, tree in set(month_trees(root, head)) - set(month_trees(root, base)):
        kept._path(month, tree).unlink()


def measure(memory: Path, main: types.ModuleType, arms: list[str], cases: list[str]) -> None:
    root = Path(_git(memory, "rev-parse", "--show-toplevel"))
    head = _git(root, "rev-parse", "HEAD:memory/episodes")
    try:
        base = _git(root, "rev-parse", "HEAD~1:memory/episodes")
    except subprocess.CalledProcessError:
        base = head  # one commit: warm is the same tree again
    rows: dict[str, tuple[float, float, int, float]] = {}
    shapes = []
    with tempfile.TemporaryDirectory() as tmp:
        terms, count = _terms(root, head, Path(tmp))
        makers = {"before": lambda c: before(main, root, c), "after": lambda c: after(root, c)}
        for arm, make in ((a, makers[a]) for a in arms):
            for case in cases:
                cache = Path(tmp) / f"{arm}-{case}"
                prove = make(cache)
                if case == "warm":
                    _as_base_left_it(arm, main, root, (head, base), Path(tmp) / f"{arm}-cold", cache, count)
                start, cpu = time.perf_counter(), _cpu()
                found, parsed = prove(head, terms)
                seconds, cpu = time.perf_counter() - start, _cpu() - cpu
                size = sum(p.stat().st_size for p in cache.rglob("*") if p.is_file()) / 1e6
                rows[f"{arm} {case}"] = (seconds, cpu, parsed, size)
                shapes.append(_shape(found))
    assert all(s == shapes[0] for s in shapes), "the arms disagree"
    print(f"{memory.name}: {count:,} episodes; candidates {', '.join(c[0] for c in shapes[0])}")
    for name, (seconds, cpu, parsed, size) in rows.items():
        print(
            f"  {name:12} {seconds:8.2f} s wall {cpu:8.2f} s CPU {parsed:>9,} files parsed"
            f"  cache {size:6.1f} MB"
        )
    for case in cases if len(arms) == 2 else ():
        wall = rows[f"after {case}"][0] / rows[f"before {case}"][0]
        cpu = rows[f"after {case}"][1] / rows[f"before {case}"][1]
        print(f"  {case}: after / before = {wall:.3f}x wall, {cpu:.3f}x CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("memories", nargs="*", type=Path)
    parser.add_argument(
        "--sizes", default="10000,100000", help="with SCARWARDEN_BENCH_CACHE (default %(default)s)"
    )
    parser.add_argument(
        "--arms",
        default="before,after",
        help="before (main's reader), after, or both (default %(default)s): main's reads every "
        "episode twice at 1M (it keeps no cache above 300,000)",
    )
    parser.add_argument("--cases", default="cold,warm", help="cold, or cold,warm (default %(default)s)")
    args = parser.parse_args()
    arms = [a for a in ("before", "after") if a in args.arms.split(",")]
    cases = [c for c in ("cold", "warm") if c in args.cases.split(",")]
    where = os.environ.get("SCARWARDEN_BENCH_CACHE")
    memories = list(args.memories)
    for n in [int(s) for s in args.sizes.split(",")] if where and not memories else []:
        found = sorted(Path(where).glob(f"scale-v*-n{n}")) or sorted(Path(where).glob(f"mem-v*-n{n}-*"))
        memories += found[-1:]
    if not memories:
        parser.error("name a memory, or set SCARWARDEN_BENCH_CACHE to the scale memories")
    print(f"load: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")
    main_reader = baseline_module()
    for memory in memories:
        measure(memory, main_reader, arms, cases)
        print(f"load: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
