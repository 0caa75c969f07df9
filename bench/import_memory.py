"""Peak memory of ``episode import`` of a file of many tiny conversations: does it grow
with the number of conversations (docs/benchmarks.md, "Many small conversations")?

Each run is a real ``python -m scarwarden episode import`` child process on a new memory
(``scarwarden init`` in a fresh git repository), its peak resident set read from
``wait4``'s ``ru_maxrss``; the file holds ``[{"role": "user", "content": "task N"},
{"role": "assistant", "content": "done N"}]`` a line. Printed for each size: the import
(one commit), its dry run and the same file again (every conversation already in the
ledger), with the growth per conversation between the sizes. Memory, unlike time, does
not depend on the load, so one run of each is the figure.

    python bench/import_memory.py                     # 10,000 and 50,000 conversations
    python bench/import_memory.py --sizes 300000      # the file of issue 30's note
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="Bench",
    GIT_AUTHOR_EMAIL="bench@example.com",
    GIT_COMMITTER_NAME="Bench",
    GIT_COMMITTER_EMAIL="bench@example.com",
)


def tiny_runs(path: Path, count: int) -> Path:
    with path.open("w") as out:
        for n in range(count):
            run = [{"role": "user", "content": f"task {n}"}, {"role": "assistant", "content": f"done {n}"}]
            out.write(json.dumps(run) + "\n")
    return path


def new_memory(root: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(root)], check=True, env=ENV)
    subprocess.run(
        [sys.executable, "-m", "scarwarden", "-C", str(root), "init"],
        check=True,
        env=ENV,
        stdout=subprocess.DEVNULL,
    )
    return root


def peak(root: Path, *args: str) -> tuple[int, float, float]:
    """Exit code, peak RSS (MB) and wall seconds of ``episode import ARGS``."""
    argv = [sys.executable, "-m", "scarwarden", "-C", str(root), "episode", "import", *args]
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    _, status, usage = os.wait4(child.pid, 0)
    return os.waitstatus_to_exitcode(status), usage.ru_maxrss / 1024, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="10000,50000", help="conversation counts, comma-separated")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    rows: dict[str, list[float]] = {"import": [], "dry run": [], "again": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            runs = tiny_runs(Path(tmp) / f"runs{n}.jsonl", n)
            root = new_memory(Path(tmp) / f"memory{n}")
            for name, args in (("dry run", ["--dry-run"]), ("import", []), ("again", [])):
                code, mb, wall = peak(root, "--format", "openai-chat", str(runs), *args)
                if code != 0:
                    sys.exit(f"{name} of {n:,} conversations exited {code}")
                rows[name].append(mb)
                print(f"{n:>9,} conversations  {name:<8} peak {mb:7.1f} MB  ({wall:.1f} s wall)", flush=True)
    if len(sizes) > 1:
        span = sizes[-1] - sizes[0]
        for name, mbs in rows.items():
            print(f"growth, {name}: {(mbs[-1] - mbs[0]) * 1024 * 1024 / span:,.0f} bytes a conversation")


if __name__ == "__main__":
    main()
