"""Peak memory of ``episode import`` of a file of many tiny conversations: does it grow
with the number of conversations (docs/benchmarks.md, "Many small conversations")?

Each run is a real ``python -m scarwarden episode import`` child process on a new memory
(``scarwarden init`` in a fresh git repository), its peak resident set read from
``wait4``'s ``ru_maxrss``; the file holds ``[{"role": "user", "content": "task N"},
{"role": "assistant", "content": "done N"}]`` a line. Printed for each size: the import
(one commit), its dry run (and with ``--json``, its output discarded) and the same file
again (every conversation already in the ledger), with the growth per conversation
between the sizes. Memory, unlike time, does
not depend on the load, so one run of each is the figure.

    python bench/import_memory.py                     # 10,000 and 50,000 conversations
    python bench/import_memory.py --sizes 300000      # the file of issue 30's note
    python bench/import_memory.py --huge 27           # one conversation of 27 MB (a list of messages)

``--huge MB`` measures instead one conversation written as a single JSON list of
messages (a user task, then tool calls and their replies, ~1 KB a message) of about MB
megabytes, and the same conversation in a file half its size: the import's memory should
grow with the largest message, not with the conversation.
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


def huge_conversation(path: Path, megabytes: float) -> Path:
    """One conversation of about ``megabytes`` MB: a JSON list of messages, one a line."""
    with path.open("w") as out:
        out.write('[{"role": "user", "content": "Reconcile the ledger"}')
        size, n = 0, 0
        while size < megabytes * 1024 * 1024:
            call = {"id": f"c{n}", "function": {"name": "read_page", "arguments": json.dumps({"page": n})}}
            line = ",\n" + json.dumps({"role": "assistant", "content": None, "tool_calls": [call]})
            line += ",\n" + json.dumps({"role": "tool", "tool_call_id": f"c{n}", "content": "row " * 250})
            out.write(line)
            size, n = size + len(line), n + 1
        out.write(',\n{"role": "assistant", "content": "Reconciled."}]\n')
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
    parser.add_argument("--huge", type=float, help="one conversation of about this many MB instead")
    given = parser.parse_args()
    if given.huge:
        return huge(given.huge)
    sizes = [int(s) for s in given.sizes.split(",")]
    rows: dict[str, list[float]] = {"import": [], "dry run": [], "--json": [], "again": []}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            runs = tiny_runs(Path(tmp) / f"runs{n}.jsonl", n)
            root = new_memory(Path(tmp) / f"memory{n}")
            runs_of = (
                ("dry run", ["--dry-run"]),
                ("--json", ["--dry-run", "--json"]),
                ("import", []),
                ("again", []),
            )
            for name, args in runs_of:
                code, mb, wall = peak(root, "--format", "openai-chat", str(runs), *args)
                if code != 0:
                    sys.exit(f"{name} of {n:,} conversations exited {code}")
                rows[name].append(mb)
                print(f"{n:>9,} conversations  {name:<8} peak {mb:7.1f} MB  ({wall:.1f} s wall)", flush=True)
    if len(sizes) > 1:
        span = sizes[-1] - sizes[0]
        for name, mbs in rows.items():
            print(f"growth, {name}: {(mbs[-1] - mbs[0]) * 1024 * 1024 / span:,.0f} bytes a conversation")


def huge(megabytes: float) -> None:
    """Peak memory of importing one conversation of ``megabytes`` MB, and of half that."""
    with tempfile.TemporaryDirectory() as tmp:
        for mb in (megabytes / 2, megabytes):
            runs = huge_conversation(Path(tmp) / f"huge{mb}.json", mb)
            size = runs.stat().st_size / 1024 / 1024
            root = new_memory(Path(tmp) / f"memory{mb}")
            for name, args in (("dry run", ["--dry-run"]), ("import", []), ("--json", ["--json"])):
                code, peak_mb, wall = peak(root, "--format", "openai-chat", str(runs), *args)
                if code != 0:
                    sys.exit(f"{name} of one {size:.1f} MB conversation exited {code}")
                said = f"one conversation of {size:5.1f} MB  {name:<8} peak {peak_mb:7.1f} MB"
                print(f"{said}  ({wall:.1f} s wall)", flush=True)


if __name__ == "__main__":
    main()
