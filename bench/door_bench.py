"""What the gate costs a write door (issue 27): ``episode add`` of one episode, with the
door's check (the provenance gate on the commit about to be made) and without it,
interleaved pairs on one memory in a temporary folder, in-process.

    python bench/door_bench.py              # the demo memory, 12 pairs
    python bench/door_bench.py --pairs 30

Figures go to docs/gate.md ("The local write doors").
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=12)
    args = parser.parse_args()
    from scarwarden.files.record import add_episodes
    from scarwarden.files.scaffold import init as init_memory
    from scarwarden.gate.door import gate_check
    from scarwarden.repo import open_repo

    with tempfile.TemporaryDirectory(prefix="scarwarden-door-") as tmp:
        root = Path(tmp)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        init_memory(open_repo(root, initialised=False), demo=True)
        repo = open_repo(root)
        times: dict[bool, list[float]] = {True: [], False: []}
        for i in range(args.pairs):
            for checked in (True, False) if i % 2 else (False, True):
                start = time.perf_counter()
                data = {"task": f"Timing run {i} {checked}", "action": "Measured it"}
                add_episodes(repo, [data], check=gate_check(repo) if checked else None)
                times[checked].append(time.perf_counter() - start)
    with_, without = statistics.median(times[True]), statistics.median(times[False])
    print(
        f"episode add, one episode, demo memory, {args.pairs} interleaved pairs, load "
        f"{os.getloadavg()[0]:.1f}: median {without * 1000:.0f} ms without the door's check, "
        f"{with_ * 1000:.0f} ms with it (x{with_ / without:.2f})"
    )


if __name__ == "__main__":
    main()
