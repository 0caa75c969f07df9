"""What proving ASK_HUMAN's failed-episode candidates costs the gate (issue 26).

    python bench/candidates_bench.py PATH [PATH ...]   # memories (git repositories)
    SCARWARDEN_BENCH_CACHE=/work/coord/scale-cache python bench/candidates_bench.py

When no rule is near the task, the candidates a receipt names are the failed episodes
whose tasks share the most words with it, so the gate reads every episode of the
receipt's ledger tree (:mod:`scarwarden.gate.proofs_candidates`). Timed per memory, in
a row: the first time (every episode parsed, the cache written) and the next time (the
cache read), each reading HEAD's episodes folder and ranking one task's candidates. The
cache goes to a temporary folder: the memories are only read (git ``ls-tree`` and
``cat-file``), so the read-only scale memories can be used as they are.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scarwarden import text  # noqa: E402
from scarwarden.gate.proofs_candidates import TASKS, LedgerEpisodes  # noqa: E402
from scarwarden.recall.nearest import episode_candidates  # noqa: E402
from scarwarden.recall.score import weigh_task  # noqa: E402

TASK = "Rotate the kafka credentials before the refund"


def one_run(root: Path, tree: str, cache: Path) -> tuple[float, int, list[str]]:
    """Seconds to read the tree and rank TASK's candidates; files parsed; the IDs."""
    reader = LedgerEpisodes(root, "memory/episodes", cache=cache)
    start = time.perf_counter()
    episodes = reader.of(tree)
    df = Counter(s for ep in episodes for s in ep.stems)  # what the ledger statistics hold
    qtf = Counter(text.stems(TASK))
    terms = weigh_task(qtf, {}, 1, 1.0, {s: df[s] for s in qtf if df[s]}, len(episodes), {}, True)
    found = episode_candidates(terms, episodes, reader.texts)
    return time.perf_counter() - start, reader.read_files, [c.id for c in found]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("memories", nargs="*", type=Path)
    args = parser.parse_args()
    where = os.environ.get("SCARWARDEN_BENCH_CACHE")
    memories = args.memories or ([Path(where) / f"scale-v1-n{n}" for n in (10_000, 100_000)] if where else [])
    if not memories:
        parser.error("name a memory, or set SCARWARDEN_BENCH_CACHE to the scale memories")
    print(f"load: {os.getloadavg()[0]:.1f}")
    for memory in memories:
        top = subprocess.run(
            ["git", "-C", str(memory), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        tree = subprocess.run(
            ["git", "-C", top, "rev-parse", "HEAD:memory/episodes"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp)
            cold, parsed, ids = one_run(Path(top), tree, cache)
            warm, again, same = one_run(Path(top), tree, cache)
            assert same == ids and again == 0
            size = (cache / TASKS).stat().st_size / 1e6
        print(
            f"{memory.name}: {parsed:,} episodes; first time {cold:.2f} s, next time {warm:.2f} s "
            f"({warm / cold:.2f}x); cache {size:.1f} MB; candidates {', '.join(ids)}"
        )
    print(f"load: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
